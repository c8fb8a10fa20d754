"""Which runs are runs of the same command: the tool's name and the command line, normalized.

A run is known by its tool (``normalize_tool_name``: MCP prefixes gone, kebab case) and its
command with what changes between identical runs taken out: an option or a variable whose name
says it is a seed, a port, a temporary directory or a time limit, with its value, and every
temporary path; blanks and quoting as the shell reads them. Everything else is kept as it is
— the paths, test ids, markers and expressions that choose what runs, the output flags that
shape what it prints — so ``pytest tests/a.py`` and ``pytest tests/b.py`` are two commands.
"""

from __future__ import annotations

import hashlib
import re
import shlex
from typing import Final

from tersify.classify import normalize_tool_name
from tersify.worker.rerun.volatile import volatile_path

# Words of an option's or a variable's name that make its value volatile.
VOLATILE_WORDS: Final = frozenset(
    {
        "seed", "seeds", "port", "ports", "tmp", "temp", "tmpdir", "tempdir", "basetemp",
        "tmppath", "timeout", "timeouts", "deadline", "time", "durations", "random",
    }
)  # fmt: skip
_NAME_WORDS: Final = re.compile(r"[A-Za-z]+")
_ASSIGNMENT: Final = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=(.*)", re.DOTALL)
_OPTION: Final = re.compile(r"(--?[A-Za-z][\w.-]*)(?:=(.*))?", re.DOTALL)
# A value a volatile option takes as its next word: a number, perhaps with a unit (30, 1.5s).
_VALUE: Final = re.compile(r"\d+(?:\.\d+)?[A-Za-z]{0,3}")


def _volatile_name(name: str) -> bool:
    """Whether a name (``--random-seed``, ``TEST_PORT``, ``basetemp``) names a volatile value."""
    return any(word.lower() in VOLATILE_WORDS for word in _NAME_WORDS.findall(name))


def _words(command: str) -> tuple[list[str], bool]:
    """The command's words as a shell splits them (and True), else its blank-separated words
    (a quote left open) and False."""
    try:
        return shlex.split(command, comments=False, posix=True), True
    except ValueError:
        return command.split(), False


def normalized_command(command: str) -> str:
    """``command`` with its volatile options, variables and paths taken out (see the module)."""
    kept: list[str] = []
    dropping = False  # the option before was volatile: its value goes too
    words, parsed = _words(command)
    for word in words:
        if dropping:
            dropping = False
            if _VALUE.fullmatch(word) or volatile_path(word) != word:
                continue
        assignment = _ASSIGNMENT.fullmatch(word)
        if assignment is not None and _volatile_name(assignment.group(1)):
            continue  # SEED=3 pytest …
        option = _OPTION.fullmatch(word)
        if option is not None and len(option.group(1)) > 2 and _volatile_name(option.group(1)):
            dropping = option.group(2) is None  # "--seed 3": the value is the next word
            continue
        kept.append(volatile_path(word))
    return shlex.join(kept) if parsed else " ".join(kept)


def run_key(tool_name: str, command: str | None) -> str | None:
    """The key that runs of one command share in a session; None for a call without one."""
    if command is None or not command.strip():
        return None
    tool = normalize_tool_name(tool_name)
    raw = f"{tool}\0{normalized_command(command)}".encode("utf-8", "surrogatepass")
    return hashlib.sha256(raw).hexdigest()[:24]
