"""Joining items into one line under a character budget."""

from __future__ import annotations

from collections.abc import Iterable

_MIN_CLIPPED = 24


def joined(items: Iterable[str], room: int, *, sep: str = ", ", more: str = ", …") -> str:
    """As many ``items`` as fit in ``room`` chars joined by ``sep``, '…' when some are left out.

    ``items`` is read lazily, one item ahead: a long generator costs only what is shown.
    """
    out: list[str] = []
    used = 0
    rest = iter(items)
    item = next(rest, None)
    while item is not None:
        following = next(rest, None)
        cost = len(item) + (len(sep) if out else 0)
        tail = len(more) if following is not None else 0
        if used + cost + tail > room:
            return sep.join(out) + (more if out else "…")
        out.append(item)
        used += cost
        item = following
    return sep.join(out)
