"""Where needles occur in a lower-cased text: every occurrence of a word, found once per text.

A pass of ``str.find`` over 2 MB costs about a millisecond, plus a step of Python per hit; a
one-pattern Aho-Corasick automaton (``ahocorasick-rs``: Rust's SIMD substring search) finds
every occurrence in a tenth of that. It reads bytes, and byte offsets are character offsets
only in ASCII text: a text holding any other character is searched with ``str.find``. Both
give the same positions: the leftmost occurrences that do not overlap, as a ``find`` loop
moving past each hit finds them.
"""

from __future__ import annotations

from functools import lru_cache

from ahocorasick_rs import BytesAhoCorasick

POSITIONS_LIMIT = 20_000
"""Hits of one needle found one by one; past this a flood is sampled (``positions``)."""
CHUNK = 1 << 18
"""Bytes searched per call (the first call a quarter of it): a flood is known to be one after
a bounded search."""


def positions(low: str, needles: tuple[str, ...], limit: int = POSITIONS_LIMIT) -> list[int]:
    """Positions of the needles in ``low``, ascending, at most about ``2 * limit`` per needle.

    Past ``limit`` hits a needle is sampled at an even stride over the rest of the text, so a
    flood costs bounded work and still covers the whole output.
    """
    data = low.encode("ascii") if low.isascii() else None
    found = [pos for needle in needles for pos in _positions(low, data, needle, limit)]
    found.sort()
    return found


def _positions(low: str, data: bytes | None, needle: str, limit: int) -> list[int]:
    """``positions`` of one needle; ``data``: ``low`` as bytes when it is ASCII."""
    stride = len(low) // limit + 1
    if data is not None and needle:
        found, _ = search(data, needle, limit)
        if len(found) < limit:
            return found
        del found[limit:]
        pos = low.find(needle, found[-1] + stride)
    else:
        found = []
        pos = low.find(needle)
    while pos != -1:
        found.append(pos)
        # Past the limit, jump ahead between hits so the sample covers the rest evenly.
        pos = low.find(needle, pos + (len(needle) if len(found) < limit else stride))
    return found


@lru_cache(maxsize=256)
def _automaton(needles: tuple[str, ...]) -> BytesAhoCorasick:
    return BytesAhoCorasick([needle.encode("ascii") for needle in needles])


def search(
    data: bytes, needle: str, most: int, *, projected: bool = False, chunk: int = CHUNK
) -> tuple[list[int], bool]:
    """The leftmost non-overlapping starts of ``needle`` in ASCII ``data``, in order, and
    whether they are all of them: the search stops once ``most`` are found (``projected``: as
    soon as the rate found so far promises more than ``most``)."""
    if not needle.isascii():
        return [], True  # an ASCII text holds no other character
    automaton = _automaton((needle,))
    size = len(needle)
    view = memoryview(data)
    end = len(data)
    found: list[int] = []
    start, step = 0, max(1, chunk // 4)
    while start < end and len(found) < most:
        stop = min(end, start + step)
        # The window reaches past ``stop`` by a needle's length: a hit across it is whole.
        matches = automaton.find_matches_as_indexes(view[start : min(end, stop + size - 1)])
        offsets = [start + at for _, at, _ in matches]
        while offsets and offsets[-1] >= stop:
            offsets.pop()  # the next window finds it
        found += offsets
        start = max(stop, found[-1] + size) if found else stop
        if projected and len(found) * end > most * start:
            break
        step = chunk
    return found, start >= end


def any_of(data: bytes, needles: tuple[str, ...], most: int) -> list[int] | None:
    """Where each of the ASCII ``needles`` occurs in ASCII ``data`` (every occurrence, one that
    overlaps another too), ascending; None once there are, or the rate found so far promises,
    more than ``most``."""
    automaton = _automaton(needles)
    reach = max(map(len, needles)) - 1
    view = memoryview(data)
    end = len(data)
    found: list[int] = []
    start, step = 0, CHUNK // 4
    while start < end:
        stop = min(end, start + step)
        window = view[start : min(end, stop + reach)]
        matches = automaton.find_matches_as_indexes(window, overlapping=True)
        # Reported by where they end: a window's hits are sorted by where they start.
        found += sorted(start + at for _, at, _ in matches if start + at < stop)
        if len(found) > most or len(found) * end > most * stop:
            return None
        start, step = stop, CHUNK
    return found


def spread(positions: list[int], limit: int) -> list[int]:
    """At most about ``limit`` positions: all of the first and last tenth, an even spread between.

    A flood of error lines (a 2 MB lint run) would otherwise cost seconds; the folded counts
    then undercount, but the lines that differ still surface.
    """
    if len(positions) <= limit:
        return positions
    edge = limit // 10
    middle = positions[edge : len(positions) - edge]
    tail = positions[len(positions) - edge :]
    return positions[:edge] + middle[:: len(middle) // (limit - 2 * edge) + 1] + tail


def _borderless(word: str) -> bool:
    """Whether no proper start of ``word`` is also its end: two occurrences cannot overlap."""
    return all(word[:k] != word[-k:] for k in range(1, len(word)))


class Hits:
    """Where needles occur in one lower-cased text; each needle is searched for once.

    The salient words of a tool kind and the query often share a word ("fail", "error"),
    and every part of one shrink reads the same text: a needle costs one pass per text.
    """

    def __init__(self, low: str) -> None:
        self.low = low
        self._data = low.encode("ascii") if low.isascii() else None
        self._found: dict[str, list[int]] = {}
        self._counts: dict[str, int] = {}
        self._any: dict[tuple[tuple[str, ...], int], list[int] | None] = {}

    def of(self, needle: str) -> list[int]:
        """``positions(low, (needle,))``, computed once (in a text that is not ASCII, read
        off the positions of a word it starts with when those are all known)."""
        found = self._found.get(needle)
        if found is None:
            found = self._derived(needle) if self._data is None else None
            if found is None:
                found = _positions(self.low, self._data, needle, POSITIONS_LIMIT)
            self._found[needle] = found
        return found

    def _derived(self, needle: str) -> list[int] | None:
        """Where ``needle`` occurs, from a known complete list of a prefix of it; None if none.

        Exact when neither can overlap itself: every occurrence of ``needle`` is then one of
        its prefix's, and the scans found every occurrence of both.
        """
        if not _borderless(needle):
            return None
        low = self.low
        for prefix, places in self._found.items():
            if (
                len(places) < POSITIONS_LIMIT
                and needle.startswith(prefix)
                and len(prefix) < len(needle)
                and _borderless(prefix)
            ):
                return [at for at in places if low.startswith(needle, at)]
        return None

    def count(self, needle: str) -> int:
        """How often ``needle`` occurs (as ``low.count``), counted once: from a complete scan
        if any (in ASCII text a fast search is tried first, given up on a flood)."""
        known = self._counts.get(needle)
        if known is None:
            known = self._counted(needle)
            self._counts[needle] = known
        return known

    def _counted(self, needle: str) -> int:
        found = self._found.get(needle)
        if found is not None and len(found) < POSITIONS_LIMIT:
            return len(found)  # a complete scan: every occurrence is in it
        if found is None and self._data is not None and needle:
            found, complete = search(self._data, needle, POSITIONS_LIMIT, projected=True)
            if complete:
                if len(found) < POSITIONS_LIMIT:
                    self._found[needle] = found  # what ``of`` would find
                return len(found)
        return self.low.count(needle)

    def any_of(self, needles: tuple[str, ...], most: int) -> list[int] | None:
        """Where each of ``needles`` occurs (``any_of``), searched for once; None in a text
        that is not ASCII, or when they are more than ``most``."""
        key = (needles, most)
        if key not in self._any:
            found = None if self._data is None else any_of(self._data, needles, most)
            self._any[key] = found
        return self._any[key]

    def known(self, needle: str) -> list[int] | None:
        """The positions of ``needle`` if it was already searched for."""
        return self._found.get(needle)

    def merged(self, needles: tuple[str, ...]) -> list[int]:
        """``positions(low, needles)``: the positions of all ``needles``, ascending."""
        return sorted(pos for needle in needles for pos in self.of(needle))
