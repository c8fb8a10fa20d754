"""JSON request bodies parsed off the event loop, and apart from the server's interpreter when
very large, so that one client's 20 MB submit never holds up every other client.

``json.loads`` of a 20 MB body is one C call that keeps the GIL for 60–160 ms, on a thread as
much as on the loop. The body is parsed as a ``Compute`` step of the app's ``AsyncProducer``:
in place when small, on a thread when large, in the producer's child process when very large
(``tersify.client.apart``): the same rule as every other CPU step of a request.

Routes opt in with ``ParsedApartRoute`` as their router's ``route_class``: FastAPI then reads
the body through ``ParsedApartRequest.json``, so validation, errors and the OpenAPI document
are FastAPI's own, unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.routing import APIRoute

from tersify.client import AsyncProducer


class ParsedApartRequest(Request):
    """A request whose JSON body is parsed by the app's producer (``app.state.producer``)."""

    async def json(self) -> Any:
        """The body as JSON, parsed once; ``json.JSONDecodeError`` when it is not JSON."""
        if not hasattr(self, "_json"):
            producer: AsyncProducer = self.app.state.producer
            body = await self.body()
            self._json = await producer.compute(json.loads, body, size=len(body), apart=True)
        return self._json


class ParsedApartRoute(APIRoute):
    """An ``APIRoute`` that hands FastAPI a ``ParsedApartRequest``."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        """FastAPI's handler, called with the request re-made as a ``ParsedApartRequest``."""
        handler = super().get_route_handler()

        async def parsed_apart(request: Request) -> Response:
            return await handler(ParsedApartRequest(request.scope, request.receive))

        return parsed_apart
