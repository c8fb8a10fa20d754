"""The inline text tools: preview, elide, first_line, truncate."""

from __future__ import annotations

import unicodedata

import pytest

from tersify.text import (
    ELLIPSIS,
    elide,
    first_line,
    first_nonblank_line,
    line_count,
    preview,
    truncate,
)

MULTIBYTE = {
    "emoji": "🙂🚀 deploy ok 👨‍👩‍👧 done 👍🏽\n" * 6,
    "cjk": "错误：无法打开文件 設定ファイル 한국어\n" * 6,
    "combining": "e\u0301a\u0300o\u0308 cafe\u0301 n\u0303o\n" * 6,
    "mixed": "ascii é 中 🙂 a\u0301\n" * 6,
}


def numbered(count: int) -> str:
    return "\n".join(f"line {i}" for i in range(1, count + 1))


def test_line_count_counts_an_unterminated_last_line_and_ignores_a_final_newline() -> None:
    assert [line_count(t) for t in ("", "a", "a\n", "a\nb", "a\nb\n", "\n")] == [0, 1, 1, 2, 2, 1]


def test_preview_returns_every_line_at_or_under_the_threshold() -> None:
    assert preview(numbered(30)) == numbered(30)


def test_preview_keeps_five_head_and_ten_tail_lines_around_a_marker_past_thirty() -> None:
    lines = preview(numbered(100)).split("\n")
    assert lines[:5] == [f"line {i}" for i in range(1, 6)]
    assert lines[6:] == [f"line {i}" for i in range(91, 101)]
    assert lines[5] == f"{ELLIPSIS} [85 more lines · full output in the session log] {ELLIPSIS}"


def test_preview_of_none_or_empty_text_is_empty() -> None:
    assert preview(None) == ""
    assert preview("") == ""


def test_preview_drops_carriage_returns_and_the_final_newline() -> None:
    assert preview("a\r\nb\r\n") == "a\nb"


def test_preview_with_custom_limits_counts_the_hidden_lines() -> None:
    assert preview(numbered(10), max_lines=4, head=1, tail=2) == (
        f"line 1\n{ELLIPSIS} [7 more lines · full output in the session log] {ELLIPSIS}\n"
        "line 9\nline 10"
    )


def test_preview_refuses_negative_limits() -> None:
    with pytest.raises(ValueError, match="negative"):
        preview("x", head=-1)


def test_elide_keeps_max_characters_then_appends_the_ellipsis() -> None:
    assert elide("abcdefgh", 5) == "abcde…"
    assert elide("abc", 5) == "abc"
    assert elide("abcde", 5) == "abcde"
    assert elide(None, 5) == ""


def test_elide_does_not_separate_a_letter_from_its_accent() -> None:
    assert elide("cafe\u0301s", 4) == "caf…"


def test_first_nonblank_line_skips_blank_lines_and_strips() -> None:
    assert first_nonblank_line("\n   \n  ruby -e 'x'  \nmore") == "ruby -e 'x'"
    assert first_nonblank_line(" \n\t\n") == ""
    assert first_nonblank_line(None) == ""


def test_first_line_budgets_the_ellipsis_into_the_limit() -> None:
    assert first_line("\n  abcdefghij\nnext", 5) == "abcd…"
    assert len(first_line("abcdefghij", 5)) == 5
    assert first_line("abcde", 5) == "abcde"
    assert first_line(None, 5) == ""
    assert first_line("abc", 0) == ""


def test_truncate_returns_text_within_both_budgets_unchanged() -> None:
    assert truncate("short\ntext\n", 100, 10) == "short\ntext\n"
    assert truncate(None, 10, 10) == ""


def test_truncate_keeps_a_small_head_and_a_large_tail_around_a_marker() -> None:
    text = "\n".join(f"row {i:04d} " + "x" * 40 for i in range(1000))
    out = truncate(text, 4000, 10_000)
    head, _, tail = out.partition(f"\n{ELLIPSIS} [")
    assert text.startswith(head)
    rest = tail.split("\n", 1)[1]
    assert text.endswith(rest)
    assert len(rest.encode()) > 6 * len(head.encode())
    assert "bytes /" in tail and "lines elided" in tail
    assert out.rstrip().endswith("row 0999 " + "x" * 40)


def test_truncate_marker_counts_exactly_the_elided_bytes() -> None:
    text = "\n".join(f"row {i:04d}" for i in range(2000))
    out = truncate(text, 3000, 10_000)
    head, _, rest = out.partition(f"\n{ELLIPSIS} [")
    marker, _, tail = rest.partition("\n")
    elided = int(marker.split(" bytes")[0])
    assert elided == len(text.encode()) - len(head.encode()) - len(tail.encode())


def test_truncate_cuts_by_lines_when_only_the_line_budget_is_exceeded() -> None:
    out = truncate(numbered(100), 1_000_000, 20)
    lines = out.split("\n")
    assert len(lines) == 20
    assert lines[0] == "line 1"
    assert lines[-1] == "line 100"
    assert any("lines elided" in line for line in lines)


def test_truncate_names_the_spill_location_and_how_to_read_it() -> None:
    seen: list[str] = []

    def spill(full: str) -> str:
        seen.append(full)
        return "ab12cd"

    text = numbered(5000)
    out = truncate(text, 2000, 100, spill=spill)
    assert seen == [text]
    assert "full output: ab12cd — read it with offset/limit" in out


def test_truncate_does_not_call_spill_when_nothing_is_cut() -> None:
    def spill(full: str) -> str:
        raise AssertionError("spill called")

    assert truncate("small", 100, 10, spill=spill) == "small"


def test_truncate_without_a_spill_location_says_nothing_about_one() -> None:
    out = truncate(numbered(5000), 2000, 100, spill=lambda _: None)
    assert "full output" not in out
    assert "lines elided" in out


def test_truncate_falls_back_to_a_head_cut_with_a_short_note_on_tiny_budgets() -> None:
    out = truncate(numbered(500), 120, 100)
    assert out.startswith("line 1\n")
    assert out.endswith(f"{ELLIPSIS} [cut at 120 bytes / 100 lines]")
    assert len(out.encode()) <= 120


def test_truncate_with_a_zero_budget_returns_nothing() -> None:
    assert truncate("abc\ndef", 0, 10) == ""
    assert truncate("abc\ndef", 10, 0) == ""


def test_truncate_refuses_negative_budgets() -> None:
    with pytest.raises(ValueError, match="negative"):
        truncate("abc", -1, 10)


def test_truncate_replaces_lone_surrogates_so_the_result_is_valid_utf8() -> None:
    out = truncate("bad \ud800 surrogate " * 50, 200, 10)
    out.encode("utf-8")
    assert "\ufffd" in out


@pytest.mark.parametrize("name", sorted(MULTIBYTE))
def test_truncate_never_exceeds_any_byte_budget_on_multibyte_text(name: str) -> None:
    text = MULTIBYTE[name] * 3
    for budget in range(len(text.encode()) + 2):
        out = truncate(text, budget, 1000, spill=lambda _: "ref0")
        data = out.encode("utf-8")  # raises on a lone surrogate
        assert len(data) <= budget, (budget, out)
        assert data.decode("utf-8") == out


@pytest.mark.parametrize("name", sorted(MULTIBYTE))
def test_truncate_never_leaves_an_accent_without_its_letter(name: str) -> None:
    text = MULTIBYTE[name] * 3
    for budget in range(len(text.encode())):
        out = truncate(text, budget, 1000)
        for piece in out.split("\n"):
            if piece:
                assert not unicodedata.combining(piece[0]), (budget, out)
                assert piece[0] != "\u200d" and piece[-1] != "\u200d", (budget, out)


@pytest.mark.parametrize("name", sorted(MULTIBYTE))
def test_truncate_never_exceeds_any_line_budget(name: str) -> None:
    text = MULTIBYTE[name] * 4
    for max_lines in range(line_count(text) + 2):
        for max_bytes in (60, 300, 10_000):
            out = truncate(text, max_bytes, max_lines)
            assert line_count(out) <= max_lines, (max_lines, max_bytes, out)
            assert len(out.encode()) <= max_bytes


def test_truncate_keeps_budgets_even_with_a_long_spill_location() -> None:
    location = "spill-" + "z" * 500
    out = truncate(numbered(1000), 400, 50, spill=lambda _: location)
    assert len(out.encode()) <= 400
    assert location not in out


def test_truncate_spill_location_with_newlines_cannot_break_the_line_budget() -> None:
    out = truncate(numbered(1000), 5000, 10, spill=lambda _: "a\nb\nc")
    assert line_count(out) <= 10
    assert "full output: a b c" in out
