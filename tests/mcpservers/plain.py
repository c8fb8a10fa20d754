"""An MCP server (stdio) written as the official Python SDK's documentation shows, with its
defaults: a tool that returns ``str`` sends structured content ``{"result": TEXT}`` too, and a
tool that returns a model sends the object (and its JSON as text)."""

from __future__ import annotations

import hashlib
import os

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel, Field

server = MCPServer("plain")


def build_log(lines: int) -> str:
    """A build's time-stamped log of ``lines`` lines with one error near the end."""
    error = max(1, lines - lines // 10)
    return "\n".join(
        f"2026-03-01 12:{i // 60 % 60:02d}:{i % 60:02d} "
        + (
            f"src/module_{i % 97}.c:{i}:5: error: undefined reference to `frobnicate'"
            if i == error
            else f"cc -O2 -c src/module_{i % 97}.c -o build/module_{i}.o"
        )
        for i in range(1, lines + 1)
    )


class BuildReport(BaseModel):
    """A build's outcome: its status, its whole log, and the checksums of what it built."""

    status: str
    log: str
    checksums: str = Field(pattern=r"^([0-9a-f]{64}\n)*$")


@server.tool()
def build_output(lines: int) -> str:
    """What the build printed, ``lines`` lines long."""
    return build_log(lines)


@server.tool()
def build_report(lines: int) -> BuildReport:
    """The build's report: the log and one checksum per artifact (as many as lines / 10)."""
    digests = "".join(
        hashlib.sha256(str(i).encode()).hexdigest() + "\n" for i in range(lines // 10)
    )
    return BuildReport(status="failed", log=build_log(lines), checksums=digests)


@server.tool()
def stop(status: int) -> str:
    """End this server at once with exit ``status``, as a crash would."""
    os._exit(status)


if __name__ == "__main__":
    server.run()
