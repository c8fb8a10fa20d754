"""From the outputs read to the report's rows: shrunk here, or answered through the queue."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from tersify.contract import Method
from tersify.settings import Settings
from tersify.worker.rerun.history import SessionRuns
from tersify.worker.savings.prices import Prices
from tersify.worker.savings.reader import Reading
from tersify.worker.savings.remote import RemoteRun
from tersify.worker.savings.report import Row, row_of
from tersify.worker.savings.shrink import Shrunk, shrink_locally, summarizes, tool_type_of
from tersify.worker.savings.transcript import ToolOutput

NOT_SENT = "not_sent"
"""The method of an output over the threshold that ``--model`` did not get a summary for."""


def outputs_of(reading: Reading) -> list[ToolOutput]:
    """Every tool output read, session by session, in order."""
    return [output for transcript in reading.transcripts for output in transcript.outputs]


def local_rows(
    settings: Settings,
    outputs: list[ToolOutput],
    prices: Prices,
    hint_tokens: int,
    advance: Callable[[], None] = lambda: None,
) -> list[Row]:
    """Each output passed through or shrunk as a worker with no model would, each session's
    commands run again told as what changed."""
    rows = []
    runs: dict[str, SessionRuns] = {}
    for output in outputs:
        session = runs.setdefault(output.session, SessionRuns(settings.rerun_window))
        shrunk = shrink_locally(settings, output, session)
        rows.append(row_of(output, shrunk, prices.input_price(output.model), hint_tokens))
        advance()
    return rows


def remote_rows(
    settings: Settings,
    outputs: list[ToolOutput],
    run: RemoteRun,
    prices: Prices,
    hint_tokens: int,
) -> list[Row]:
    """Each output as the queue answered it; unsent or failed ones count as unchanged."""
    rows = []
    for index, output in enumerate(outputs):
        price = prices.input_price(output.model)
        if index in run.shrunk:
            shrunk, cost = run.shrunk[index]
            rows.append(replace(row_of(output, shrunk, price, hint_tokens), summary_usd=cost))
            continue
        row = row_of(
            output, Shrunk(output.text, Method.PASSTHROUGH, tool_type_of(output)), price, 0
        )
        rows.append(replace(row, method=NOT_SENT) if summarizes(settings, output) else row)
    return rows
