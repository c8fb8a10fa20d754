"""Sanitizing: no control character but tab and newline survives, whatever the text holds."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tersify.text.sanitize import sanitize

CONTROLS = frozenset(chr(c) for c in (*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0)))
PIECES = st.sampled_from(["\x1b[31m", "\x1b]0;t\x07", "\r\n", "\r", "a\x08a", "\x85", "\x9b", "é"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(PIECES, st.text(max_size=8)), max_size=30))
def test_no_control_character_but_tab_and_newline_is_left(parts: list[str]) -> None:
    text = "".join(parts)
    clean = sanitize(text)
    assert not CONTROLS.intersection(clean)
    if text.isascii() and not CONTROLS.intersection(text):
        assert clean == text
