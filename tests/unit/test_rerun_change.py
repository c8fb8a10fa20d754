"""Change summaries without a model: over generated pairs of runs, never a new failure or a
changed verdict left out, never longer than the run's summary on its own."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tersify.contract import JobOptions, PendingSummary, ToolType
from tersify.settings import Settings
from tersify.worker.rerun.change import LINE_CHARS
from tersify.worker.rerun.history import Earlier, Run
from tersify.worker.rerun.summary import summarize_rerun
from tersify.worker.rerun.volatile import normalized_line
from tersify.worker.shrink import clip, extract
from tersify.worker.shrink.textcut import ELLIPSIS

COMMAND = ToolType.COMMAND_OUTPUT
SETTINGS = Settings()
REF = "ab" * 16
NAME = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=3, max_size=9)
LETTERS = "abcdefghijklmnopqrstuvwxyz"


@dataclass(frozen=True)
class Line:
    """A generated line and what it is, known by how it was made."""

    text: str
    failure: bool = False
    verdict: bool = False


class Lines:
    """Generated lines of a run, from one seed (hypothesis draws the seeds and the shape of the
    pair; drawing every word through it would be slow for no gain)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def name(self) -> str:
        return "".join(self.rng.choices(LETTERS, k=self.rng.randint(3, 9)))

    def failure(self) -> Line:
        name, other, n = self.name(), self.name(), self.rng.randint(0, 5000)
        return Line(
            self.rng.choice(
                [
                    f"error: cannot find value `{name}` in module `{other}`",
                    f"FAILED suite/{name}.src::case_{other} - assert {n} == {n + 1}",
                    f"suite/{name}.src:{n}: {other.capitalize()}Error: {name} went wrong",
                    f"fatal: {name} is not a known {other}",
                    f"panic: {name} index out of range [{n}]",
                    f"Exception in thread main {other}.{name.capitalize()}Exception",
                ]
            ),
            failure=True,
        )

    def verdict(self) -> Line:
        failed, passed = self.rng.randint(0, 50), self.rng.randint(0, 5000)
        took = self.rng.choice(["0.52s", "1.3s", "12.0s"])
        return Line(f"===== {failed} failed, {passed} passed in {took} =====", verdict=True)

    def plain(self) -> Line:
        name, n = self.name(), self.rng.randint(0, 5000)
        clock = f"{self.rng.randint(0, 23):02d}:{self.rng.randint(0, 59):02d}:07"
        return Line(
            self.rng.choice(
                [
                    f"suite/{name}.src .......... [ {n % 100}%]",
                    f"{clock} step {name} finished in {n}ms",
                    f"compiling {name} v0.{n % 10}.{n % 7}",
                    f"ok   module/{name}   0.{n % 100:02d}s",
                    f"    {name} = {n}",
                ]
            )
        )

    def any(self) -> Line:
        kind = self.rng.choice(["plain"] * 6 + ["failure", "warning"])
        if kind == "failure":
            return self.failure()
        if kind == "warning":
            return Line(f"warning: unused variable `{self.name()}`")
        return self.plain()


@st.composite
def run_pair(draw: st.DrawFn) -> tuple[list[Line], list[Line]]:
    """A run, and the next run of the same command as an agent's edit leaves it: some lines
    gone, some new (failures among them), counts changed, times changed, lines reordered."""
    make = Lines(random.Random(draw(st.integers(0, 2**32))))
    size = draw(st.integers(20, 150))
    churn = draw(st.sampled_from([0.0, 0.02, 0.05, 0.1, 0.3]))  # the share of lines touched
    before = [make.any() for _ in range(size)]
    before.append(make.verdict())
    after: list[Line] = []
    for line in before:
        if make.rng.random() >= churn:
            after.append(line)
            continue
        fate = make.rng.choice(["drop", "redo", "new"])
        if fate == "redo" and not line.failure:
            after.append(make.verdict() if line.verdict else make.plain())
        elif fate == "new":
            after += [line, make.failure() if make.rng.random() < 0.5 else make.any()]
        elif fate == "redo":
            after.append(line)
    if draw(st.booleans()):  # a runner working in parallel prints its lines in another order
        body = after[:-1]
        make.rng.shuffle(body)
        after = [*body, *after[-1:]]
    return before, after


def job_of(lines: list[Line], **options: bool) -> PendingSummary:
    return PendingSummary.build(
        deadline_seconds=60,
        session_id="s",
        tool_name="shell",
        command="runner suite/",
        output="\n".join(line.text for line in lines),
        options=JobOptions(**options) if options else None,
    )


def earlier_of(lines: list[Line], run: int = 4) -> Earlier:
    return Earlier(
        Run("k", "d", "j", REF, run, "the earlier summary", 2000),
        "\n".join(line.text for line in lines),
    )


def shown(text: str) -> str:
    """What a summary shows of a line (clipped like every quote, the ellipsis aside)."""
    return clip(text.strip(), LINE_CHARS, ellipsis=True).removesuffix(ELLIPSIS)


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(run_pair())
def test_a_change_summary_never_hides_a_new_failure_or_a_changed_verdict(
    pair: tuple[list[Line], list[Line]],
) -> None:
    before, after = pair
    job = job_of(after)
    outcome = summarize_rerun(job, COMMAND, earlier_of(before), (), SETTINGS)
    if outcome is None:  # the runs differ too much: the ordinary path summarizes this one
        event("differ too much")
        return
    alone = extract(job.output, COMMAND, SETTINGS.local_budget_chars, None, None)
    if outcome.rerun_of is None:
        event("on its own: not shorter")
        assert outcome.text == alone  # on its own: the ordinary summary
        return
    event("change summary")
    assert outcome.rerun_of == REF
    assert outcome.text.startswith(f"same as run 4 (ref {REF})")
    assert len(outcome.text) < len(alone)
    had = Counter(normalized_line(line.text) for line in before)
    seen: Counter[str] = Counter()
    still = 0
    for line in after:
        key = normalized_line(line.text)
        seen[key] += 1
        if not (line.failure or line.verdict):
            continue
        if seen[key] > had[key]:  # this run has it and the earlier one had not
            assert shown(line.text) in outcome.text, line.text
        elif line.failure:
            still += 1
    if still:
        assert f"still as in run 4: {still} failure or error lines" in outcome.text or (
            "still as in run 4:\n" in outcome.text
            and all(shown(x.text) in outcome.text for x in after if x.failure)
        )


@given(st.lists(st.integers(0, 10**6), min_size=40, max_size=80))
def test_runs_alike_but_for_times_say_so_in_one_line(names: list[int]) -> None:
    before = [Line(f"task {n} took 1.2s at 10:00:00") for n in names]
    after = [Line(f"task {n} took 0.4s at 10:05:31") for n in names]
    outcome = summarize_rerun(job_of(after), COMMAND, earlier_of(before), (), SETTINGS)
    assert outcome is not None and outcome.rerun_of == REF
    assert outcome.text == (
        f"same as run 4 (ref {REF}): every line alike (times, durations, ids, addresses and "
        "temp paths aside)."
    )


def test_runs_that_differ_in_most_lines_are_summarized_on_their_own() -> None:
    before = [Line(f"first target line {n}") for n in range(60)]
    after = [Line(f"second target entry {n * 7}") for n in range(60)]
    outcome = summarize_rerun(job_of(after), COMMAND, earlier_of(before), (), SETTINGS)
    assert outcome is None  # the ordinary path summarizes it


def test_a_job_can_turn_change_summaries_off() -> None:
    lines = [Line(f"step {n} done") for n in range(80)]
    job = job_of([*lines, Line("error: one more")], rerun=False)
    assert summarize_rerun(job, COMMAND, earlier_of(lines), (), SETTINGS) is None


def test_a_file_is_always_summarized_on_its_own() -> None:
    lines = [Line(f"line {n} of the file") for n in range(80)]
    job = job_of(lines)
    earlier = earlier_of(lines)
    assert summarize_rerun(job, ToolType.FILE_CONTENT, earlier, (), SETTINGS) is None


def test_a_fixed_failure_and_a_new_one_are_told_apart() -> None:
    common = [Line(f"suite/part_{n}.src .......... [ {n}%]") for n in range(60)]
    before = [*common, Line("FAILED suite/a.src::case_one - assert 1 == 2")]
    after = [*common, Line("FAILED suite/b.src::case_two - assert 3 == 4")]
    outcome = summarize_rerun(job_of(after), COMMAND, earlier_of(before), (), SETTINGS)
    assert outcome is not None and outcome.rerun_of == REF
    assert outcome.text.split("\n") == [
        f"same as run 4 (ref {REF}), except:",
        "+ 61| FAILED suite/b.src::case_two - assert 3 == 4",
        "- FAILED suite/a.src::case_one - assert 1 == 2",
    ]
