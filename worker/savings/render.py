"""The savings report for people: a few rich tables.

Every text read from the logs (session names, tool names, paths, reasons) is escaped before
rich sees it: a tool named ``[/bold]`` is printed as it is, never read as markup.
"""

from __future__ import annotations

from rich.console import Group
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from tersify.worker.savings.report import Report, Row, Tally
from tersify.worker.store.logfiles import skipped_lines

_LISTED_SESSIONS = 20


def render(report: Report, top: int) -> Group:
    """The whole report."""
    total = report.overall()
    repeated = f" ({report.repeated} more cop(ies) counted once)" if report.repeated else ""
    head = [
        f"read: {report.files} file(s), {report.sessions} session(s){repeated}, {total.outputs} "
        f"tool output(s), {len(report.skips)} line(s) or file(s) skipped",
    ]
    head += skipped_lines(report.skips)
    head.append(
        f"{report.mode}; outputs over {report.threshold} chars are summarized; "
        f"each summary counts {report.hint_tokens} tokens more for its read-back hint"
    )
    if total.reruns:
        head.append(
            f"{total.reruns} of the summaries say what changed since an earlier run of the same "
            "command in the session"
        )
    if report.stopped_on_budget:
        head.append(
            f"stopped: --max-cost reached, {report.not_sent} output(s) not sent (unchanged)"
        )
    parts: list[Text | Table] = [Text("\n".join(head))]
    parts.append(_tallies("total", {"all": total}))
    parts.append(_tallies("by tool type", report.by(lambda r: r.tool_type)))
    sessions = report.by(lambda r: r.session)
    shown = dict(list(sessions.items())[:_LISTED_SESSIONS])
    more = len(sessions) - len(shown)
    parts.append(
        _tallies(f"by session{f' (top {len(shown)}, {more} more)' if more else ''}", shown)
    )
    parts.append(_largest(report.largest(top)))
    parts += [Text(note) for note in report.notes]
    return Group(*parts)


def _tallies(title: str, groups: dict[str, Tally]) -> Table:
    table = Table(title=title, title_justify="left")
    columns = ("", "outputs", "summarized", "tokens before", "after", "saved", "%")
    for column in (*columns, "saved × later calls", "USD once", "USD carried", "summary USD"):
        table.add_column(column, justify="left" if not column else "right")
    for name, t in groups.items():
        table.add_row(
            escape(name),
            str(t.outputs),
            str(t.summarized),
            f"{t.tokens_before:,}",
            f"{t.tokens_after:,}",
            f"{t.saved:,}",
            f"{t.percent:.1f}",
            f"{t.carried:,}",
            _money(t.usd_once, t.unpriced, t.outputs),
            _money(t.usd_carried, t.unpriced, t.outputs),
            f"{t.summary_usd:.4f}",
        )
    return table


def _largest(rows: list[Row]) -> Table:
    table = Table(title=f"largest {len(rows)} outputs", title_justify="left")
    for column in ("session", "#", "tool", "type", "method", "tokens", "after", "later calls"):
        table.add_column(column, justify="right" if column in ("#", "tokens", "after") else "left")
    for r in rows:
        table.add_row(
            escape(r.session[-36:]),
            str(r.index),
            escape(r.tool_name[:30]),
            escape(r.tool_type),
            escape(r.method),
            f"{r.tokens_before:,}",
            f"{r.tokens_after:,}",
            str(r.later_calls),
        )
    return table


def _money(usd: float, unpriced: int, outputs: int) -> str:
    if unpriced == outputs:
        return "-"
    return f"{usd:.4f}" + ("*" if unpriced else "")
