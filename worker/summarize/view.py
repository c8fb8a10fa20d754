"""What a model reads of an output: its lines numbered, cut by the engine to the input cap.

Every line the model reads carries its number (``N|line``; a file's as ``N#HH|line``
hashlines), and the numbers are the output's own even where the engine left lines out (each run
of them one ``… 12 lines …`` marker), so the model points at lines instead of retyping them.
Where very long lines make up most of an output that must be cut (minified JSON, a one-line
log), the engine first reflows them (``worker.shrink.reflow``) and the pieces are the numbered
lines. The view keeps which lines the model was shown: an answer may quote only those.
"""

from __future__ import annotations

from dataclasses import dataclass

from tersify.contract import LineRange, ToolType
from tersify.worker.shrink.document import Doc
from tersify.worker.shrink.engine import choose
from tersify.worker.shrink.fallback import model_plan
from tersify.worker.shrink.files import file_part, file_view, range_quote, relevant_range
from tersify.worker.shrink.quotes import NO_QUOTE, NumberedLines, Quote, plain_lines
from tersify.worker.shrink.reflow import as_doc
from tersify.worker.shrink.render import render


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


def output_view(text: str, tool_type: ToolType, limit: int, query: str | None) -> ModelView:
    """Any output but a file, as ``N|line`` lines: all of them when they fit in ``limit``
    chars, else the lines the engine keeps (``worker.shrink.fallback.model_view``'s cut)."""
    if len(text) <= limit:  # the numbers only add: a longer text cannot fit
        doc = Doc(text)
        source = plain_lines(doc.lines)
        whole = "\n".join(source.label(i, line) for i, line in enumerate(doc.lines))
        if len(whole) <= limit:
            return ModelView(whole, source, frozenset(range(len(doc))), truncated=False)
    doc = as_doc(text, tool_type)
    source = plain_lines(doc.lines)
    shown = choose(doc, tool_type, query, model_plan(tool_type, limit, source.label))
    body = render(doc.lines, shown, numbered=source.label)
    return ModelView(body, source, frozenset(shown), truncated=True)


def file_sections(
    text: str, wanted: LineRange | None, limit: int, query: str | None, verbatim_limit: int
) -> ModelView:
    """A file as three sections (before, the relevant range, after), the range to splice fixed.

    The relevant range is the job's lines, else the query's best match, else the middle
    third (``relevant_range``), as hashlines of at most ``verbatim_limit`` chars. The lines
    before and after it are hashlines too, each part cut by the engine to its share of the
    room, its definitions (the outline the summaries describe) among what it keeps.
    """
    view = file_view(text)
    source = view.numbered()
    lines = relevant_range(view, query, wanted)
    fixed = range_quote(view, lines, verbatim_limit)
    verbatim = fixed.text(source)
    numbers = view.numbers
    first = numbers[lines.start] if lines else 1
    last = numbers[lines.stop - 1] if lines else 0
    heads = (
        f'[lines before the relevant range, 1-{first - 1}: describe them in "before"]',
        f"[the relevant range, lines {first}-{last}: given to the agent verbatim, do not repeat "
        "it]",
        f"[lines after the relevant range, {last + 1}-{numbers[-1] if numbers else 0}: "
        'describe them in "after"]',
    )
    room = max(0, limit - sum(len(h) + 2 for h in heads) - len(verbatim))
    # The room is shared in proportion to the raw sizes of the two parts.
    size_before = sum(len(line) + 1 for line in view.doc.lines[: lines.start])
    size_after = sum(len(line) + 1 for line in view.doc.lines[lines.stop :])
    share = room * size_before // max(1, size_before + size_after)
    before, seen_before, cut_one = file_part(view, 0, lines.start, share, query)
    after, seen_after, cut_two = file_part(view, lines.stop, len(view.doc), room - share, query)
    parts = [(heads[0], before), (heads[1], verbatim), (heads[2], after)]
    body = "\n".join(f"{head}\n{part}" for head, part in parts if part)
    seen = frozenset(seen_before) | fixed.shown | frozenset(seen_after)
    return ModelView(body, source, seen, cut_one or cut_two, fixed)
