"""The savings arithmetic, and the report as text, JSON and CSV.

For every tool output: tokens before (the output, by the one token estimate) and after (what
tersify hands back: the output itself at or under the threshold, else the summary plus the
read-back hint that names its ``output_ref``); saved = before - after. An output is input to
every model call after it until the session ends or compacts: ``once`` prices the saved tokens
at the first of those calls, ``carried`` at all of them (an upper bound: prompt caching makes
repeated input cheaper). Prices are the agent model's input price, USD per million tokens.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import IO, Any

from tersify.contract import Method
from tersify.worker.model.tokens import estimate_tokens
from tersify.worker.savings.shrink import Shrunk
from tersify.worker.savings.transcript import ToolOutput
from tersify.worker.store.logfiles import Skip

_MILLION = 1_000_000


@dataclass(frozen=True, slots=True)
class Row:
    """One tool output, before and after."""

    session: str
    agent: str
    model: str | None
    index: int
    tool_name: str
    tool_type: str
    method: str
    chars_before: int
    chars_after: int
    tokens_before: int
    tokens_after: int
    later_calls: int
    price: float | None
    summary_usd: float = 0.0
    rerun: bool = False  # told as what changed since an earlier run of the same command

    @property
    def saved(self) -> int:
        """Tokens the agent's context would not have held."""
        return self.tokens_before - self.tokens_after

    @property
    def carried(self) -> int:
        """Saved tokens times the model calls that would have sent them again."""
        return self.saved * self.later_calls

    @property
    def usd_once(self) -> float | None:
        """The saved tokens at the agent's input price, once (0 if no call read the output)."""
        if self.price is None:
            return None
        return self.saved * self.price / _MILLION if self.later_calls else 0.0

    @property
    def usd_carried(self) -> float | None:
        """The saved tokens at the agent's input price, for every later call."""
        return None if self.price is None else self.carried * self.price / _MILLION

    def as_json(self) -> dict[str, Any]:
        """The row with its derived columns, JSON-ready."""
        return {
            **asdict(self),
            "saved": self.saved,
            "carried": self.carried,
            "usd_once": _usd(self.usd_once),
            "usd_carried": _usd(self.usd_carried),
        }


def row_of(output: ToolOutput, shrunk: Shrunk, price: float | None, hint_tokens: int) -> Row:
    """The row of ``output`` given what it became."""
    before = estimate_tokens(output.text)
    passed = shrunk.method is Method.PASSTHROUGH
    after = before if passed else estimate_tokens(shrunk.text) + hint_tokens
    return Row(
        session=output.session,
        agent=output.agent,
        model=output.model,
        index=output.index,
        tool_name=output.tool_name,
        tool_type=shrunk.tool_type.value,
        method=shrunk.method.value,
        chars_before=len(output.text),
        chars_after=len(output.text) if passed else len(shrunk.text),
        tokens_before=before,
        tokens_after=after,
        later_calls=output.later_calls,
        price=price,
        rerun=shrunk.rerun,
    )


@dataclass(frozen=True, slots=True)
class Tally:
    """Totals over a group of rows."""

    outputs: int
    summarized: int
    tokens_before: int
    tokens_after: int
    carried: int
    usd_once: float
    usd_carried: float
    summary_usd: float
    unpriced: int
    reruns: int = 0

    @classmethod
    def of(cls, rows: Iterable[Row]) -> Tally:
        """The totals of ``rows``; unpriced rows add tokens, not dollars."""
        rows = list(rows)
        return cls(
            outputs=len(rows),
            summarized=sum(r.method != Method.PASSTHROUGH.value for r in rows),
            tokens_before=sum(r.tokens_before for r in rows),
            tokens_after=sum(r.tokens_after for r in rows),
            carried=sum(r.carried for r in rows),
            usd_once=sum(r.usd_once or 0.0 for r in rows),
            usd_carried=sum(r.usd_carried or 0.0 for r in rows),
            summary_usd=sum(r.summary_usd for r in rows),
            unpriced=sum(r.price is None for r in rows),
            reruns=sum(r.rerun for r in rows),
        )

    @property
    def saved(self) -> int:
        """Tokens saved, each output counted once."""
        return self.tokens_before - self.tokens_after

    @property
    def percent(self) -> float:
        """Saved tokens as a share of the tokens before, in percent."""
        return 100.0 * self.saved / self.tokens_before if self.tokens_before else 0.0

    def as_json(self) -> dict[str, Any]:
        """The totals, JSON-ready."""
        return {
            "outputs": self.outputs,
            "summarized": self.summarized,
            "reruns": self.reruns,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "saved": self.saved,
            "percent": round(self.percent, 2),
            "usd_once": _usd(self.usd_once),
            "usd_carried": _usd(self.usd_carried),
            "summary_usd": _usd(self.summary_usd),
            "net_usd_once": _usd(self.usd_once - self.summary_usd),
            "carried": self.carried,
            "unpriced": self.unpriced,
        }


@dataclass
class Report:
    """A whole run: every output's row, what was read and skipped, and how it was made."""

    rows: list[Row]
    files: int
    sessions: int
    skips: list[Skip]
    threshold: int
    hint_tokens: int
    mode: str = "local"
    repeated: int = 0
    not_sent: int = 0
    stopped_on_budget: bool = False
    notes: list[str] = field(default_factory=list)

    def overall(self) -> Tally:
        """Totals over every output."""
        return Tally.of(self.rows)

    def by(self, key: Callable[[Row], str]) -> dict[str, Tally]:
        """Totals per value of ``key``, largest savings first."""
        groups: dict[str, list[Row]] = {}
        for row in self.rows:
            groups.setdefault(key(row), []).append(row)
        tallies = {name: Tally.of(rows) for name, rows in groups.items()}
        return dict(sorted(tallies.items(), key=lambda item: (-item[1].saved, item[0])))

    def largest(self, count: int) -> list[Row]:
        """The ``count`` largest outputs, by tokens before."""
        return sorted(self.rows, key=lambda r: (-r.tokens_before, r.session, r.index))[:count]

    def as_json(self, top: int) -> dict[str, Any]:
        """The report as one JSON-ready object (rows only through ``--csv``)."""
        return {
            "mode": self.mode,
            "files": self.files,
            "sessions": self.sessions,
            "repeated_sessions": self.repeated,
            "threshold_chars": self.threshold,
            "hint_tokens": self.hint_tokens,
            "skipped": [asdict(s) | {"path": str(s.path)} for s in self.skips],
            "not_sent": self.not_sent,
            "stopped_on_budget": self.stopped_on_budget,
            "notes": self.notes,
            "total": self.overall().as_json(),
            "by_tool_type": {k: t.as_json() for k, t in self.by(lambda r: r.tool_type).items()},
            "by_session": {k: t.as_json() for k, t in self.by(lambda r: r.session).items()},
            "by_model": {k: t.as_json() for k, t in self.by(lambda r: r.model or "-").items()},
            "largest": [r.as_json() for r in self.largest(top)],
        }

    def write_csv(self, handle: IO[str]) -> None:
        """One line per tool output, in session order: a table to chart (text cells that a
        spreadsheet would run as a formula are written as text, see ``as_text``)."""
        names = [*Row.__dataclass_fields__, "saved", "carried", "usd_once", "usd_carried"]
        writer = csv.DictWriter(handle, fieldnames=names, lineterminator="\n")
        writer.writeheader()
        for row in self.rows:
            writer.writerow({k: as_text(v) for k, v in row.as_json().items()})


_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def as_text(value: Any) -> Any:
    """A CSV cell: a string a spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@``, a
    tab or a return first) gets a leading ``'``, which makes it text; numbers stay numbers."""
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith(_FORMULA_STARTS):
        return "'" + value
    return value


def _usd(value: float | None) -> float | None:
    return None if value is None else round(value, 6)
