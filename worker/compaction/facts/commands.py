"""The commands run: the last run of each distinct one and how it ended.

Commands that only look around (``ls``, ``cat``, ``grep``, ``git status``…) are left out; test,
build and lint commands rank first. Two runs are the same command when they differ only in
white space and a trailing ``2>&1`` or ``| head/tail/grep …`` filter.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from tersify.worker.compaction.facts.actions import Action, Status
from tersify.worker.compaction.facts.arguments import only_names_a_file
from tersify.worker.compaction.facts.shell import parse_command, program

_FILTERS = re.compile(r"(\s*2>&1)?(\s*\|\s*(head|tail|grep|less|cat|wc)\b[^|]*)*\s*$")
_LOOK = frozenset(
    {"ls", "cat", "nl", "head", "tail", "grep", "rg", "find", "fd", "tree", "pwd", "echo",
     "wc", "less", "more", "file", "stat", "which", "cd", "sed", "awk", "bat", "diff", "du",
     "get-content", "gc", "type", "get-childitem", "gci", "dir", "select-string", "sls",
     "test-path", "get-item", "gi", "resolve-path", "findstr", "where", "set-location"}
)  # fmt: skip
_EDITS = frozenset({"rm", "mv", "cp", "touch", "mkdir", "tee", "chmod"})
_GIT_LOOK = frozenset({"status", "log", "show", "diff", "branch", "blame", "ls-files", "grep"})
_CHECKS = re.compile(
    r"\b(pytest|tox|nox|unittest|runtests|go (test|build|vet)|cargo (test|build|check|clippy)|"
    r"npm (test|run)|yarn|pnpm|make|mise run|ruff|mypy|eslint|tsc|jest|vitest|mvn|gradle|"
    r"bin/test|ctest|phpunit|rspec)\b"
)
_READ_TOOLS = frozenset({"read", "read_file", "view", "grep", "glob", "ls", "list_directory"})


@dataclass(frozen=True, slots=True)
class CommandRun:
    """The last run of one command: where, how it ended, and how many runs there were."""

    command: str
    index: int
    status: Status
    exit_code: int | None
    runs: int
    check: bool


def normalized(command: str) -> str:
    """``command`` with white space collapsed and trailing output filters removed."""
    return _FILTERS.sub("", " ".join(command.split()))


def _looks_only(command: str) -> bool:
    """True when every simple command of ``command`` only reads or lists."""
    commands = parse_command(command).commands
    for words in commands:
        name, args = program(words)
        if name == "sed" and any(a.startswith("-i") for a in args):
            return False
        if name == "git" and args[:1] and args[0] in _GIT_LOOK:
            continue
        if name.lower() not in _LOOK:
            return False
    return bool(commands)


def prints_files(action: Action) -> bool:
    """True when the action shows files or search hits (its output is content, not a verdict)."""
    if action.tool in _READ_TOOLS or only_names_a_file(action.arguments):
        return True  # a read tool's, or a call naming one file and where to read it
    if action.tool in ("str_replace_editor", "str_replace_based_edit_tool"):
        return action.arguments.get("command") == "view"
    return action.command is not None and _looks_only(action.command)


def _edits_only(command: str) -> bool:
    """True when the command only writes, moves or deletes files (Files Changed says which)."""
    parsed = parse_command(command)
    for words in parsed.commands:
        name, args = program(words)
        edit = name == "sed" and any(a.startswith("-i") for a in args)
        git = name == "git" and args[:1] and args[0] in ("checkout", "restore", "mv", "rm", "add")
        if not (
            edit
            or git
            or name in _EDITS
            or (name in ("cat", "echo", "printf") and parsed.redirects)
        ):
            return False
    return bool(parsed.commands)


def command_runs(actions: Sequence[Action]) -> list[CommandRun]:
    """The last run of each command that does more than look or edit; checks, then latest, first."""
    runs: dict[str, CommandRun] = {}
    for action in actions:
        if action.command is None or _looks_only(action.command) or _edits_only(action.command):
            continue
        key = normalized(action.command)
        count = runs.pop(key).runs + 1 if key in runs else 1
        check = bool(_CHECKS.search(key))
        runs[key] = CommandRun(key, action.index, action.status, action.exit_code, count, check)
    return sorted(runs.values(), key=lambda r: (not r.check, -r.index))
