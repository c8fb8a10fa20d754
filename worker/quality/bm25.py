"""The baseline every shrink is measured against: plain BM25 over lines, best lines with context.

Each line is a document, scored against the query's words with Okapi BM25 (k1 1.2, b 0.75);
the best lines are taken with ``context`` lines either side until the budget is spent, and
shown in their order. No structure, no types: what any search tool would do in thirty lines.
"""

from __future__ import annotations

import math
import re
from collections import Counter

_WORD = re.compile(r"\w+")
K1 = 1.2
B = 0.75


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def bm25_scores(lines: list[str], query: str) -> list[float]:
    """The BM25 score of every line against the words of ``query``."""
    terms = set(_words(query))
    if not terms or not lines:
        return [0.0] * len(lines)
    tokens = [_words(line) for line in lines]
    frequency: Counter[str] = Counter()
    for words in tokens:
        frequency.update(terms.intersection(words))
    count = len(lines)
    average = sum(map(len, tokens)) / count or 1.0
    idf = {t: math.log(1 + (count - n + 0.5) / (n + 0.5)) for t, n in frequency.items()}
    scores: list[float] = []
    for words in tokens:
        tf = Counter(w for w in words if w in idf)
        norm = K1 * (1 - B + B * len(words) / average)
        scores.append(sum(idf[t] * f * (K1 + 1) / (f + norm) for t, f in tf.items()))
    return scores


def bm25_lines(text: str, query: str | None, budget: int, context: int = 1) -> str:
    """The best-scoring lines of ``text`` with ``context`` lines each side, in order, in
    ``budget`` chars (a line that does not fit whole is skipped)."""
    text = text.replace("\r\n", "\n")
    if len(text) <= budget:
        return text
    lines = text.split("\n")
    scores = bm25_scores(lines, query or "")
    order = sorted(range(len(lines)), key=lambda i: (-scores[i], i))
    shown: set[int] = set()
    used = 0
    for index in order:
        if scores[index] <= 0:
            break
        block = range(max(0, index - context), min(len(lines), index + context + 1))
        new = [i for i in block if i not in shown]
        cost = sum(len(lines[i]) + 1 for i in new)
        if used + cost <= budget:
            shown.update(new)
            used += cost
        if budget - used < 2:
            break
    return "\n".join(lines[i] for i in sorted(shown))
