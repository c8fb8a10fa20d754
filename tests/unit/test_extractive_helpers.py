"""Helpers of the extractive summarizer: joining items lazily under a budget."""

from __future__ import annotations

from collections.abc import Iterator

from hypothesis import given, settings
from hypothesis import strategies as st

from tersify.worker.shrink.facts import joined


def _joined_from_list(items: list[str], room: int, sep: str = ", ", more: str = ", …") -> str:
    """The reference: the whole list in hand, as ``joined`` was first written."""
    out: list[str] = []
    used = 0
    for i, item in enumerate(items):
        cost = len(item) + (len(sep) if out else 0)
        tail = len(more) if i < len(items) - 1 else 0
        if used + cost + tail > room:
            return sep.join(out) + (more if out else "…")
        out.append(item)
        used += cost
    return sep.join(out)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=12), max_size=12), st.integers(min_value=-5, max_value=80))
def test_joined_matches_joining_the_whole_list(items: list[str], room: int) -> None:
    assert joined(iter(items), room) == _joined_from_list(items, room)
    assert joined(items, room, sep=" · ", more=" …") == _joined_from_list(items, room, " · ", " …")


def test_joined_reads_only_one_item_past_what_it_shows() -> None:
    read: list[int] = []

    def endless() -> Iterator[str]:
        i = 0
        while True:
            read.append(i)
            yield f"item{i}"
            i += 1

    assert joined(endless(), 20) == "item0, item1, …"
    assert len(read) <= 4
    assert joined([], 10) == ""
    assert joined(["", ""], 10) == ", "
    assert joined(["abcdef"], 3) == "…"
