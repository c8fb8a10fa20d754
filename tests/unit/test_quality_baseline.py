"""The BM25 baseline and where a fact sits: the two meters beside every shrink's score."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tersify.worker.quality.bm25 import bm25_lines, bm25_scores
from tersify.worker.quality.positions import EDGE_CHARS, at_edge


def test_a_fact_in_the_first_or_last_stretch_is_at_the_edge() -> None:
    filler = "x" * (3 * EDGE_CHARS)
    assert at_edge("needle " + filler, "needle")
    assert at_edge(filler + " needle", "needle")
    assert not at_edge(filler + " needle " + filler, "needle")


def test_a_fact_repeated_near_an_edge_counts_as_an_edge_fact() -> None:
    filler = "y" * (3 * EDGE_CHARS)
    assert at_edge(filler + "fact" + filler + "fact", "fact")


def test_a_fact_that_straddles_the_edge_line_is_measured_by_its_start() -> None:
    text = "z" * (EDGE_CHARS - 2) + "fact" + "z" * (3 * EDGE_CHARS)
    assert at_edge(text, "fact")
    assert not at_edge("z" * EDGE_CHARS + "fact" + "z" * (3 * EDGE_CHARS), "fact")


def test_crlf_output_is_read_as_lf_when_placing_a_fact() -> None:
    text = "a\r\n" * EDGE_CHARS + "two\r\nlines" + "\r\nb" * EDGE_CHARS
    assert not at_edge(text, "two\nlines")


def test_a_rare_query_word_scores_its_line_above_common_ones() -> None:
    lines = ["the build step ran", "the build step ran", "timeout in the build step"]
    scores = bm25_scores(lines, "why the timeout")
    assert scores[2] > scores[0] > 0


def test_the_baseline_keeps_the_best_line_with_one_line_each_side_in_order() -> None:
    lines = [f"filler line number {i}" for i in range(500)]
    lines[250] = "connection refused by upstream"
    shown = bm25_lines("\n".join(lines), "connection refused", 200).split("\n")
    assert shown[:3] == [lines[249], lines[250], lines[251]]


def test_the_baseline_returns_a_text_that_fits_whole() -> None:
    assert bm25_lines("short\r\ntext", "anything", 100) == "short\ntext"


@given(
    st.lists(st.text(alphabet="abc xyz\n", max_size=40), max_size=60),
    st.text(alphabet="abcxyz ", max_size=12),
    st.integers(min_value=1, max_value=400),
)
def test_the_baseline_never_exceeds_its_budget(parts: list[str], query: str, budget: int) -> None:
    assert len(bm25_lines("\n".join(parts), query, budget)) <= budget
