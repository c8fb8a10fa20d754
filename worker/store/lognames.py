"""The names of a session's log files: computed from its id, and found again by parsing, never by
a pattern.

A session's current file is ``STEM.jsonl``; a file rotated past ``max_bytes`` is
``STEM~MILLISECONDS-NNN.jsonl``. The stem escapes the id (letters, digits, ``_`` and ``-``
stay, a leading ``-`` and every other byte become ``%XX``); an escape longer than
``LONGEST_STEM`` is cut and ends in ``=`` and a 128-bit hash of the whole id. The stem's
alphabet holds neither ``~`` nor ``.``, so the stem ends exactly where a name's ``~`` or
``.jsonl`` begins and no session's names are a prefix of another's: ``session_files`` reads
each name's stem back and compares it with the one it computed, equal or not.

Earlier releases ended a cut stem in ``~`` and the hash; those files are still the session's
(``LEGACY``): read by every reader of the directory as before, and deleted by ``forget`` with
the current ones. New lines go to the current name.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from pathlib import Path
from typing import Final

_KEPT: Final = re.compile(r"[A-Za-z0-9_-]")
_ROTATION: Final = re.compile(r"\d{13}-\d{3}")
SUFFIX: Final = ".jsonl"
LONGEST_STEM: Final = 160
"""Longest stem before it is cut (file names stay well under 255 bytes)."""
_HASH_CHARS: Final = 32


def _escaped(session_id: str) -> str:
    parts = []
    for index, char in enumerate(session_id):
        if _KEPT.fullmatch(char) and not (index == 0 and char == "-"):
            parts.append(char)
        else:
            parts.extend(f"%{byte:02X}" for byte in char.encode("utf-8", "surrogatepass"))
    return "".join(parts)


def _digest(session_id: str) -> str:
    return hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:_HASH_CHARS]


def file_stem(session_id: str) -> str:
    """The session's file name without ``.jsonl``: one encoding for every id, so never shared
    (see the module)."""
    stem = _escaped(session_id)
    if len(stem) > LONGEST_STEM:
        stem = f"{stem[: LONGEST_STEM - _HASH_CHARS - 1]}={_digest(session_id)}"
    return stem


def legacy_stem(session_id: str) -> str | None:
    """The stem earlier releases gave a long id (cut, ``~`` and the hash); None for a short id."""
    stem = _escaped(session_id)
    if len(stem) <= LONGEST_STEM:
        return None
    return f"{stem[: LONGEST_STEM - _HASH_CHARS - 1]}~{_digest(session_id)}"


def session_file(directory: Path, session_id: str) -> Path:
    """The current log file of a session, inside ``directory`` whatever the id."""
    return directory / f"{file_stem(session_id)}{SUFFIX}"


def stem_of(name: str) -> str | None:
    """The stem a log file's name belongs to (a rotation suffix read off); None for a name that
    is not a log file's."""
    if not name.endswith(SUFFIX):
        return None
    stem = name[: -len(SUFFIX)]
    head, tilde, tail = stem.rpartition("~")
    if tilde and _ROTATION.fullmatch(tail):
        stem = head
    return stem or None


def session_files(directory: Path, session_id: str) -> list[Path]:
    """A session's log files under ``directory``: the rotated ones, oldest first, then the
    current one; legacy names included (see the module)."""
    stems = {file_stem(session_id), legacy_stem(session_id)} - {None}
    try:
        names = [entry.name for entry in os.scandir(directory) if entry.is_file()]
    except FileNotFoundError:
        return []
    current = {f"{stem}{SUFFIX}" for stem in stems if stem is not None}
    mine = sorted(name for name in names if stem_of(name) in stems and name not in current)
    return [directory / name for name in [*mine, *sorted(current & set(names))]]


def forget_files(directory: Path, session_id: str) -> int:
    """Delete a session's log files under ``directory``; how many went."""
    removed = 0
    for path in session_files(directory, session_id):
        path.unlink(missing_ok=True)
        removed += 1
    return removed


def rotated_name(path: Path) -> Path:
    """A free name for a full file, in rotation order: ``STEM~MILLISECONDS-NNN.jsonl``."""
    stamp = f"{path.stem}~{time.time_ns() // 1_000_000:013d}"
    for attempt in range(1000):  # rotations are serialized by the file's lock: a few at most
        candidate = path.with_name(f"{stamp}-{attempt:03d}{path.suffix}")
        if not candidate.exists():
            return candidate
    raise FileExistsError(f"no free rotated name for {path.name}")
