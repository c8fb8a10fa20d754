"""Which archived jobs a reprocessing run redoes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from tersify.classify import classify
from tersify.contract import Method, ToolType
from tersify.worker.reprocess.reader import ArchivedJob


@dataclass(frozen=True)
class Filters:
    """Conditions a job must all meet; an empty set or None means any."""

    sessions: frozenset[str] = frozenset()
    since: datetime | None = None
    until: datetime | None = None
    tool_types: frozenset[ToolType] = frozenset()
    methods: frozenset[Method] = frozenset()
    min_chars: int | None = None
    max_chars: int | None = None

    def matches(self, item: ArchivedJob) -> bool:
        """True when ``item`` meets every condition."""
        job = item.job
        size = len(job.output)
        checks = (
            not self.sessions or job.session_id in self.sessions,
            self.since is None or job.created_at >= self.since,
            self.until is None or job.created_at < self.until,
            self.min_chars is None or size >= self.min_chars,
            self.max_chars is None or size <= self.max_chars,
            # a job logged without its result has no past method to match
            not self.methods or (item.old is not None and item.old.method in self.methods),
        )
        if not all(checks):
            return False
        return not self.tool_types or tool_type_of(item) in self.tool_types


def tool_type_of(item: ArchivedJob) -> ToolType:
    """The job's tool type: its old result's, else classified again."""
    if item.old is not None:
        return item.old.tool_type
    return classify(item.job.tool_name, item.job.command, item.job.output)
