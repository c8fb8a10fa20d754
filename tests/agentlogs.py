"""Generated agent sessions in Claude Code's project JSONL: long, varied, and fully known.

``long_session`` writes a session of ``calls`` model calls, each running one tool (a test run,
a file read, a search, a listing, a JSON dump) whose output size varies from a few lines to
tens of kilobytes, and returns what it wrote, so a test can work the savings out on its own.
Every few calls one API response is logged as two lines (text, then the tool call) with the same
message id, as Claude Code does.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MODEL = "claude-sonnet-4-5-20250929"


@dataclass(frozen=True, slots=True)
class Written:
    """One tool output the generator wrote, and its place in the session."""

    tool_name: str
    command: str | None
    text: str
    call: int  # the model call (0-based) whose tool produced it


def _pytest(rng: random.Random, size: int) -> tuple[str, str | None, str]:
    lines = [f"tests/test_mod{i % 17}.py::test_case_{i} PASSED" for i in range(size)]
    for _ in range(rng.randint(0, 3)):
        at = rng.randrange(len(lines))
        lines[at] = lines[at].replace("PASSED", "FAILED") + "\nE   AssertionError: 3 != 4"
    tail = f"==== {size} tests ran in {rng.uniform(1, 90):.2f}s ===="
    return "Bash", "python -m pytest -v", "\n".join([*lines, tail])


def _read(rng: random.Random, size: int) -> tuple[str, str | None, str]:
    body = [f"{n:6d}\u2192    value_{n} = compute({n}, {rng.randint(0, 999)})" for n in range(size)]
    return "Read", None, "\n".join(body)


def _grep(rng: random.Random, size: int) -> tuple[str, str | None, str]:
    hits = [
        f"src/pkg/module_{rng.randint(0, 40)}.py:{rng.randint(1, 900)}: use_thing()"
        for _ in range(size)
    ]
    return "Grep", None, "\n".join(hits)


def _listing(rng: random.Random, size: int) -> tuple[str, str | None, str]:
    names = [
        f"-rw-r--r-- 1 dev dev {rng.randint(10, 99999):6d} Jan 1 file_{i}.txt" for i in range(size)
    ]
    return "Bash", "ls -la build/", "\n".join(names)


def _json(rng: random.Random, size: int) -> tuple[str, str | None, str]:
    records = [{"id": i, "name": f"item-{i}", "score": rng.random()} for i in range(size)]
    return "Bash", "curl -s localhost/api/items | jq .", json.dumps(records, indent=2)


_TOOLS = (_pytest, _read, _grep, _listing, _json)


def long_session(path: Path, calls: int, seed: int = 1) -> list[Written]:
    """Write a session of ``calls`` model calls to ``path``; the outputs in order."""
    rng = random.Random(seed)
    session = f"gen-{seed:04d}-0000-0000-0000-000000000000"
    lines: list[dict[str, Any]] = [_user(session, "Fix the failing build, please.")]
    written: list[Written] = []
    for call in range(calls):
        size = rng.choice((3, 10, 40, 150, 600, 2000))
        tool_name, command, text = rng.choice(_TOOLS)(rng, size)
        tool_id = f"toolu_{call:06d}"
        message_id = f"msg_{call:06d}"
        arguments = {"command": command} if command else {"file_path": f"/src/f{call}.py"}
        use = {"type": "tool_use", "id": tool_id, "name": tool_name, "input": arguments}
        if call % 4 == 0:  # one response logged as two lines with one message id
            lines.append(_assistant(session, message_id, {"type": "text", "text": "Looking."}))
        lines.append(_assistant(session, message_id, use))
        result = {"type": "tool_result", "tool_use_id": tool_id, "content": text}
        lines.append(_user(session, [result]))
        written.append(Written(tool_name, command, text, call))
    lines.append(_assistant(session, "msg_last", {"type": "text", "text": "Done."}))
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return written


def _user(session: str, content: Any) -> dict[str, Any]:
    return {
        "type": "user",
        "sessionId": session,
        "isSidechain": False,
        "message": {"role": "user", "content": content},
    }


def _assistant(session: str, message_id: str, block: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "assistant",
        "sessionId": session,
        "isSidechain": False,
        "message": {"id": message_id, "role": "assistant", "model": MODEL, "content": [block]},
    }
