"""Assemble a summary line by line under a hard character budget."""

from __future__ import annotations

from collections.abc import Iterable

from worker.shrink.textcut import clip

_MIN_CLIPPED = 24


class Composer:
    """Collects lines while they fit in ``budget`` characters (newlines included)."""

    def __init__(self, budget: int) -> None:
        self.budget = max(0, budget)
        self._parts: list[str] = []
        self._used = 0

    @property
    def used(self) -> int:
        """Characters taken so far."""
        return self._used

    @property
    def remaining(self) -> int:
        """Characters still free, counting the newline the next line needs."""
        return self.budget - self._used - (1 if self._parts else 0)

    def add(self, line: str, *, until: int | None = None) -> bool:
        """Append ``line`` if it fits (and keeps the total within ``until``); whether it did."""
        limit = self.budget if until is None else min(self.budget, until)
        cost = len(line) + (1 if self._parts else 0)
        if self._used + cost > limit:
            return False
        self._parts.append(line)
        self._used += cost
        return True

    def add_clipped(self, line: str, *, until: int | None = None) -> bool:
        """Append ``line``, cut with an ellipsis to the room left if needed; False if no room."""
        if self.add(line, until=until):
            return True
        limit = self.budget if until is None else min(self.budget, until)
        room = limit - self._used - (1 if self._parts else 0)
        if room < _MIN_CLIPPED:
            return False
        return self.add(clip(line, room, ellipsis=True), until=until)

    def add_all(self, lines: Iterable[str], *, until: int | None = None) -> int:
        """Append lines in order while they fit; the number appended."""
        count = 0
        for line in lines:
            if not self.add(line, until=until):
                break
            count += 1
        return count

    def text(self) -> str:
        """The summary so far."""
        return "\n".join(self._parts)


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
