"""The shipped corpus: split by family, every family whole on one side, most facts mid-output."""

from __future__ import annotations

import json
import runpy
from collections import defaultdict
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

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


def _procedure() -> dict[str, Any]:
    return runpy.run_path(str(CORPUS_DIR / "split.py"))


def test_no_case_waits_unplaced_at_the_top_of_the_corpus() -> None:
    assert sorted(meta.name for meta in CORPUS_DIR.glob("*.json")) == []


def test_the_split_procedure_leaves_every_placed_family_where_it_lies() -> None:
    procedure = _procedure()
    kept = procedure["placement"](CORPUS_DIR)
    placed = procedure["split"](procedure["families"](CORPUS_DIR), kept)
    assert placed == kept


_KINDS = st.sampled_from(["CommandOutput", "FileContent", "SearchResults"])
_CASES = st.dictionaries(
    st.text("abcdefgh", min_size=1, max_size=4),
    st.tuples(st.sampled_from([f"family-{n}" for n in range(12)]), _KINDS),
    max_size=40,
)


@given(of_case=_CASES, sides=st.lists(st.sampled_from(["tune", "check", None]), min_size=12))
@settings(max_examples=200)
def test_dealing_keeps_every_placed_family_on_its_side_and_places_every_other(
    of_case: dict[str, tuple[str, str]], sides: list[str | None]
) -> None:
    kept = {f"family-{n}": side for n, side in enumerate(sides) if side is not None}
    kept = {family: side for family, side in kept.items() if family in dict(of_case.values())}
    placed = _procedure()["split"](of_case, kept)
    assert set(placed) == {family for family, _ in of_case.values()}
    assert {family: placed[family] for family in kept} == kept
    assert set(placed.values()) <= {"tune", "check"}


def _write_case(root: Path, name: str, family: str, kind: str = "CommandOutput") -> None:
    root.mkdir(parents=True, exist_ok=True)
    meta = {"family": family, "expected_type": kind, "must_keep": [], "query": ""}
    (root / f"{name}.json").write_text(json.dumps(meta), encoding="utf-8")
    (root / f"{name}.txt").write_text(f"output of {name}\n", encoding="utf-8")


def test_moving_deals_only_unplaced_cases_toward_the_side_short_of_their_type(
    tmp_path: Path,
) -> None:
    for n in range(3):
        _write_case(tmp_path / "tune", f"old{n}", "old-a")
    _write_case(tmp_path / "check", "old3", "old-b", "FileContent")
    _write_case(tmp_path, "new0", "new-a")
    _write_case(tmp_path, "more0", "old-b", "CommandOutput")
    placed = _procedure()["move"](tmp_path)
    assert placed == {"old-a": "tune", "old-b": "check", "new-a": "check"}
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_file()) == []
    assert sorted(p.name for p in (tmp_path / "tune").iterdir()) == [
        f"old{n}.{ext}" for n in range(3) for ext in ("json", "txt")
    ]
    assert sorted(p.name for p in (tmp_path / "check").iterdir()) == [
        "more0.json",
        "more0.txt",
        "new0.json",
        "new0.txt",
        "old3.json",
        "old3.txt",
    ]


def test_at_least_four_facts_in_five_sit_beyond_the_edges() -> None:
    cases = [*load_cases(CORPUS_DIR / "tune"), *load_cases(CORPUS_DIR / "check")]
    facts = [(case.output, item) for case in cases for item in case.must_keep]
    middle = sum(1 for output, item in facts if not at_edge(output, item))
    assert middle >= 0.8 * len(facts)
