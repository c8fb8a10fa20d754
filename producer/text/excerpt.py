"""An output past ``TERSIFY_MAX_OUTPUT_BYTES``, made summarizable in one streaming pass.

The job gets an excerpt: the output's first lines, its last lines, and between them the lines
that matter (errors, exit codes, verdicts, warnings, problems, the query's words), with a
marker where lines were left out; ``OutputCut`` says what was cut. The whole output is kept for
reads by ``output_ref`` up to ``TERSIFY_MAX_STORED_OUTPUT_BYTES``, ending with a line that says
how much more there was.

The pass works on blocks of whole lines. Memory stays bounded whatever the input's size: the
head and the tail are capped, the lines that matter are held in a heap that drops the least
telling (the latest, on a tie) when full, a line with no end in sight is taken in blocks of
``BLOCK_CHARS``, and the stored text stops at its cap. Each block that leaves the tail is
searched for a few words first (``NEEDLES``, one ``str.find`` pass each); only the lines they
hit are weighed by ``tersify.text.signals``: 40 MB take about a second, not half a minute.

The work stays linear in the output whatever it holds. A word's first ``WORD_LINES`` lines
are weighed one by one; past that the word floods the output (every line an error) and its
lines are weighed only one in ``SAMPLE_EVERY``, chosen by line number so how the stream is
chunked never changes the choice. A line is dropped at once when the lines that matter are
full of lines it would not displace.
"""

from __future__ import annotations

import codecs
import contextvars
import heapq
import re
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import accumulate

from tersify.contract import OutputCut, ToolType
from tersify.store import payloads
from tersify.text.cut import safe_end
from tersify.text.sanitize import lowercase
from tersify.text.signals import Kind, classify_line

BLOCK_CHARS = 1 << 20
"""Largest block of text taken at once: also how much of an endless line is taken at a time."""
LINE_CHARS = 4096
"""Most of one line kept between the head and the tail (around what made it matter)."""
MARKER_RESERVE = 512
"""Bytes of the excerpt's budget left for its two markers."""
NEEDLES = (
    "err", "fail", "fatal", "panic", "exception", "traceback", "abort", "segmentation",
    "core dumped", "warn", "deprecat", "exit", "non-zero", "cannot", "can't", "could not",
    "couldn't", "unable to", "no such file", "not found", "denied", "undefined reference",
    "unresolved", "interrupt", "fault", "passed", "ran ", "found ", "test", "build", "succe",
    "*** ", "generated", "critical",
)  # fmt: skip
"""Lower-case words every line that ``classify_line`` finds telling contains one of."""
WORD_LINES = 5_000
"""Lines of one word weighed one by one; past them it floods and its lines are sampled."""
SAMPLE_EVERY = 64
"""Of the lines a flooding word is on, those whose number is a multiple of this are weighed."""
_STOP_WORDS = frozenset(
    {
        "what", "which", "where", "when", "does", "with", "from", "that", "this", "have",
        "their", "there", "about", "into", "show", "find", "tell",
    }
)  # fmt: skip
_replaced: contextvars.ContextVar[int] = contextvars.ContextVar("tersify_replaced", default=0)


def _note_replacement(exc: UnicodeError) -> tuple[str, int]:
    # counts what "replace" replaces, so the result can say the bytes were not all UTF-8
    assert isinstance(exc, UnicodeDecodeError)
    _replaced.set(_replaced.get() + 1)
    return "\ufffd", exc.end


codecs.register_error("tersify.note-replace", _note_replacement)


def _size(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


@dataclass(frozen=True)
class Excerpt:
    """An output ready to queue: the text a job carries, and when it was cut, how and the
    whole text as stored for ``output_ref`` reads."""

    text: str
    decoded_with_replacement: bool = False
    cut: OutputCut | None = None
    stored: str | None = None


@dataclass(frozen=True)
class _Block:
    text: str
    first_line: int  # 0-based index of the line the block starts in
    size: int


# A kept line: its weight, minus its index (on a tie the later line is dropped first), a
# sequence number (two pieces of one endless line never compare their text), the text.
_Line = tuple[int, int, int, str]


def query_words(query: str | None) -> tuple[str, ...]:
    """The query's words worth finding in a line (four letters or more), lower case."""
    words = re.findall(r"[\w.-]{4,}", lowercase(query or ""))
    return tuple(dict.fromkeys(w for w in words if w not in _STOP_WORDS))


class ExcerptBuilder:
    """One pass over an output, fed in chunks of bytes or text; ``finish`` gives the excerpt."""

    def __init__(
        self,
        max_bytes: int,
        stored_bytes: int,
        tool_type: Callable[[str], ToolType],
        query: str | None = None,
        *,
        word_lines: int = WORD_LINES,
        sample_every: int = SAMPLE_EVERY,
    ) -> None:
        self.max_bytes = max_bytes
        self.stored_bytes = stored_bytes
        budget = max(0, max_bytes - MARKER_RESERVE)
        self._head_budget = self._tail_budget = budget // 4
        self._between_budget = budget - 2 * (budget // 4)
        self._tool_type = tool_type
        self._type = ToolType.COMMAND_OUTPUT
        self._words = query_words(query)
        self._needles = tuple(dict.fromkeys((*NEEDLES, *self._words)))
        self._left = dict.fromkeys(self._needles, word_lines)  # lines still weighed one by one
        self._sample_every = max(1, sample_every)
        self._flooding: tuple[str, ...] = ()
        self._pushed = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")("tersify.note-replace")
        self._replaced = False
        self._carry = ""
        self._lines = 0  # newlines seen in blocks so far
        self._bytes = 0
        self._head: list[str] = []
        self._head_bytes = 0
        self._head_lines = 0
        self._head_open = True
        self._tail: deque[_Block] = deque()
        self._tail_bytes = 0
        self._between: list[_Line] = []
        self._between_bytes = 0
        self._stored: list[str] = []
        self._stored_size = 0
        self._stored_full = False

    def feed(self, chunk: bytes | str) -> None:
        """Take the next chunk of the output (text, or bytes decoded as UTF-8)."""
        text = chunk if isinstance(chunk, str) else self._decode(chunk)
        if not text:
            return
        self._store(text)
        text = self._carry + text
        end = text.rfind("\n") + 1
        if end == 0 and len(text) > BLOCK_CHARS:  # a line with no end in sight
            end = safe_end(text, BLOCK_CHARS) or BLOCK_CHARS
        self._carry = text[end:]
        if end:
            self._block(text[:end])

    def _decode(self, chunk: bytes, *, final: bool = False) -> str:
        token = _replaced.set(0)
        try:
            text = self._decoder.decode(chunk, final)
            self._replaced |= _replaced.get() > 0
        finally:
            _replaced.reset(token)
        return text

    def finish(self) -> Excerpt:
        """The excerpt: the whole text when it fits in ``max_bytes``, else head, lines that
        matter and tail with the cut stated."""
        self.feed(self._decode(b"", final=True))
        if self._carry:
            self._block(self._carry)
            self._carry = ""
        stored = "".join(self._stored)
        if self._bytes <= self.max_bytes:
            return Excerpt(stored, self._replaced)
        if self._stored_full:
            more = self._bytes - self._stored_size
            stored += (
                f"\n[tersify: {more:,} more bytes of this output were not kept "
                f"(TERSIFY_MAX_STORED_OUTPUT_BYTES is {self.stored_bytes:,})]\n"
            )
        self._trim_tail()
        text, cut = self._assemble()
        return Excerpt(text, self._replaced, cut, stored)

    def _store(self, text: str) -> None:
        size = _size(text)
        self._bytes += size
        if self._stored_full:
            return
        if self._stored_size + size <= self.stored_bytes:
            self._stored.append(text)
            self._stored_size += size
            return
        part = _prefix(text, self.stored_bytes - self._stored_size)
        self._stored.append(part)
        self._stored_size += _size(part)
        self._stored_full = True

    def _block(self, text: str) -> None:
        first = self._lines
        self._lines += text.count("\n")
        if self._head_open:
            text, first = self._fill_head(text, first)
            if not text:
                return
        block = _Block(text, first, _size(text))
        self._tail.append(block)
        self._tail_bytes += block.size
        while self._tail and self._tail_bytes - self._tail[0].size >= self._tail_budget:
            old = self._tail.popleft()
            self._tail_bytes -= old.size
            self._weigh(old)

    def _fill_head(self, text: str, first: int) -> tuple[str, int]:
        """Put what fits of ``text`` into the head; the rest, and the line it starts in."""
        room = self._head_budget - self._head_bytes
        size = _size(text)
        if size <= room:
            self._head.append(text)
            self._head_bytes += size
            self._head_lines = self._lines
            return "", self._lines
        part = _prefix(text, room)
        whole = part.rfind("\n") + 1
        taken = part[:whole] if whole else ("" if self._head else part)
        if taken:  # whole lines only, unless the first line is longer than the whole head
            self._head.append(taken)
            self._head_bytes += _size(taken)
            self._head_lines = first + taken.count("\n")
        self._head_open = False
        self._type = self._tool_type("".join(self._head))
        return text[len(taken) :], first + taken.count("\n")

    def _trim_tail(self) -> None:
        """Cut the tail's first block down to the budget, at a line start when one is near."""
        excess = self._tail_bytes - self._tail_budget
        if excess <= 0 or not self._tail:
            return
        block = self._tail.popleft()
        over = _prefix(block.text, excess)
        newline = block.text.find("\n", len(over), len(over) + LINE_CHARS)
        start = newline + 1 if newline >= 0 else len(over)  # mid-line only in a long line
        front, rest = block.text[:start], block.text[start:]
        self._weigh(_Block(front, block.first_line, _size(front)))
        if rest:
            self._tail.appendleft(_Block(rest, block.first_line + front.count("\n"), _size(rest)))
        self._tail_bytes = sum(b.size for b in self._tail)

    def _weigh(self, block: _Block) -> None:
        """Keep the lines of ``block`` (leaving the tail) that matter."""
        text = block.text
        low = lowercase(text)
        starts: set[int] = set()
        left = self._left
        for needle in self._needles:
            room = left[needle]
            if room <= 0:
                continue
            at = low.find(needle)
            while at >= 0 and room > 0:
                starts.add(text.rfind("\n", 0, at) + 1)
                room -= 1
                end = text.find("\n", at)
                at = low.find(needle, end if end >= 0 else len(text))
            left[needle] = room
        self._flooding = tuple(n for n in self._needles if left[n] <= 0)
        if self._flooding:
            starts.update(self._sampled(block, low))
        line_index, counted = block.first_line, 0
        for start in sorted(starts):
            line_index += text.count("\n", counted, start)
            counted = start
            end = text.find("\n", start)
            line = text[start : end if end >= 0 else len(text)]
            self._consider(line, low[start : start + len(line)], line_index)

    def _sampled(self, block: _Block, low: str) -> list[int]:
        """Where the lines of ``block`` numbered a multiple of ``sample_every`` start, of those
        holding a flooding word: a flood is weighed at a bounded rate, the same however the
        output was chunked."""
        lines = low.split("\n")
        offsets = list(accumulate(map(len, lines), initial=0))
        found: list[int] = []
        every = self._sample_every
        first = -block.first_line % every
        for index in range(first, len(lines), every):
            line = lines[index]
            if any(word in line for word in self._flooding):
                found.append(offsets[index] + index)  # the chars and newlines before it
        return found

    def _consider(self, line: str, low: str, index: int) -> None:
        kind = classify_line(line, self._type)
        weight = int(kind) if kind is not None else 0
        if not weight and any(word in low for word in self._words):
            weight = int(Kind.QUERY)
        if not weight:
            return
        if len(line) > LINE_CHARS:
            line = line[: safe_end(line, LINE_CHARS)] + "…"
        size = _size(line) + 1
        between = self._between
        full = between and self._between_bytes + size > self._between_budget
        if full and (weight, -index) < between[0][:2]:
            return  # it would be the first dropped: the lines kept stay as they are
        self._pushed += 1
        heapq.heappush(between, (weight, -index, self._pushed, line))
        self._between_bytes += size
        while self._between_bytes > self._between_budget and between:
            dropped = heapq.heappop(between)
            self._between_bytes -= _size(dropped[3]) + 1

    def _assemble(self) -> tuple[str, OutputCut]:
        total = self._lines + (0 if self._ends_with_newline() else 1)
        head = "".join(self._head)
        if head and not head.endswith("\n"):
            head += "\n"
        tail = "".join(block.text for block in self._tail)
        first_tail = self._tail[0].first_line if self._tail else total
        kept = sorted(self._between, key=lambda line: -line[1])
        between = "".join(line[3] + "\n" for line in kept)
        first, last = self._head_lines + 1, first_tail
        gap = f"lines {first:,}–{last:,}" if last >= first else "part of a line"
        tail_lines = total - first_tail
        if kept:
            opening = f"[… tersify cut {gap}; below, the {len(kept):,} of them that matter …]\n"
            closing = f"[… end of the cut; the last {tail_lines:,} lines follow …]\n"
        else:
            opening = f"[… tersify cut {gap}: none of them matched what matters …]\n"
            closing = ""
        text = "".join((head, opening, between, closing, tail))  # one copy of a large text
        cut = OutputCut(
            bytes_in=self._bytes,
            lines_in=total,
            bytes_kept=_size(text),
            head_lines=self._head_lines,
            tail_lines=tail_lines,
            kept_between=len(kept),
            lines_cut=max(0, first_tail - self._head_lines - len(kept)),
            bytes_stored=self._stored_size,
        )
        return text, cut

    def _ends_with_newline(self) -> bool:
        last = self._tail[-1].text if self._tail else "".join(self._head[-1:])
        return last.endswith("\n") or not last


def _prefix(text: str, room: int) -> str:
    """The longest start of ``text`` of at most ``room`` UTF-8 bytes, cut where text may be."""
    if room <= 0:
        return ""
    if text.isascii():
        return text[: safe_end(text, room)]
    part = text.encode("utf-8", "surrogatepass")[:room].decode("utf-8", "ignore")
    return part[: safe_end(part, len(part))]


def excerpt_of(
    output: object,
    max_bytes: int,
    stored_bytes: int,
    tool_type: Callable[[str], ToolType],
    query: str | None = None,
) -> Excerpt:
    """An in-memory output (``str`` or ``bytes``) as a job carries it; ``InvalidJobError``
    for any other type. Past ``max_bytes`` it goes through the same pass as a stream."""
    if isinstance(output, Excerpt):
        return output
    text, replaced = payloads.clean_output(output)
    if len(text) <= max_bytes // 4 or _size(text) <= max_bytes:
        return Excerpt(text, replaced)
    builder = ExcerptBuilder(max_bytes, stored_bytes, tool_type, query)
    for start in range(0, len(text), BLOCK_CHARS):
        builder.feed(text[start : start + BLOCK_CHARS])
    excerpt = builder.finish()
    return Excerpt(excerpt.text, replaced, excerpt.cut, excerpt.stored)


def excerpt_from_stream(
    chunks: Iterable[bytes],
    max_bytes: int,
    stored_bytes: int,
    tool_type: Callable[[str], ToolType],
    query: str | None = None,
) -> Excerpt:
    """An output read in chunks of bytes (a pipe, a file) as a job carries it."""
    builder = ExcerptBuilder(max_bytes, stored_bytes, tool_type, query)
    for chunk in chunks:
        builder.feed(chunk)
    return builder.finish()
