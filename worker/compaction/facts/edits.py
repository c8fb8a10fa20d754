"""What an edit put in a file, in a line or two: the first lines its new text adds.

Read by shape, whatever the tool is called: an object of a call's arguments holding a new text
(``new_str``, ``newText``, ``replace``, ``insert``…) beside the text it replaces (``old_str``,
``oldText``, ``search``…) adds the lines of the new text the old one lacks; a patch adds its
``+`` lines, file by file; ``sed -i`` adds what its script says (``s/old/new/``). Of those, the
first comment line and the first line of code are kept (blank lines and lines of punctuation
only passed over). Shown beside the file in Files Changed, these
say what an edit did (the fix itself, a comment stating why) where the file's name does not.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from tersify.worker.compaction.facts.arguments import objects, words

_NEW_WORDS = frozenset({"new", "replace", "replacement", "insert", "after", "updated"})
_OLD_WORDS = frozenset({"old", "search", "find", "original", "before", "existing"})
_MEANINGFUL = re.compile(r"[A-Za-z_]\w")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add) File: (.+?)\s*$|^\+\+\+ (?:b/)?(\S+)")
_SED_SUBSTITUTE = re.compile(
    r"(?:^|[;{}\s\d,$])s([/|#:,@])(.*?)(?<!\\)\1(.*?)(?<!\\)\1[gip\d]*", re.S
)
_SED_TEXT = re.compile(r"^[\d,$]*(?:/[^/]*/)?[aic]\\?\s*(.+)$", re.S)
_COMMENT = re.compile(r"^(?:#|//|/\*|\*|--|;|<!--|\"\"\"|rem\b)", re.I)
_SHORTEST = 8
_MAX_LINES = 2
_MAX_CHARS = 100


def _meaningful(lines: list[str]) -> list[str]:
    """The first comment line (it says why) and the first line of code (it says what), each
    once, in their order; blank and punctuation-only lines passed over."""
    comment: str | None = None
    code: str | None = None
    for line in lines[:400]:
        text = " ".join(line.split())
        if len(text) < _SHORTEST or not _MEANINGFUL.search(text):
            continue  # "try:", "});", "else {" say nothing
        if _COMMENT.match(text):
            comment = comment or text
        else:
            code = code or text
        if comment and code:
            break
    picked = [t for t in lines if t.strip() and " ".join(t.split()) in (comment, code)]
    out = list(dict.fromkeys(" ".join(t.split()) for t in picked))[:_MAX_LINES]
    return [t if len(t) <= _MAX_CHARS else t[: _MAX_CHARS - 1] + "…" for t in out]


def _strings(item: Mapping[str, Any], names: frozenset[str]) -> list[str]:
    return [
        v
        for k, v in item.items()
        if isinstance(v, str) and words(str(k)) & names and not words(str(k)) & {"path", "file"}
    ]


def added_lines(arguments: Mapping[str, Any]) -> list[str]:
    """The first meaningful lines the arguments' new texts add to the texts they replace."""
    added: list[str] = []
    for item in objects(arguments):
        news = _strings(item, _NEW_WORDS)
        if not news:
            continue
        old = {" ".join(line.split()) for t in _strings(item, _OLD_WORDS) for line in t.split("\n")}
        added += [line for t in news for line in t.split("\n") if " ".join(line.split()) not in old]
    return _meaningful(added)


def patch_added(text: str) -> dict[str, list[str]]:
    """Per file a patch names, the first meaningful lines it adds."""
    found: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.split("\n")[:2000]:
        mark = _PATCH_FILE.match(line)
        if mark:
            current = found.setdefault(mark.group(1) or mark.group(2), [])
        elif current is not None and line.startswith("+") and len(current) < 10:
            current.append(line[1:])
    return {path: _meaningful(lines) for path, lines in found.items()}


def sed_added(script: str) -> list[str]:
    """What a ``sed`` script puts in: the replacement of its last ``s/…/…/``, else the text of
    an ``a``, ``i`` or ``c`` command; nothing for a script that only deletes or prints."""
    subs = list(_SED_SUBSTITUTE.finditer(script))
    if subs:
        return _meaningful([subs[-1].group(3).replace("\\n", "\n").replace("\\", "")])
    text = _SED_TEXT.match(script)
    if text:
        return _meaningful(text.group(1).replace("\\n", "\n").split("\n"))
    return []
