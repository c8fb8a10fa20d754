"""Fit the classifier that types an output by content and write ``classifier.json``.

Every case of ``tests/corpus/tune`` outside the held-back tenth (``corpus.held_back``)
becomes one row of ``features.FEATURES`` labelled with its ``expected_type``. A multinomial
logistic regression (scikit-learn, a dev extra; deterministic: lbfgs) is fitted on
standardized rows, each family weighing as much as any other, and folded back into plain
weights. The held-back tenth and ``check/`` are never read here.

Which setting ships is chosen by leave-one-family-out cross-validation on the same part:
each family is classified as ``classify`` would (the name's and the program's rules first,
the classifier fitted on the other families where they do not tell).

    .venv/bin/python tools/fit_classifier.py            # fit with the shipped setting, write
    .venv/bin/python tools/fit_classifier.py --cv       # cross-validate each setting, then fit
    .venv/bin/python tools/fit_classifier.py --check    # refit and compare with the shipped file
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_limits

from tersify.classify import by_content, by_rules
from tersify.classify.features import FEATURES, features
from tersify.classify.learned import FITTED, Classifier
from tersify.contract import ToolType
from tersify.worker.quality.corpus import Case, held_back, load_cases

ROOT = Path(__file__).resolve().parents[1]
TUNE = ROOT / "tests" / "corpus" / "tune"
SHIPPED_FILE = ROOT / "producer" / "classify" / FITTED
TYPES = tuple(ToolType)


@dataclass(frozen=True, slots=True)
class Setting:
    """What a fit is asked for: the inverse regularization strength."""

    c: float = 0.1


SHIPPED_SETTING = Setting()
SETTINGS = (Setting(0.01), Setting(0.03), Setting(0.1), Setting(0.3), Setting(1.0))


@dataclass(frozen=True, slots=True)
class Row:
    """One case as the fit reads it: its family, features and type."""

    family: str
    values: tuple[float, ...]
    tool_type: ToolType


def shaped_cases(tune: Sequence[Case]) -> list[Case]:
    """The tune cases the classifier may be shaped on: all but the held-back families'."""
    back = held_back({c.family for c in tune})
    return [c for c in tune if c.family not in back]


def case_row(case: Case) -> Row:
    """The feature row of one case."""
    return Row(case.family, tuple(features(case.command, case.output)), case.expected_type)


def fit(rows: Sequence[Row], setting: Setting) -> Classifier:
    """A classifier fitted on ``rows``, every family weighing the same in total."""
    x = np.array([r.values for r in rows], dtype=float)
    y = np.array([TYPES.index(r.tool_type) for r in rows])
    sizes = Counter(r.family for r in rows)
    weight = np.array([1.0 / sizes[r.family] for r in rows])
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    model = LogisticRegression(C=setting.c, max_iter=10_000)
    with threadpool_limits(1):
        model.fit((x - mean) / scale, y, sample_weight=weight * len(sizes) / weight.sum())
    weights: dict[ToolType, tuple[float, ...]] = {}
    bias: dict[ToolType, float] = {}
    for kind in TYPES:
        if TYPES.index(kind) in model.classes_:
            k = list(model.classes_).index(TYPES.index(kind))
            coef = model.coef_[k] / scale
            weights[kind] = tuple(float(w) for w in coef)
            bias[kind] = float(model.intercept_[k] - coef @ mean)
        else:  # a type tune never shows: never chosen
            weights[kind], bias[kind] = (0.0,) * len(FEATURES), -1e3
    meta = {
        "model": "multinomial-logistic",
        "c": setting.c,
        "cases": len(rows),
        "families": len(sizes),
    }
    return Classifier(weights, bias, meta)


def cross_validate(cases: Sequence[Case], rows: Sequence[Row], setting: Setting) -> tuple[int, int]:
    """Leave-one-family-out: how many cases ``classify`` types right, and how many of those
    the rules leave to the classifier it types right (of how many)."""
    right = content_right = content_total = 0
    for family in sorted({r.family for r in rows}):
        model = fit([r for r in rows if r.family != family], setting)
        for case in (c for c in cases if c.family == family):
            by_name = by_rules(case.tool_name, case.command, case.output)
            got = by_name or by_content(case.command, case.output, model)
            right += got is case.expected_type
            if by_name is None:
                content_total += 1
                content_right += got is case.expected_type
    print(f"  C={setting.c}: content {content_right}/{content_total}", end="")
    return right, len(cases)


def main(argv: list[str] | None = None) -> int:
    """Fit (after cross-validating, with ``--cv``) and write or check ``classifier.json``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cv", action="store_true", help="cross-validate each setting first")
    parser.add_argument("--check", action="store_true", help="compare a refit with the file")
    args = parser.parse_args(argv)
    cases = shaped_cases(load_cases(TUNE))
    rows = [case_row(c) for c in cases]
    if args.cv:
        for setting in SETTINGS:
            right, total = cross_validate(cases, rows, setting)
            print(f", all {right}/{total} ({100 * right / total:.1f}%)")
    model = fit(rows, SHIPPED_SETTING)
    if args.check:
        shipped = Classifier.from_json(json.loads(SHIPPED_FILE.read_text(encoding="utf-8")))
        same = model.to_json() == shipped.to_json()
        print("the shipped classifier is the refit" if same else "the shipped file differs")
        return 0 if same else 1
    SHIPPED_FILE.write_text(json.dumps(model.to_json(), indent=1) + "\n", encoding="utf-8")
    print(f"wrote {SHIPPED_FILE.relative_to(ROOT)} ({len(rows)} cases)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
