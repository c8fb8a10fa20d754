"""The whole-text scans behind salience: the fast paths agree with plain per-line references."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tersify.contract import ToolType
from tersify.text.sanitize import lowercase, sanitize
from tersify.worker.shrink import Reading
from tersify.worker.shrink.document import Doc
from tersify.worker.shrink.hits import POSITIONS_LIMIT as _POSITIONS_LIMIT
from tersify.worker.shrink.hits import Hits as _Hits
from tersify.worker.shrink.hits import positions as _positions
from tersify.worker.shrink.salience import (
    _MAX_QUERY_POSITIONS,
    Salient,
    _find_at_most,
    _query_positions,
)
from tersify.worker.shrink.scans import (
    _LOCATION_ANCHOR,
    _RULE_CODE,
    MAX_LINES,
    _colon_digit_matches,
    command_lines,
)
from tersify.worker.shrink.terms import query_terms, weigh_terms


def find_salient(text: str, tool_type: ToolType, query: str | None) -> list[Salient]:
    """The salient lines of ``text`` read for ``tool_type`` and ``query``."""
    return Reading.of(Doc(text), tool_type, query).salient


QUERY = "Why did the timeout test fail in the İstanbul ünïcode handler?"
_WORDS = ("timeout", "test", "fail", "İstanbul", "日本語")
TRICKY = {
    "empty": "",
    "crlf": "\r\n".join(f"line {i} timeout error: handler failed ünïcode" for i in range(400)),
    "no final newline": "a timeout\nb fail\nc test",
    "one giant line": "x" * 50_000 + " timeout error: fail " + "y" * 50_000,
    "giant line of terms": " ".join(_WORDS[i % 5] for i in range(30_000)),
    "non-ascii": "\n".join(f"日本語 {i} İstanbul handler timeout ✓" for i in range(300)),
    "only newlines": "\n" * 500,
    "flood": "\n".join(f"tests/test_a.py::test_{i} FAILED timeout" for i in range(20_000)),
}  # fmt: skip
TYPES = (ToolType.COMMAND_OUTPUT, ToolType.FILE_CONTENT, ToolType.DIRECTORY_LISTING)


def _counted_query_positions(low: str, weights: dict[str, float]) -> list[int]:
    """The query positions as first written: count every informative term, rarest first."""
    counts = {t: low.count(t) for t, w in weights.items() if w > 0.1}
    informative: list[str] = []
    hits = 0
    for term in sorted(counts, key=counts.__getitem__):
        if informative and hits + counts[term] > _MAX_QUERY_POSITIONS:
            break
        informative.append(term)
        hits += counts[term]
    return _positions(low, tuple(informative))


def test_query_positions_match_counting_every_term() -> None:
    for name, raw in TRICKY.items():
        text = sanitize(raw)
        low = lowercase(text)
        for units in (1, 10, text.count("\n") + 1, 100_000):
            weights = weigh_terms(query_terms(QUERY), low, units)
            expected = _counted_query_positions(low, weights.weights)
            assert _query_positions(_Hits(low), weights, 10**9) == expected, (name, units)


def test_find_at_most_gives_up_past_the_limit_and_reuses_a_finished_search() -> None:
    low = "ab ab ab"
    assert _find_at_most(_Hits(low), "ab", 3) == [0, 3, 6]
    assert _find_at_most(_Hits(low), "ab", 2) is None
    assert _find_at_most(_Hits(low), "ab", 0) is None
    assert _find_at_most(_Hits(low), "zz", 0) == []
    hits = _Hits(low)
    assert hits.of("ab") == [0, 3, 6]
    assert _find_at_most(hits, "ab", 5) == [0, 3, 6]
    assert _find_at_most(hits, "ab", 2) is None
    assert hits.merged(("b", "a")) == [0, 1, 3, 4, 6, 7]


def test_hits_count_agrees_with_str_count_searched_or_not() -> None:
    flood = "ab " * (_POSITIONS_LIMIT + 7)  # past the limit the search samples: count afresh
    for low in ("aaaa", "ab ab ab", "", flood, lowercase(sanitize(TRICKY["flood"]))):
        for needle in ("aa", "ab", "zz", "failed", "timeout"):
            fresh = _Hits(low).count(needle)
            searched = _Hits(low)
            searched.of(needle)
            assert fresh == searched.count(needle) == low.count(needle), (needle, low[:20])
    low = lowercase(sanitize(TRICKY["crlf"]))
    hits = _Hits(low)
    hits.merged(("fail", "error"))
    for units in (1, 400, 10_000):
        terms = query_terms(QUERY)
        assert weigh_terms(terms, low, units, hits.count) == weigh_terms(terms, low, units)


def _check_items(text: str, tool_type: ToolType, query: str | None) -> None:
    items = find_salient(text, tool_type, query)
    for item in items:
        # Line numbers are counted incrementally: they match a count from the start.
        assert item.number == text.count("\n", 0, item.start) + 1
        assert 0 <= item.start <= item.end <= len(text)
        if not item.text.startswith("…") and not item.text.endswith("…"):
            # A short line is carried whole: it starts and ends on line boundaries.
            assert item.start == 0 or text[item.start - 1] == "\n"
            assert item.end == len(text) or text[item.end] == "\n"
    starts = [(item.start, item.end) for item in items]
    assert len(starts) == len(set(starts))


def test_salient_items_sit_on_their_lines_for_tricky_inputs() -> None:
    for raw in TRICKY.values():
        text = sanitize(raw)
        for tool_type in TYPES:
            for query in (None, QUERY, "fail"):
                _check_items(text, tool_type, query)


def test_every_line_holding_a_rare_query_term_is_found() -> None:
    lines = [f"worker {i} ok" for i in range(3000)]
    for i in (5, 1200, 2999):
        lines[i] = f"worker {i} hit a Timeout"
    text = "\n".join(lines)  # no final newline
    found = {item.number for item in find_salient(text, ToolType.COMMAND_OUTPUT, "timeout")}
    assert {6, 1201, 3000} <= found


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.text(alphabet="abtimeoutfailİ日 :\r-", min_size=0, max_size=40), min_size=0, max_size=60
    ),
    st.sampled_from(TYPES),
)
def test_salient_items_sit_on_their_lines(lines: list[str], tool_type: ToolType) -> None:
    _check_items(sanitize("\n".join(lines)), tool_type, "timeout fail İ")


@settings(max_examples=50, deadline=None)
@given(st.integers(min_value=0, max_value=2999), st.integers(min_value=10, max_value=1500))
def test_every_hit_of_the_rarest_term_is_kept_when_the_common_ones_are_spread(
    at: int, limit: int
) -> None:
    # Each common term on a third of the rows: rare enough to be informative.
    rows = [f"row {i} " + ("version", "installed", "other")[i % 3] for i in range(3000)]
    rows[at] = "row libzz9"
    low = "\n".join(rows)
    weights = weigh_terms(query_terms("Which version of libzz9 is installed?"), low, 3000)
    found = _query_positions(_Hits(low), weights, limit)
    assert min(weights.weights.values()) > 0.1
    assert low.find("libzz9") in found
    assert len(found) <= limit


def test_a_flood_of_locations_is_read_on_a_bounded_spread_that_reaches_its_end() -> None:
    text = "\n".join(f"src/m{i}.c:{i}:1: note: see here" for i in range(30_000))
    found: list[int] = []
    command_lines(Doc(text), lambda start, end, kind, anchor: found.append(start))
    assert 1_000 <= len(found) <= MAX_LINES
    assert max(found) > 0.9 * len(text) and min(found) < 0.1 * len(text)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(["a.py:3:1: E501 x", ":1:2:3 ", "b:12", "c :4: W605", "::", "é:5: F"]))
)
def test_location_patterns_tried_where_a_colon_meets_a_digit_match_as_the_full_search(
    lines: list[str],
) -> None:
    text = "\n".join(lines)
    for pattern in (_LOCATION_ANCHOR, _RULE_CODE):
        expected = [(m.start(), m.end()) for m in pattern.finditer(text)]
        found = [(m.start(), m.end()) for m in _colon_digit_matches(Doc(text), pattern)]
        assert found == expected
