"""The learned line ranking: what a candidate is worth, fitted on real outputs, not hand-set.

A logistic model over ``features.FEATURES``: a candidate's worth is its log-odds of bringing a
line that holds a fact the agent needs. The weights were fitted on the corpus's ``tune/``
families only (``tools/fit_ranker.py``; chosen by leave-one-family-out cross-validation on
what the extractive shrink then keeps under its budget) and ship as ``ranker.json`` beside this
module; inference is a dot product in plain Python. The rules' worths (``worth``) remain the
engine's when no ranker is given (``tersify eval --method rules``); the rules that find
candidates (salience, focus, extremes, severity, the closing line) feed the ranking as
features.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Final, Literal, TypeAlias

from tersify.errors import RegistryError
from tersify.worker.shrink.features import FEATURES

FITTED = "ranker.json"
"""The fitted weights' file, package data of ``tersify.worker.shrink``."""


@dataclass(frozen=True, slots=True)
class Ranker:
    """A fitted linear model: one weight per feature and a bias, read as log-odds."""

    weights: tuple[float, ...]
    bias: float
    meta: dict[str, Any]

    def score(self, row: Sequence[float]) -> float:
        """The log-odds that a candidate with these features brings a needed line."""
        return self.bias + sum(w * x for w, x in zip(self.weights, row, strict=True))

    @staticmethod
    def from_json(data: dict[str, Any]) -> Ranker:
        """A ranker from its JSON form; its features must be ``FEATURES``, in order."""
        names = tuple(data.get("features") or ())
        if names != FEATURES:
            differ = sorted(set(names) ^ set(FEATURES))
            raise RegistryError(f"the fitted ranker's features are not the code's: {differ}")
        weights = tuple(float(w) for w in data["weights"])
        meta = {k: v for k, v in data.items() if k not in ("features", "weights", "bias")}
        return Ranker(weights, float(data["bias"]), meta)

    def to_json(self) -> dict[str, Any]:
        """The JSON form ``from_json`` reads (weights rounded: the file is the model)."""
        return {
            **self.meta,
            "features": list(FEATURES),
            "weights": [round(w, 6) for w in self.weights],
            "bias": round(self.bias, 6),
        }


@cache
def shipped() -> Ranker:
    """The ranker fitted on the corpus and shipped with the package (read once, on first use:
    a fit never needs the file it replaces)."""
    text = resources.files("tersify.worker.shrink").joinpath(FITTED).read_text(encoding="utf-8")
    return Ranker.from_json(json.loads(text))


SHIPPED: Final = "shipped"
"""Names the shipped ranker where a ranker is asked for (``chosen``)."""
Choice: TypeAlias = Ranker | Literal["shipped"] | None
"""A ranker, the shipped one, or None: the rules' hand-set worths."""


def chosen(choice: Choice) -> Ranker | None:
    """The ranker ``choice`` names."""
    return shipped() if choice == SHIPPED else choice
