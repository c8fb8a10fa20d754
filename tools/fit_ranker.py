"""Fit the shrink's line ranker on the corpus's ``tune/`` families and write ``ranker.json``.

Every case of ``tests/corpus/tune`` is read as the extractive shrink reads it (classified as
the worker would, reflowed, one ``Reading``); each candidate the engine would weigh — the
rules' candidates and the other lines holding a query term — becomes one row of
``features.FEATURES``, labelled 1 when the lines it brings hold (part of) a ``must_keep`` fact.
A logistic regression (scikit-learn, a dev extra; deterministic: lbfgs, no sampling) is fitted
on standardized rows and folded back into plain weights.

Which settings ship is chosen by leave-one-family-out cross-validation on tune: each family's
cases are shrunk by the extractive summary with a model fitted on the other families, and the
facts kept under the budget are counted, beside the rules' engine on the same cases. ``check/``
is never read here.

The type each case was read as is recorded in the file (``types``): ``--check`` and
``--same-types`` read the cases as typed then, so a change to the classifier moves the ranker
only when it is refitted on purpose (a plain run types them with today's classifier).

    .venv/bin/python tools/fit_ranker.py               # fit with the shipped settings, write
    .venv/bin/python tools/fit_ranker.py --cv          # cross-validate each setting, then fit
    .venv/bin/python tools/fit_ranker.py --check       # refit and compare with the shipped file
    .venv/bin/python tools/fit_ranker.py --same-types  # refit on the shipped file's types
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_limits

from tersify.classify import classify
from tersify.contract import ToolType
from tersify.text.sanitize import sanitize
from tersify.worker.quality.corpus import Case, load_cases
from tersify.worker.quality.evaluation import missing
from tersify.worker.shrink import extract, kind_of
from tersify.worker.shrink.features import FEATURES, rows, shortlist
from tersify.worker.shrink.ranker import FITTED, Ranker
from tersify.worker.shrink.reading import Reading
from tersify.worker.shrink.records import record
from tersify.worker.shrink.reflow import as_doc

ROOT = Path(__file__).resolve().parents[1]
TUNE = ROOT / "tests" / "corpus" / "tune"
SHIPPED_FILE = ROOT / "worker" / "shrink" / FITTED
BUDGET = 2_000
_PLACEHOLDER = Ranker((0.0,) * len(FEATURES), 0.0, {})


@dataclass(frozen=True, slots=True)
class Setting:
    """What a fit is asked for: the regularization and how the classes are balanced."""

    c: float = 0.1
    balanced: bool = True
    per_case: bool = True

    def as_json(self) -> dict[str, Any]:
        """The setting as written into the fitted file."""
        return {"c": self.c, "balanced": self.balanced, "per_case": self.per_case}


SETTINGS = (
    Setting(0.01, True),
    Setting(0.1, True),
    Setting(1.0, True),
    Setting(0.1, False),
)
SHIPPED_SETTING = Setting()


@dataclass(frozen=True, slots=True)
class Rows:
    """One case's candidates as feature rows and labels, and the type the case was read as."""

    family: str
    x: list[list[float]]
    y: list[int]
    name: str
    tool_type: ToolType


def fact_lines(text: str, facts: Iterable[str]) -> set[int]:
    """The lines of ``text`` holding (part of) an occurrence of any fact."""
    found: set[int] = set()
    for fact in facts:
        needle = fact.replace("\r\n", "\n")
        if not needle:
            continue
        at = text.find(needle)
        while at != -1:
            first = text.count("\n", 0, at)
            found.update(range(first, first + needle.count("\n") + 1))
            at = text.find(needle, at + 1)
    return found


def case_rows(case: Case, tool_type: ToolType | None = None) -> Rows:
    """The candidates of ``case`` as the extractive shrink weighs them, labelled; read as
    ``tool_type``, else as the classifier types it."""
    tool_type = tool_type or classify(case.tool_name, case.command, case.output)
    doc = as_doc(sanitize(case.output), kind_of(tool_type))
    reading = Reading.of(doc, tool_type, case.query, ranker=_PLACEHOLDER)
    pool, _ = shortlist([c for c in reading.candidates if c.weight != float("inf")])
    salient = {s.number - 1: s for s in reading.salient}
    table = rows(doc, reading.evidence, pool, salient)
    wanted = fact_lines(doc.text, case.must_keep)
    labels = []
    for candidate in pool:
        start, end = candidate.span or record(
            doc, candidate.anchor, prose=reading.kind.prose, max_lines=candidate.record_lines
        )
        brought = set(range(start, end)) | {candidate.anchor}
        labels.append(1 if brought & wanted else 0)
    return Rows(case.family, table, labels, case.name, tool_type)


def fit(data: Sequence[Rows], setting: Setting) -> Ranker:
    """A logistic model fitted on ``data``, its standardization folded into the weights."""
    x = np.array([row for part in data for row in part.x], dtype=np.float64)
    y = np.array([label for part in data for label in part.y], dtype=np.int64)
    # Each case counts alike, however many candidates it has: the choice is made per case.
    weight = np.array([1.0 / len(part.y) for part in data for _ in part.y], dtype=np.float64)
    weight *= len(y) / weight.sum()
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale == 0] = 1.0
    model = LogisticRegression(
        C=setting.c,
        class_weight="balanced" if setting.balanced else None,
        solver="newton-cholesky",
        max_iter=100,
        tol=1e-8,  # converged far past the weights' rounding
    )
    # One BLAS thread: the same sums in the same order on every machine (and no oversubscribed
    # threads on a shared one).
    with threadpool_limits(1):
        model.fit((x - mean) / scale, y, sample_weight=weight if setting.per_case else None)
    weights = model.coef_[0] / scale
    bias = float(model.intercept_[0] - np.dot(weights, mean))
    meta = {
        "model": "logistic",
        "setting": setting.as_json(),
        "rows": len(y),
        "positives": int(y.sum()),
        "families": len({part.family for part in data}),
        "types": {part.name: part.tool_type.value for part in sorted(data, key=lambda p: p.name)},
    }
    return Ranker(tuple(float(w) for w in weights), bias, meta)


def kept(cases: Iterable[Case], ranker: Ranker | None, budget: int = BUDGET) -> tuple[int, int]:
    """Facts the extractive shrink keeps of ``cases`` with ``ranker`` (None: the rules)."""
    got = total = 0
    for case in cases:
        tool_type = classify(case.tool_name, case.command, case.output)
        out = extract(case.output, tool_type, budget, case.query, ranker=ranker)
        total += len(case.must_keep)
        got += len(case.must_keep) - len(missing(out, case.must_keep))
    return got, total


def cross_validate(
    cases: Sequence[Case], data: Sequence[Rows], setting: Setting
) -> dict[str, tuple[int, int]]:
    """Leave one family out: facts kept per family with a model fitted on the others."""
    by_family: dict[str, list[Case]] = defaultdict(list)
    for case in cases:
        by_family[case.family].append(case)
    found: dict[str, tuple[int, int]] = {}
    for family, held in sorted(by_family.items()):
        ranker = fit([part for part in data if part.family != family], setting)
        found[family] = kept(held, ranker)
    return found


def shipped_types(path: Path = SHIPPED_FILE) -> dict[str, ToolType]:
    """The type each tune case was read as when the shipped ranker was fitted."""
    meta = json.loads(path.read_text(encoding="utf-8")).get("types") or {}
    return {name: ToolType(value) for name, value in meta.items()}


def write(ranker: Ranker, path: Path = SHIPPED_FILE) -> None:
    """Write the fitted file (sorted keys, one weight per line: a diff reads as a table)."""
    path.write_text(json.dumps(ranker.to_json(), indent=1) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """Fit (after cross-validating the settings with ``--cv``), or compare with ``--check``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cv", action="store_true", help="cross-validate every setting first")
    parser.add_argument("--check", action="store_true", help="refit and compare, write nothing")
    parser.add_argument("--same-types", action="store_true", help="read cases as typed before")
    args = parser.parse_args(argv)
    cases = load_cases(TUNE)
    types = shipped_types() if args.check or args.same_types else {}
    data = [case_rows(case, types.get(case.name)) for case in cases]
    setting = SHIPPED_SETTING
    if args.cv:
        rules = kept(cases, None)
        print(f"rules: {rules[0]}/{rules[1]} ({100 * rules[0] / rules[1]:.1f}%)")
        best = -1
        for candidate in SETTINGS:
            scores = cross_validate(cases, data, candidate)
            got = sum(k for k, _ in scores.values())
            total = sum(t for _, t in scores.values())
            print(f"{candidate}: {got}/{total} ({100 * got / total:.1f}%)", flush=True)
            if got > best:
                best, setting = got, candidate
    ranker = fit(data, setting)
    if args.check:
        shipped = Ranker.from_json(json.loads(SHIPPED_FILE.read_text(encoding="utf-8")))
        drift = max(abs(a - b) for a, b in zip(ranker.weights, shipped.weights, strict=True))
        print(f"largest weight difference: {drift:.2e}")
        return 0 if drift < 1e-4 else 1
    write(ranker)
    print(f"wrote {SHIPPED_FILE} ({setting})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
