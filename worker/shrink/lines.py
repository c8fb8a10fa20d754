"""Line numbers and bounds of positions in a text, in linear time over ascending positions.

Splitting a text into lines is ``tersify.text.cut.split_lines``.
"""

from __future__ import annotations


class LineLocator:
    """Finds the line holding a position; visiting positions in ascending order costs O(n) total."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._reset()

    def _reset(self) -> None:
        self._number = 1
        self._start = 0
        end = self._text.find("\n")
        self._end = len(self._text) if end == -1 else end

    def locate(self, pos: int) -> tuple[int, int, int]:
        """The line that holds ``pos``: its 1-based number, start and end (before the newline)."""
        text = self._text
        if pos < self._start:
            self._reset()
        if pos > self._end:
            self._number += text.count("\n", self._end, pos)
            self._start = text.rfind("\n", self._end, pos) + 1
            end = text.find("\n", pos)
            self._end = len(text) if end == -1 else end
        return self._number, self._start, self._end
