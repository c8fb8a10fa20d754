"""A loopback fake of the Anthropic Messages and OpenAI Chat Completions APIs, with fault injection.

The server is raw asyncio (a small HTTP/1.1 parser with keep-alive) on its own event loop in a
daemon thread, so one test process can drive it at thousands of requests per second and hold
hundreds of slow connections open at once. It binds 127.0.0.1 only.

Behaviours: ``ok``, ``status``, ``malformed``, ``empty``, ``oversized``, ``hang``,
``close_mid_body``, ``slow_drip``, ``raw``, ``quoting`` (quotes the shown lines a pattern
matches), ``answer`` (a structured answer as given, valid or
not), ``verbatim`` (exactly this text, whatever format was asked for) and ``tool_call`` (the
model calls a tool). Which one a model call gets, first match wins:

1. ``script([...])``: a FIFO of behaviours, each consumed by one request;
2. ``add_rule(marker, behaviour)``: the first rule whose marker occurs in the raw request body
   (tests put a marker such as ``FAKE-FAULT-429`` in a tool output);
3. ``set_default(behaviour)``: everything else (``ok()`` until changed).

The default answer is ``"Summary: "`` plus the first 200 characters of the tool output (the body of
a ``<tool_output>`` tag when the user message has one, else the whole message), so it is
deterministic, usually shorter than the input, and easy to recognise; it reads past the line
numbers in front of numbered lines. A request that asks for a structured answer (a forced tool,
a JSON ``response_format``) gets it in that form, the text as the schema's first string
(``formats``). Token counts are chars / 4.

A request with ``"stream": true`` gets its answer as the API's SSE events (``slow_drip`` spreads
them over its seconds; ``streams_cut`` counts streams the client closed early). Besides
``/v1/messages`` and ``/v1/chat/completions`` it serves ``/v1/messages/count_tokens`` and the
Responses API (``/v1/responses``, unstreamed). Each recorded request keeps its raw body bytes.

Standalone: ``python -m tests.fakemodel --port 8099 --latency-ms 200``.
"""

from tests.fakemodel.behaviours import (
    Behaviour,
    RecordedRequest,
    answer,
    close_mid_body,
    empty,
    hang,
    malformed,
    ok,
    oversized,
    quoting,
    raw,
    slow_drip,
    status,
    tool_call,
    verbatim,
)
from tests.fakemodel.server import FakeModelServer
from tests.fakemodel.wire import DEFAULT_MODEL, SUMMARY_PREFIX, default_summary

__all__ = [
    "DEFAULT_MODEL",
    "SUMMARY_PREFIX",
    "Behaviour",
    "FakeModelServer",
    "RecordedRequest",
    "answer",
    "close_mid_body",
    "default_summary",
    "empty",
    "hang",
    "malformed",
    "ok",
    "oversized",
    "quoting",
    "raw",
    "slow_drip",
    "status",
    "tool_call",
    "verbatim",
]
