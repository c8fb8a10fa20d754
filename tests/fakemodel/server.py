"""The fake model server: an asyncio HTTP/1.1 server on its own loop in a daemon thread."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import threading
from collections import deque
from collections.abc import Iterable
from typing import Any, Self

from tests.fakemodel.behaviours import (
    Behaviour,
    CloseMidBody,
    Empty,
    Hang,
    Malformed,
    Ok,
    Oversized,
    Quoting,
    Raw,
    RecordedRequest,
    SlowDrip,
    Status,
    Structured,
    ToolCall,
    Verbatim,
)
from tests.fakemodel.calls import tool_payload
from tests.fakemodel.http import BadRequest, read_body, send, send_json
from tests.fakemodel.responses import ResponsesWire
from tests.fakemodel.stream import anthropic_events, openai_events
from tests.fakemodel.wire import (
    AnthropicWire,
    OpenAIWire,
    Wire,
    answer_text,
    flatten,
    models_list,
    tokens,
)

_START_TIMEOUT_SECONDS = 10.0


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
        self._streams_cut = 0
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

    def __exit__(self, *exc: object) -> None:
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
            self._streams_cut = 0

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

    @property
    def streams_cut(self) -> int:
        """How many streamed answers ended early because the client closed the connection."""
        with self._lock:
            return self._streams_cut

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
        except BadRequest as exc:
            with contextlib.suppress(ConnectionError):
                await send(writer, 400, {"content-type": "text/plain"}, str(exc).encode())
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
            raise BadRequest("bad request line") from None
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if line:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
        body = await read_body(reader, headers)
        path = target.split("?", 1)[0]
        try:
            parsed = json.loads(body) if body else None
        except (ValueError, RecursionError):  # a hostile test sends bodies nested past the limit
            parsed = None
        # tersify's own look at a server's description (GET /props, /v1/models) is no call a
        # test counts; a client's GET through the gateway is
        if not (method == "GET" and headers.get("user-agent", "").startswith("tersify/")):
            self._record(RecordedRequest(method, path, headers, parsed, body, target))
        connection = headers.get("connection", "").lower()
        keep_alive = connection != "close" if version == "HTTP/1.1" else connection == "keep-alive"
        route = (method, path)
        if route == ("POST", "/v1/messages"):
            answered = await self._model_call(
                reader, writer, AnthropicWire(), headers, parsed, body
            )
        elif route == ("POST", "/v1/chat/completions"):
            answered = await self._model_call(reader, writer, OpenAIWire(), headers, parsed, body)
        elif route == ("POST", "/v1/responses"):
            answered = await self._model_call(
                reader, writer, ResponsesWire(), headers, parsed, body
            )
        elif route == ("POST", "/v1/messages/count_tokens"):
            await self._count_tokens(writer, headers, parsed)
            answered = True
        elif route == ("GET", "/v1/models"):
            await send_json(writer, 200, models_list())
            answered = True
        else:
            wire: Wire = AnthropicWire() if "anthropic-version" in headers else OpenAIWire()
            await send_json(writer, 404, wire.error(404, f"no route for {method} {path}"))
            answered = True
        return answered and keep_alive

    async def _count_tokens(
        self, writer: asyncio.StreamWriter, headers: dict[str, str], parsed: Any
    ) -> None:
        wire = AnthropicWire()
        refusal = wire.refusal(
            headers, {"max_tokens": 0, **parsed} if isinstance(parsed, dict) else parsed
        )
        if refusal is not None:
            code, problem = refusal
            await send_json(writer, code, wire.error(code, problem), wire.id_header(self._ids))
            return
        counted = tokens(flatten(parsed.get("system")) + json.dumps(parsed["messages"]))
        await send_json(writer, 200, {"input_tokens": counted}, wire.id_header(self._ids))

    async def _model_call(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        wire: Wire,
        headers: dict[str, str],
        parsed: Any,
        raw: bytes,
    ) -> bool:
        refusal = wire.refusal(headers, parsed)
        if refusal is not None:
            code, problem = refusal
            await send_json(writer, code, wire.error(code, problem), wire.id_header(self._ids))
            return True
        behaviour = self._choose(raw)
        match behaviour:
            case Status(code, retry_after, message):
                extra = wire.id_header(self._ids)
                if retry_after is not None:
                    extra["retry-after"] = f"{retry_after:g}"
                await send_json(writer, code, wire.error(code, message), extra)
                return True
            case Hang(seconds):
                await asyncio.sleep(seconds)
                return False
            case Malformed():
                await send(writer, 200, {"content-type": "application/json"}, b'{"id": "msg_')
                return True
            case Raw(data, code):
                await send(writer, code, {"content-type": "application/json"}, data)
                return True
            case _:
                pass
        text = answer_text(behaviour, wire.user_text(parsed))
        if isinstance(behaviour, Ok | Quoting | Empty | Oversized | Structured | Verbatim):
            own = behaviour.latency if isinstance(behaviour, Ok | Quoting) else 0.0
            delay = self.latency + own
            if delay > 0:
                await asyncio.sleep(delay)
        payload = self._payload(wire, parsed, behaviour, text)
        if parsed.get("stream") is True and not isinstance(wire, ResponsesWire):
            await self._stream(reader, writer, wire, payload, parsed, behaviour)
            return True
        data = json.dumps(payload).encode()
        headers = {"content-type": "application/json", **wire.id_header(self._ids)}
        if isinstance(behaviour, CloseMidBody):
            headers["content-length"] = str(len(data))
            await send(writer, 200, headers, data[: len(data) // 2])
            return False
        if isinstance(behaviour, SlowDrip):
            headers["content-length"] = str(len(data))
            await send(writer, 200, headers, b"")
            # At most 100 writes a second: slow for the client, cheap for this loop.
            steps = max(1, min(len(data), int(behaviour.total_seconds * 100)))
            size = -(-len(data) // steps)
            for start in range(0, len(data), size):
                await asyncio.sleep(behaviour.total_seconds / steps)
                writer.write(data[start : start + size])
                await writer.drain()
            return True
        await send(writer, 200, headers, data)
        return True

    def _payload(
        self, wire: Wire, parsed: dict[str, Any], behaviour: Behaviour, text: str
    ) -> dict[str, Any]:
        """The whole answer: the scripted tool call, else ``text`` (in the structured form the
        request asked for, unless the behaviour says how to read it)."""
        if isinstance(behaviour, ToolCall):
            return tool_payload(wire, parsed, behaviour, next(self._ids))
        shape = {Structured: "data", Verbatim: "verbatim"}.get(type(behaviour), "text")
        return wire.success(parsed, text, next(self._ids), shape=shape)

    async def _stream(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        wire: Wire,
        payload: dict[str, Any],
        parsed: dict[str, Any],
        behaviour: Behaviour,
    ) -> None:
        """The answer as SSE, chunked; spread over ``SlowDrip.total_seconds`` when asked."""
        if isinstance(wire, AnthropicWire):
            events = anthropic_events(payload)
        else:
            usage = (parsed.get("stream_options") or {}).get("include_usage") is True
            events = openai_events(payload, usage)
        headers = {
            "content-type": "text/event-stream",
            "cache-control": "no-cache",
            "transfer-encoding": "chunked",
            **wire.id_header(self._ids),
        }
        lines = ["HTTP/1.1 200 OK", *(f"{k}: {v}" for k, v in headers.items())]
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        pause = behaviour.total_seconds / len(events) if isinstance(behaviour, SlowDrip) else 0.0
        try:
            for event in events:
                if pause:
                    await asyncio.sleep(pause)
                if reader.at_eof() or writer.is_closing():
                    raise ConnectionResetError("the client closed the stream")
                writer.write(f"{len(event):x}\r\n".encode() + event + b"\r\n")
                await writer.drain()
        except ConnectionError:
            with self._lock:
                self._streams_cut += 1
            raise
        writer.write(b"0\r\n\r\n")
        await writer.drain()
