"""A chore that keeps failing is logged when its failure starts, changes kind or ends."""

from __future__ import annotations

import redis
from structlog.testing import capture_logs

from tersify.errors import RedisUnavailableError
from tersify.settings import Settings
from tersify.worker.runtime.scheduler import Chore, Scheduler


def test_a_failing_chore_is_logged_once_per_change_of_state() -> None:
    outcomes: list[BaseException | None] = [
        *(redis.ConnectionError("refused") for _ in range(5)),
        *(KeyError("bug") for _ in range(3)),
        None,
        None,
        redis.ConnectionError("refused"),
    ]

    def work() -> None:
        outcome = outcomes.pop(0)
        if outcome is not None:
            raise outcome

    chore = Chore(1.0, work, "sweep")
    with capture_logs() as logs:
        for _ in range(11):
            chore.run()
    assert [(e["event"], e.get("error"), e.get("failed_runs")) for e in logs] == [
        ("chore_failed", "ConnectionError: refused", None),
        ("chore_failed", "KeyError: 'bug'", None),
        ("chore_recovered", None, 8),
        ("chore_failed", "ConnectionError: refused", None),
    ]
    assert [e["exc_info"] for e in logs if e["event"] == "chore_failed"] == [False, True, False]


class FlakyGate:
    """A gate whose renewals fail ``failures`` times (Redis down), then go through."""

    def __init__(self, failures: int) -> None:
        self.failures = failures

    def renew_all(self, holds: list[tuple[str, str, int]]) -> list[bool]:
        """Renew ``holds``, or fail while Redis is down."""
        if self.failures:
            self.failures -= 1
            raise RedisUnavailableError("gate renew: redis unavailable")
        return [True for _ in holds]


def test_failing_lease_renewals_are_logged_once_and_again_when_they_recover() -> None:
    scheduler = Scheduler(FlakyGate(failures=5), Settings())  # type: ignore[arg-type]
    with scheduler.holding("s1", "job-1", 7), capture_logs() as logs:
        for _ in range(8):
            scheduler._renew_all()
    scheduler.stop()
    assert [e["event"] for e in logs] == ["lease_renew_failed", "lease_renew_recovered"]
