"""An output past the cap: head, tail and the lines that matter, in one bounded streaming pass."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tersify.contract import ToolType
from tersify.text.excerpt import Excerpt, ExcerptBuilder, excerpt_from_stream, excerpt_of

CAP = 2048
STORED = 8192
LINES = st.lists(
    st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\n"), max_size=120)
    | st.sampled_from(["error: disk full", "FAILED test_x", "ok", "", "warning: slow"]),
    max_size=400,
)


def command_output(_: str) -> ToolType:
    return ToolType.COMMAND_OUTPUT


def feed_in_pieces(data: bytes, cuts: list[int], **kw: object) -> object:
    points = sorted({c % (len(data) + 1) for c in cuts})
    pieces = [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]
    return excerpt_from_stream(iter(pieces), CAP, STORED, command_output, **kw)  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None)
@given(lines=LINES, trailing=st.booleans())
def test_an_excerpt_is_bounded_and_made_of_the_outputs_own_head_tail_and_lines(
    lines: list[str], trailing: bool
) -> None:
    text = "\n".join(lines) + ("\n" if trailing and lines else "")
    data = text.encode()
    got = excerpt_from_stream(iter([data]), CAP, STORED, command_output)
    if len(data) <= CAP:
        assert (got.text, got.cut, got.stored) == (text, None, None)
        return
    assert got.cut is not None and got.stored is not None
    assert got.cut.bytes_in == len(data)
    assert got.cut.lines_in == text.count("\n") + (not text.endswith("\n"))
    assert len(got.text.encode()) <= CAP
    assert got.cut.bytes_kept == len(got.text.encode())
    if len(data) <= STORED:
        assert got.stored == text and got.cut.bytes_stored == len(data)
    head, _, rest = got.text.partition("[… tersify cut ")
    assert text.startswith(head)
    tail = rest.partition("…]\n")[2].rpartition("…]\n")[2] if "end of the cut" in rest else ""
    assert text.endswith(tail)
    between = rest.partition("…]\n")[2].partition("[… end of the cut")[0]
    source = set(text.split("\n"))
    assert all(line in source or line.endswith("…") for line in between.splitlines())


@settings(max_examples=200, deadline=None)
@given(lines=LINES, cuts=st.lists(st.integers(min_value=0), max_size=12))
def test_how_the_stream_is_chunked_never_changes_the_excerpt(
    lines: list[str], cuts: list[int]
) -> None:
    data = "\n".join(lines).encode()
    whole = excerpt_from_stream(iter([data]), CAP, STORED, command_output)
    assert feed_in_pieces(data, cuts) == whole


def test_an_error_deep_in_the_middle_is_kept_and_the_cut_is_stated() -> None:
    lines = [f"step {i} ok" for i in range(5000)]
    lines[2500] = "error: the cache at /var/cache/x is corrupt"
    got = excerpt_of("\n".join(lines), CAP * 4, STORED * 8, command_output)
    assert got.cut is not None
    assert "error: the cache at /var/cache/x is corrupt" in got.text
    assert got.cut.kept_between == 1
    cut = got.cut
    assert cut.head_lines + cut.tail_lines + cut.kept_between + cut.lines_cut == 5000
    assert "[… tersify cut lines" in got.text
    assert "5,000 lines" in got.cut.notice()


def test_the_query_words_choose_lines_too() -> None:
    lines = [f"row {i} plain" for i in range(5000)]
    lines[1900] = "row 1900 mentions the RetryPolicy change"
    query = "who touched retrypolicy"
    got = excerpt_of("\n".join(lines), CAP * 4, STORED * 8, command_output, query)
    assert "row 1900 mentions the RetryPolicy change" in got.text


def test_the_stored_text_stops_at_its_cap_and_says_how_much_more_there_was() -> None:
    data = b"".join(b"line %06d\n" % i for i in range(5000))  # 60,000 bytes
    got = excerpt_from_stream(iter([data]), CAP, 20_000, command_output)
    assert got.stored is not None and got.cut is not None
    assert got.cut.bytes_stored <= 20_000
    kept, _, note = got.stored.rpartition("\n[tersify: ")
    assert data.decode().startswith(kept) and "40,000 more bytes" in note
    assert "its first 20,000 bytes are readable" in got.cut.notice()


def test_a_line_with_no_end_is_taken_in_pieces_and_bytes_not_utf8_are_replaced() -> None:
    data = b"{" + b"a" * 3_000_000 + b"\xff}"
    got = excerpt_from_stream(
        (data[i : i + 65536] for i in range(0, len(data), 65536)), CAP, STORED, command_output
    )
    assert got.decoded_with_replacement and got.cut is not None
    assert got.text.startswith("{aaa") and got.text.endswith("a\ufffd}")
    assert len(got.text.encode()) <= CAP


def test_memory_stays_within_the_budgets_whatever_the_size() -> None:
    builder = ExcerptBuilder(CAP, STORED, command_output)
    for i in range(2000):
        builder.feed(f"error: failure number {i}\n" * 50)
        assert builder._between_bytes <= CAP  # the bound under test
        assert builder._stored_size <= STORED
    assert len(builder.finish().text.encode()) <= CAP


def _flood_excerpt(pieces: list[bytes], cap: int = CAP) -> object:
    """A builder that weighs a word's first 3 lines one by one, then one line in 4."""
    builder = ExcerptBuilder(cap, cap * 4, command_output, word_lines=3, sample_every=4)
    for piece in pieces:
        builder.feed(piece)
    return builder.finish()


@settings(max_examples=150, deadline=None)
@given(
    lines=st.lists(
        st.sampled_from(["error: one", "error: two", "ok", "build failed", "warning: w", ""]),
        min_size=0,
        max_size=600,
    ),
    cuts=st.lists(st.integers(min_value=0), max_size=12),
)
def test_a_flood_is_sampled_the_same_however_the_stream_is_chunked(
    lines: list[str], cuts: list[int]
) -> None:
    data = "\n".join(lines).encode()
    points = sorted({c % (len(data) + 1) for c in cuts})
    pieces = [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]
    assert _flood_excerpt(pieces) == _flood_excerpt([data])


def test_past_its_first_lines_a_flooding_word_is_weighed_on_every_sampled_line() -> None:
    lines = [f"error: unused variable v{i}" for i in range(8000)]
    lines[3001] = "error: disk full"  # not a sampled line number: the flood hides it
    lines[3400] = "error: out of memory"  # a sampled line number (a multiple of 4)
    lines[3600] = "fatal: the linker crashed"  # another word, rare: weighed one by one
    got = _flood_excerpt(["\n".join(lines).encode()], cap=CAP * 64)
    assert isinstance(got, Excerpt) and got.cut is not None
    assert "error: out of memory" in got.text and "fatal: the linker crashed" in got.text
    assert "error: disk full" not in got.text
    assert "error: unused variable v2001\n" not in got.text  # a flood line not sampled
    assert "error: unused variable v2000\n" in got.text
