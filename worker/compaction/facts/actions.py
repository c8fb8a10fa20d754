"""Every agent's tool use in one form: what was asked (tool, arguments, command) and what came back.

Tool calls come with their results (OpenAI, Anthropic and metadata shapes). A call's shell
command is read from its command-like field whatever the tool is called (``arguments.command``),
or from the command literals of a code string that calls a shell (``cmd: "…"``). Agents that act
in text write one fenced shell block per assistant turn and get the output back as the next user
turn, opening with ``<returncode>N</returncode>`` or ``OBSERVATION``; such a pair is an action
too. In a conversation with no tool calls at all, the assistant's edit blocks (a path line over
``<<<<<<< SEARCH`` … ``>>>>>>> REPLACE``, or a fenced unified diff) are its edits.
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
from tersify.worker.compaction.facts.arguments import command as shaped_command
from tersify.worker.compaction.facts.arguments import is_path
from tersify.worker.compaction.facts.results import readable


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
# A line that only states an exit code, whoever wrote it: "Exit Code: 1", "exit_code=2",
# "<exit_code>0</exit_code>", "returncode: 1", "exit status 1", "<exited with exit code 1>",
# "[The command completed with exit code 1.]".
_EXIT_FIELD = re.compile(
    r"^\s*(?:<(?:exit_?code|returncode)>\s*(-?\d+)\s*</(?:exit_?code|returncode)>|"
    r"\W*(?:[A-Za-z]+ ){0,3}(?:exit(?:ed)?[ _-]?(?:with )?(?:exit )?(?:code|status)|"
    r"(?:finished|completed|terminated) with (?:exit )?code|return[ _-]?code|returncode)"
    r"\s*[:=]?\s*(-?\d+)\W*)\s*$",
    re.IGNORECASE | re.MULTILINE,
)
_EXIT_KEYS = ("exit_code", "exitCode", "returncode", "return_code", "exit_status")
_EDGE = 4000


def states_exit_code(line: str) -> bool:
    """True for a line that only states an exit code (a result's status, not an error)."""
    return _EXIT_FIELD.fullmatch(line.strip()) is not None


def _json_exit_code(output: str) -> int | None:
    """The exit code of a JSON object result: a top-level or ``metadata`` exit-code field."""
    try:
        loaded = json.loads(output)
    except ValueError:
        return None
    if not isinstance(loaded, dict):
        return None
    for holder in (loaded, loaded.get("metadata")):
        if isinstance(holder, dict):
            for key in _EXIT_KEYS:
                code = holder.get(key)
                if isinstance(code, int) and not isinstance(code, bool):
                    return code
    return None


def _exit_code(output: str) -> int | None:
    """The exit code a result states: in a known header, as a field line near its start or end,
    or as a field of a JSON object result; None when it states none."""
    for pattern in (_RETURNCODE, *_EXIT_PATTERNS):
        match = pattern.search(output[:_EDGE])
        if match:
            return int(match.group(1))
    edges = output if len(output) <= 2 * _EDGE else output[:_EDGE] + "\n" + output[-_EDGE:]
    fields = list(_EXIT_FIELD.finditer(edges))
    if fields:
        last = fields[-1]
        return int(last.group(1) or last.group(2))
    if output.lstrip().startswith("{"):
        return _json_exit_code(output)
    return None


_COMMAND_LITERAL = re.compile(
    r"""["']?\b(?:cmd|command)["']?\s*:\s*("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`[^`]*`)"""
)
_EDIT_BLOCK = re.compile(r"^<{7} SEARCH[ \t]*\n(.*?)^={7}[ \t]*\n(.*?)^>{7} REPLACE", re.M | re.S)
_DIFF_FENCE = re.compile(r"^```(?:diff|patch|udiff)[ \t]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
_FENCE = re.compile(r"^\s*```")
_PATCH_TEXT = re.compile(r"^\*\*\* Begin Patch|^\+\+\+ ", re.MULTILINE)


def _literal(quoted: str) -> str:
    """A string literal's value (JSON rules for double quotes, the usual escapes otherwise)."""
    if quoted.startswith('"'):
        try:
            value = json.loads(quoted)
        except ValueError:
            return quoted[1:-1]
        return value if isinstance(value, str) else quoted[1:-1]
    body = quoted[1:-1]
    return body.replace("\\n", "\n").replace("\\'", "'").replace("\\\\", "\\")


def _code_commands(arguments: Mapping[str, Any]) -> str | None:
    """The shell commands a code string calls (``exec({cmd: "…"})``), one a line, else None.

    Only for calls whose arguments are that one code string."""
    texts = [v for v in arguments.values() if isinstance(v, str) and v.strip()]
    if len(texts) != 1 or len(arguments) > 2 or _PATCH_TEXT.search(texts[0]):
        return None
    found = [_literal(m.group(1)) for m in _COMMAND_LITERAL.finditer(texts[0][:20_000])]
    lines = [c.strip() for c in found if c.strip()]
    return "\n".join(lines) if lines else None


def _command(tool: str, arguments: Mapping[str, Any]) -> str | None:
    """The shell command of a call: a known shell tool's, else by the arguments' shape."""
    if tool in SHELL_TOOLS:
        return shell_command(arguments)
    return shaped_command(arguments) or _code_commands(arguments)


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
            command = _command(tool, arguments)
            at, result = results.get(call.id, (index, None))
            output = result.content if result is not None else ""
            code = _exit_code(output) if result is not None else None
            output = readable(output)
            flagged = turns[at].role is Role.USER  # a tool_result block, with its is_error flag
            status = _status(code, result.is_error, flagged) if result else Status.UNKNOWN
            found.append(Action(index, tool, arguments, command, output, status, code))
        reply = turns[index + 1] if index + 1 < len(turns) else None
        text = _text_action(index, turn, reply)
        if text is not None:
            found.append(text)
    if not any(turn.calls for turn in turns):
        found += _text_edits(turns)
        found.sort(key=lambda a: a.index)
    return found


def _edit_path(lines: list[str]) -> str | None:
    """The path named on the last line before an edit block (a fence line passed over)."""
    for line in reversed(lines[-3:]):
        if not line.strip() or _FENCE.match(line):
            continue
        name = line.strip().strip("`*:#").strip()
        return name if is_path(name) else None
    return None


def _text_edits(turns: Sequence[Turn]) -> list[Action]:
    """The edit blocks of assistant texts, each an action whose arguments are its path and
    replacement, or its diff (for conversations that act in text, with no tool calls)."""
    found: list[Action] = []
    for index, turn in enumerate(turns):
        if turn.role is not Role.ASSISTANT:
            continue
        for block in _EDIT_BLOCK.finditer(turn.text):
            path = _edit_path(turn.text[: block.start()].splitlines())
            if path is not None:
                arguments = {"path": path, "replace": block.group(2)}
                found.append(Action(index, "text-edit", arguments))
        for fence in _DIFF_FENCE.finditer(turn.text):
            found.append(Action(index, "text-edit", {"patch": fence.group(1)}))
    return found
