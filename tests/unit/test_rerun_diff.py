"""Two runs' lines matched: order and volatile parts aside, what is new, gone or changed."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from tersify.contract import ToolType
from tersify.worker.rerun.diff import compare

COMMAND = ToolType.COMMAND_OUTPUT
STEPS = [f"step {name} done" for name in ("alpha", "beta", "gamma", "delta", "epsilon")]


@given(st.lists(st.sampled_from(STEPS), min_size=1, max_size=30), st.randoms())
def test_the_same_lines_in_another_order_are_no_change(
    lines: list[str], rng: random.Random
) -> None:
    shuffled = list(lines)
    rng.shuffle(shuffled)
    diff = compare("\n".join(lines), "\n".join(shuffled), COMMAND)
    assert diff.empty
    assert diff.share == 0.0


def test_lines_that_differ_in_volatile_parts_only_are_no_change() -> None:
    before = (
        "12:00:01 start\nbuilt a1b2c3d4e5 in 1.5s\nobject at 0x7ffee1234567\n== 2 passed in 0.1s =="
    )
    after = (
        "13:45:59 start\nbuilt 9f8e7d6c5b in 0.2s\nobject at 0x7ffee7654321\n== 2 passed in 3.0s =="
    )
    assert compare(before, after, COMMAND).empty


def test_a_changed_count_is_one_changed_line() -> None:
    before = "\n".join([*STEPS, "== 2 failed, 40 passed in 1.0s =="])
    after = "\n".join([*STEPS, "== 1 failed, 41 passed in 1.2s =="])
    diff = compare(before, after, COMMAND)
    ((new, old),) = diff.changed
    assert (new.text, old.text) == (after.split("\n")[-1], before.split("\n")[-1])
    assert not diff.added and not diff.gone


def test_a_failure_that_reads_otherwise_is_new_and_gone_never_changed() -> None:
    before = "\n".join([*STEPS, "error: name 'thing_3' is not defined"])
    after = "\n".join([*STEPS, "error: name 'thing_4' is not defined"])
    diff = compare(before, after, COMMAND)
    assert not diff.changed
    assert [x.text for x in diff.added] == ["error: name 'thing_4' is not defined"]
    assert [x.text for x in diff.gone] == ["error: name 'thing_3' is not defined"]
    assert diff.added[0].index == len(STEPS) and diff.added[0].failure


def test_failures_both_runs_print_are_kept_failures() -> None:
    failure = "suite/case.src:12: ValueError: bad value"
    before = "\n".join([*STEPS, failure])
    after = "\n".join([*STEPS, failure.replace(":12:", ":14:"), "step zeta done"])
    diff = compare(before, after, COMMAND)
    assert [x.text for x in diff.kept_failures] == [failure.replace(":12:", ":14:")]
    assert [x.text for x in diff.added] == ["step zeta done"]


def test_a_line_printed_once_more_is_one_new_line() -> None:
    diff = compare("a line\nb line", "a line\nb line\na line", COMMAND)
    assert [x.index for x in diff.added] == [2]


def test_the_share_counts_both_runs() -> None:
    diff = compare("one\ntwo\nthree\nfour", "one\ntwo\nfive\nsix", COMMAND)
    assert diff.lines == diff.previous_lines == 4
    assert diff.share == 0.5
    assert compare("one\ntwo", "three\nfour", COMMAND).share == 1.0


def test_blank_lines_are_not_lines() -> None:
    assert compare("a\n\n\nb", "a\nb\n\n", COMMAND).empty
