"""A loopback fake of the Anthropic Messages and OpenAI Chat Completions APIs, with fault injection.

The server is raw asyncio (a small HTTP/1.1 parser with keep-alive) on its own event loop in a
daemon thread, so one test process can drive it at thousands of requests per second and hold
hundreds of slow connections open at once. It binds 127.0.0.1 only.

Behaviours: ``ok``, ``status``, ``malformed``, ``empty``, ``oversized``, ``hang``,
``close_mid_body``, ``slow_drip`` and ``raw``. Which one a model call gets, first match wins:

1. ``script([...])``: a FIFO of behaviours, each consumed by one request;
2. ``add_rule(marker, behaviour)``: the first rule whose marker occurs in the raw request body
   (tests put a marker such as ``FAKE-FAULT-429`` in a tool output);
3. ``set_default(behaviour)``: everything else (``ok()`` until changed).

The default answer is ``"Summary: "`` plus the first 200 characters of the tool output (the body of
a ``<tool_output>`` tag when the user message has one, else the whole message), so it is
deterministic, usually shorter than the input, and easy to recognise. Token counts are chars / 4.

Standalone: ``python -m tests.fakemodel --port 8099 --latency-ms 200``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import re
import threading
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self

SUMMARY_PREFIX = "Summary: "
DEFAULT_MODEL = "fake-model"
_EXCERPT_CHARS = 200
_TOOL_OUTPUT = re.compile(r"<(tool_output|output)\b[^>]*>(.*?)(?:</\1>|\Z)", re.DOTALL)
_START_TIMEOUT_SECONDS = 10.0
_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    408: "Request Timeout",
    413: "Payload Too Large",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
    529: "Overloaded",
}
_ANTHROPIC_ERRORS = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}
_OPENAI_ERRORS = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "unsupported_country_region_territory"),
    404: ("invalid_request_error", "unknown_url"),
    429: ("requests", "rate_limit_exceeded"),
}


@dataclass(frozen=True, slots=True)
class Ok:
    """Answer normally, after ``latency`` seconds on top of the server's own latency."""

    text: str | None = None
    latency: float = 0.0


@dataclass(frozen=True, slots=True)
class Status:
    """Answer with an HTTP error in the API's own error format."""

    code: int
    retry_after: float | None = None
    message: str | None = None


@dataclass(frozen=True, slots=True)
class Malformed:
    """Answer 200 with a body that is not JSON."""


@dataclass(frozen=True, slots=True)
class Empty:
    """Answer 200 in the right shape with empty text."""


@dataclass(frozen=True, slots=True)
class Oversized:
    """Answer 200 with ``chars`` characters of text."""

    chars: int


@dataclass(frozen=True, slots=True)
class Hang:
    """Read the request, answer nothing, and close the connection after ``seconds``."""

    seconds: float


@dataclass(frozen=True, slots=True)
class CloseMidBody:
    """Send the headers with the full Content-Length and half the body, then close."""


@dataclass(frozen=True, slots=True)
class SlowDrip:
    """Send the headers at once, then a valid body a few bytes at a time over ``total_seconds``."""

    total_seconds: float


@dataclass(frozen=True, slots=True)
class Raw:
    """Answer with exactly this status and body (shapes the named behaviours do not cover)."""

    body: bytes
    code: int = 200


Behaviour = Ok | Status | Malformed | Empty | Oversized | Hang | CloseMidBody | SlowDrip | Raw


def ok(text: str | None = None, latency: float = 0.0) -> Behaviour:
    """A normal answer: ``text``, or the default summary of the request."""
    return Ok(text, latency)


def status(code: int, retry_after: float | None = None, message: str | None = None) -> Behaviour:
    """An HTTP error; a 429 with ``retry_after`` also sends a ``retry-after`` header."""
    return Status(code, retry_after, message)


def malformed() -> Behaviour:
    """A 200 whose body is not JSON."""
    return Malformed()


def empty() -> Behaviour:
    """A 200 with a valid shape and empty text."""
    return Empty()


def oversized(chars: int = 100_000) -> Behaviour:
    """A 200 with a very long text."""
    return Oversized(chars)


def hang(seconds: float = 3600.0) -> Behaviour:
    """No answer until ``seconds`` pass (then the connection closes) or the server stops."""
    return Hang(seconds)


def close_mid_body() -> Behaviour:
    """Half a body, then the connection closes."""
    return CloseMidBody()


def slow_drip(total_seconds: float) -> Behaviour:
    """A valid answer whose body trickles out over ``total_seconds``."""
    return SlowDrip(total_seconds)


def raw(body: bytes | str, code: int = 200) -> Behaviour:
    """Exactly ``body`` (JSON content type) with status ``code``."""
    return Raw(body.encode() if isinstance(body, str) else body, code)


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request the server received: headers lower-cased, body parsed as JSON (None if not)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


class _BadRequest(Exception):
    pass


class FakeModelServer:
    """A loopback server speaking both model APIs, with per-request fault injection."""

    def __init__(self, port: int = 0, *, latency: float = 0.0, max_recorded: int = 10_000) -> None:
        self.latency = latency
        self._initial_latency = latency
        self._port = port
        self._lock = threading.Lock()
        self._default: Behaviour = Ok()
        self._rules: list[tuple[bytes, Behaviour]] = []
        self._script: deque[Behaviour] = deque()
        self._recorded: deque[RecordedRequest] = deque(maxlen=max_recorded)
        self._count = 0
        self._connections = 0
        self._ids = itertools.count(1)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    # lifecycle

    def start(self) -> Self:
        """Bind and serve in a daemon thread; returns once the port is open."""
        if self._thread is not None:
            raise RuntimeError("already started")
        ready = threading.Event()
        failure: list[BaseException] = []
        loop = asyncio.new_event_loop()
        self._loop = loop

        def run() -> None:
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self._bind())
            except BaseException as exc:
                failure.append(exc)
                ready.set()
                loop.close()
                return
            ready.set()
            try:
                loop.run_forever()
            finally:
                loop.run_until_complete(loop.shutdown_asyncgens())
                loop.close()

        self._thread = threading.Thread(target=run, name="fake-model-server", daemon=True)
        self._thread.start()
        if not ready.wait(_START_TIMEOUT_SECONDS):
            raise RuntimeError("fake model server did not start")
        if failure:
            self._thread.join(_START_TIMEOUT_SECONDS)
            self._thread = None
            raise failure[0]
        return self

    def stop(self) -> None:
        """Close every connection (ending hangs) and the listening socket; join the thread."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        with contextlib.suppress(RuntimeError):
            future = asyncio.run_coroutine_threadsafe(self._shutdown(), loop)
            future.result(_START_TIMEOUT_SECONDS)
            loop.call_soon_threadsafe(loop.stop)
        thread.join(_START_TIMEOUT_SECONDS)
        self._loop = self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # addresses

    @property
    def port(self) -> int:
        """The bound port."""
        if self._server is None:
            raise RuntimeError("not started")
        port: int = self._server.sockets[0].getsockname()[1]
        return port

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def anthropic_base_url(self) -> str:
        """The base URL an Anthropic client takes (no ``/v1``)."""
        return self.url

    @property
    def openai_base_url(self) -> str:
        """The base URL an OpenAI client takes (with ``/v1``)."""
        return self.url + "/v1"

    # behaviour selection

    def set_default(self, behaviour: Behaviour) -> None:
        """Answer with ``behaviour`` when no script entry or rule applies."""
        with self._lock:
            self._default = behaviour

    def add_rule(self, marker: str, behaviour: Behaviour) -> None:
        """Answer with ``behaviour`` when ``marker`` occurs in a request body (first rule wins)."""
        with self._lock:
            self._rules.append((marker.encode(), behaviour))

    def script(self, behaviours: Iterable[Behaviour]) -> None:
        """Queue behaviours for the next requests, one each, ahead of rules and the default."""
        with self._lock:
            self._script.extend(behaviours)

    def reset(self) -> None:
        """Forget rules, script and recorded requests; answer ``ok()`` at the initial latency."""
        with self._lock:
            self.latency = self._initial_latency
            self._default = Ok()
            self._rules.clear()
            self._script.clear()
            self._recorded.clear()
            self._count = 0
            self._connections = 0

    @property
    def requests(self) -> list[RecordedRequest]:
        """The most recent requests received, oldest first."""
        with self._lock:
            return list(self._recorded)

    @property
    def request_count(self) -> int:
        """How many requests arrived since start or the last ``reset()``."""
        with self._lock:
            return self._count

    @property
    def connection_count(self) -> int:
        """How many connections were accepted since start or the last ``reset()``."""
        with self._lock:
            return self._connections

    def _choose(self, raw_body: bytes) -> Behaviour:
        with self._lock:
            if self._script:
                return self._script.popleft()
            for marker, behaviour in self._rules:
                if marker in raw_body:
                    return behaviour
            return self._default

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._recorded.append(request)
            self._count += 1

    # serving (event-loop thread only)

    async def _bind(self) -> None:
        self._server = await asyncio.start_server(
            self._connection, "127.0.0.1", self._port, backlog=1024, limit=1 << 20
        )

    async def _shutdown(self) -> None:
        if self._server is not None:
            self._server.close()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()
        # Let the transports' close callbacks run so no socket is left for the GC to find.
        for _ in range(3):
            await asyncio.sleep(0)

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        with self._lock:
            self._connections += 1
        try:
            while await self._exchange(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        except asyncio.CancelledError:
            # Only stop() cancels; ending normally keeps asyncio from logging each cancelled task.
            pass
        except _BadRequest as exc:
            with contextlib.suppress(ConnectionError):
                await _send(writer, 400, {"content-type": "text/plain"}, str(exc).encode())
        finally:
            self._tasks.discard(task)
            writer.close()

    async def _exchange(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Serve one request; True when the connection stays open for another."""
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return False
        lines = head.decode("latin-1").split("\r\n")
        try:
            method, target, version = lines[0].split(" ", 2)
        except ValueError:
            raise _BadRequest("bad request line") from None
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if line:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
        body = await _read_body(reader, headers)
        path = target.split("?", 1)[0]
        try:
            parsed = json.loads(body) if body else None
        except ValueError:
            parsed = None
        self._record(RecordedRequest(method, path, headers, parsed))
        connection = headers.get("connection", "").lower()
        keep_alive = connection != "close" if version == "HTTP/1.1" else connection == "keep-alive"
        route = (method, path)
        if route == ("POST", "/v1/messages"):
            answered = await self._model_call(writer, _Anthropic(), headers, parsed, body)
        elif route == ("POST", "/v1/chat/completions"):
            answered = await self._model_call(writer, _OpenAI(), headers, parsed, body)
        elif route == ("GET", "/v1/models"):
            await _send_json(writer, 200, _models_list())
            answered = True
        else:
            wire: _Wire = _Anthropic() if "anthropic-version" in headers else _OpenAI()
            await _send_json(writer, 404, wire.error(404, f"no route for {method} {path}"))
            answered = True
        return answered and keep_alive

    async def _model_call(
        self,
        writer: asyncio.StreamWriter,
        wire: _Wire,
        headers: dict[str, str],
        parsed: Any,
        raw: bytes,
    ) -> bool:
        refusal = wire.refusal(headers, parsed)
        if refusal is not None:
            code, problem = refusal
            await _send_json(writer, code, wire.error(code, problem), wire.id_header(self._ids))
            return True
        behaviour = self._choose(raw)
        match behaviour:
            case Status(code, retry_after, message):
                extra = wire.id_header(self._ids)
                if retry_after is not None:
                    extra["retry-after"] = f"{retry_after:g}"
                await _send_json(writer, code, wire.error(code, message), extra)
                return True
            case Hang(seconds):
                await asyncio.sleep(seconds)
                return False
            case Malformed():
                await _send(writer, 200, {"content-type": "application/json"}, b'{"id": "msg_')
                return True
            case Raw(data, code):
                await _send(writer, code, {"content-type": "application/json"}, data)
                return True
            case _:
                pass
        text = _answer_text(behaviour, wire.user_text(parsed))
        if isinstance(behaviour, Ok | Empty | Oversized):
            delay = self.latency + (behaviour.latency if isinstance(behaviour, Ok) else 0.0)
            if delay > 0:
                await asyncio.sleep(delay)
        payload = wire.success(parsed, text, next(self._ids))
        data = json.dumps(payload).encode()
        headers = {"content-type": "application/json", **wire.id_header(self._ids)}
        if isinstance(behaviour, CloseMidBody):
            headers["content-length"] = str(len(data))
            await _send(writer, 200, headers, data[: len(data) // 2])
            return False
        if isinstance(behaviour, SlowDrip):
            headers["content-length"] = str(len(data))
            await _send(writer, 200, headers, b"")
            # At most 100 writes a second: slow for the client, cheap for this loop.
            steps = max(1, min(len(data), int(behaviour.total_seconds * 100)))
            size = -(-len(data) // steps)
            for start in range(0, len(data), size):
                await asyncio.sleep(behaviour.total_seconds / steps)
                writer.write(data[start : start + size])
                await writer.drain()
            return True
        await _send(writer, 200, headers, data)
        return True


class _Wire:
    """One API's request validation and response shapes."""

    def refusal(self, headers: dict[str, str], body: Any) -> tuple[int, str] | None:
        """The status and message the real API would refuse this request with, if any."""
        if not isinstance(body, dict):
            return 400, "request body must be a JSON object"
        if not isinstance(body.get("model"), str):
            return 400, "model: field required"
        if not isinstance(body.get("messages"), list):
            return 400, "messages: field required"
        return None

    def user_text(self, body: dict[str, Any]) -> str:
        parts: list[str] = []
        for message in body["messages"]:
            if isinstance(message, dict) and message.get("role") == "user":
                parts.append(_flatten(message.get("content")))
        return "\n".join(parts)

    def id_header(self, ids: itertools.count[int]) -> dict[str, str]:
        raise NotImplementedError

    def error(self, code: int, message: str | None) -> dict[str, Any]:
        raise NotImplementedError

    def success(self, body: dict[str, Any], text: str, serial: int) -> dict[str, Any]:
        raise NotImplementedError


class _Anthropic(_Wire):
    def refusal(self, headers: dict[str, str], body: Any) -> tuple[int, str] | None:
        # Older SDKs authenticate with x-api-key, newer ones with a bearer token; accept both.
        if "x-api-key" not in headers and "authorization" not in headers:
            return 401, "x-api-key header is required"
        if "anthropic-version" not in headers:
            return 400, "anthropic-version: header is required"
        problem = super().refusal(headers, body)
        if problem is None and not isinstance(body.get("max_tokens"), int):
            return 400, "max_tokens: field required"
        return problem

    def id_header(self, ids: itertools.count[int]) -> dict[str, str]:
        return {"request-id": f"req_fake{next(ids):012d}"}

    def error(self, code: int, message: str | None) -> dict[str, Any]:
        kind = _ANTHROPIC_ERRORS.get(code, "api_error")
        text = message or f"fake {kind.replace('_', ' ')} (HTTP {code})"
        return {"type": "error", "error": {"type": kind, "message": text}}

    def success(self, body: dict[str, Any], text: str, serial: int) -> dict[str, Any]:
        prompt = _flatten(body.get("system")) + self.user_text(body)
        return {
            "id": f"msg_fake{serial:012d}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model") or DEFAULT_MODEL,
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": _tokens(prompt), "output_tokens": _tokens(text)},
        }


class _OpenAI(_Wire):
    def id_header(self, ids: itertools.count[int]) -> dict[str, str]:
        return {"x-request-id": f"req_fake{next(ids):012d}"}

    def error(self, code: int, message: str | None) -> dict[str, Any]:
        kind, err_code = _OPENAI_ERRORS.get(code, ("server_error", None))
        return {
            "error": {
                "message": message or f"fake {kind.replace('_', ' ')} (HTTP {code})",
                "type": kind,
                "param": None,
                "code": err_code,
            }
        }

    def success(self, body: dict[str, Any], text: str, serial: int) -> dict[str, Any]:
        prompt_tokens = sum(_tokens(_flatten(m.get("content"))) for m in body["messages"])
        completion_tokens = _tokens(text)
        return {
            "id": f"chatcmpl-fake{serial:012d}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model") or DEFAULT_MODEL,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text, "refusal": None},
                    "logprobs": None,
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }


def default_summary(user_text: str) -> str:
    """The fake's default answer for a user message."""
    found = _TOOL_OUTPUT.search(user_text)
    source = found.group(2) if found else user_text
    return SUMMARY_PREFIX + source.strip()[:_EXCERPT_CHARS]


def _answer_text(behaviour: Behaviour, user_text: str) -> str:
    if isinstance(behaviour, Empty):
        return ""
    if isinstance(behaviour, Ok) and behaviour.text is not None:
        return behaviour.text
    if isinstance(behaviour, Oversized):
        unit = default_summary(user_text) + " "
        return (unit * (behaviour.chars // len(unit) + 1))[: behaviour.chars]
    return default_summary(user_text)


def _flatten(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(block.get("text", "") for block in content if isinstance(block, dict))
    return ""


def _tokens(text: str) -> int:
    return (len(text) + 3) // 4


def _models_list() -> dict[str, Any]:
    # One object that satisfies both SDKs' list-models shapes.
    model = {
        "id": DEFAULT_MODEL,
        "object": "model",
        "created": 0,
        "owned_by": "tersify",
        "type": "model",
        "display_name": "Fake Model",
        "created_at": "2025-01-01T00:00:00Z",
    }
    return {
        "object": "list",
        "data": [model],
        "has_more": False,
        "first_id": DEFAULT_MODEL,
        "last_id": DEFAULT_MODEL,
    }


async def _read_body(reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
    if "chunked" in headers.get("transfer-encoding", "").lower():
        chunks: list[bytes] = []
        while True:
            size_line = await reader.readuntil(b"\r\n")
            try:
                size = int(size_line.split(b";", 1)[0].strip(), 16)
            except ValueError:
                raise _BadRequest("bad chunk size") from None
            if size == 0:
                while (await reader.readuntil(b"\r\n")) != b"\r\n":
                    pass
                return b"".join(chunks)
            chunks.append(await reader.readexactly(size))
            await reader.readexactly(2)
    try:
        length = int(headers.get("content-length", "0"))
    except ValueError:
        raise _BadRequest("bad content-length") from None
    return await reader.readexactly(length) if length > 0 else b""


async def _send(
    writer: asyncio.StreamWriter, code: int, headers: dict[str, str], body: bytes
) -> None:
    lines = [f"HTTP/1.1 {code} {_REASONS.get(code, 'Error')}"]
    headers.setdefault("content-length", str(len(body)))
    lines.extend(f"{name}: {value}" for name, value in headers.items())
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
    await writer.drain()


async def _send_json(
    writer: asyncio.StreamWriter,
    code: int,
    payload: dict[str, Any],
    extra: dict[str, str] | None = None,
) -> None:
    headers = {"content-type": "application/json", **(extra or {})}
    await _send(writer, code, headers, json.dumps(payload).encode())


def main(argv: list[str] | None = None) -> None:
    """Serve until interrupted (for benchmarks and manual runs)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--port", type=int, default=8099)
    parser.add_argument("--latency-ms", type=float, default=0.0)
    args = parser.parse_args(argv)
    with FakeModelServer(args.port, latency=args.latency_ms / 1000) as server:
        print(f"fake model server on {server.url}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()


if __name__ == "__main__":
    main()
