"""Fences around untrusted text: whatever the text, it stays inside its own block."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from tersify.worker.model.fence import NAMES, Fence, escape

# pieces an attacker would use to leave a block: tags of every fence name in any spelling
lures = st.sampled_from(NAMES).flatmap(
    lambda name: st.tuples(
        st.sampled_from(["<", "</", "< /", "</ ", "<\\/"]),
        st.sampled_from([name, name.upper(), name.replace("_", "-"), name.title()]),
        st.sampled_from(["", "_0123456789abcdef", "_x", " foo=1"]),
        st.sampled_from([">", "", " >"]),
    ).map("".join)
)
hostile = st.lists(st.one_of(lures, st.text(max_size=20)), max_size=12).map("".join)


@given(hostile)
def test_no_escaped_text_holds_the_start_of_a_fence_tag(text: str) -> None:
    pattern = r"<\s*/?\s*(" + "|".join(n.replace("_", "[_-]") for n in NAMES) + ")"
    assert not re.search(pattern, escape(text), re.IGNORECASE)


@given(st.sampled_from(NAMES), hostile)
def test_a_wrapped_text_has_exactly_one_opening_and_one_closing_tag(name: str, text: str) -> None:
    fence = Fence()
    wrapped = fence.wrap(name, text)
    tag = fence.tag(name)
    assert wrapped.startswith(f"<{tag}>\n") and wrapped.endswith(f"\n</{tag}>")
    assert wrapped.count(fence.nonce) == 2


def test_each_fence_has_a_fresh_nonce() -> None:
    assert len({Fence().nonce for _ in range(50)}) == 50
