"""A conversation's middle past one request, read in windows before its summary is written.

When the middle's transcript does not fit one summary request beside the facts and the
previous summary, it is cut on line boundaries into windows as a long tool output is
(``worker.shrink.windows``), each condensed into notes by a request of its own, side by side
(``worker.model.fanout``), within the job's ceiling
(``TERSIFY_MODEL_READ_MAX_CHARS``: the newest windows first, then the oldest, then inwards
from the newest). A window whose request fails is covered by the extractive shrink of its
lines; when all fail, the compaction falls back as a failed request does. The summary request
then reads the notes, oldest first, in place of the transcript.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

import structlog

from tersify.chat.messages import Turn
from tersify.contract import FallbackReason, ToolType
from tersify.errors import ProviderError
from tersify.settings import Settings
from tersify.worker.compaction.prompt import render_transcript
from tersify.worker.model.calls import Route, RoutedCompletion, ask
from tersify.worker.model.fanout import WINDOW_SHARE, fan_out
from tersify.worker.model.fence import Fence, escape
from tersify.worker.model.providers.base import Completion, ModelRequest
from tersify.worker.shrink import NumberedLines, clip, extract
from tersify.worker.shrink.windows import Window, split

log = structlog.get_logger("tersify.compaction")

NOTES_SYSTEM = (
    "You read one part of the transcript of a conversation between a user and an AI agent, "
    "too long to be read at once; notes on every part will be joined into a handoff summary. "
    "Write notes on this part alone: what was asked, done and decided, the files, commands, "
    "identifiers, numbers and error messages exactly as they appear, and what was left "
    "unfinished. Output only the notes."
)
_FRAME_ROOM = 600
"""What a notes request holds besides its part of the transcript."""
_MIN_NOTES_CHARS = 300


@dataclass(frozen=True, slots=True)
class Notes:
    """The notes the summary request reads instead of the transcript, and their answers."""

    text: str
    completions: tuple[Completion, ...]


def transcript_notes(
    turns: Sequence[Turn],
    routes: Sequence[Route],
    settings: Settings,
    deadline: float,
    room: int,
) -> Notes | None:
    """Notes on the transcript of ``turns`` read in windows; None when it fits ``room``."""
    transcript = escape(render_transcript(turns))
    if len(transcript) <= room or not routes:
        return None
    lines = transcript.split("\n")
    source = NumberedLines(lines, range(1, len(lines) + 1), lambda _index, text: text)
    windows = split(source, max(2000, settings.model_window_chars - _FRAME_ROOM))
    read = within(windows, settings.model_read_max_chars)
    share = max(_MIN_NOTES_CHARS, room // len(read) - 40)
    requests = [notes_request(w.body, n, len(read), share) for n, w in enumerate(read)]
    now = time.monotonic()
    until = now + (deadline - now) * WINDOW_SHARE
    calls = [
        partial(
            ask,
            routes,
            request,
            deadline=until,
            settings=settings,
            check=_said,
            call_timeout=settings.model_timeout_seconds * 2,
        )
        for request in requests
    ]
    answers = fan_out(calls)
    done = [a.completion for a in answers if isinstance(a, RoutedCompletion)]
    if not done:
        failure = next(a for a in answers if isinstance(a, ProviderError))
        raise failure
    parts = [
        _part(n, len(read), w, a, share, settings)
        for n, (w, a) in enumerate(zip(read, answers, strict=True))
    ]
    left = len(windows) - len(read)
    if left:
        parts.insert(0, f"[{left} older parts of the transcript were read by no model]")
    log.info("compaction_windows_read", windows=len(read), failed=len(read) - len(done))
    return Notes("\n\n".join(parts), tuple(done))


def within(windows: Sequence[Window], ceiling: int) -> list[Window]:
    """The windows read within ``ceiling`` chars, in order: the newest first, then the oldest,
    then inwards from the newest."""
    last = len(windows) - 1
    order = list(dict.fromkeys([last, 0, *range(last - 1, 0, -1)]))
    taken: list[int] = []
    used = 0
    for index in order:
        size = len(windows[index].body)
        if used + size <= ceiling or not taken:
            taken.append(index)
            used += size
    return [windows[i] for i in sorted(taken)]


def notes_request(part: str, number: int, count: int, share: int) -> ModelRequest:
    """The request for notes on one part of the transcript, at most ``share`` chars."""
    fence = Fence()
    user = (
        f"Part {number + 1} of {count} of the transcript, oldest first:\n"
        f"{fence.wrap('transcript', part)}\n"
        f"Write the notes on this part in under {share} characters."
    )
    return ModelRequest(
        system=f"{NOTES_SYSTEM}\n{fence.rule('transcript')}",
        user=user,
        max_tokens=share // 3 + 64,
    )


def _said(completion: Completion) -> None:
    if not completion.text.strip():
        raise ProviderError(FallbackReason.EMPTY, "the model returned no notes")


def _part(
    number: int,
    count: int,
    window: Window,
    answer: RoutedCompletion | ProviderError,
    share: int,
    settings: Settings,
) -> str:
    """One part's notes: the model's, else the lines its extractive shrink keeps."""
    head = f"[part {number + 1} of {count}]"
    if isinstance(answer, RoutedCompletion):
        return f"{head}\n{clip(answer.completion.text.strip(), share, ellipsis=True)}"
    budget = min(share, settings.local_budget_chars)
    kept = extract(window.body, ToolType.COMMAND_OUTPUT, budget)
    return f"{head} no model read it ({answer.reason.value}); its lines that matter:\n{kept}"
