"""The proxy's server: the downstream server's tools plus ``tersify_read``, calls forwarded.

A text result over ``TERSIFY_SUMMARIZE_THRESHOLD_CHARS`` is submitted to tersify (classified
by the tool's name and arguments, the intent from ``TERSIFY_MCP_INTENT`` or a query-like
argument) and replaced by its summary, which names the ``output_ref`` to read the exact output
with. Structured content is read the same way, one long string leaf at a time
(``worker.mcp.structured``): the official SDK sends a tool's ``str`` as ``{"result": TEXT}``.
An error, images, and short results are handed back as the downstream server sent them. When
no live worker serves the queue, or the summary does not come in ``TERSIFY_MCP_WAIT_SECONDS``,
the agent gets the full result rather than a stall.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import mcp.types as types
import structlog
from mcp.client.session import ClientSession
from mcp.client.stdio import stdio_client
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPError

from tersify.chat import command_of
from tersify.client import AsyncProducer
from tersify.client.outputs import DEFAULT_LIMIT
from tersify.contract import Queue, SummaryResult
from tersify.errors import DownstreamError, InvalidJobError, JobNotFoundError, TersifyError
from tersify.settings import Settings
from tersify.worker.mcp.downstream import exited, failed, recorded
from tersify.worker.mcp.results import (
    intent_of,
    read_answer,
    read_tool,
    reader_name,
    result_text,
    summarized,
    summary_text,
    tool_error,
)
from tersify.worker.mcp.structured import Path, long_leaves, mirrored, replaced, schema_kept
from tersify.worker.redact import leaving_with

log = structlog.get_logger("tersify.mcp")

_MAX_PAGES = 100
_EXIT_GRACE = 3.0  # seconds a closed connection may take to show as the server's exit


@dataclass
class Proxy:
    """One proxy run: the downstream session, a producer, the session its jobs belong to, and
    the reader's name (one no downstream tool has)."""

    downstream: ClientSession
    producer: AsyncProducer
    settings: Settings
    session_id: str
    reader: str
    output_schemas: dict[str, dict[str, Any] | None]
    command: Sequence[str]
    exit_status: Callable[[], int | None]
    """The downstream server's exit status once it has exited (``worker.mcp.downstream``)."""

    def ended(self) -> DownstreamError | None:
        """The error to end with when the downstream server has exited, else None."""
        status = self.exit_status()
        return None if status is None else exited(self.command, status)

    async def watch(self, stop: Callable[[], None] | None = None, every: float = 0.5) -> None:
        """Wait for the downstream server to exit, log it once, and call ``stop``."""
        while (ended := self.ended()) is None:
            await anyio.sleep(every)
        log.error("mcp_server_exited", server=self.command[0], status=ended.status)
        if stop is not None:
            stop()

    async def list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        """The downstream tools, unchanged, and the reader once the last page is listed."""
        listed = await self.downstream.list_tools(params=params)
        self.output_schemas.update({tool.name: tool.output_schema for tool in listed.tools})
        if listed.next_cursor is not None:
            return listed
        return listed.model_copy(update={"tools": [*listed.tools, read_tool(self.reader)]})

    async def call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        """Forward a call, and the downstream server's progress notifications back to the agent
        while it runs; summarize its long text (see the module)."""
        if params.name == self.reader:
            return await self.read(params.arguments or {})
        if (ended := self.ended()) is not None:
            return tool_error(str(ended))
        try:
            result = await self.downstream.call_tool(
                params.name, params.arguments, progress_callback=_progress_to(ctx)
            )
        except MCPError:
            with anyio.move_on_after(_EXIT_GRACE):  # a closed connection: did the server exit?
                while self.ended() is None:
                    await anyio.sleep(0.05)
            if (ended := self.ended()) is not None:
                return tool_error(str(ended))
            raise
        if result.is_error:
            return result
        if result.structured_content is not None:
            return await self.shrink_structured(params, result) or result
        text = result_text(result)
        if text is None or len(text) <= self.settings.summarize_threshold_chars:
            return result
        summaries = await self.summaries(params, {(): text})
        return summarized(summaries[()], self.reader) if summaries else result

    async def shrink_structured(
        self, params: types.CallToolRequestParams, result: types.CallToolResult
    ) -> types.CallToolResult | None:
        """``result`` with its long string leaves summarized, in the structured content and in
        the text blocks that repeat it; None to hand back the original."""
        before = result.structured_content
        originals = long_leaves(before, self.settings.summarize_threshold_chars)
        summaries = await self.summaries(params, originals) if originals else None
        if not summaries:
            return None
        texts = {path: summary_text(summary, self.reader) for path, summary in summaries.items()}
        kept = schema_kept(self.output_schemas.get(params.name), before, texts)
        if not kept:
            log.warning("mcp_result_passed_unsummarized", tool=params.name, why="output_schema")
            return None
        after = replaced(before, kept)
        content = mirrored(list(result.content), before, after, kept, originals)
        return result.model_copy(update={"structured_content": after, "content": content})

    async def summaries(
        self, params: types.CallToolRequestParams, texts: dict[Path, str]
    ) -> dict[Path, SummaryResult] | None:
        """Tersify's summary of each text, submitted side by side; None to hand back the
        original result (no live worker, or a summary failed or came too late)."""
        try:
            if await self.producer.live_workers(Queue.INTERACTIVE) == 0:
                log.warning("mcp_result_passed_unsummarized", tool=params.name, why="no_worker")
                return None
            handles = [
                await self.producer.submit(
                    session_id=self.session_id,
                    tool_name=params.name,
                    output=text,
                    command=command_of(params.arguments),
                    query=intent_of(params.arguments, self.settings.mcp_intent),
                )
                for text in texts.values()
            ]
            got: list[SummaryResult] = []
            with anyio.fail_after(self.settings.mcp_wait_seconds):
                for handle in handles:  # they run side by side; the waits end together
                    got.append(await handle.wait(self.settings.mcp_wait_seconds))
        except (TersifyError, TimeoutError) as exc:
            log.warning("mcp_result_passed_unsummarized", tool=params.name, why=type(exc).__name__)
            return None
        for summary in got:
            log.info("mcp_result_summarized", tool=params.name, chars_in=summary.chars_in)
        leaving = [leaving_with(summary, self.settings.redact) for summary in got]
        return dict(zip(texts, leaving, strict=True))

    async def read(self, arguments: dict[str, Any]) -> types.CallToolResult:
        """``tersify_read``: exact lines, or matching ones, of an output this proxy summarized."""
        ref, pattern = arguments.get("ref"), arguments.get("pattern")
        offset, limit = arguments.get("offset", 0), arguments.get("limit", DEFAULT_LIMIT)
        if not isinstance(ref, str) or not isinstance(offset, int) or not isinstance(limit, int):
            return tool_error(f"{self.reader} needs ref (string), offset and limit (integers)")
        if pattern is not None and not isinstance(pattern, str):
            return tool_error(f"{self.reader}'s pattern must be a string")
        try:
            found = await self.producer.read_output(
                ref, offset, limit, grep=pattern, session_id=self.session_id
            )
        except (InvalidJobError, JobNotFoundError) as exc:
            return tool_error(f"{self.reader}: {exc}")
        return read_answer(found)


def build_server(proxy: Proxy, name: str) -> Server[Any]:
    """The MCP server the agent talks to, answering from ``proxy``."""
    return Server(
        name,
        version="0.1.0",
        on_list_tools=proxy.list_tools,
        on_call_tool=proxy.call_tool,
    )


@asynccontextmanager
async def connected(command: Sequence[str], settings: Settings) -> AsyncIterator[Proxy]:
    """Start the downstream server ``command`` and yield a proxy in front of it; a server that
    ends before it answers raises ``DownstreamError`` naming its exit status."""
    with recorded(command, settings.child_env()) as (params, exit_status):
        handshake: Exception | None = None
        try:
            async with (
                stdio_client(params) as (read, write),
                ClientSession(read, write) as session,
                AsyncProducer(settings) as producer,
            ):
                try:
                    await session.initialize()
                    tools = await _tools(session)
                except Exception as exc:  # the server closed the connection, or spoke nonsense
                    handshake = exc
                    raise
                reader = reader_name({tool.name for tool in tools})
                session_id = settings.mcp_session or _new_session()
                schemas = {tool.name: tool.output_schema for tool in tools}
                yield Proxy(
                    session, producer, settings, session_id, reader, schemas, command, exit_status
                )
        except BaseException:
            if handshake is None:
                raise
            raise failed(command, exit_status(), handshake) from None


def _progress_to(ctx: ServerRequestContext[Any]) -> ProgressFnT | None:
    """Pass the downstream call's progress on to the agent, if the agent asked for progress."""
    token = (ctx.meta or {}).get("progress_token")
    if token is None:
        return None

    async def forward(progress: float, total: float | None, message: str | None) -> None:
        await ctx.session.send_progress_notification(
            token, progress, total, message, related_request_id=str(ctx.request_id)
        )

    return forward


async def _tools(session: ClientSession) -> list[types.Tool]:
    """Every tool the downstream server lists, over all its pages (bounded)."""
    tools: list[types.Tool] = []
    cursor: str | None = None
    for _ in range(_MAX_PAGES):
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        listed = await session.list_tools(params=params)
        tools.extend(listed.tools)
        if (cursor := listed.next_cursor) is None:
            break
    return tools


def _new_session() -> str:
    return f"mcp-{secrets.token_hex(8)}"
