"""Directory listings read into entries (ls -l, -R, several folders, find, fd, tree, du)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tersify.text.cut import split_lines

_PERMS = re.compile(r"^[-dlcbpsD][rwxsStT-]{9}[.+@]?$")
_ISO_DATE = re.compile(r"^\d{4}-\d\d-\d\d$")
_ERROR = re.compile(
    r"^[\w.-]+: .*(?:cannot|No such file|denied|not found|error|Error|failed|Not a directory)"
)
_TREE_GLYPH = re.compile(r"(├──|└──|\|--|`--) ")
_TREE_TOTAL = re.compile(r"^\d+ director(?:y|ies)(?:, \d+ files?)?$")
_DU = re.compile(r"^(\d[\d.,]*[KMGTPkB]?)\t(.+)$")
_SIZE = re.compile(r"^(\d[\d,.]*)([KMGTP]?)$")
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40, "P": 1 << 50}


@dataclass(frozen=True, slots=True)
class Entry:
    """One listed file or folder."""

    path: str
    size: str | None
    is_dir: bool

    @property
    def name(self) -> str:
        """The last path component."""
        return self.path.rstrip("/").rsplit("/", 1)[-1]

    @property
    def folder(self) -> str:
        """The folder holding the entry ('.' at the top)."""
        head, _, _ = self.path.rstrip("/").rpartition("/")
        return head or "."


def _bytes(size: str | None) -> float:
    match = _SIZE.match(size or "")
    if not match:
        return -1.0
    try:
        return float(match.group(1).replace(",", "")) * _UNITS[match.group(2)]
    except ValueError:
        return -1.0


def _join(folder: str, name: str) -> str:
    if not folder or folder == "." or name.startswith("/"):
        return name
    return folder.rstrip("/") + "/" + name


def parse_listing(text: str) -> tuple[list[Entry], list[str]]:
    """Entries and error lines of ls (-l, -R, several folders), find, fd, tree, du or git output."""
    entries: list[Entry] = []
    errors: list[str] = []
    folder = ""
    stack: list[str] = []
    for line in split_lines(text):
        stripped = line.strip()
        if not stripped or (stripped.startswith("total ") and stripped[6:].isdigit()):
            continue
        if _ERROR.match(stripped):
            errors.append(stripped)
            continue
        if stripped.endswith(":") and not line[0].isspace() and " " not in stripped[:-1].strip("/"):
            folder = stripped[:-1]
            continue
        tokens = line.split(None, 8)
        if len(tokens) >= 8 and _PERMS.match(tokens[0]):
            entry = _long_entry(line, tokens, folder)
            if entry is not None:
                entries.append(entry)
            continue
        glyph = _TREE_GLYPH.search(line)
        if glyph:
            depth = glyph.start() // 4
            name = line[glyph.end() :].split(" -> ")[0]
            del stack[depth:]
            stack.append(name)
            entries.append(Entry(_join(folder, "/".join(stack)), None, False))
            continue
        if _TREE_TOTAL.match(stripped):
            continue
        du = _DU.match(line)
        if du:
            entries.append(Entry(du.group(2), du.group(1), False))
            continue
        path = stripped[2:] if stripped.startswith("./") else stripped
        entries.append(Entry(_join(folder, path), None, path.endswith("/")))
    return _mark_tree_folders(entries), errors


def _long_entry(line: str, tokens: list[str], folder: str) -> Entry | None:
    """One ``ls -l`` line; dates are 'Jun 24  2025', 'Nov 22 01:54' or ISO."""
    is_dir = tokens[0][0] == "d"
    if _ISO_DATE.match(tokens[5]) and len(tokens) >= 8:
        size, name = tokens[4], line.split(None, 7)[-1]
        name = name.split(None, 1)[1] if ":" in name.split(None, 1)[0] else name
    else:
        size, name = tokens[4], tokens[8] if len(tokens) > 8 else tokens[-1]
        if not _SIZE.match(size) and len(tokens) > 7:
            # "ls -o"/"-g": one owner column fewer.
            size, name = tokens[3], line.split(None, 7)[-1]
    name = name.split(" -> ")[0]
    if name in {".", ".."}:
        return None
    return Entry(_join(folder, name) + ("/" if is_dir else ""), size, is_dir)


def _mark_tree_folders(entries: list[Entry]) -> list[Entry]:
    """Entries that others live under are folders (tree and find print them like files)."""
    folders = {e.folder for e in entries}
    return [
        Entry(e.path, e.size, True) if not e.is_dir and e.path.rstrip("/") in folders else e
        for e in entries
    ]
