"""A file as a model reads it: three sections, the relevant range between them kept verbatim.

Any other output is read as the shrink's ``model_view`` makes it (``worker.shrink``).
"""

from __future__ import annotations

from tersify.contract import LineRange
from tersify.worker.shrink import ModelView, file_part, file_view, range_quote, relevant_range


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
    lines = relevant_range(view, view.reading(query), wanted)
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


__all__ = ["ModelView", "file_sections"]
