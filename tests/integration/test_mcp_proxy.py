"""``tersify mcp-proxy`` before a real MCP server (mcp-server-git), driven by the MCP client."""

from __future__ import annotations

import json
import re
import select
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import IO, Any

import anyio
import mcp.types as types
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from tersify.settings import Settings
from tersify.worker.processes.group import GroupProcess
from tersify.worker.processes.worker_process import WorkerProcess
from tests.helpers import free_port, json_lines, tersify_argv

StartWorker = Callable[..., WorkerProcess]
COMMITS = 300
GIT_SERVER = [sys.executable, "-m", "mcp_server_git"]


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    """A git repository with a few hundred commits, made in one ``git fast-import``."""
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    stream = []
    for i in range(1, COMMITS + 1):
        message = f"Change {i}: adjust module_{i % 17} for case {i * 31 % 1000}\n".encode()
        content = f"value {i}\n".encode()
        stream.append(
            b"commit refs/heads/main\n"
            + f"committer Dev <dev{i % 5}@example.com> {1_700_000_000 + i * 60} +0000\n".encode()
            + f"data {len(message)}\n".encode()
            + message
            + f"M 644 inline file_{i % 20}.txt\ndata {len(content)}\n".encode()
            + content
            + b"\n"
        )
    subprocess.run(["git", "fast-import", "--quiet"], cwd=repo, input=b"".join(stream), check=True)
    subprocess.run(["git", "checkout", "-q", "main"], cwd=repo, check=True)
    return repo


@asynccontextmanager
async def session(command: list[str], env: dict[str, str]) -> AsyncIterator[ClientSession]:
    """An initialized MCP client session on the stdio server ``command``."""
    params = StdioServerParameters(command=command[0], args=command[1:], env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        yield client


def text_of(result: types.CallToolResult) -> str:
    """The result's text blocks joined."""
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


async def drive(repo: Path, settings: Settings) -> dict[str, Any]:
    """Call the same tools directly and through the proxy; return what each side answered."""
    env = settings.child_env(redis_url=settings.redis_url, log_format="json")
    proxy_cmd = tersify_argv("mcp-proxy", "--", *GIT_SERVER, "--repository", str(repo))
    got: dict[str, Any] = {}
    async with (
        session([*GIT_SERVER, "--repository", str(repo)], env) as direct,
        session(proxy_cmd, env) as proxied,
    ):
        got["direct_tools"] = (await direct.list_tools()).tools
        got["proxied_tools"] = (await proxied.list_tools()).tools
        big = {"repo_path": str(repo), "max_count": COMMITS}
        got["full"] = await direct.call_tool("git_log", big)
        got["summary"] = await proxied.call_tool("git_log", big)
        ref = re.search(r'ref="([0-9a-f]{32})"', text_of(got["summary"]))
        got["ref"] = ref.group(1) if ref else None
        if got["ref"]:
            got["range"] = await proxied.call_tool(
                "tersify_read", {"ref": got["ref"], "offset": 100, "limit": 7}
            )
            got["grep"] = await proxied.call_tool(
                "tersify_read", {"ref": got["ref"], "pattern": "CHANGE 150:"}
            )
            got["foreign"] = await proxied.call_tool("tersify_read", {"ref": "0" * 32})
        small = {"repo_path": str(repo), "max_count": 1}
        got["small_direct"] = await direct.call_tool("git_log", small)
        got["small_proxied"] = await proxied.call_tool("git_log", small)
        bad = {"repo_path": str(repo), "revision": "no-such-revision"}
        got["error_direct"] = await direct.call_tool("git_show", bad)
        got["error_proxied"] = await proxied.call_tool("git_show", bad)
    return got


def test_the_proxy_summarizes_a_large_result_and_reads_back_exact_lines(
    repository: Path, settings: Settings, start_worker: StartWorker
) -> None:
    start_worker()
    got = anyio.run(drive, repository, settings)
    names = [tool.name for tool in got["proxied_tools"]]
    assert got["proxied_tools"][:-1] == got["direct_tools"]  # offered unchanged
    assert names[-1] == "tersify_read"

    full = text_of(got["full"])
    summary = text_of(got["summary"])
    assert full.count("Commit: ") == COMMITS
    assert len(summary) < len(full) / 4
    assert got["ref"] is not None, summary
    assert not got["summary"].is_error

    lines = full.split("\n")
    assert got["range"].content[0].text == "\n".join(lines[100:107])
    assert "lines 101-107" in got["range"].content[1].text
    matching = [f"{n}: {line}" for n, line in enumerate(lines, 1) if "change 150:" in line.lower()]
    assert matching and got["grep"].content[0].text == "\n".join(matching)
    assert got["foreign"].is_error

    assert got["small_proxied"].model_dump() == got["small_direct"].model_dump()  # as it was
    assert got["error_direct"].is_error
    assert got["error_proxied"].model_dump() == got["error_direct"].model_dump()


async def drive_http(url: str, repo: Path) -> dict[str, Any]:
    """Call git_log and tersify_read over the proxy's streamable HTTP endpoint."""
    got: dict[str, Any] = {}
    async with (
        streamable_http_client(url) as (read, write),
        ClientSession(read, write) as client,
    ):
        await client.initialize()
        got["tools"] = [tool.name for tool in (await client.list_tools()).tools]
        big = {"repo_path": str(repo), "max_count": COMMITS}
        got["summary"] = text_of(await client.call_tool("git_log", big))
        ref = re.search(r'ref="([0-9a-f]{32})"', got["summary"])
        if ref:
            got["range"] = await client.call_tool(
                "tersify_read", {"ref": ref.group(1), "offset": 0, "limit": 3}
            )
    return got


def test_the_proxy_serves_streamable_http_with_listen(
    repository: Path, settings: Settings, start_worker: StartWorker, tmp_path: Path
) -> None:
    start_worker()
    port = free_port()
    proxy = GroupProcess(
        tersify_argv(
            *("mcp-proxy", "--listen", f"127.0.0.1:{port}", "--"),
            *GIT_SERVER,
            *("--repository", str(repository)),
        ),
        env=settings.child_env(redis_url=settings.redis_url, log_format="json"),
        log_path=tmp_path / "proxy.log",
    )
    proxy.start()
    try:
        proxy.wait_until(lambda: port_open(port), "the proxy listening", 30)
        got = anyio.run(drive_http, f"http://127.0.0.1:{port}/mcp", repository)
    finally:
        proxy.stop()
    assert got["tools"][-1] == "tersify_read" and "git_log" in got["tools"]
    assert "tersify_read(ref=" in got["summary"]
    logged = json_lines(proxy.log())
    (listening,) = [e for e in logged if e.get("event") == "mcp_proxy_listening"]
    assert listening["url"] == f"http://127.0.0.1:{port}/mcp"
    first = got["range"].content[0].text.split("\n")
    assert len(first) == 3 and first[0] == "Commit history:" and first[1].startswith("Commit: ")


def port_open(port: int) -> bool:
    """Whether something accepts connections on the loopback ``port``."""
    with socket.socket() as probe:
        probe.settimeout(0.5)
        return probe.connect_ex(("127.0.0.1", port)) == 0


REPORTING = [sys.executable, str(Path(__file__).parents[1] / "mcpservers" / "reporting.py")]


async def drive_reporting(settings: Settings) -> dict[str, Any]:
    """List the tools through the proxy, call the server's own tersify_read, and count with a
    progress callback; what came back."""
    env = settings.child_env(redis_url=settings.redis_url, log_format="json")
    got: dict[str, Any] = {"progress": []}

    async def progress(done: float, total: float | None, message: str | None) -> None:
        got["progress"].append((done, total, message))

    async with session(tersify_argv("mcp-proxy", "--", *REPORTING), env) as proxied:
        got["tools"] = [tool.name for tool in (await proxied.list_tools()).tools]
        got["own"] = text_of(await proxied.call_tool("tersify_read", {"ref": "abc"}))
        got["count"] = text_of(
            await proxied.call_tool("count", {"steps": 3}, progress_callback=progress)
        )
    return got


def test_the_proxy_passes_progress_through_and_never_shadows_a_servers_tool(
    settings: Settings,
) -> None:
    got = anyio.run(drive_reporting, settings)
    assert sorted(got["tools"]) == ["count", "tersify_read", "tersify_read_2"]
    assert got["own"] == "the server's own tersify_read got abc"
    assert got["count"] == "counted to 3"
    assert got["progress"] == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


PLAIN = [sys.executable, str(Path(__file__).parents[1] / "mcpservers" / "plain.py")]


async def drive_plain(settings: Settings) -> dict[str, Any]:
    """Call the SDK-default server's tools directly and through the proxy; what came back (the
    client checks structured content against each tool's output schema on the way)."""
    env = settings.child_env(redis_url=settings.redis_url, log_format="json")
    got: dict[str, Any] = {}
    async with (
        session(PLAIN, env) as direct,
        session(tersify_argv("mcp-proxy", "--", *PLAIN), env) as proxied,
    ):
        got["tools"] = {tool.name: tool for tool in (await proxied.list_tools()).tools}
        for name in ("build_output", "build_report"):
            got[f"{name}_full"] = await direct.call_tool(name, {"lines": 3000})
            got[name] = await proxied.call_tool(name, {"lines": 3000})
        got["small_direct"] = await direct.call_tool("build_output", {"lines": 5})
        got["small_proxied"] = await proxied.call_tool("build_output", {"lines": 5})
        summary = got["build_output"].structured_content["result"]
        ref = re.search(r'ref="([0-9a-f]{32})"', summary)
        if ref:
            got["read_back"] = await proxied.call_tool(
                "tersify_read", {"ref": ref.group(1), "offset": 0, "limit": 3000}
            )
    return got


def test_the_proxy_summarizes_text_inside_structured_content_and_keeps_the_output_schema(
    settings: Settings, start_worker: StartWorker
) -> None:
    start_worker()
    got = anyio.run(drive_plain, settings)
    from jsonschema import validate

    full = got["build_output_full"].structured_content["result"]
    assert text_of(got["build_output_full"]) == full  # the SDK's default: text and structure agree
    summary = got["build_output"].structured_content["result"]
    assert len(summary) < len(full) / 4 and "tersify_read(ref=" in summary
    assert "undefined reference to `frobnicate'" in summary
    assert text_of(got["build_output"]) == summary  # the text block says the same
    validate(got["build_output"].structured_content, got["tools"]["build_output"].output_schema)
    assert got["read_back"].content[0].text == full  # the exact output, read back

    report, report_full = got["build_report"], got["build_report_full"]
    structured, structured_full = report.structured_content, report_full.structured_content
    validate(structured, got["tools"]["build_report"].output_schema)
    assert structured["status"] == "failed"
    assert len(structured["log"]) < len(structured_full["log"]) / 4
    assert "tersify_read(ref=" in structured["log"]
    assert structured["checksums"] == structured_full["checksums"]  # a summary breaks its pattern
    assert json.loads(text_of(report)) == structured  # the JSON text block mirrors the object

    assert got["small_proxied"].model_dump() == got["small_direct"].model_dump()  # as it was


@pytest.mark.parametrize(
    "server, code, line",
    [
        (
            [sys.executable, "-c", "import sys; sys.exit(3)"],
            4,
            f"the MCP server `{sys.executable}` exited with status 3 before it answered: run its "
            "command alone to see why",
        ),
        (
            ["no-such-mcp-server", "--stdio"],
            2,
            "the MCP server `no-such-mcp-server` was not found: check the command after --",
        ),
    ],
    ids=["exits with status 3", "not found"],
)
def test_a_server_that_ends_before_it_answers_is_named_with_its_exit_status(
    server: list[str], code: int, line: str, settings: Settings
) -> None:
    done = subprocess.run(
        tersify_argv("mcp-proxy", "--", *server),
        env=settings.child_env(redis_url=settings.redis_url),
        input="",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == code
    assert done.stderr.splitlines()[-1] == f"tersify mcp-proxy: {line}", done.stderr
    assert "ExceptionGroup" not in done.stderr and "report it" not in done.stderr


def test_a_server_that_exits_mid_session_is_named_to_the_agent_and_ends_the_proxy(
    settings: Settings,
) -> None:
    def call(number: int, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        params = {"name": tool, "arguments": arguments}
        return {"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": params}

    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"},
        },
    }
    ready = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    calls = [hello, ready, call(2, "stop", {"status": 5}), call(3, "build_output", {"lines": 3})]
    answers: dict[int, Any] = {}
    with subprocess.Popen(
        tersify_argv("mcp-proxy", "--", *PLAIN),
        env=settings.child_env(redis_url=settings.redis_url, log_format="json"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proxy:
        assert proxy.stdin and proxy.stdout and proxy.stderr
        try:
            for message in calls[:3]:
                proxy.stdin.write(json.dumps(message) + "\n")
            proxy.stdin.flush()
            answers |= read_answers(proxy.stdout, {1, 2})
            proxy.stdin.write(json.dumps(calls[3]) + "\n")  # the agent calls on
            proxy.stdin.flush()
            answers |= read_answers(proxy.stdout, {3})
            proxy.stdin.close()  # then goes
            code = proxy.wait(timeout=120)
        finally:
            if proxy.poll() is None:
                proxy.kill()
        stderr = proxy.stderr.read()
    line = f"the MCP server `{sys.executable}` exited with status 5: restart the proxy"
    for number in (2, 3):  # the call that ended it, and a call after: the same one line
        result = answers[number]["result"]
        assert result["isError"] and result["content"][0]["text"] == line, answers
    assert code == 4
    assert stderr.splitlines()[-1] == f"tersify mcp-proxy: {line}"


def read_answers(stdout: IO[str], ids: set[int], timeout: float = 120) -> dict[int, Any]:
    """The JSON-RPC answers with ``ids`` the proxy writes to ``stdout`` (bounded in time)."""
    found: dict[int, Any] = {}
    deadline = time.monotonic() + timeout
    while not ids <= found.keys():
        left = deadline - time.monotonic()
        assert left > 0 and select.select([stdout], [], [], left)[0], f"no answer to {ids}"
        answer = json.loads(stdout.readline())
        found[answer["id"]] = answer
    return found
