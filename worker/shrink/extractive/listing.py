"""Directory listings: errors first, then counts by folder and type, the entries that matter."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from producer.classify.sanitize import lowercase
from producer.textcut import split_lines
from worker.shrink.extractive.compose import Composer, joined
from worker.shrink.query import query_terms, weigh_terms

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


def _extension(entry: Entry) -> str:
    name = entry.name
    if entry.is_dir:
        return "folders"
    dot = name.rfind(".")
    return name[dot:].lower() if 0 < dot < len(name) - 1 else "(no ext)"


def _shown(entry: Entry) -> str:
    return f"{entry.path} ({entry.size})" if entry.size and not entry.is_dir else entry.path


def summarize_listing(text: str, budget: int, query: str | None) -> str:
    """Errors, totals, query matches, extensions, folders, largest entries, then names."""
    entries, errors = parse_listing(text)
    out = Composer(budget)
    for line in errors[:6]:
        out.add_clipped(line, until=budget // 4)
    if not entries:
        out.add_all(split_lines(text))
        return out.text()
    dirs = sum(1 for e in entries if e.is_dir)
    folders = Counter(e.folder for e in entries)
    out.add(
        f"{len(entries)} entries ({len(entries) - dirs} files, {dirs} folders)"
        + (f" in {len(folders)} listed folders" if len(folders) > 1 else "")
    )
    shown: set[str] = set()
    matches = _query_matches(entries, query)
    if matches:
        room = min(out.remaining, budget // 4) - 20
        if out.add("matching the query: " + joined((_shown(e) for e in matches), room)):
            shown.update(e.path for e in matches)
    extensions = Counter(_extension(e) for e in entries)
    if len(extensions) > 1:
        types = (f"{ext} {n}" for ext, n in extensions.most_common())
        out.add("by type: " + joined(types, min(out.remaining, budget // 8) - 10))
    tops = Counter(e.path.split("/", 1)[0] + "/" for e in entries if "/" in e.path.strip("/"))
    if len(folders) > 1 and len(tops) > 1:
        counts = (f"{name} ({n})" for name, n in tops.most_common())
        out.add("by folder: " + joined(counts, min(out.remaining, budget // 6) - 12))
    sized = [e for e in entries if not e.is_dir and _bytes(e.size) >= 0]
    if len(sized) > 3:
        largest = sorted(sized, key=lambda e: -_bytes(e.size))[:8]
        out.add(
            "largest: " + joined((_shown(e) for e in largest), min(out.remaining, budget // 6) - 10)
        )
    _add_names(out, entries, shown)
    return out.text()


def _query_matches(entries: list[Entry], query: str | None) -> list[Entry]:
    """Entries whose path holds the query's rarer terms, best first."""
    terms = query_terms(query)
    if not terms:
        return []
    lows = [lowercase(e.path) for e in entries]
    weights = weigh_terms(terms, "\n".join(lows), len(entries))
    if not weights:
        return []
    scored = [(weights.score(low), i) for i, low in enumerate(lows)]
    best = max(s for s, _ in scored)
    keep = [(s, i) for s, i in scored if s > 0 and s >= best * 0.5]
    keep.sort(key=lambda p: (-p[0], p[1]))
    return [entries[i] for _, i in keep[:12]]


def _add_names(out: Composer, entries: list[Entry], shown: set[str]) -> None:
    """The remaining names folder by folder, in listing order, as far as room allows."""
    by_folder: dict[str, list[str]] = {}
    for e in entries:
        if e.path not in shown:
            by_folder.setdefault(e.folder, []).append(e.name + ("/" if e.is_dir else ""))
    for folder, names in by_folder.items():
        prefix = "" if folder == "." and len(by_folder) == 1 else f"{folder}/: "
        room = out.remaining - len(prefix)
        if room < 30:
            break
        out.add(prefix + joined(names, room))
