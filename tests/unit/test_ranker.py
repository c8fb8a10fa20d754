"""The learned line ranking: its shipped weights, how it reads a text, and its refit from tune."""

from __future__ import annotations

import json

import pytest

from tersify.contract import ToolType
from tersify.errors import RegistryError
from tersify.worker.shrink import extract
from tersify.worker.shrink.document import Doc
from tersify.worker.shrink.features import FEATURES
from tersify.worker.shrink.ranker import FITTED, Ranker, shipped
from tersify.worker.shrink.reading import Reading
from tests.corpus import CORPUS_DIR
from tools import fit_ranker


def _report(needle_at: int, count: int = 400) -> str:
    lines = [f"step {i}: copied block {i} of the archive to the store" for i in range(count)]
    lines[needle_at] = f"step {needle_at}: checksum mismatch in block {needle_at} (quarantined)"
    return "\n".join(lines) + "\nall steps done\n"


def test_the_shipped_ranker_weighs_every_feature_the_code_computes() -> None:
    ranker = shipped()
    assert len(ranker.weights) == len(FEATURES)
    assert ranker.meta["model"] == "logistic"
    assert ranker.meta["families"] >= 50


def test_a_fitted_file_whose_features_are_not_the_codes_is_refused() -> None:
    data = shipped().to_json()
    data["features"] = [*data["features"][1:], "a_feature_the_code_lacks"]
    with pytest.raises(RegistryError, match="a_feature_the_code_lacks"):
        Ranker.from_json(data)


def test_a_ranker_read_back_from_its_json_scores_alike() -> None:
    ranker = shipped()
    again = Ranker.from_json(json.loads(json.dumps(ranker.to_json())))
    row = [0.5] * len(FEATURES)
    assert again.score(row) == pytest.approx(ranker.score(row), abs=1e-4)


def test_every_candidate_gets_a_finite_learned_worth() -> None:
    reading = Reading.of(Doc(_report(250)), ToolType.COMMAND_OUTPUT, "which block had a mismatch")
    pool = reading.pool()
    assert pool and all(abs(c.weight) < 1e6 for c in pool)


def test_the_line_holding_the_rare_query_terms_outranks_its_look_alikes() -> None:
    reading = Reading.of(Doc(_report(250)), ToolType.COMMAND_OUTPUT, "which block had a mismatch")
    best = max(reading.pool(), key=lambda c: c.weight)
    assert best.anchor == 250


def test_the_extractive_summary_keeps_a_needle_in_the_middle_with_the_ranker_and_without() -> None:
    text = _report(250)
    for ranker in ("shipped", None):
        out = extract(text, ToolType.COMMAND_OUTPUT, 800, "checksum mismatch", ranker=ranker)
        assert "checksum mismatch in block 250" in out
        assert len(out) <= 800


@pytest.mark.slow
def test_refitting_on_the_tune_families_gives_the_shipped_weights() -> None:
    tune = fit_ranker.load_cases(CORPUS_DIR / "tune")
    types = fit_ranker.shipped_types()
    rows = [fit_ranker.case_rows(c, types[c.name]) for c in tune]
    refit = fit_ranker.fit(rows, fit_ranker.SHIPPED_SETTING)
    on_disk = Ranker.from_json(json.loads(fit_ranker.SHIPPED_FILE.read_text(encoding="utf-8")))
    assert fit_ranker.SHIPPED_FILE.name == FITTED
    assert refit.meta == on_disk.meta
    assert refit.bias == pytest.approx(on_disk.bias, abs=1e-4)
    assert refit.weights == pytest.approx(on_disk.weights, abs=1e-4)
