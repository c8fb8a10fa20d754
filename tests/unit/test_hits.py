"""The fast search of an ASCII text finds what a ``str.find`` loop finds, window by window."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tersify.worker.shrink.hits import Hits, any_of, positions, search

NEEDLES = st.sampled_from(("a", "aa", "aba", "ab", "abab", "ba", "b a", "é", "zz"))
TEXTS = st.text(alphabet="ab \n", max_size=300)


def find_loop(low: str, needle: str) -> list[int]:
    """Every leftmost occurrence that does not overlap the one before: ``str.find``."""
    found: list[int] = []
    pos = low.find(needle)
    while pos != -1:
        found.append(pos)
        pos = low.find(needle, pos + len(needle))
    return found


@settings(max_examples=300, deadline=None)
@given(TEXTS, NEEDLES, st.integers(min_value=1, max_value=40))
def test_a_search_in_windows_finds_what_a_find_loop_finds(
    low: str, needle: str, chunk: int
) -> None:
    found, complete = search(low.encode("ascii"), needle, 10**9, chunk=chunk)
    assert complete
    assert found == find_loop(low, needle)


@settings(max_examples=200, deadline=None)
@given(TEXTS, NEEDLES, st.integers(min_value=1, max_value=40), st.integers(1, 30), st.booleans())
def test_a_search_that_stops_early_says_so_and_holds_the_first_hits(
    low: str, needle: str, chunk: int, most: int, projected: bool
) -> None:
    found, complete = search(low.encode("ascii"), needle, most, projected=projected, chunk=chunk)
    every = find_loop(low, needle)
    assert found == every[: len(found)]
    if complete:
        assert found == every
    if not projected:
        assert len(found) >= most if len(every) >= most else complete


def sampled(low: str, needles: tuple[str, ...], limit: int) -> list[int]:
    """``positions`` as a plain ``str.find`` loop: past ``limit`` hits, a stride between them."""
    found: list[int] = []
    stride = len(low) // limit + 1
    for needle in needles:
        pos, seen = low.find(needle), 0
        while pos != -1:
            found.append(pos)
            seen += 1
            pos = low.find(needle, pos + (len(needle) if seen < limit else stride))
    return sorted(found)


@settings(max_examples=200, deadline=None)
@given(TEXTS, st.lists(NEEDLES, min_size=1, max_size=3), st.integers(min_value=1, max_value=12))
def test_positions_sample_a_flood_as_a_find_loop_does(
    low: str, needles: list[str], limit: int
) -> None:
    assert positions(low, tuple(needles), limit) == sampled(low, tuple(needles), limit)
    # A text that is not ASCII is searched by ``str.find`` itself.
    other = low + "ü"
    assert positions(other, tuple(needles), limit) == sampled(other, tuple(needles), limit)


@settings(max_examples=200, deadline=None)
@given(TEXTS, NEEDLES, st.booleans())
def test_hits_count_as_str_count_and_find_as_positions(low: str, needle: str, first: bool) -> None:
    hits = Hits(low)
    if first:
        assert hits.of(needle) == positions(low, (needle,))
    assert hits.count(needle) == low.count(needle)
    assert hits.of(needle) == positions(low, (needle,)) == find_loop(low, needle)


@settings(max_examples=300, deadline=None)
@given(TEXTS, st.lists(st.sampled_from(("a", "ab", "b\n", " a", "aa")), min_size=1, max_size=3))
def test_any_of_finds_every_occurrence_of_every_needle(low: str, needles: list[str]) -> None:
    unique = tuple(dict.fromkeys(needles))
    every = sorted(at for needle in unique for at in range(len(low)) if low.startswith(needle, at))
    assert any_of(low.encode("ascii"), unique, len(every)) == every
    if every:
        assert any_of(low.encode("ascii"), unique, len(every) - 1) is None
