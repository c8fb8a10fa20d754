"""``tersify savings`` replays each session's commands as a worker tells them: a command run
again in its session is summarized as what changed, and counted."""

from __future__ import annotations

from pathlib import Path

from tersify.settings import Settings
from tersify.settings.values import PriceTable
from tersify.worker.savings.compute import local_rows
from tersify.worker.savings.prices import Prices
from tersify.worker.savings.report import Tally
from tersify.worker.savings.transcript import ToolOutput
from tests.runlogs import runner_log


def output(session: str, index: int, text: str, command: str = "make test") -> ToolOutput:
    return ToolOutput(
        session=session,
        agent="test",
        model=None,
        tool_name="Bash",
        command=command,
        text=text,
        index=index,
        later_calls=3,
        source=Path("session.jsonl"),
    )


def test_a_command_run_again_in_its_session_is_told_as_what_changed_and_counted() -> None:
    outputs = [
        output("one", 0, runner_log([3, 17])),
        output("two", 0, runner_log([3, 17, 40])),  # another session: its own first run
        output("one", 1, runner_log([17, 52])),
        output("one", 2, runner_log([17, 52]), command="make lint"),  # another command
    ]
    rows = local_rows(Settings(), outputs, Prices.of(PriceTable.model_validate("")), 60)
    assert [row.rerun for row in rows] == [False, False, True, False]
    assert rows[2].tokens_after < rows[0].tokens_after / 2
    assert Tally.of(rows).reruns == 1


def test_a_window_of_zero_replays_every_output_on_its_own() -> None:
    outputs = [output("one", 0, runner_log([3])), output("one", 1, runner_log([4]))]
    rows = local_rows(
        Settings(rerun_window=0), outputs, Prices.of(PriceTable.model_validate("")), 60
    )
    assert not any(row.rerun for row in rows)
