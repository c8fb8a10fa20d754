"""Files changed (and files only read), from the tool calls and shell commands that touched them.

By shape, whatever the tool is called (``arguments``): an object of a call's arguments holding a
file path beside new content, a replacement or a list of edits; patch text in any argument
(``*** Update File: PATH``, unified diff headers ``--- a/PATH`` / ``+++ b/PATH``, also inside a
quoted string with its new lines escaped); a shell command that changes files through a
program (``programs``: ``sed -i``, ``tee``, ``git mv/rm/checkout/restore``, ``rm``, ``mv``,
``cp``, ``touch``, PowerShell's and cmd's file commands, code that opens a file for writing),
redirections, or a here-doc holding a patch. The edit tools of known agents
(Edit, Write, str_replace_editor, apply_patch…) are read first by name: a fast path the shape
rules do not need. Only real paths count: no flags, globs, variables, URLs or devices.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tersify.worker.compaction.facts.actions import Action
from tersify.worker.compaction.facts.arguments import (
    is_path,
    strings,
    writes,
)
from tersify.worker.compaction.facts.edits import added_lines, patch_added, sed_added
from tersify.worker.compaction.facts.programs import (
    Change,
    code_writes,
    interpreted,
    program_changes,
)
from tersify.worker.compaction.facts.shell import parse_command, program

__all__ = ["FileChange", "changed_files", "is_path", "patch_changes", "read_files"]

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
_READ_PROGRAMS = frozenset(
    {"cat", "nl", "head", "tail", "less", "more", "bat", "get-content", "gc", "type"}
)
_PATCH_FILE = re.compile(r"^\*\*\* (Update|Add|Delete) File: (.+?)\s*$", re.MULTILINE)
_PATCH_MOVE = re.compile(r"^\*\*\* Move to: (.+?)\s*$", re.MULTILINE)
_DIFF_PAIR = re.compile(r"^--- (?:a/)?(\S+)[^\n]*\n\+\+\+ (?:b/)?(\S+)[^\n]*\n(?=@@)", re.MULTILINE)
_ESCAPED_PATCH = re.compile(r"\*\*\* (?:Update|Add|Delete) File: [^\n]*?\\n|\\n\+\+\+ ")
_HUNK = re.compile(r"^@@+ ?(.*?)\s*(?:@@.*)?$")
_UNIFIED_HUNK = re.compile(r"^@@ -[\d,]+ \+[\d,]+ @@ ?(.*?)\s*$")
_DEFINITION = re.compile(
    r"^\s*(?:async\s+)?(?:def|class|func|function|fn|struct|interface|type|impl)\s+"
    r"(?:\([^)]*\)\s*)?([A-Za-z_][\w]*)",
    re.MULTILINE,
)
_NULL = "/dev/null"


@dataclass(slots=True)
class FileChange:
    """A file that was changed: when last, how (verbs in order), where (functions, hunks), and
    the first lines its latest change added."""

    path: str
    last: int
    verbs: list[str] = field(default_factory=list)
    places: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)


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


def _known_tool(action: Action) -> list[Change]:
    """(path, verb, places) for the call of a known edit tool (the fast path)."""
    args, tool = action.arguments, action.tool
    if tool in _EDITORS:
        if str(args.get("command")) not in _EDITOR_WRITES:
            return []
        path = _argument(args, ("path", "file_path"))
        verb = "created" if args.get("command") == "create" else "edited"
        places = _definitions(args.get("new_str"), args.get("old_str"), args.get("file_text"))
        return [(path, verb, places)] if path else []
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


def _shaped(action: Action) -> list[Change]:
    """(path, verb, places) read from the shape of a call's arguments, whatever its name:
    a path beside new content or a change, and patch text in any string."""
    found: list[Change] = []
    content: set[str] = set()
    for write in writes(action.arguments):
        patched = write.verb == "edited" and _is_patch(write.texts)
        places = [] if patched else _definitions(*write.texts)
        found.append((write.path, write.verb, places))
        if write.verb != "edited":
            content.update(write.texts)  # a file's new text: a patch in it is not applied
    for text in strings(action.arguments):
        if text not in content:
            found += patch_changes(text)
    return found


def _is_patch(texts: Iterable[str]) -> bool:
    return any(_PATCH_FILE.search(t) or _DIFF_PAIR.search(t) for t in texts)


def patch_changes(text: str) -> list[Change]:
    """The files a patch names, each with its hunk headers: ``*** Update File:`` patches and
    unified diffs, also inside a quoted string whose new lines are escaped (``\\n``)."""
    if _ESCAPED_PATCH.search(text):
        text = text.replace("\\n", "\n").replace('\\"', '"')
    if "*** " in text:
        found = _marked_patch(text)
        if found:
            return found
    return _unified_diff(text) if "+++ " in text else []


def _marked_patch(patch: str) -> list[Change]:
    """The files of a ``*** Begin Patch`` patch, each with its hunk headers."""
    found: list[Change] = []
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


def _unified_diff(diff: str) -> list[Change]:
    """The files of a unified diff: each ``---``/``+++`` pair followed by a hunk."""
    found: list[Change] = []
    pairs = list(_DIFF_PAIR.finditer(diff))
    for i, pair in enumerate(pairs):
        old, new = pair.group(1), pair.group(2)
        body = diff[pair.end() : pairs[i + 1].start() if i + 1 < len(pairs) else len(diff)]
        lines = body.splitlines()[:400]
        hunks = [h.group(1) for line in lines if (h := _UNIFIED_HUNK.match(line))]
        if new == _NULL:
            found.append((old, "deleted", []))
        else:
            verb = "created" if old == _NULL else "edited"
            found.append((new, verb, [h for h in hunks if h][:2]))
    return [f for f in found if is_path(f[0])]


def _shell_changes(command: str) -> list[Change]:
    """(path, verb, places) for the files a shell command line changes."""
    parsed = parse_command(command)
    found: list[Change] = [(t, "written by shell", []) for t in parsed.redirects]
    for words in parsed.commands:
        name, args = program(words)
        found += program_changes(name, args)
    for body, opener in zip(parsed.heredocs, parsed.openers, strict=True):
        found += code_writes(body) if interpreted(opener) else patch_changes(body)
    return [(p, v, w) for p, v, w in found if is_path(p)]


def changed_files(actions: Sequence[Action]) -> list[FileChange]:
    """The files the actions changed, the most recently changed first."""
    changes: dict[str, FileChange] = {}
    for action in actions:
        found = _known_tool(action) or _shaped(action)
        if action.command:
            found += _shell_changes(action.command)
        added = _added(action, {path for path, _, _ in found})
        done: set[str] = set()
        for path, verb, places in found:
            if path in done:
                continue  # one call, one change per file (a patch is seen in a shell command too)
            done.add(path)
            change = changes.setdefault(path, FileChange(path, action.index))
            change.last = action.index
            change.verbs.append(verb)
            change.places = list(dict.fromkeys([*change.places, *places]))
            change.added = added.get(path) or change.added
    return sorted(changes.values(), key=lambda c: -c.last)


def _added(action: Action, paths: set[str]) -> dict[str, list[str]]:
    """Per file an action changed, the first lines it added (``edits``)."""
    per_file: dict[str, list[str]] = {}
    texts = list(strings(action.arguments))
    if action.command:
        parsed = parse_command(action.command)
        texts += parsed.heredocs
        for words in parsed.commands:
            name, args = program(words)
            plain = [a for a in args if not a.startswith("-")]
            if name == "sed" and len(plain) >= 2 and any(a.startswith("-i") for a in args):
                per_file.update({f: sed_added(plain[0]) for f in plain[1:]})
    for text in texts:
        if "+++ " in text or "*** " in text:
            per_file.update(patch_added(text))
    if len(paths) == 1 and not per_file:
        per_file = {next(iter(paths)): added_lines(action.arguments)}
    return per_file


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
                if name.lower() in _READ_PROGRAMS or (name == "sed" and "-n" in args):
                    paths += [a for a in args if is_path(a) and not a.startswith("-")]
        for p in paths:
            seen[p] = action.index
    return [p for p, _ in sorted(seen.items(), key=lambda kv: -kv[1]) if p not in skip]
