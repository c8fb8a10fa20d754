"""A model's answer: the JSON object it is asked for, read and checked, and the summary built.

The model answers with short prose and the line ranges that are its evidence::

    {"summary": "2 of 41 tests fail …", "quotes": ["12-14", "30"]}

(a file's prose in two parts, ``before`` and ``after`` its relevant range; where it fits the
type, ``needs_full_output`` when no summary can serve the agent safely). The worker checks the
ranges — lines the output has, the first not after the last, no two overlapping, every line
one the model was shown — and builds the summary: the prose, then the lines copied exactly
from the output with their numbers and gap markers, within the quote budget
(``worker.shrink.quotes``). A refusal's detail is written to the model: it is sent back for
one more try.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from tersify.contract import FallbackReason, ToolType
from tersify.errors import ProviderError
from tersify.worker.model.providers.base import AnswerFormat, Completion
from tersify.worker.shrink import KINDS, ModelView, kind_of, take

MAX_QUOTES = 16
"""Most line ranges one answer may give."""
FULL_OUTPUT_TYPES = frozenset(t for t, kind in KINDS.items() if kind.full_output_flag)
"""Types an agent may need whole (a file to edit, records whose every field matters, a page to
read): their answers may say so. A command's, a search's or a listing's evidence is its lines."""
FULL_OUTPUT_NOTE = (
    "[The summarizing model judged this output unsafe to summarize: read the full output "
    "through its output link before relying on it.]"
)
_FENCED = re.compile(r"```(?:json)?\s*(\{.*\})\s*```", re.DOTALL)
_RANGE = {
    "type": "string",
    "description": "A line number, or FIRST-LAST for the lines from FIRST to LAST.",
}
# "12" or "12-14" (an en dash or spaces around it are read too): a few tokens where an object
# with named fields takes a dozen.
_RANGE_TEXT = re.compile(r"\s*([0-9]{1,9})\s*(?:[-–]\s*([0-9]{1,9})\s*)?")


@dataclass(frozen=True, slots=True)
class AnswerShape:
    """The fields one tool type's answer has: its prose parts and whether it may ask for all."""

    prose: tuple[str, ...]
    full_output_flag: bool

    def answer_format(self) -> AnswerFormat:
        """The JSON Schema of the answer (closed objects, every property required)."""
        properties: dict[str, Any] = {
            name: {"type": "string", "description": _PROSE_HELP[name]} for name in self.prose
        }
        properties["quotes"] = {
            "type": "array",
            "description": "Lines to copy exactly beside the prose, most important first.",
            "items": _RANGE,
        }
        if self.full_output_flag:
            properties["needs_full_output"] = {
                "type": "boolean",
                "description": "True only when no summary can serve the agent safely.",
            }
        schema = {
            "type": "object",
            "properties": properties,
            "required": list(properties),
            "additionalProperties": False,
        }
        return AnswerFormat(
            name="tool_output_summary",
            description="The summary of the tool output and the line ranges to quote from it.",
            schema=schema,
        )


_PROSE_HELP = {
    "summary": "The summary in plain prose.",
    "before": "The lines before the relevant range, in plain prose ('none' if there are none).",
    "after": "The lines after the relevant range, in plain prose ('none' if there are none).",
}


def answer_shape(tool_type: ToolType) -> AnswerShape:
    """The answer ``tool_type``'s prompt asks for."""
    prose = ("before", "after") if kind_of(tool_type).numbered_file else ("summary",)
    return AnswerShape(prose, tool_type in FULL_OUTPUT_TYPES)


@dataclass(frozen=True, slots=True)
class Answer:
    """A checked answer: its prose parts, the ranges to quote (indices), the flag."""

    prose: tuple[str, ...]
    spans: tuple[range, ...]
    needs_full_output: bool = False

    @property
    def prose_text(self) -> str:
        """All prose parts together, as the grounding check reads them."""
        return "\n".join(part for part in self.prose if _said(part))


def _refused(detail: str, reason: FallbackReason = FallbackReason.MALFORMED) -> ProviderError:
    return ProviderError(reason, detail)


def answer_object(completion: Completion) -> dict[str, Any]:
    """The answer's JSON object: the tool call's input, else parsed out of the text."""
    if completion.data is not None:
        return completion.data
    text = completion.text.strip()
    if not text:
        raise _refused("the answer is empty", FallbackReason.EMPTY)
    fenced = _FENCED.search(text)
    # The object alone, else in a ```json fence, else between the first "{" and the last "}".
    braces = text[text.find("{") : text.rfind("}") + 1]
    candidates = [text, fenced.group(1) if fenced else None, braces]
    for candidate in candidates:
        if candidate:
            try:
                found = json.loads(candidate)
            except ValueError:
                continue
            if isinstance(found, dict):
                return found
    raise _refused("the answer is not the JSON object asked for")


def read_answer(completion: Completion, shape: AnswerShape, view: ModelView) -> Answer:
    """The checked answer of ``completion``; ``ProviderError`` saying what is wrong if none."""
    data = answer_object(completion)
    prose = tuple(_text_field(data, name) for name in shape.prose)
    flag = False
    if shape.full_output_flag and "needs_full_output" in data:
        flag = data["needs_full_output"]
        if not isinstance(flag, bool):
            raise _refused('"needs_full_output" must be true or false')
    spans = quote_spans(data.get("quotes"), view)
    if not spans and not any(_said(part) for part in prose):
        raise _refused("the answer has neither prose nor quotes", FallbackReason.EMPTY)
    return Answer(prose, spans, flag)


def _text_field(data: dict[str, Any], name: str) -> str:
    value = data.get(name)
    if not isinstance(value, str):
        raise _refused(f'"{name}" must be a string')
    return value.strip()


def _said(part: str) -> bool:
    """Whether a prose part says anything ('none' says there is nothing to say)."""
    return bool(part) and part.lower().rstrip(".") != "none"


def quote_spans(quotes: object, view: ModelView) -> tuple[range, ...]:
    """The answer's ``quotes`` as index ranges into the view's lines, each range checked."""
    if not isinstance(quotes, list):
        raise _refused('"quotes" must be a list of line ranges such as "12-14"')
    if len(quotes) > MAX_QUOTES:
        raise _refused(f"{len(quotes)} quotes; give at most {MAX_QUOTES}")
    spans: list[range] = []
    for number, quote in enumerate(quotes, 1):
        span = _span(number, quote, view)
        for other, taken in enumerate(spans, 1):
            if span.start < taken.stop and taken.start < span.stop:
                raise _refused(f"quotes {other} and {number} overlap")
        spans.append(span)
    return tuple(spans)


def _span(number: int, quote: object, view: ModelView) -> range:
    """One quote's line range as indices: numbers the output has, shown to the model."""
    what = f"quote {number}"
    found = _RANGE_TEXT.fullmatch(quote) if isinstance(quote, str) else None
    if found is None:
        raise _refused(f'{what} must be a line number "N" or a range "FIRST-LAST"')
    start = int(found.group(1))
    end = int(found.group(2) or start)
    what = f"{what} ({start}-{end})"
    if start > end:
        raise _refused(f"{what}: the start is after the end")
    source = view.source
    first, last = source.index(start), source.index(end)
    if first is None or last is None:
        numbers = source.numbers
        bounds = f"{numbers[0]}-{numbers[-1]}" if numbers else "none"
        raise _refused(f"{what}: the output has no such line (its lines are {bounds})")
    unseen = next((i for i in range(first, last + 1) if i not in view.seen), None)
    if unseen is not None and not view.truncated:  # a window: its lines are one stretch
        shown = sorted(view.seen)
        bounds = f"{source.numbers[shown[0]]}-{source.numbers[shown[-1]]}" if shown else "none"
        raise _refused(
            f"{what}: line {source.numbers[unseen]} is not in the part you were shown (lines "
            f"{bounds})"
        )
    if unseen is not None:
        raise _refused(
            f"{what}: line {source.numbers[unseen]} was not shown to you (it is inside a "
            "'… N lines …' gap)"
        )
    return range(first, last + 1)


def compose(answer: Answer, view: ModelView, quote_budget: int) -> str:
    """The summary: the prose, the quoted lines copied exactly (a file's between its two
    parts), and the note when the model asked for the whole output."""
    quoted = take(view.source, answer.spans, quote_budget, view.fixed).text(view.source)
    prose = [part if _said(part) else "" for part in answer.prose]
    # A file's quotes (its relevant range among them) go between its before and its after.
    pieces = [prose[0], quoted, *prose[1:]]
    if answer.needs_full_output:
        pieces.append(FULL_OUTPUT_NOTE)
    return "\n".join(piece for piece in pieces if piece)
