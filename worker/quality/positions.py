"""Where a fact sits in an output: near an edge (kept free by any head and tail) or in the middle.

A fact is an edge fact when any occurrence of it starts within ``EDGE_CHARS`` of the output's
start or ends within ``EDGE_CHARS`` of its end: a head/tail cut of a 2,000-char budget keeps
it without choosing it. Every other fact is a middle fact, the ones a shrink has to find.
"""

from __future__ import annotations

EDGE_CHARS = 2_000
"""How far from either end a fact counts as an edge fact."""


def at_edge(output: str, item: str, reach: int = EDGE_CHARS) -> bool:
    """Whether ``item`` occurs within ``reach`` chars of either end of ``output`` (CRLF as LF).

    An item that does not occur at all is not at the edge (it is a middle fact nothing keeps).
    """
    text = output.replace("\r\n", "\n")
    needle = item.replace("\r\n", "\n")
    if not needle:
        return True
    return needle in text[: reach + len(needle) - 1] or needle in text[-(reach + len(needle) - 1) :]
