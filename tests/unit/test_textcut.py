"""One rule for where a text may be cut, shared by the producer's text tools and the shrinks."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tersify.text.cut import MAX_CLUSTER_SHIFT, is_boundary, safe_end, safe_start, split_lines

FAMILY = "\U0001f469\u200d\U0001f469\u200d\U0001f467"  # woman, ZWJ, woman, ZWJ, girl
THUMB = "\U0001f44d\U0001f3fd"  # thumbs up, skin tone
HEART = "\u2764\ufe0f"  # heart, emoji presentation selector


@pytest.mark.parametrize(
    ("text", "inside"),
    [
        ("a\r\nb", 2),
        ("e\u0301x", 1),  # e + combining acute
        (FAMILY, 1),
        (FAMILY, 2),
        (THUMB, 1),
        (HEART, 1),
        ("a\ud83d\ude00b", 2),  # a surrogate pair kept as two code points
    ],
)
def test_no_cut_falls_inside_a_cluster(text: str, inside: int) -> None:
    assert not is_boundary(text, inside)
    assert safe_end(text, inside) < inside
    assert safe_start(text, inside) > inside


def test_the_ends_of_a_text_are_always_boundaries() -> None:
    assert is_boundary("abc", 0) and is_boundary("abc", 3)
    assert safe_end("abc", 99) == 3
    assert safe_start("abc", -5) == 0


@given(st.text(), st.integers(min_value=-5, max_value=400))
def test_a_safe_cut_is_a_boundary_near_the_asked_position(text: str, pos: int) -> None:
    end, start = safe_end(text, pos), safe_start(text, pos)
    clamped = max(0, min(pos, len(text)))
    assert 0 <= end <= clamped <= start <= len(text)
    assert clamped - end <= MAX_CLUSTER_SHIFT and start - clamped <= MAX_CLUSTER_SHIFT
    assert is_boundary(text, end) or end == clamped - MAX_CLUSTER_SHIFT or end == clamped


@given(st.lists(st.text(alphabet=st.characters(blacklist_characters="\n")), max_size=8))
def test_split_lines_gives_back_the_lines_it_was_made_of(lines: list[str]) -> None:
    text = "".join(line + "\n" for line in lines)
    assert split_lines(text) == lines


def test_split_lines_keeps_carriage_returns_and_a_last_unterminated_line() -> None:
    assert split_lines("a\r\nb") == ["a\r", "b"]
    assert split_lines("") == []
    assert split_lines("\n") == [""]
