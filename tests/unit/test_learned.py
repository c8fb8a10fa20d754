"""The fitted classifier: its shipped weights, the sample it reads, and its refit from tune."""

from __future__ import annotations

import json

import pytest

from tersify.classify import by_content, classify
from tersify.classify.features import FEATURES, features
from tersify.classify.learned import FITTED, Classifier, shipped
from tersify.contract import ToolType
from tersify.errors import RegistryError
from tests.corpus import CORPUS_DIR
from tools import fit_classifier


def test_the_shipped_classifier_weighs_every_feature_for_every_tool_type() -> None:
    model = shipped()
    assert set(model.weights) == set(ToolType)
    assert all(len(row) == len(FEATURES) for row in model.weights.values())
    assert model.meta["model"] == "multinomial-logistic"
    assert model.meta["families"] >= 80


def test_a_fitted_file_whose_features_are_not_the_codes_is_refused() -> None:
    data = shipped().to_json()
    data["features"] = [*data["features"][1:], "a_feature_the_code_lacks"]
    with pytest.raises(RegistryError, match="a_feature_the_code_lacks"):
        Classifier.from_json(data)


def test_a_fitted_file_missing_a_tool_type_is_refused() -> None:
    data = shipped().to_json()
    del data["weights"][ToolType.WEB_CONTENT.value]
    with pytest.raises(RegistryError, match="every tool type"):
        Classifier.from_json(data)


def test_a_classifier_read_back_from_its_json_scores_alike() -> None:
    model = shipped()
    again = Classifier.from_json(json.loads(json.dumps(model.to_json())))
    row = features("frob --all", "step 1 done\nstep 2 done\nall steps done\n")
    for kind, score in model.scores(row).items():
        assert again.scores(row)[kind] == pytest.approx(score, abs=1e-3)


def test_only_the_head_and_tail_of_a_huge_output_are_read() -> None:
    head = "".join(f"worker {i} copied block {i} to the store\n" for i in range(2_000))
    tail = "".join(f"worker {i} verified block {i}\n" for i in range(1_000))
    one = head + "x = 1\n" * 100_000 + tail
    other = head + '{"id": 7, "name": "item"}\n' * 100_000 + tail
    assert features("frob --all", one) == features("frob --all", other)


def test_an_unknown_programs_report_is_read_by_the_fit_not_by_a_default() -> None:
    report = "".join(
        f"[{i:04d}] sampled pid {i} cpu {i % 7}.{i % 10}% rss {i * 13} KiB\n" for i in range(300)
    )
    got = by_content("frob --all", report)
    assert got is shipped().predict(features("frob --all", report))
    assert got is classify("bash", "frob --all", report)


def test_a_decisive_content_test_stands_whatever_the_fit_would_say() -> None:
    hits = "".join(f"src/pkg/mod_{i}.py:{i + 3}:    retry(limit={i})\n" for i in range(50))
    assert by_content("frob --all", hits) is ToolType.SEARCH_RESULTS
    rows = "id,name,price\n" + "".join(f"{i},item {i},{i * 1.5}\n" for i in range(50))
    assert by_content("frob --all", rows) is ToolType.STRUCTURED_DATA


@pytest.mark.slow
def test_refitting_on_the_shaped_tune_families_gives_the_shipped_weights() -> None:
    cases = fit_classifier.shaped_cases(fit_classifier.load_cases(CORPUS_DIR / "tune"))
    refit = fit_classifier.fit(
        [fit_classifier.case_row(c) for c in cases], fit_classifier.SHIPPED_SETTING
    )
    on_disk = Classifier.from_json(
        json.loads(fit_classifier.SHIPPED_FILE.read_text(encoding="utf-8"))
    )
    assert fit_classifier.SHIPPED_FILE.name == FITTED
    assert refit.meta == on_disk.meta
    for kind in ToolType:
        assert refit.bias[kind] == pytest.approx(on_disk.bias[kind], abs=1e-4)
        assert refit.weights[kind] == pytest.approx(on_disk.weights[kind], abs=1e-4)
