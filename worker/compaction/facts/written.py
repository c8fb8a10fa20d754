"""What the agent writes down in its actions: commit and pull-request messages, comments and
prose its edits add. Read by shape, whatever the tool is called.

- A message a shell command records: ``git commit``'s ``-m``/``--message`` (and a message fed
  to ``-F -`` from a here-doc), ``gh pr|issue|release create|edit|comment``'s ``--title`` and
  ``--body`` (``-t``, ``-b``; a here-doc fed to ``--body-file -``).
- Lines an edit adds (the new text of any call beside the text it replaces, a written file's
  content, a patch's ``+`` lines, in any argument): comment lines (their marker removed) and
  lines of prose (a markdown list item or sentence of four words or more, no code punctuation).

Each line is a statement the agent made about its choices, as a commit message or a comment
explaining a fix does; the decision scorer weighs them beside the sentences of its messages.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from tersify.worker.compaction.facts.actions import Action
from tersify.worker.compaction.facts.arguments import objects, words
from tersify.worker.compaction.facts.shell import parse_command, program

_MESSAGE_FLAGS = {
    "git": ({"commit", "tag", "merge"}, {"-m", "--message"}),
    "gh": ({"create", "edit", "comment", "merge", "review"}, {"--title", "-t", "--body", "-b"}),
}
_NEW_WORDS = frozenset({"new", "replace", "replacement", "insert", "content", "text", "updated"})
_OLD_WORDS = frozenset({"old", "search", "find", "original", "before", "existing"})
_SKIP_WORDS = frozenset({"path", "file", "command", "cmd", "pattern", "query", "description"})
_COMMENT = re.compile(r"^\s*(?:#+|//+|/\*+|\*+|--|;+|<!--|\"\"\"|''')\s*(?=\S)")
_LIST_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?")
_CODE = re.compile(
    r"[;{}=<>]|[):,]\s*$|^\s*(?:def|class|return|import|from|if|for|while|except|try|else)\b"
)
_WORD = re.compile(r"[A-Za-z]{2,}")
_PATCH_ADDED = re.compile(r"^\+(?!\+\+ )(.*)$", re.MULTILINE)
_JOINED = re.compile(r"^-[a-zA-Z]+m$")
_MIN_CHARS = 25
_MAX_LINES = 400


def _flag_values(words_: list[str], flags: set[str]) -> list[str]:
    """The values given to ``flags`` in a command's words (``-m X``, ``--message=X``)."""
    found: list[str] = []
    for at, word in enumerate(words_):
        name, _, value = word.partition("=")
        if name in flags and value:
            found.append(value)
            continue
        joined = bool(_JOINED.match(word)) and "-m" in flags  # ``-am X``: short flags joined
        if (word in flags or joined) and not value and at + 1 < len(words_):
            found.append(words_[at + 1])
    return found


def messages(command: str) -> list[str]:
    """The commit, pull-request or issue messages a command line records."""
    parsed = parse_command(command.replace("$'", "'"))  # ANSI-C quoting read as plain quotes
    found: list[str] = []
    for simple in parsed.commands:
        name, rest = program(simple)
        verbs, flags = _MESSAGE_FLAGS.get(name, (set(), set()))
        if verbs & set(rest[:3]):
            found += _flag_values(rest, flags)
    found += [body for body, opener in zip(parsed.heredocs, parsed.openers, strict=True)
              if opener in _MESSAGE_FLAGS]  # fmt: skip
    return [m.replace("\\n", "\n") for m in found]


def _added(arguments: Mapping[str, Any]) -> list[str]:
    """The lines the new texts of the arguments add (to the texts they replace), and the ``+``
    lines of any patch among them."""
    lines: list[str] = []
    for item in objects(arguments):
        strings = {str(k): v for k, v in item.items() if isinstance(v, str)}
        news = [
            v for k, v in strings.items() if words(k) & _NEW_WORDS and not words(k) & _SKIP_WORDS
        ]
        old = {
            " ".join(line.split())
            for k, v in strings.items()
            if words(k) & _OLD_WORDS
            for line in v.split("\n")
        }
        lines += [ln for t in news for ln in t.split("\n") if " ".join(ln.split()) not in old]
        for value in strings.values():
            if "\n+" in value:
                lines += _PATCH_ADDED.findall(value)
    return lines[:_MAX_LINES]


def _statement(line: str, prose: bool = False) -> str | None:
    """A comment's text (marked by a leading NUL), or a line of prose (``prose``: known to be
    one, as a message's lines are); None for code, markup and short lines."""
    comment = line.startswith("\0")  # a comment's text, its marker removed (``_joined``)
    text = line[1:] if comment else _LIST_MARK.sub("", line)
    text = " ".join(text.rstrip("*/ >-").split())
    if len(text) < _MIN_CHARS or len(_WORD.findall(text)) < 4:
        return None
    if not comment and text.startswith(("#", "|", "`")):
        return None  # a heading, a table row, a command in backquotes
    if not (comment or prose) and _CODE.search(line):
        return None
    return text


def _joined(lines: list[tuple[str, bool]]) -> list[tuple[str, bool]]:
    """Consecutive comment lines joined into one: a comment's sentence often spans lines."""
    out: list[tuple[str, bool]] = []
    for line, prose in lines:
        comment = _COMMENT.match(line)
        if comment and out and out[-1][0].startswith("\0"):
            out[-1] = (f"{out[-1][0]} {line[comment.end() :].strip()}", prose)
        else:
            out.append((f"\0{line[comment.end() :].strip()}" if comment else line, prose))
    return out


def written(found: Sequence[Action]) -> Iterator[tuple[int, str]]:
    """Every statement the actions write down (index of the turn, text), each once."""
    seen: set[str] = set()
    for action in found:
        texts = messages(action.command) if action.command else []
        lines = [(ln, True) for t in texts for ln in t.split("\n")]
        lines += [(ln, False) for ln in _added(action.arguments)]
        for line, prose in _joined(lines):
            text = _statement(line, prose)
            if text and text not in seen:
                seen.add(text)
                yield action.index, text
