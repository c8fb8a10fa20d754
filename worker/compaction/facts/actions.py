"""Every agent's tool use in one form: what was asked (tool, arguments, command) and what came back.

Tool calls come with their results (OpenAI, Anthropic and metadata shapes). Agents that act in
text (mini-swe-agent, SWE-agent's classic format) write one fenced shell block per assistant
turn and get the output back as the next user turn, opening with ``<returncode>N</returncode>``
or ``OBSERVATION``; such a pair is an action too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from tersify.chat.calls import shell_command
from tersify.chat.messages import Role, Turn


class Status(StrEnum):
    """How an action ended, as far as its result says."""

    OK = "ok"
    FAILED = "failed"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class Action:
    """One tool use: turn index, tool name (lower case), arguments, shell command, result."""

    index: int
    tool: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    command: str | None = None
    output: str = ""
    status: Status = Status.UNKNOWN
    exit_code: int | None = None


SHELL_TOOLS = frozenset(
    {
        "bash",
        "shell",
        "execute_bash",
        "execute_command",
        "run_shell_command",
        "run_terminal_cmd",
        "exec_command",
        "local_shell",
        "terminal",
        "cmd",
        "run_command",
        "text-shell",  # a shell block written in the assistant's text
    }
)
_TEXT_BLOCK = re.compile(
    r"^```(?:bash|sh|shell|console|zsh)[ \t]*\n(.*?)\n```", re.DOTALL | re.MULTILINE
)
_RETURNCODE = re.compile(r"\A\s*<returncode>(-?\d+)</returncode>")
_EXIT_PATTERNS = (
    re.compile(r"\A\s*Exit code:? (-?\d+)\b"),
    re.compile(r"\[Command finished with exit code (-?\d+)\]"),
    re.compile(r"\bProcess exited with code (-?\d+)\b"),
    re.compile(r"^Exit code: (-?\d+)$", re.MULTILINE),
)


def _exit_code(output: str) -> int | None:
    for pattern in (_RETURNCODE, *_EXIT_PATTERNS):
        match = pattern.search(output[:4000])
        if match:
            return int(match.group(1))
    if output.lstrip().startswith("{"):
        try:
            loaded = json.loads(output)
        except ValueError:
            return None
        meta = loaded.get("metadata") if isinstance(loaded, dict) else None
        code = meta.get("exit_code") if isinstance(meta, dict) else None
        return code if isinstance(code, int) else None
    return None


def _status(exit_code: int | None, is_error: bool, flagged: bool = False) -> Status:
    """How a result ended: its exit code, else its error flag (``flagged``: results of this
    shape carry one, so its absence means success, as Anthropic's ``tool_result`` does)."""
    if exit_code is not None:
        return Status.OK if exit_code == 0 else Status.FAILED
    if is_error:
        return Status.FAILED
    return Status.OK if flagged else Status.UNKNOWN


def _text_action(index: int, turn: Turn, reply: Turn | None) -> Action | None:
    """A shell block in an assistant's text answered by the next user turn, else None."""
    if turn.role is not Role.ASSISTANT or turn.calls or reply is None:
        return None
    observed = reply.text.lstrip()
    if reply.role is not Role.USER or reply.results:
        return None
    if not (_RETURNCODE.match(observed) or observed.startswith("OBSERVATION")):
        return None
    blocks = _TEXT_BLOCK.findall(turn.text)
    if len(blocks) != 1:
        return None
    code = _exit_code(observed)
    command = blocks[0].strip()
    return Action(
        index, "text-shell", {"command": command}, command, observed, _status(code, False), code
    )


def _shell_block(turn: Turn) -> bool:
    return (
        turn.role is Role.ASSISTANT and not turn.calls and len(_TEXT_BLOCK.findall(turn.text)) == 1
    )


def observations(turns: Sequence[Turn]) -> frozenset[int]:
    """The user turns that are the output of a text action, not something the user asked.

    In a conversation that acts in text (two answered shell blocks or more), every user turn
    right after an assistant turn with one shell block is that block's output, including the
    last one (a submission's diff comes back without a return code).
    """
    answered = sum(1 for i, t in enumerate(turns[:-1]) if _text_action(i, t, turns[i + 1]))
    if answered < 2:
        return frozenset()
    return frozenset(
        i + 1
        for i, turn in enumerate(turns[:-1])
        if _shell_block(turn) and turns[i + 1].role is Role.USER and not turns[i + 1].results
    )


def actions(turns: Sequence[Turn]) -> list[Action]:
    """Every tool use in ``turns``, in order, each with its result when the turns hold it."""
    results = {r.call_id: (i, r) for i, t in enumerate(turns) for r in t.results}
    found: list[Action] = []
    for index, turn in enumerate(turns):
        for call in turn.calls:
            arguments = call.input
            tool = call.name.rsplit("__", 1)[-1].lower()  # mcp__server__tool → tool
            command = shell_command(arguments) if tool in SHELL_TOOLS else None
            at, result = results.get(call.id, (index, None))
            output = result.content if result is not None else ""
            code = _exit_code(output) if result is not None else None
            flagged = turns[at].role is Role.USER  # a tool_result block, with its is_error flag
            status = _status(code, result.is_error, flagged) if result else Status.UNKNOWN
            found.append(Action(index, tool, arguments, command, output, status, code))
        reply = turns[index + 1] if index + 1 < len(turns) else None
        text = _text_action(index, turn, reply)
        if text is not None:
            found.append(text)
    return found
