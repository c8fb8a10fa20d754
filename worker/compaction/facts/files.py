"""Files changed (and files only read), from the edit tools and shell commands that touched them.

Edit tools name their file in an argument (Claude Code's Edit/MultiEdit/Write/NotebookEdit,
OpenHands' and SWE-agent's str_replace_editor, Gemini CLI's write_file/replace, Cursor's
edit_file); Codex's apply_patch names them in its patch (``*** Update File: PATH``). Shell
commands change files through ``sed -i``, redirections, ``tee``, ``git mv/rm``, ``rm``, ``mv``,
``cp``, ``touch`` and ``git checkout/restore`` (a revert). Only real paths count: no flags,
globs, variables, URLs or devices.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tersify.worker.compaction.facts.actions import Action
from tersify.worker.compaction.facts.shell import parse_command, program

_EDIT_ARGUMENTS = {
    "edit": ("file_path", "path"),
    "multiedit": ("file_path", "path"),
    "write": ("file_path", "path"),
    "notebookedit": ("notebook_path",),
    "write_file": ("file_path", "path", "absolute_path"),
    "replace": ("file_path", "path"),
    "edit_file": ("target_file", "file_path", "path"),
    "create_file": ("file_path", "path"),
    "str_replace": ("path", "file_path"),
    "insert": ("path", "file_path"),
}
_EDITORS = frozenset({"str_replace_editor", "str_replace_based_edit_tool", "edit_tool"})
_EDITOR_WRITES = frozenset({"create", "str_replace", "insert", "undo_edit", "write"})
_READ_ARGUMENTS = {
    "read": ("file_path", "path"),
    "read_file": ("absolute_path", "file_path", "path", "target_file"),
    "view": ("path", "file_path"),
    "open": ("path", "file_path"),
}
_READ_PROGRAMS = frozenset({"cat", "nl", "head", "tail", "less", "more", "bat"})
_PATCH_FILE = re.compile(r"^\*\*\* (Update|Add|Delete) File: (.+?)\s*$", re.MULTILINE)
_PATCH_MOVE = re.compile(r"^\*\*\* Move to: (.+?)\s*$", re.MULTILINE)
_HUNK = re.compile(r"^@@+ ?(.*?)\s*(?:@@.*)?$")
_DEFINITION = re.compile(
    r"^\s*(?:async\s+)?(?:def|class|func|function|fn|struct|interface|type|impl)\s+"
    r"(?:\([^)]*\)\s*)?([A-Za-z_][\w]*)",
    re.MULTILINE,
)
_PATH = re.compile(r"^[\w.~@+/-][\w.~@+/,=-]*$")
_NOT_PATH = re.compile(r"^(-|/dev/|/proc/|[a-z]+://)|[*?$`{}\[\]]")


@dataclass(slots=True)
class FileChange:
    """A file that was changed: when last, how (verbs in order), where (functions, hunks)."""

    path: str
    last: int
    verbs: list[str] = field(default_factory=list)
    places: list[str] = field(default_factory=list)


def is_path(token: str) -> bool:
    """True for a token that names a file: a path-like word with a name, no flags or globs."""
    if not token or len(token) > 300 or _NOT_PATH.search(token) or not _PATH.match(token):
        return False
    name = token.rstrip("/").rsplit("/", 1)[-1]
    return bool(name) and name not in (".", "..") and ("." in name or "/" in token)


def _argument(arguments: Mapping[str, Any], names: Iterable[str]) -> str | None:
    for name in names:
        value = arguments.get(name)
        if isinstance(value, str) and is_path(value.strip()):
            return value.strip()
    return None


def _definitions(*texts: Any) -> list[str]:
    for text in texts:
        if isinstance(text, str):
            names = _DEFINITION.findall(text)
            if names:
                return names[:2]
    return []


def _tool_changes(action: Action) -> list[tuple[str, str, list[str]]]:
    """(path, verb, places) for an edit tool's call."""
    args, tool = action.arguments, action.tool
    if tool in _EDITORS:
        if str(args.get("command")) not in _EDITOR_WRITES:
            return []
        path = _argument(args, ("path", "file_path"))
        verb = "created" if args.get("command") == "create" else "edited"
        places = _definitions(args.get("new_str"), args.get("old_str"), args.get("file_text"))
        return [(path, verb, places)] if path else []
    if tool == "apply_patch" or (tool in ("patch",) and "input" in args):
        patch = args.get("input") or args.get("patch") or ""
        return _patch_changes(patch if isinstance(patch, str) else "")
    names = _EDIT_ARGUMENTS.get(tool)
    path = _argument(args, names) if names else None
    if path is None:
        return []
    verb = "written" if tool in ("write", "write_file", "create_file") else "edited"
    edits = args.get("edits")
    olds = (
        [e.get("new_string") for e in edits if isinstance(e, dict)]
        if isinstance(edits, list)
        else []
    )
    places = _definitions(args.get("new_string"), args.get("old_string"), *olds)
    return [(path, verb, places)]


def _patch_changes(patch: str) -> list[tuple[str, str, list[str]]]:
    """The files of an apply_patch patch, each with its hunk headers."""
    found: list[tuple[str, str, list[str]]] = []
    marks = list(_PATCH_FILE.finditer(patch))
    for i, mark in enumerate(marks):
        body = patch[mark.end() : marks[i + 1].start() if i + 1 < len(marks) else len(patch)]
        verb = {"Update": "edited", "Add": "created", "Delete": "deleted"}[mark.group(1)]
        hunks = [h.group(1) for line in body.splitlines() if (h := _HUNK.match(line))]
        found.append((mark.group(2), verb, [h for h in hunks if h][:2]))
        moved = _PATCH_MOVE.search(body)
        if moved:
            found.append((moved.group(1), "moved here", []))
    return [f for f in found if is_path(f[0])]


def _shell_changes(command: str) -> list[tuple[str, str, list[str]]]:
    """(path, verb, places) for the files a shell command line changes."""
    parsed = parse_command(command)
    found: list[tuple[str, str, list[str]]] = [
        (t, "written by shell", []) for t in parsed.redirects
    ]
    for words in parsed.commands:
        name, args = program(words)
        found += _program_changes(name, args)
    for body in parsed.heredocs:
        if "*** Begin Patch" in body:
            found += _patch_changes(body)
    return [(p, v, w) for p, v, w in found if is_path(p)]


def _program_changes(name: str, args: list[str]) -> list[tuple[str, str, list[str]]]:
    plain = [a for a in args if not a.startswith("-")]
    if name == "sed" and any(a == "-i" or a.startswith(("-i", "--in-place")) for a in args):
        script_given = any(a in ("-e", "--expression", "-f") for a in args)
        files = plain if script_given else plain[1:]
        return [(f, "sed -i", []) for f in files]
    if name == "tee":
        return [(f, "written by tee", []) for f in plain]
    if name == "git" and plain[:1] in (["mv"], ["rm"], ["checkout"], ["restore"]):
        sub, rest = plain[0], plain[1:]
        if sub == "mv" and len(rest) == 2:
            return [(rest[0], "moved away", []), (rest[1], "moved here", [])]
        verb = "deleted" if sub == "rm" else "reverted"
        return [(f, verb, []) for f in rest if sub == "rm" or "." in f.rsplit("/", 1)[-1]]
    if name == "rm":
        return [(f, "deleted", []) for f in plain]
    if name in ("mv", "cp") and len(plain) == 2:
        pair: list[tuple[str, str, list[str]]] = [
            (plain[1], "copied here" if name == "cp" else "moved here", [])
        ]
        return pair + ([(plain[0], "moved away", [])] if name == "mv" else [])
    if name == "touch":
        return [(f, "created", []) for f in plain]
    return []


def changed_files(actions: Sequence[Action]) -> list[FileChange]:
    """The files the actions changed, the most recently changed first."""
    changes: dict[str, FileChange] = {}
    for action in actions:
        found = _tool_changes(action)
        if action.command:
            found += _shell_changes(action.command)
        for path, verb, places in found:
            change = changes.setdefault(path, FileChange(path, action.index))
            change.last = action.index
            change.verbs.append(verb)
            change.places = list(dict.fromkeys([*change.places, *places]))
    return sorted(changes.values(), key=lambda c: -c.last)


def read_files(actions: Sequence[Action], changed: Iterable[str]) -> list[str]:
    """Files only read (by read tools or ``cat``/``head``/``nl``…), the most recent first."""
    skip = set(changed)
    seen: dict[str, int] = {}
    for action in actions:
        names = _READ_ARGUMENTS.get(action.tool)
        path = _argument(action.arguments, names) if names else None
        if action.tool in _EDITORS and action.arguments.get("command") == "view":
            path = _argument(action.arguments, ("path",))
        paths = [path] if path else []
        if action.command:
            for words in parse_command(action.command).commands:
                name, args = program(words)
                if name in _READ_PROGRAMS or (name == "sed" and "-n" in args):
                    paths += [a for a in args if is_path(a) and not a.startswith("-")]
        for p in paths:
            seen[p] = action.index
    return [p for p, _ in sorted(seen.items(), key=lambda kv: -kv[1]) if p not in skip]
