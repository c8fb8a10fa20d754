"""The docs' shell examples, read and run: the blocks of a Markdown file, a ``$``-prompt session
split into commands and the output shown under each, and a runner that types the commands into
one bash as a reader would (waiting for a server sent to the background to start), then checks
each shown output by its shape: "…" stands for any text, a number for any number, and an id
shown as ``5f0c…`` is captured so later commands that name it get the real one.
"""

from __future__ import annotations

import itertools
import re
import shlex
import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

_FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.M | re.S)
_HEADING = re.compile(r"^#+ (.*)$", re.M)
_PLACEHOLDER = re.compile(r"\b[0-9a-f]{2,8}…")
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


@dataclass(frozen=True)
class Block:
    """A fenced block of a Markdown file, with its language and the heading it sits under."""

    language: str
    text: str
    heading: str


@dataclass
class Step:
    """One command of a session and the output the docs show under it (may be empty)."""

    command: str
    shown: list[str] = field(default_factory=list)


def blocks(markdown: str) -> list[Block]:
    """Every fenced block of ``markdown``, in order."""
    found = []
    for match in _FENCE.finditer(markdown):
        headings = _HEADING.findall(markdown, 0, match.start())
        found.append(Block(match.group(1), match.group(2), headings[-1] if headings else ""))
    return found


def block_after(markdown: str, heading: str, language: str = "sh", nth: int = 0) -> Block:
    """The ``nth`` block of ``language`` under ``heading`` (exactly that heading's text)."""
    under = [b for b in blocks(markdown) if b.heading == heading and b.language == language]
    assert len(under) > nth, f"no {language} block #{nth} under the heading {heading!r}"
    return under[nth]


def session(text: str) -> list[Step]:
    """A ``$``-prompt session: each command (continued by a trailing backslash or an indented
    line) with the lines shown after it; ``#`` comments and blank lines are dropped."""
    steps: list[Step] = []
    for line in text.splitlines():
        if line.startswith("$ "):
            steps.append(Step(line[2:]))
        elif steps and line.startswith(" ") and steps[-1].command.endswith("\\"):
            steps[-1].command += "\n" + line
        elif steps and line.strip() and not line.startswith("#"):
            steps[-1].shown.append(line)
    return steps


def commands(text: str) -> list[Step]:
    """A plain script block as steps (one per line, trailing comments kept as bash reads them)."""
    return [Step(line) for line in text.splitlines() if line.strip()]


def shape(line: str) -> str:
    """The pattern a shown line stands for: "…" any text, a number any number, ``5f0c…`` an id
    (captured under the placeholder's name)."""
    pattern, at, seen = "", 0, set()
    for match in re.finditer(rf"{_PLACEHOLDER.pattern}|…|{_NUMBER.pattern}", line):
        pattern += re.escape(line[at : match.start()])
        token = match.group()
        if token == "…":
            pattern += ".*?"
        elif token.endswith("…"):
            name = f"id_{token[:-1]}"
            pattern += f"(?P={name})" if name in seen else f"(?P<{name}>[0-9a-f]+)"
            seen.add(name)
        else:
            pattern += r"\d[\d,]*(?:\.\d+)?"
        at = match.end()
    return pattern + re.escape(line[at:])


def match_shown(shown: list[str], actual: str, ids: dict[str, str]) -> str | None:
    """None when every shown line matches a line of ``actual``, in order (other lines between
    them allowed); else what did not. Ids captured on the way are added to ``ids``."""
    lines = actual.splitlines()
    at = 0
    for want in shown:
        pattern = re.compile(shape(want))
        for index in range(at, len(lines)):
            if found := pattern.fullmatch(lines[index]):
                ids.update({k[3:] + "…": v for k, v in found.groupdict().items()})
                at = index + 1
                break
        else:
            return f"no line shaped like {want!r} in:\n{actual}"
    return None


@dataclass
class Outcome:
    """What one step printed and how it ended (None: sent to the background)."""

    step: Step
    stdout: str
    stderr: str
    code: int | None


class Shell:
    """One bash reading commands as a reader types them; every command's output kept apart."""

    def __init__(self, cwd: Path, env: dict[str, str], ports: dict[int, int]) -> None:
        self.cwd = cwd
        self.ports = ports
        self.ids: dict[str, str] = {}
        self.bash = subprocess.Popen(
            ["bash", "--norc", "--noprofile"],
            stdin=subprocess.PIPE,
            cwd=cwd,
            env=env,
            text=True,
            start_new_session=True,
        )
        self.count = 0

    def typed(self, command: str) -> str:
        """``command`` as run here: the docs' ports swapped for free ones, shown ids for real."""
        for shown_port, port in self.ports.items():
            command = re.sub(rf"(?<![\d.]){shown_port}(?!\d)", str(port), command)
        for placeholder, real in self.ids.items():
            command = command.replace(placeholder, real)
        return command

    def run(self, step: Step, ready: Callable[[str], None], timeout: float = 240) -> Outcome:
        """Type ``step``'s command and wait for it (a background one: until ``ready`` returns)."""
        assert self.bash.stdin is not None
        self.count += 1
        n, command = self.count, self.typed(step.command).rstrip()
        out, err, code = (self.cwd / f".out{n}", self.cwd / f".err{n}", self.cwd / f".rc{n}")
        background = command.endswith("&") and not command.endswith("&&")
        if background:
            line = f"{command[:-1]} >{out} 2>{err} &\n"
        else:
            line = f"{{ {command}\n}} >{out} 2>{err}; echo $? >{code}\n"
        self.bash.stdin.write(line)
        self.bash.stdin.flush()
        if background:
            ready(command)
            return Outcome(step, "", "", None)
        deadline = time.monotonic() + timeout
        while not code.exists() or not code.read_text().endswith("\n"):
            assert time.monotonic() < deadline, f"{command!r} did not end in {timeout:g}s"
            assert self.bash.poll() is None, f"bash ended while running {command!r}"
            time.sleep(0.05)
        return Outcome(step, out.read_text(), err.read_text(), int(code.read_text()))

    def close(self) -> None:
        """Stop the jobs sent to the background, then bash (bounded)."""
        if self.bash.stdin is not None and self.bash.poll() is None:
            self.bash.stdin.write("kill $(jobs -p) 2>/dev/null; wait; exit\n")
            self.bash.stdin.close()
        try:
            self.bash.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.bash.kill()
            self.bash.wait(timeout=10)


def port_of(command: str) -> int | None:
    """The port a server command names (``--port N`` or ``--listen HOST:N``)."""
    words = shlex.split(command.split("#")[0].rstrip(" &"))
    for flag, value in itertools.pairwise(words):
        if flag == "--port":
            return int(value)
        if flag == "--listen":
            return int(value.rpartition(":")[2])
    return None


def listening(port: int) -> bool:
    """Whether something accepts connections on the loopback ``port``."""
    with socket.socket() as probe:
        probe.settimeout(0.5)
        return probe.connect_ex(("127.0.0.1", port)) == 0
