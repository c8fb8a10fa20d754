"""The downstream MCP server's process, started so that its exit status can be told.

The SDK's stdio transport keeps the process it starts to itself, so a server that exits before
it answers shows only as "Connection closed". The command therefore runs under a POSIX shell
that writes the server's exit status to a file once it ends (the shell stays the server's
parent, passing stdin and stdout through untouched); the proxy reads it to say which server
ended and how: at start, or later (then each call gets that line as a tool error, and the proxy
ends with it when the agent goes).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from mcp.client.stdio import StdioServerParameters

from tersify.errors import DownstreamError

_RECORD_STATUS = 'file=$1; shift; "$@"; status=$?; echo "$status" > "$file"; exit "$status"'
_NOT_FOUND, _NOT_EXECUTABLE = 127, 126  # the shell's statuses for a command it cannot run


@contextmanager
def recorded(
    command: Sequence[str], env: dict[str, str]
) -> Iterator[tuple[StdioServerParameters, Callable[[], int | None]]]:
    """The parameters that start ``command`` under the recording shell, and a function that
    reads its exit status (None while it runs, or when it was killed with the shell)."""
    with tempfile.TemporaryDirectory(prefix="tersify-mcp-") as directory:
        status = Path(directory) / "status"
        params = StdioServerParameters(
            command="/bin/sh",
            args=["-c", _RECORD_STATUS, "tersify-mcp-server", str(status), *command],
            env=env,
        )
        yield params, lambda: _read(status)


def handshake_failure(command: Sequence[str], status: int | None, exc: BaseException) -> str:
    """The one line for a server that ended, or broke the protocol, before it answered."""
    name = f"`{command[0]}`"
    if status == _NOT_FOUND:
        return f"the MCP server {name} was not found: check the command after --"
    if status == _NOT_EXECUTABLE:
        return f"the MCP server {name} cannot be run (not executable): check the command after --"
    if status is not None:
        return (
            f"the MCP server {name} exited with status {status} before it answered: run its "
            "command alone to see why"
        )
    reason = " ".join(str(exc).split())[:200] or type(exc).__name__
    return f"the MCP server {name} did not complete the MCP handshake ({reason})"


def exited(command: Sequence[str], status: int) -> DownstreamError:
    """The error for a server that exited after it answered."""
    return DownstreamError(
        f"the MCP server `{command[0]}` exited with status {status}: restart the proxy", status
    )


def failed(command: Sequence[str], status: int | None, exc: BaseException) -> DownstreamError:
    """The error that ends the proxy when its server failed before answering."""
    return DownstreamError(handshake_failure(command, status, exc), status)


def _read(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None
