"""Just enough HTTP/1.1 for the fake: reading a request body, writing a response."""

from __future__ import annotations

import asyncio
import json
from typing import Any

REASONS = {
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


class BadRequest(Exception):
    pass


async def read_body(reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
    if "chunked" in headers.get("transfer-encoding", "").lower():
        chunks: list[bytes] = []
        while True:
            size_line = await reader.readuntil(b"\r\n")
            try:
                size = int(size_line.split(b";", 1)[0].strip(), 16)
            except ValueError:
                raise BadRequest("bad chunk size") from None
            if size == 0:
                while (await reader.readuntil(b"\r\n")) != b"\r\n":
                    pass
                return b"".join(chunks)
            chunks.append(await reader.readexactly(size))
            await reader.readexactly(2)
    try:
        length = int(headers.get("content-length", "0"))
    except ValueError:
        raise BadRequest("bad content-length") from None
    return await reader.readexactly(length) if length > 0 else b""


async def send(
    writer: asyncio.StreamWriter, code: int, headers: dict[str, str], body: bytes
) -> None:
    lines = [f"HTTP/1.1 {code} {REASONS.get(code, 'Error')}"]
    headers.setdefault("content-length", str(len(body)))
    lines.extend(f"{name}: {value}" for name, value in headers.items())
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
    await writer.drain()


async def send_json(
    writer: asyncio.StreamWriter,
    code: int,
    payload: dict[str, Any],
    extra: dict[str, str] | None = None,
) -> None:
    headers = {"content-type": "application/json", **(extra or {})}
    await send(writer, code, headers, json.dumps(payload).encode())
