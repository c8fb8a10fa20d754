"""One agent session as the savings report sees it: tool outputs, in order, among model calls.

Every reader builds its sessions with a ``Builder``: it is told of each model call (by an id:
lines of one API response share it) and each tool output, and works out how many model calls
came after each output. An output stays in the agent's context until the session ends or the
agent compacts its context, so each of the calls in between sent it to the model again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True, slots=True)
class ToolOutput:
    """One tool result an agent's model read, and where it sits in its session."""

    session: str
    agent: str
    model: str | None
    tool_name: str
    command: str | None
    text: str
    index: int
    later_calls: int
    source: Path


@dataclass
class Transcript:
    """One session's tool outputs and how many model calls it made."""

    session: str
    agent: str
    source: Path
    outputs: list[ToolOutput]
    calls: int


@dataclass
class _Pending:
    tool_name: str
    command: str | None
    text: str
    model: str | None
    calls_before: int
    calls_until: int | None = None


@dataclass
class Builder:
    """Collects one session's calls and outputs in order; ``finish`` makes the transcript."""

    session: str
    agent: str
    source: Path
    model: str | None = None
    _calls: set[str] = field(default_factory=set)
    _pending: list[_Pending] = field(default_factory=list)

    def call(self, call_id: str) -> None:
        """A model call (seen again for each line of one response: counted once)."""
        self._calls.add(call_id)

    def output(self, tool_name: str, command: str | None, text: str) -> None:
        """A tool output the model reads from its next call on."""
        pending = _Pending(tool_name or "unknown", command, text, self.model, len(self._calls))
        self._pending.append(pending)

    def compacted(self) -> None:
        """The agent compacted its context: the outputs so far leave it."""
        for pending in self._pending:
            if pending.calls_until is None:
                pending.calls_until = len(self._calls)

    def finish(self) -> Transcript:
        """The session as read so far."""
        total = len(self._calls)
        outputs = [
            ToolOutput(
                session=self.session,
                agent=self.agent,
                model=p.model,
                tool_name=p.tool_name,
                command=p.command,
                text=p.text,
                index=index,
                later_calls=(total if p.calls_until is None else p.calls_until) - p.calls_before,
                source=self.source,
            )
            for index, p in enumerate(self._pending)
        ]
        return Transcript(self.session, self.agent, self.source, outputs, total)
