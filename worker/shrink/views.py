"""What a model reads of an output: its lines numbered, cut by the engine to the input cap.

Every line the model reads carries its number (``N|line``; a file's as ``N#HH|line``
hashlines), and the numbers are the output's own even where the engine left lines out (each run
of them one ``… 12 lines …`` marker), so the model points at lines instead of retyping them.
Where very long lines make up most of an output that must be cut (minified JSON, a one-line
log), the engine first reflows them (``reflow``) and the pieces are the numbered lines. The
view keeps which lines the model was shown: an answer may quote only those.

The same engine as the local shrinks, with room for much more: the head and the tail held
fixed (``MODEL_FRAME_SHARE`` of the cap, split by the kind's head ratio), and every salient
record, query match and extreme that fits, each with its ancestry, every gap counted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tersify.contract import ToolType
from tersify.worker.shrink.document import Doc
from tersify.worker.shrink.engine import Plan, choose
from tersify.worker.shrink.kinds import kind_of
from tersify.worker.shrink.quotes import NO_QUOTE, NumberedLines, Quote, plain_lines
from tersify.worker.shrink.reading import Reading
from tersify.worker.shrink.reflow import as_doc
from tersify.worker.shrink.render import render

MODEL_FRAME_SHARE = 0.4
"""Of the model's input cap, what the head and the tail of a longer output hold fixed."""


@dataclass(frozen=True, slots=True)
class ModelView:
    """The numbered text a model reads, the lines behind it, and which of them it was shown.

    ``fixed`` is a file's relevant range: given to the agent verbatim whatever the answer.
    """

    body: str
    source: NumberedLines
    seen: frozenset[int]  # indices of the lines shown (whole or clipped)
    truncated: bool
    fixed: Quote = NO_QUOTE


def model_plan(
    tool_type: ToolType, limit: int, numbered: Callable[[int, str], str] | None = None
) -> Plan:
    """How ``model_view`` cuts: ``limit`` chars, the kind's head and tail held fixed; lines
    shown as ``numbered`` makes them (the cost of a label is counted)."""
    ratio = kind_of(tool_type).head_ratio
    frame = limit * MODEL_FRAME_SHARE
    return Plan(
        limit,
        head=int(frame * ratio),
        tail=int(frame * (1 - ratio)),
        head_share=ratio,
        numbered=numbered,
    )


def model_view(text: str, tool_type: ToolType, limit: int, query: str | None = None) -> ModelView:
    """Any output but a file, as ``N|line`` lines: all of them when they fit in ``limit``
    chars, else the lines the engine keeps. (A file is read in sections with its relevant
    range fixed: ``worker.summarize.view``.)"""
    if len(text) <= limit:  # the numbers only add: a longer text cannot fit
        doc = Doc(text)
        source = plain_lines(doc.lines)
        whole = "\n".join(source.label(i, line) for i, line in enumerate(doc.lines))
        if len(whole) <= limit:
            return ModelView(whole, source, frozenset(range(len(doc))), truncated=False)
    doc = as_doc(text, kind_of(tool_type))
    source = plain_lines(doc.lines)
    reading = Reading.of(doc, tool_type, query)
    shown = choose(reading, model_plan(tool_type, limit, source.label))
    body = render(doc.lines, shown, numbered=source.label)
    return ModelView(body, source, frozenset(shown), truncated=True)
