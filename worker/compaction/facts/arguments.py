"""What a tool call's arguments hold, judged by their shape, whatever the tool is called.

Argument names are read as words (``filePath``, ``file_path`` and ``target-file`` all say
*file* and *path*). An object of the arguments (at any depth) that holds a file path together
with new content or a replacement writes that file; a string anywhere that holds patch text
(``*** Update File:``, unified diff headers) changes the files it names; a command-like field
whose value is a command line is a shell command, unless it is one word beside a file path
(an editor's subcommand: ``{"command": "view", "path": …}``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from tersify.chat.calls import shell_command

_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_PATH_WORDS = frozenset({"path", "file", "filename", "filepath", "target", "notebook", "dest"})
_DIRECTORY_WORDS = frozenset(
    {"cwd", "dir", "directory", "workdir", "working", "root", "folder", "url", "repo", "base"}
)
_WHOLE_WORDS = frozenset({"content", "contents", "text", "code", "body"})
"""Words naming a file's whole new content: the file is written."""
_CHANGE_WORDS = frozenset({"new", "replace", "replacement", "diff", "patch", "insert", "edits"})
"""Words naming a replacement, an insertion, a diff or a list of edits: the file is edited."""
_RANGE_WORDS = frozenset(
    {"offset", "limit", "range", "line", "lines", "start", "end", "encoding", "view", "should"}
)
_SUBCOMMAND = re.compile(r"^[a-z][a-z_-]*$")
_PATH = re.compile(r"^(?:[A-Za-z]:[/\\])?[\w.~@+/\\-][\w.~@+/\\,=-]*$")
_NOT_PATH = re.compile(r"^(-|/dev/|/proc/|[a-z]+://)|[*?$`{}\[\]]")
_MAX_DEPTH = 4


def words(key: str) -> frozenset[str]:
    """The words of an argument name, lower case: ``filePath`` → {file, path}."""
    return frozenset(w.lower() for w in _WORD.findall(key))


def is_path(token: str) -> bool:
    """True for a token that names a file: a path-like word with a name, no flags or globs."""
    if not token or len(token) > 300 or _NOT_PATH.search(token) or not _PATH.match(token):
        return False
    name = re.split(r"[/\\]", token.rstrip("/\\"))[-1]
    return bool(name) and name not in (".", "..") and ("." in name or "/" in token)


def _has_extension(path: str) -> bool:
    name = re.split(r"[/\\]", path)[-1]
    return "." in name.strip(".")


@dataclass(frozen=True, slots=True)
class Write:
    """A file an object of the arguments writes: its path, how, and the new text (if one)."""

    path: str
    verb: str
    texts: tuple[str, ...]


def objects(value: Any, depth: int = 0) -> Iterator[Mapping[str, Any]]:
    """Every object in ``value``, the outermost first (nested lists and objects, bounded)."""
    if depth > _MAX_DEPTH:
        return
    if isinstance(value, Mapping):
        yield value
        for inner in value.values():
            yield from objects(inner, depth + 1)
    elif isinstance(value, list):
        for inner in value[:200]:
            yield from objects(inner, depth + 1)


def strings(value: Any, depth: int = 0) -> Iterator[str]:
    """Every string in ``value`` (bounded as ``objects`` is)."""
    if depth > _MAX_DEPTH:
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for inner in value.values():
            yield from strings(inner, depth + 1)
    elif isinstance(value, list):
        for inner in value[:200]:
            yield from strings(inner, depth + 1)


def file_paths(item: Mapping[str, Any]) -> list[str]:
    """The file paths an object names: values that are paths, under names that say file or
    path (or with an extension), never under names of directories, content or changes."""
    found: list[str] = []
    for key, value in item.items():
        if not isinstance(value, str) or not is_path(value.strip()):
            continue
        said = words(str(key))
        if said & (_DIRECTORY_WORDS | _WHOLE_WORDS | _CHANGE_WORDS):
            continue
        if said & _PATH_WORDS or _has_extension(value.strip()):
            found.append(value.strip())
    return found


def _changes(item: Mapping[str, Any], paths: list[str]) -> tuple[str, list[str]] | None:
    """(verb, new texts) when ``item`` holds new content or a change beside ``paths``."""
    verb: str | None = None
    texts: list[str] = []
    for key, value in item.items():
        if isinstance(value, str) and value.strip() in paths:
            continue
        said = words(str(key))
        if said & _CHANGE_WORDS and isinstance(value, (str, list, Mapping)):
            verb = "edited"
        elif said & _WHOLE_WORDS and isinstance(value, str):
            verb = verb or "written"
        else:
            continue
        texts += [s for s in strings(value) if s.strip()]
    return (verb, texts) if verb else None


def writes(arguments: Mapping[str, Any]) -> list[Write]:
    """The files the arguments write: an object with a file path and new content beside it."""
    found: list[Write] = []
    for item in objects(arguments):
        paths = file_paths(item)
        change = _changes(item, paths) if len(paths) == 1 else None
        if change is None:
            continue
        verb, texts = change
        if str(item.get("command", "")).lower() == "create":
            verb = "created"
        found.append(Write(paths[0], verb, tuple(texts)))
    return found


def only_names_a_file(arguments: Mapping[str, Any]) -> bool:
    """True when the arguments name one file and else only where or how much to read of it:
    a read, whose output is the file's text (its "errors" are source code)."""
    paths = file_paths(arguments)
    if len(paths) != 1 or not all(
        isinstance(v, (str, int, float, list)) for v in arguments.values()
    ):
        return False
    for key, value in arguments.items():
        if isinstance(value, str) and value.strip() == paths[0]:
            continue
        said = words(str(key))
        command = said & {"command"} and _SUBCOMMAND.match(str(value)) and value != "create"
        if not (said & _RANGE_WORDS or command or isinstance(value, (int, float))):
            return False
    return True


def command(arguments: Mapping[str, Any]) -> str | None:
    """The shell command the arguments hold, by shape; an editor's one-word subcommand beside
    a file path is not one."""
    line = shell_command(arguments)
    if line is None:
        return None
    if _SUBCOMMAND.match(line.strip()) and file_paths(arguments):
        return None
    return line
