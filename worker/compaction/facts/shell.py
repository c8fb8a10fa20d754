"""Just enough shell reading to see what a command changed: its simple commands and redirections.

A command line is cut at ``&&``, ``||``, ``;``, ``|`` and new lines (outside quotes), heredoc
bodies are set apart (a heredoc may hold a whole file or a patch), and each simple command is
split into words as a POSIX shell would, or at white space when the quoting is broken.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

_HEREDOC = re.compile(
    r"<<-?\s*(['\"]?)([A-Za-z_][\w-]*)\1([^\n]*)\n(.*?)\n\s*\2[ \t]*(?=\n|$)", re.DOTALL
)
_SEPARATORS = re.compile(r"&&|\|\||[;|\n]")
_REDIRECT = re.compile(r"(?<![0-9&<>])(>>?)\s*(?!&)([^\s;&|<>()]+)")
_MAX_COMMAND_CHARS = 20_000


@dataclass(frozen=True, slots=True)
class Parsed:
    """A command line read: its simple commands as words, redirect targets, heredoc bodies."""

    commands: list[list[str]]
    redirects: list[str]
    heredocs: list[str]


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
    try:
        return shlex.split(segment, comments=False, posix=True)
    except ValueError:
        return segment.split()


def parse_command(command: str) -> Parsed:
    """The simple commands, redirect targets and heredoc bodies of ``command``."""
    text = command[:_MAX_COMMAND_CHARS]
    heredocs = [m.group(4) for m in _HEREDOC.finditer(text)]
    text = _HEREDOC.sub(lambda m: m.group(3), text)  # the rest of the opening line stays
    redirects: list[str] = []
    pieces: list[str] = []
    last = 0
    for start, end in _outside_quotes(text):
        redirects += [m.group(2) for m in _REDIRECT.finditer(text[start:end])]
        pieces += [text[last:start], _REDIRECT.sub(" ", text[start:end])]
        last = end
    plain = "".join(pieces) + text[last:]
    commands = [w for w in (_words(s) for s in _split(plain)) if w]
    return Parsed(commands, redirects, heredocs)


def program(words: list[str]) -> tuple[str, list[str]]:
    """The program a simple command runs, and its arguments (``sudo``, ``env X=1`` skipped)."""
    rest = list(words)
    while rest and (rest[0] in ("sudo", "env", "time", "command", "nohup") or "=" in rest[0]):
        rest = rest[1:]
    if not rest:
        return "", []
    return rest[0].rsplit("/", 1)[-1], rest[1:]
