"""The request size limit: ``Content-Length`` checked up front, streamed bytes counted too."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tersify.worker.api.problems import ApiProblem, problem_response


class BodyLimit:
    """ASGI middleware answering 413 ``payload_too_large`` past ``max_bytes`` of request body."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse a declared oversize body at once; stop a streamed one when it passes the cap."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_bytes):
            size = int(declared) if declared.isdigit() else None
            await problem_response("payload_too_large", self._detail(size))(scope, receive, send)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    # routes read the body inside the app: its exception handler answers 413
                    raise ApiProblem("payload_too_large", self._detail())
            return message

        await self.app(scope, counted, send)

    def _detail(self, size: int | None = None) -> str:
        body = f"the request body is {size:,} bytes" if size else "the request body is"
        return (
            f"{body} over the limit of {self.max_bytes:,} bytes (TERSIFY_API_MAX_REQUEST_BYTES, "
            "else 3 × TERSIFY_MAX_OUTPUT_BYTES + 64 KiB)"
        )
