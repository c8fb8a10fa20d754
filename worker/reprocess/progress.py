"""The live progress bar: done/total, rate, ETA and counts by outcome, on stderr."""

from __future__ import annotations

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeRemainingColumn,
)
from rich.text import Text


class RateColumn(ProgressColumn):
    """Jobs per second."""

    def render(self, task: Task) -> Text:
        """The task's speed, or a dash before there is one."""
        return Text(f"{task.speed:.1f} jobs/s" if task.speed else "- jobs/s")


def progress_bar(*, enabled: bool) -> Progress:
    """A progress display; ``enabled=False`` draws nothing (pipes, ``--no-progress``)."""
    return Progress(
        TextColumn("reprocess"),
        BarColumn(),
        MofNCompleteColumn(),
        RateColumn(),
        TimeRemainingColumn(),
        TextColumn("{task.fields[outcomes]}"),
        console=Console(stderr=True),
        disable=not enabled,
    )
