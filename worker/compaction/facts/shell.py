"""Just enough shell reading to see what a command changed: its simple commands and redirections.

A command line is cut at ``&&``, ``||``, ``;``, ``|`` and new lines (outside quotes), heredoc
bodies and PowerShell here-strings are set apart (they may hold a whole file, a patch or code),
and each simple command is split into words as a POSIX shell would, or at white space when the
quoting is broken; a command naming Windows paths (``C:\\dir\\file``) keeps its backslashes.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

_HEREDOC = re.compile(
    r"<<-?\s*(['\"]?)([A-Za-z_][\w-]*)\1([^\n]*)\n(.*?)\n\s*\2[ \t]*(?=\n|$)", re.DOTALL
)
_HERESTRING = re.compile(r"@(['\"])[ \t]*\n(.*?)\n\1@", re.DOTALL)
# A Windows path: a drive letter, or a backslash between names in an unquoted word
_WINDOWS_PATH = re.compile(r"(?<!\w)[A-Za-z]:\\|(?:^|\s)[\w.~-]*[\w.]\\[\w.-]")
_SEPARATORS = re.compile(r"&&|\|\||[;|\n]")
_REDIRECT = re.compile(r"(?<![0-9&<>])(>>?)\s*(?!&)([^\s;&|<>()]+)")
_MAX_COMMAND_CHARS = 20_000


@dataclass(frozen=True, slots=True)
class Parsed:
    """A command line read: its simple commands as words, redirect targets, heredoc bodies
    (and, for each, the program its opening line runs; empty for a here-string)."""

    commands: list[list[str]]
    redirects: list[str]
    heredocs: list[str]
    openers: list[str]


def _outside_quotes(text: str) -> list[tuple[int, int]]:
    """The spans of ``text`` not inside single or double quotes."""
    spans: list[tuple[int, int]] = []
    start, quote = 0, ""
    for i, char in enumerate(text):
        if quote:
            if char == quote:
                quote, start = "", i + 1
        elif char in "'\"":
            spans.append((start, i))
            quote = char
    if not quote:
        spans.append((start, len(text)))
    return spans


def _split(text: str) -> list[str]:
    """``text`` cut at the separators that are outside quotes."""
    cuts: list[tuple[int, int]] = []
    for start, end in _outside_quotes(text):
        cuts += [
            (m.start() + start, m.end() + start) for m in _SEPARATORS.finditer(text[start:end])
        ]
    parts, last = [], 0
    for start, end in cuts:
        parts.append(text[last:start])
        last = end
    parts.append(text[last:])
    return [p.strip() for p in parts if p.strip()]


def _words(segment: str) -> list[str]:
    """The words of a simple command; with Windows paths in it, backslashes are kept."""
    windows = bool(_WINDOWS_PATH.search(segment))
    try:
        words = shlex.split(segment, comments=False, posix=not windows)
    except ValueError:
        return segment.split()
    if windows:
        words = [w[1:-1] if len(w) > 1 and w[0] == w[-1] and w[0] in "'\"" else w for w in words]
    return words


def _opener(text: str, at: int) -> str:
    """The program of the command whose line holds position ``at`` (where a heredoc opens)."""
    line = text[text.rfind("\n", 0, at) + 1 : at]
    segments = _split(line)
    words = _words(segments[-1]) if segments else []
    return program(words)[0] if words else ""


def parse_command(command: str) -> Parsed:
    """The simple commands, redirect targets and heredoc bodies of ``command``."""
    text = command[:_MAX_COMMAND_CHARS]
    found = list(_HEREDOC.finditer(text))
    heredocs = [m.group(4) for m in found]
    openers = [_opener(text, m.start()) for m in found]
    text = _HEREDOC.sub(lambda m: m.group(3), text)  # the rest of the opening line stays
    strings = list(_HERESTRING.finditer(text))
    heredocs += [m.group(2) for m in strings]
    openers += [""] * len(strings)
    text = _HERESTRING.sub(" ", text)
    redirects: list[str] = []
    pieces: list[str] = []
    last = 0
    for start, end in _outside_quotes(text):
        redirects += [m.group(2) for m in _REDIRECT.finditer(text[start:end])]
        pieces += [text[last:start], _REDIRECT.sub(" ", text[start:end])]
        last = end
    plain = "".join(pieces) + text[last:]
    commands = [w for w in (_words(s) for s in _split(plain)) if w]
    return Parsed(commands, redirects, heredocs, openers)


def program(words: list[str]) -> tuple[str, list[str]]:
    """The program a simple command runs, and its arguments (``sudo``, ``env X=1`` skipped)."""
    rest = list(words)
    while rest and (rest[0] in ("sudo", "env", "time", "command", "nohup") or "=" in rest[0]):
        rest = rest[1:]
    if not rest:
        return "", []
    name = re.split(r"[/\\]", rest[0])[-1]
    return (name[:-4] if name.lower().endswith(".exe") else name), rest[1:]
