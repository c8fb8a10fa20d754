"""One prompt asked of the model: each answer read and checked, a refused one sent back once.

A job's single request, each window of a long output and the merge of the windows' answers
are all asked this way; they differ in what an answer is checked against (``AnswerCheck``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import structlog

from tersify.contract import FallbackReason
from tersify.errors import ProviderError
from tersify.settings import Settings
from tersify.worker.model.calls import Route, RoutedCompletion, ask
from tersify.worker.model.providers.base import Completion, Correction
from tersify.worker.summarize.answers import Answer, compose, read_answer
from tersify.worker.summarize.prompts import SummaryPrompt

log = structlog.get_logger("tersify.summarize")

Ground = Callable[[str], None]
"""Refuses prose claiming what the model was not shown (raises ``ProviderError``)."""


class AnswerCheck:
    """Reads and checks each answer to one prompt (``ask``'s ``check``): keeps the answer it
    accepts and the summary built from it, every answer's usage, and the answer it last
    refused.

    The prose is held to ``prose_cap`` chars and to ``ground``; with ``size_cap`` the summary
    must also be shorter than that (the output it stands for).
    """

    def __init__(
        self,
        prompt: SummaryPrompt,
        *,
        prose_cap: int,
        quote_budget: int,
        ground: Ground,
        size_cap: int | None = None,
    ) -> None:
        self.prompt = prompt
        self.prose_cap = prose_cap
        self.quote_budget = quote_budget
        self.ground = ground
        self.size_cap = size_cap
        self.answer: Answer | None = None
        self.text = ""
        self.completions: list[Completion] = []
        self.refused: tuple[Completion, ProviderError] | None = None

    def __call__(self, completion: Completion) -> None:
        """Accept ``completion`` (its summary kept in ``text``) or raise why not."""
        self.completions.append(completion)
        try:
            self.answer, self.text = self.summary(completion)
        except ProviderError as error:
            self.refused = (completion, error)
            raise

    def summary(self, completion: Completion) -> tuple[Answer, str]:
        """The checked answer and the summary it makes: the prose, then the lines it quotes."""
        answer = read_answer(completion, self.prompt.shape, self.prompt.view)
        prose = answer.prose_text
        if len(prose) > self.prose_cap:
            raise ProviderError(
                FallbackReason.OVERSIZED,
                f"the prose is {len(prose)} chars; the cap is {self.prose_cap}",
            )
        if prose:
            self.ground(prose)
        text = compose(answer, self.prompt.view, self.quote_budget)
        if self.size_cap is not None and len(text) >= self.size_cap:
            raise ProviderError(
                FallbackReason.OVERSIZED, "the summary is not shorter than the output: say less"
            )
        return answer, text

    def tokens(self, field: str) -> int | None:
        """A usage count summed over every answer (None when no answer reported it)."""
        counts = [getattr(c, field) for c in self.completions if getattr(c, field) is not None]
        return sum(counts) if counts else None


def ask_checked(
    prompt: SummaryPrompt,
    check: AnswerCheck,
    routes: Sequence[Route],
    settings: Settings,
    deadline: float,
    first_model: str | None,
) -> RoutedCompletion:
    """The model's accepted answer to ``prompt``; an answer refused is sent back once with
    the reason. Raises the last ``ProviderError``."""
    request = prompt.request
    for attempt in (1, 2):
        try:
            return ask(
                routes,
                request,
                deadline=deadline,
                settings=settings,
                check=check,
                first_model=first_model,
            )
        except ProviderError as error:
            refused, check.refused = check.refused, None
            if attempt == 2 or refused is None or refused[1] is not error:
                raise
            log.info("summary_answer_refused", reason=error.reason.value, detail=error.detail)
            request = replace(request, correction=Correction(refused[0], correction(error)))
    raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises


def correction(error: ProviderError) -> str:
    """What the model is told of its refused answer."""
    return (
        f"That answer was refused: {error.detail}. Answer again with the whole JSON object, "
        "corrected."
    )
