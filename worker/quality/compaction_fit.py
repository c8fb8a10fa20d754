"""Fit the weights of the decision scorer on a corpus's conversations, and say how they carry.

Each sentence of an assistant message is a sample (``decisions.statements``), labelled by
whether it holds one of the conversation's ``decision`` facts. The weights of a logistic model
over the sentence's features are fitted by gradient descent with an L2 penalty; every agent
weighs the same however many sentences it wrote, and a fact found in several sentences is
spread over them. The report leaves each agent out in turn, fits on the others, and counts the
left-out agent's decision facts that the best ``limit`` sentences of each conversation hold,
beside the same count for the weights in use (``decisions.WEIGHTS``):

    python -m tersify.worker.quality.compaction_fit tests/compaction-corpus/tune
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

from tersify.worker.compaction.facts.decisions import FEATURES, WEIGHTS, Statement, statements
from tersify.worker.quality.conversations import CompactionCase, FactKind, load_conversations
from tersify.worker.quality.conversations import normalize as normalized

Sample = tuple[Statement, frozenset[int]]
"""A sentence and the decision facts (their numbers in the case) it holds."""
Weights = dict[str, float]


def samples(case: CompactionCase) -> tuple[list[Sample], int]:
    """The case's sentences with the decision facts each holds, and how many facts it has."""
    facts = [
        [normalized(text) for text in fact.any]
        for fact in case.facts
        if fact.kind is FactKind.DECISION
    ]
    found: list[Sample] = []
    for statement in statements(case.conversation.turns):
        text = normalized(statement.text)
        held = frozenset(
            i for i, spellings in enumerate(facts) if any(s in text for s in spellings)
        )
        found.append((statement, held))
    return found, len(facts)


def _balanced(groups: dict[str, list[list[Sample]]]) -> list[tuple[Sample, float]]:
    """Each sample with its weight: every agent weighs the same, a fact found in several
    sentences is spread over them; the weights average one a sample."""
    out: list[tuple[Sample, float]] = []
    everything = sum(len(case) for cases in groups.values() for case in cases)
    for cases in groups.values():
        size = sum(len(case) for case in cases) * len(groups) / everything
        for case in cases:
            hits = Counter(fact for _, held in case for fact in held)
            for sample in case:
                weight = 1.0 / size
                if sample[1]:
                    weight *= 20 * sum(1.0 / hits[fact] for fact in sample[1])
                out.append((sample, weight))
    return out


def fit(
    weighted: Sequence[tuple[Sample, float]], penalty: float = 1.0, rounds: int = 400
) -> Weights:
    """Logistic weights (and a ``bias``) fitted to the weighted samples."""
    size = len(FEATURES)
    w = [0.0] * (size + 1)
    total = sum(weight for _, weight in weighted) or 1.0
    for _ in range(rounds):
        grad = [0.0] * (size + 1)
        for (statement, held), weight in weighted:
            z = w[-1] + sum(a * b for a, b in zip(w, statement.features, strict=False))
            p = 1.0 / (1.0 + math.exp(-max(min(z, 30.0), -30.0)))
            step = (p - (1.0 if held else 0.0)) * weight
            for j, value in enumerate(statement.features):
                grad[j] += step * value
            grad[-1] += step
        for j in range(size + 1):
            shrink = penalty * w[j] if j < size else 0.0
            w[j] -= 0.5 * (grad[j] + shrink) / total
    return {**{name: round(w[j], 2) for j, name in enumerate(FEATURES)}, "bias": round(w[-1], 2)}


def _score(weights: Weights) -> Callable[[Statement], float]:
    def score(statement: Statement) -> float:
        pairs = zip(FEATURES, statement.features, strict=True)
        return weights["bias"] + sum(weights[name] * value for name, value in pairs)

    return score


def covered(case: list[Sample], weights: Weights, limit: int = 12) -> int:
    """The decision facts held by the ``limit`` best-scored sentences of one conversation."""
    score = _score(weights)
    best = sorted(case, key=lambda sample: (-score(sample[0]), -sample[0].index))[:limit]
    return len({fact for _, held in best for fact in held})


def report(directory: Path, penalty: float = 1.0) -> str:
    """Leave-one-agent-out coverage of the fitted weights beside the weights in use, and the
    weights fitted on every agent."""
    by_agent: dict[str, list[tuple[list[Sample], int]]] = {}
    for case in load_conversations(directory):
        by_agent.setdefault(case.agent, []).append(samples(case))
    lines: list[str] = []
    totals = Counter[str]()
    for agent in sorted(by_agent):
        train = {a: [c for c, _ in cases] for a, cases in by_agent.items() if a != agent}
        weights = fit(_balanced(train), penalty)
        ours = sum(covered(c, weights) for c, _ in by_agent[agent])
        used = sum(covered(c, WEIGHTS) for c, _ in by_agent[agent])
        facts = sum(n for _, n in by_agent[agent])
        totals.update({"left_out": ours, "in_use": used, "facts": facts})
        lines.append(f"{agent} left out: fitted {ours}/{facts}, in use {used}/{facts}")
    lines.append(
        f"all agents: fitted {totals['left_out']}/{totals['facts']}, "
        f"in use {totals['in_use']}/{totals['facts']}"
    )
    every = {a: [c for c, _ in cases] for a, cases in by_agent.items()}
    lines.append(f"fitted on every agent: {fit(_balanced(every), penalty)}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(Path(sys.argv[1]), float(sys.argv[2]) if len(sys.argv) > 2 else 1.0))
