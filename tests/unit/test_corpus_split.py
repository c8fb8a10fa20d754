"""The shipped corpus: split by family, every family whole on one side, most facts mid-output."""

from __future__ import annotations

import json
import runpy
from collections import defaultdict

from tersify.worker.quality.corpus import load_cases
from tersify.worker.quality.positions import at_edge
from tests.corpus import CORPUS_DIR


def _families_by_split() -> dict[str, set[str]]:
    found: dict[str, set[str]] = defaultdict(set)
    for split in ("tune", "check"):
        for meta in (CORPUS_DIR / split).glob("*.json"):
            found[json.loads(meta.read_text(encoding="utf-8"))["family"]].add(split)
    return found


def test_no_family_has_cases_in_both_halves() -> None:
    shared = {family for family, splits in _families_by_split().items() if len(splits) > 1}
    assert shared == set()


def test_every_case_names_its_family() -> None:
    for split in ("tune", "check"):
        for meta in (CORPUS_DIR / split).glob("*.json"):
            assert json.loads(meta.read_text(encoding="utf-8")).get("family"), meta.name


def test_the_files_lie_where_the_split_procedure_puts_them() -> None:
    procedure = runpy.run_path(str(CORPUS_DIR / "split.py"))
    placed = procedure["split"](procedure["families"](CORPUS_DIR))
    for family, splits in _families_by_split().items():
        assert splits == {placed[family]}, family


def test_at_least_four_facts_in_five_sit_beyond_the_edges() -> None:
    cases = [*load_cases(CORPUS_DIR / "tune"), *load_cases(CORPUS_DIR / "check")]
    facts = [(case.output, item) for case in cases for item in case.must_keep]
    middle = sum(1 for output, item in facts if not at_edge(output, item))
    assert middle >= 0.8 * len(facts)
