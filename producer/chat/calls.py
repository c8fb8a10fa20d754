"""Tool calls and their results, however they arrived, and the command a call ran.

A call reaches tersify as an Anthropic ``tool_use`` block (its ``input`` an object), an OpenAI
``tool_calls`` entry or ``function_call`` (its ``arguments`` a JSON text), a Responses API item
(``function_call``, ``custom_tool_call`` with free-form ``input``, ``local_shell_call`` with an
``action``), an MCP ``tools/call`` (an ``arguments`` object), or a line of an agent's session
log holding one of these. Each becomes one ``ToolCall`` whose arguments are kept as text, so
``command_of`` reads every one of them the same way: the gateway, ``tersify savings``, the MCP
proxy, compaction and the evaluations classify a call alike whatever its path.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

COMMAND_MAX_CHARS: Final = 100_000
"""The longest command a job carries (the job contract's limit)."""

# Argument fields that hold a shell command line (or its argument vector), in the order tried.
_COMMAND_FIELDS: Final = ("command", "cmd", "script")
_COMMAND_LINES: Final = "commands"  # a list of command lines, run one after the other
_SHELLS: Final = frozenset({"bash", "sh", "zsh", "dash", "ksh", "ash", "fish"})
_SHELL_FLAGS: Final = frozenset({"-c", "-lc", "-ic", "-lic", "-ilc", "-cl"})


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool invocation requested by the assistant: its id, tool name and arguments.

    ``arguments`` is text: the JSON of the arguments object, or a free-form tool's own input.
    """

    id: str
    name: str
    arguments: str

    @classmethod
    def of(cls, call_id: str, name: str, arguments: Any) -> ToolCall:
        """A call from arguments in any arrival form (an object, a JSON text, plain text)."""
        return cls(call_id, name, arguments_text(arguments))

    @property
    def input(self) -> dict[str, Any]:
        """The arguments as an object (``decoded``)."""
        return decoded(self.arguments)

    @property
    def command(self) -> str | None:
        """The command this call ran (``command_of``)."""
        return command_of(self.arguments)


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The answer to one tool call."""

    call_id: str
    content: str
    is_error: bool = False


def arguments_text(arguments: Any) -> str:
    """Arguments as a call keeps them: text as it came, anything else as JSON."""
    if arguments is None:
        return ""
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments, ensure_ascii=False, default=str)


def _value(arguments: Any) -> Any:
    """Arguments as a value: a JSON text parsed, plain text kept as text."""
    if isinstance(arguments, str):
        try:
            return json.loads(arguments) if arguments.strip() else None
        except ValueError:
            return arguments  # a free-form tool (Codex's apply_patch) sends plain text
    return arguments


def decoded(arguments: Any) -> dict[str, Any]:
    """Arguments as an object; a value that is not one (free-form text) as ``{"input": …}``."""
    value = _value(arguments)
    if value is None:
        return {}
    if isinstance(value, Mapping):
        return {str(k): v for k, v in value.items()}
    return {"input": value}


def _argv(words: list[str]) -> str:
    """An argument vector as one command line; ``["bash", "-lc", CMD]`` is ``CMD``."""
    if len(words) == 3 and words[0].rsplit("/", 1)[-1] in _SHELLS and words[1] in _SHELL_FLAGS:
        return words[2]
    return shlex.join(words)


def _words(value: Any) -> list[str] | None:
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return value
    return None


def shell_command(arguments: Any) -> str | None:
    """The shell command line a call's arguments hold, whatever the tool is called; else None.

    ``command``, ``cmd`` or ``script`` as a string, or as an argument vector (joined as a shell
    reads it, a ``bash -lc CMD`` wrapper unwrapped), or ``commands``, a list of command lines.
    """
    value = _value(arguments)
    if not isinstance(value, Mapping):
        return None
    for name in _COMMAND_FIELDS:
        field = value.get(name)
        if isinstance(field, str) and field.strip():
            return field
        if (words := _words(field)) is not None:
            return _argv(words)
    lines = value.get(_COMMAND_LINES)
    if isinstance(lines, str) and lines.strip():
        return lines
    return "\n".join(lines) if (lines := _words(lines)) is not None else None


def command_of(arguments: Any) -> str | None:
    """The command a tool call ran, as the classifier and the summary prompt read it.

    Its shell command when its arguments hold one (``shell_command``), else its free-form input
    as it came, else its arguments as one line of JSON (keys sorted); None when it has none.
    ``arguments`` may be an object, a JSON text or plain text: every arrival path reads alike.
    """
    value = _value(arguments)
    if value is None or value == {} or value == "":
        return None
    command = shell_command(value)
    if command is None:
        command = (
            value
            if isinstance(value, str)
            else json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
        )
    return command[:COMMAND_MAX_CHARS]


# Responses API items that call a tool, and the member that holds each one's arguments.
_ITEM_ARGUMENTS: Final = {
    "function_call": "arguments",
    "custom_tool_call": "input",
    "local_shell_call": "action",
}


def item_call(item: Mapping[str, Any]) -> ToolCall | None:
    """The call a Responses API item (or a Codex rollout's item) makes; None for other items.

    A ``local_shell_call`` is a call of ``local_shell`` whose arguments are its ``action``; a
    call without a name has the name ``""``; an item without a call id is no call.
    """
    kind = item.get("type")
    member = _ITEM_ARGUMENTS.get(kind) if isinstance(kind, str) else None
    call_id = item.get("call_id") or item.get("id")
    name = "local_shell" if kind == "local_shell_call" else item.get("name")
    if member is None or not isinstance(call_id, str):
        return None
    return ToolCall.of(call_id, name if isinstance(name, str) else "", item.get(member))
