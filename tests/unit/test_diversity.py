"""Diversity: repeats of one shape fold into one line and a count; the rare line stands out."""

from __future__ import annotations

from tersify.contract import ToolType
from tersify.worker.shrink import fallback_truncate
from tersify.worker.shrink.salience import rarity, shape


def test_lines_differing_only_in_names_and_numbers_share_a_shape() -> None:
    assert shape("src/a.rs:12:5: unused variable `x1`") == shape(
        "src/a.rs:98:1: unused variable `y`"
    )
    assert shape("error: mismatched types") != shape("error: unused variable `x`")


def test_a_rare_shape_is_worth_more_than_a_common_one() -> None:
    assert rarity(1, 300) > rarity(150, 300) >= 0
    assert rarity(5, 5) == 0.0


def test_the_one_different_error_among_hundreds_of_repeats_survives_with_the_repeat_counted() -> (
    None
):
    lines = [f"src/m{i}.rs:{i}:1: error: unused variable `v{i}`" for i in range(400)]
    lines.insert(233, "src/core.rs:77:9: error: mismatched types: expected u32, found i64")
    out = fallback_truncate("\n".join(lines) + "\n", ToolType.COMMAND_OUTPUT, 2000)
    assert "src/core.rs:77:9: error: mismatched types: expected u32, found i64" in out
    assert "similar)" in out
