"""Finding session logs, telling their formats apart, and reading them into transcripts.

A path is a file or a directory (searched recursively for ``*.jsonl`` and ``*.json``, sorted,
as Claude Code's projects and Codex's dated session folders are laid out). A JSON file is a
message list; a JSONL file's format is told from its first lines. Nothing in the input is
fatal: a line that is not JSON (a torn last line, a corrupt one, one nested past the
interpreter's limit), a file of no known format, a name that is not a regular file (a
directory named ``x.json``, a FIFO, a device, a dangling link) or a file that fails to read for
any other reason is skipped and counted. Only a path named on the command line that does not
exist is an error.
A session found in several files (copies, or checkpoints that each hold the session so far)
counts once: the copy with the most tool outputs.
"""

from __future__ import annotations

import json
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from tersify.worker.savings import claude_code, codex, messages
from tersify.worker.savings.transcript import Transcript
from tersify.worker.store.logfiles import Skip, log_files

_SNIFF_LINES = 50  # the first lines tell the format: every format's lines are alike


class LogFormat(StrEnum):
    """A session log format ``tersify savings`` reads."""

    AUTO = "auto"
    CLAUDE_CODE = "claude-code"
    CODEX = "codex"
    MESSAGES = "messages"


@dataclass
class Reading:
    """Everything read from some paths: the sessions, in file order, and what was skipped."""

    transcripts: list[Transcript] = field(default_factory=list)
    skips: list[Skip] = field(default_factory=list)
    files: int = 0
    repeated: int = 0


def read_logs(paths: Iterable[Path], log_format: LogFormat = LogFormat.AUTO) -> Reading:
    """Read every session in ``paths``; a missing path raises ``FileNotFoundError``."""
    reading = Reading()
    kept: dict[tuple[str, str], Transcript] = {}
    paths = list(paths)
    named = set(paths)
    for path in log_files(paths, (".jsonl", ".json"), recursive=True):
        if path in named and not path.exists() and not path.is_symlink():
            raise FileNotFoundError(f"no such file or directory: {path}")
        if (kind := _not_regular(path)) is not None:
            reading.skips.append(Skip(path, 0, kind))
            continue
        reading.files += 1
        try:
            found = read_file(path, log_format, reading.skips)
        except (OSError, RecursionError, ValueError, TypeError, KeyError) as exc:
            reading.skips.append(Skip(path, 0, f"could not be read ({type(exc).__name__})"))
            continue
        for transcript in found:
            ident = (transcript.agent, transcript.session)
            earlier = kept.get(ident)
            if earlier is not None:
                reading.repeated += 1
                if len(earlier.outputs) >= len(transcript.outputs):
                    continue
            kept[ident] = transcript
    reading.transcripts = list(kept.values())
    return reading


def _not_regular(path: Path) -> str | None:
    """Why ``path`` is not a file to read (what it is instead), or None for a regular file."""
    try:
        mode = path.stat().st_mode  # through links: a link to /dev/zero is a device
    except FileNotFoundError:
        return "a dangling link" if path.is_symlink() else "gone while reading"
    except OSError as exc:
        return f"could not be read ({exc.strerror or type(exc).__name__})"
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a directory, not a file"
    if stat.S_ISFIFO(mode):
        return "a FIFO, not a file"
    return "a device or socket, not a file"


def read_file(path: Path, log_format: LogFormat, skips: list[Skip]) -> list[Transcript]:
    """The sessions of one file, in ``log_format`` or the one its content shows."""
    if path.suffix == ".json" and log_format in (LogFormat.AUTO, LogFormat.MESSAGES):
        try:
            document = json.loads(path.read_bytes())
        except (ValueError, RecursionError):
            skips.append(Skip(path, 0, "not JSON (corrupt, truncated or nested too deep)"))
            return []
        return messages.read(path, document, skips)
    broken: list[Skip] = []
    lines = list(_lines(path, broken))
    if broken and not lines:  # no line is JSON: a JSON document under a .jsonl name?
        try:
            document = json.loads(path.read_bytes())
        except (ValueError, RecursionError):
            document = None
        if document is not None:
            return messages.read(path, document, skips)
    skips += broken
    chosen = log_format if log_format is not LogFormat.AUTO else sniff(e for _, e in lines)
    if chosen is None:
        skips.append(Skip(path, 0, "not a Claude Code, Codex or message-list log"))
        return []
    if chosen is LogFormat.MESSAGES:
        return messages.read(path, [entry for _, entry in lines], skips)
    return _READERS[chosen](path, lines, skips)


Reader = Callable[[Path, Iterable[tuple[int, dict[str, Any]]], list[Skip]], list[Transcript]]
_READERS: dict[LogFormat, Reader] = {
    LogFormat.CLAUDE_CODE: claude_code.read,
    LogFormat.CODEX: codex.read,
}


def sniff(entries: Iterable[dict[str, Any]]) -> LogFormat | None:
    """The format the first lines of a JSONL file are in, or None."""
    for index, entry in enumerate(entries):
        if index >= _SNIFF_LINES:
            break
        if claude_code.looks_like(entry):
            return LogFormat.CLAUDE_CODE
        if codex.looks_like(entry):
            return LogFormat.CODEX
        if messages.looks_like(entry):
            return LogFormat.MESSAGES
    return None


def _lines(path: Path, skips: list[Skip]) -> Iterator[tuple[int, dict[str, Any]]]:
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                entry = json.loads(raw)
            except ValueError:
                skips.append(Skip(path, number, "not JSON (corrupt or truncated)"))
                continue
            except RecursionError:
                skips.append(Skip(path, number, "nested too deep"))
                continue
            if isinstance(entry, dict):
                yield number, entry
            else:
                skips.append(Skip(path, number, "not a JSON object"))
