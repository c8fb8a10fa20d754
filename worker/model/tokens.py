"""The one token estimate: how many tokens a model will count in a text, before it is sent.

About four characters a token for English and code, about one for CJK text, which tokenizers
split far finer. Rate limits, compaction sizes and reprocessing costs all use it; the answer's
token cap uses ``answer_token_cap``, which errs high so a summary is never cut off.
"""

from __future__ import annotations

import math
import re

from tersify.worker.model.providers.base import ModelRequest

CHARS_PER_TOKEN = 4
_CJK = re.compile(r"[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]")
_CJK_SAMPLE = 4000  # the share of CJK is read from the start of a long text


def cjk_share(text: str) -> float:
    """The share of CJK characters in (the first few thousand characters of) ``text``."""
    window = text[:_CJK_SAMPLE]
    return len(_CJK.findall(window)) / max(1, len(window))


def estimate_tokens(text: str) -> int:
    """Tokens a model would count in ``text``."""
    if not text:
        return 0
    cjk = cjk_share(text)
    return math.ceil(len(text) * (cjk + (1 - cjk) / CHARS_PER_TOKEN))


def request_tokens(request: ModelRequest) -> int:
    """A request's cost for budgeting: its prompt's tokens plus its answer's cap."""
    return estimate_tokens(request.system) + estimate_tokens(request.user) + request.max_tokens


def answer_token_cap(max_chars: int, sample: str) -> int:
    """The ``max_tokens`` for an answer of ``max_chars`` in the language of ``sample``.

    Generous on purpose (~3 chars a token, ~1 for CJK, plus room): a cap that is reached cuts the
    summary off, while one that is not reached costs nothing.
    """
    chars_per_token = 1.0 if cjk_share(sample) > 0.2 else 3.0
    return int(max_chars / chars_per_token) + 64
