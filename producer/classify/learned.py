"""The fitted classifier: which tool type an output is when neither its tool's name nor its
command's program tells.

A multinomial logistic model over ``features.FEATURES``, one weight row and bias per tool type;
the type of highest score wins. The weights were fitted on the corpus's ``tune/`` families
(bar a held-back tenth) by ``tools/fit_classifier.py`` and ship as ``classifier.json`` beside
this module; inference is a dot product per type in plain Python.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from tersify.classify.features import FEATURES
from tersify.contract import ToolType
from tersify.errors import RegistryError

FITTED = "classifier.json"
"""The fitted weights' file, package data of ``tersify.classify``."""


@dataclass(frozen=True, slots=True)
class Classifier:
    """A fitted linear model: per tool type, one weight per feature and a bias."""

    weights: dict[ToolType, tuple[float, ...]]
    bias: dict[ToolType, float]
    meta: dict[str, Any]

    def scores(self, row: Sequence[float]) -> dict[ToolType, float]:
        """Each tool type's score (log-odds up to a shared constant) for one feature row."""
        return {
            kind: self.bias[kind] + sum(w * x for w, x in zip(ws, row, strict=True))
            for kind, ws in self.weights.items()
        }

    def predict(self, row: Sequence[float]) -> ToolType:
        """The tool type of highest score for one feature row."""
        scores = self.scores(row)
        return max(scores, key=scores.__getitem__)

    @staticmethod
    def from_json(data: dict[str, Any]) -> Classifier:
        """A classifier from its JSON form; its features must be ``FEATURES``, in order, and
        every tool type must have its weights."""
        names = tuple(data.get("features") or ())
        if names != FEATURES:
            differ = sorted(set(names) ^ set(FEATURES)) or ["(their order)"]
            raise RegistryError(f"the fitted classifier's features are not the code's: {differ}")
        types = {ToolType(name) for name in data["weights"]}
        if types != set(ToolType):
            raise RegistryError("the fitted classifier does not weigh every tool type")
        weights = {ToolType(k): tuple(float(w) for w in ws) for k, ws in data["weights"].items()}
        if any(len(ws) != len(FEATURES) for ws in weights.values()):
            raise RegistryError("the fitted classifier's weight rows are not one per feature")
        bias = {ToolType(k): float(b) for k, b in data["bias"].items()}
        meta = {k: v for k, v in data.items() if k not in ("features", "weights", "bias")}
        return Classifier(weights, bias, meta)

    def to_json(self) -> dict[str, Any]:
        """The JSON form ``from_json`` reads (weights rounded: the file is the model)."""
        return {
            **self.meta,
            "features": list(FEATURES),
            "weights": {k.value: [round(w, 6) for w in ws] for k, ws in self.weights.items()},
            "bias": {k.value: round(b, 6) for k, b in self.bias.items()},
        }


@cache
def shipped() -> Classifier:
    """The classifier shipped with the package (read once, on first use)."""
    text = resources.files("tersify.classify").joinpath(FITTED).read_text(encoding="utf-8")
    return Classifier.from_json(json.loads(text))
