"""Random interleavings of gate operations against a real Redis, checked against a model.

Time is real: leases of 0.2 s and caps of at most 0.6 s, with short sleeps to let them run out.
A test-only "now" override in the scripts would make runs faster and exact, but it would also
mean testing scripts that production never runs; real time keeps this test about the real
thing. The model therefore knows each expiry only as a window (the server read its clock
somewhere between the call and its return, rounded to ms) and asserts only what is certain
at both ends of the window.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field

import redis
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)

from tersify.gate import CompletionOutcome, SessionGate
from tersify.settings import Settings
from tersify.store import keys
from tersify.worker.processes.redis_server import LocalRedis

LEASE = 0.2
CAP = 0.6
CLAIM = 0.15
EPS = 0.003  # ms rounding of the server's clock plus scheduling slack
SESSIONS = ("alpha", "beta")
NEVER = float("-inf")


@dataclass
class Job:
    """What the model knows about one submitted job."""

    sid: str
    job_id: str
    token: int
    hold_lo: float  # the hold's effective expiry lies in [hold_lo, hold_hi]; NEVER once removed
    hold_hi: float
    cap_lo: float  # the cap (absolute end of the hold) lies in [cap_lo, cap_hi]
    cap_hi: float
    claim_lo: float = NEVER  # the current sweeper claim's expiry window
    claim_hi: float = NEVER
    tokens: list[int] = field(default_factory=list)
    crashed: bool = False
    worker_done: bool = False
    cancelled: bool = False
    applied: int = 0

    @property
    def held(self) -> bool:
        return self.hold_hi != NEVER

    @property
    def current_token(self) -> int:
        return self.tokens[-1]

    def surely_live(self, at: float) -> bool:
        return self.held and self.hold_lo > at + EPS

    def surely_expired(self, at: float) -> bool:
        return not self.held or self.hold_hi <= at - EPS


class GateMachine(RuleBasedStateMachine):
    """Submit, renew, release, complete, crash, sweep and wait, in any order."""

    def __init__(self, url: str) -> None:
        super().__init__()
        self.client = redis.Redis.from_url(url, decode_responses=True)
        self.client.flushall()
        self.gate = SessionGate(
            self.client, Settings(gate_lease_seconds=LEASE, gate_max_seconds=CAP)
        )
        self.jobs: list[Job] = []
        self.ids = itertools.count()
        self.last_token = dict.fromkeys(SESSIONS, 0)

    def fresh_token(self, sid: str, token: int) -> int:
        assert token > self.last_token[sid], "fencing tokens must grow within a session"
        self.last_token[sid] = token
        return token

    def pick(self, index: int, *, running: bool = False) -> Job | None:
        jobs = [
            j
            for j in self.jobs
            if not running or not (j.crashed or j.worker_done or j.cancelled or j.applied)
        ]
        return jobs[index % len(jobs)] if jobs else None

    @initialize()
    def every_session_starts_with_running_jobs(self) -> None:
        for session in SESSIONS:
            self.submit(session, [CAP, 0.45])

    @rule(
        session=st.sampled_from(SESSIONS),
        caps=st.lists(st.sampled_from([0.3, 0.45, CAP]), min_size=1, max_size=3),
    )
    def submit(self, session: str, caps: list[float]) -> None:
        for cap in caps:
            job_id = f"job-{next(self.ids)}"
            t0 = time.time()
            token = self.fresh_token(session, self.gate.close_for(session, job_id, cap_seconds=cap))
            t1 = time.time()
            lease = min(LEASE, cap)
            hold = (t0 - EPS + lease, t1 + EPS + lease)
            cap_window = (t0 - EPS + cap, t1 + EPS + cap)
            self.jobs.append(Job(session, job_id, token, *hold, *cap_window, tokens=[token]))

    @rule()
    def renew_every_running_job(self) -> None:
        for job in self.jobs:
            if not (job.crashed or job.worker_done or job.cancelled or job.applied):
                self.renew(job)

    def renew(self, job: Job) -> None:
        """Renew one worker's hold and check the answer wherever timing makes it certain."""
        t0 = time.time()
        ok = self.gate.renew(job.sid, job.job_id, job.token)
        t1 = time.time()
        if not job.held or job.current_token != job.token:
            assert not ok, "a hold that is gone or taken over cannot be renewed"
        elif job.surely_live(t1):
            assert ok, "a live hold must renew"
        elif job.surely_expired(t0):
            assert not ok, "an expired hold must not be revived"
        if ok:
            job.hold_lo = min(t0 - EPS + LEASE, job.cap_lo)
            job.hold_hi = min(t1 + EPS + LEASE, job.cap_hi)
        elif job.held:
            job.hold_hi = min(job.hold_hi, t1 + EPS)

    @rule(index=st.integers(0, 100))
    def release(self, index: int) -> None:
        job = self.pick(index, running=True)
        if job is None:
            return
        released = self.gate.release(job.sid, job.job_id, job.token)
        assert released == (job.current_token == job.token)
        if released:
            job.cancelled, job.hold_lo, job.hold_hi = True, NEVER, NEVER

    @rule(index=st.integers(0, 100))
    def release_with_a_stale_token(self, index: int) -> None:
        job = self.pick(index)
        if job is not None:
            assert not self.gate.release(job.sid, job.job_id, job.current_token + 10_000)

    @rule(index=st.integers(0, 100))
    def complete(self, index: int) -> None:
        job = self.pick(index, running=True)
        if job is not None:
            job.worker_done = True
            self.finish(job, job.token)

    @rule(index=st.integers(0, 100))
    def complete_with_a_superseded_token(self, index: int) -> None:
        job = self.pick(index)
        if job is not None and len(job.tokens) > 1:
            outcome = self.gate.complete(
                job.job_id, "{}", ttl=60, session_id=job.sid, token=job.tokens[-2]
            )
            assert outcome is CompletionOutcome.LATE

    @rule(index=st.integers(0, 100))
    def a_redelivered_job_completes_again(self, index: int) -> None:
        applied = [j for j in self.jobs if j.applied]
        if applied:
            job = applied[index % len(applied)]
            self.finish(job, job.current_token)

    @rule(index=st.integers(0, 100))
    def the_producer_retries_close_for(self, index: int) -> None:
        job = self.pick(index, running=True)
        if job is not None and job.current_token == job.token:
            assert self.gate.close_for(job.sid, job.job_id) == job.token

    @rule(index=st.integers(0, 100))
    def crash(self, index: int) -> None:
        job = self.pick(index, running=True)
        if job is not None:
            job.crashed = True

    @rule(to_the_next_expiry=st.booleans())
    def let_time_pass(self, to_the_next_expiry: bool) -> None:
        if not to_the_next_expiry:
            time.sleep(LEASE / 3)  # short enough for renewing workers to keep their holds
            return
        now = time.time()
        ends = [j.hold_hi for j in self.jobs if j.held and j.hold_hi > now]
        ends += [j.claim_hi for j in self.jobs if not j.applied and j.claim_hi > now]
        time.sleep(min(0.25, max(0.0, min(ends, default=now + 0.01) - now + EPS)))

    @rule(sweeper_survives=st.booleans(), slow_workers_finish_first=st.booleans())
    def sweep(self, sweeper_survives: bool, slow_workers_finish_first: bool = False) -> None:
        t0 = time.time()
        claimed = self.gate.claim_expired(limit=1000, claim_seconds=CLAIM)
        t1 = time.time()
        by_id = {j.job_id: j for j in self.jobs}
        claimed_ids = [hold.job_id for hold in claimed]
        assert len(set(claimed_ids)) == len(claimed_ids)
        for hold in claimed:
            job = by_id[hold.job_id]
            assert hold.session_id == job.sid and not job.applied and not job.cancelled
            assert not job.surely_live(t1), "a live hold was claimed"
            if not job.held:
                assert job.claim_lo <= t1 + EPS, "a live claim was claimed again"
            job.tokens.append(self.fresh_token(job.sid, hold.token))
            job.hold_lo, job.hold_hi = NEVER, NEVER
            job.claim_lo, job.claim_hi = t0 - EPS + CLAIM, t1 + EPS + CLAIM
            if slow_workers_finish_first and not (job.crashed or job.worker_done):
                job.worker_done = True
                self.finish(job, job.token)  # between the claim and the fallback: LATE
            if sweeper_survives:
                self.finish(job, hold.token)
        for job in self.jobs:
            if job.applied or job.cancelled or job.job_id in claimed_ids:
                continue
            if job.held:
                assert not job.surely_expired(t0), f"expired hold of {job.job_id} not claimed"
            else:
                assert job.claim_hi > t0 - EPS, f"stale claim of {job.job_id} not claimed"

    def finish(self, job: Job, token: int) -> None:
        """Complete the job with ``token`` and check the outcome the rules predict."""
        expect_applied = not job.applied and token == job.current_token
        outcome = self.gate.complete(job.job_id, "{}", ttl=60, session_id=job.sid, token=token)
        assert outcome is (CompletionOutcome.APPLIED if expect_applied else CompletionOutcome.LATE)
        if expect_applied:
            job.applied += 1
            job.hold_lo = job.hold_hi = job.claim_lo = job.claim_hi = NEVER

    @invariant()
    def the_gate_is_open_exactly_when_no_hold_is_live(self) -> None:
        for sid in SESSIONS:
            t0 = time.time()
            is_open = self.gate.is_open(sid)
            t1 = time.time()
            mine = [j for j in self.jobs if j.sid == sid]
            if any(j.surely_live(t1) for j in mine):
                assert not is_open, f"{sid} open while a hold is live"
            if all(j.surely_expired(t0) for j in mine):
                assert is_open, f"{sid} closed with no live hold"
            if not is_open:
                assert any(j.held and j.cap_hi > t0 - EPS for j in mine), "closed past the cap"

    def teardown(self) -> None:
        try:
            for job in self.jobs:
                if not (job.crashed or job.worker_done or job.cancelled or job.applied):
                    job.worker_done = True
                    self.finish(job, job.token)
            for _ in range(5):
                pending = [j for j in self.jobs if not (j.applied or j.cancelled)]
                if not pending:
                    break
                time.sleep(max(0.0, max(max(j.hold_hi, j.claim_hi) for j in pending) - time.time()))
                time.sleep(EPS)
                self.sweep(sweeper_survives=True)
            for job in self.jobs:
                results = self.client.llen(keys.result(job.job_id))
                assert (job.applied, results) == ((0, 0) if job.cancelled else (1, 1)), job
            assert all(self.gate.is_open(sid) for sid in SESSIONS)
        finally:
            self.client.close()


def test_the_gate_keeps_its_invariants_under_random_interleavings(
    redis_server: LocalRedis,
) -> None:
    run_state_machine_as_test(
        lambda: GateMachine(redis_server.url),
        settings=settings(
            max_examples=50,
            stateful_step_count=30,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],  # rules sleep on purpose
        ),
    )
