"""The family split of this corpus: every program family whole in tune/ or in check/.

A family that already has cases in tune/ or check/ keeps its side for good, so adding cases
never moves a family that was scored or tuned on. Only families whose cases all sit at the top
of the corpus (unplaced) are dealt: they are grouped by the type most of their cases have
(their ``expected_type``); type by type in sorted order, a group's families are sorted by name,
shuffled with one ``random.Random(SEED)``, and dealt one at a time to the split holding fewer
cases of that type so far (counting the families already placed whose major type it is; tune
on a tie), so both splits see every type. A top-level case of a family that is already placed
goes to that family's side. ``python tests/corpus/split.py`` prints the split; ``--apply``
moves the top-level files into it and nothing else.
"""

from __future__ import annotations

import argparse
import json
import random
from collections import Counter
from pathlib import Path

SEED = 20261126
HERE = Path(__file__).resolve().parent
SPLITS = ("tune", "check")


def families(root: Path = HERE) -> dict[str, tuple[str, str]]:
    """Each case's family and type (name → (family, type)), from every split and the top."""
    found: dict[str, tuple[str, str]] = {}
    for meta in sorted(root.rglob("*.json")):
        case = json.loads(meta.read_text(encoding="utf-8"))
        found[meta.stem] = (case["family"], case["expected_type"])
    return found


def placement(root: Path = HERE) -> dict[str, str]:
    """The side each already placed family holds (family → "tune" or "check")."""
    sides: dict[str, set[str]] = {}
    for side in SPLITS:
        for meta in sorted((root / side).glob("*.json")):
            family = json.loads(meta.read_text(encoding="utf-8"))["family"]
            sides.setdefault(family, set()).add(side)
    torn = sorted(family for family, held in sides.items() if len(held) > 1)
    if torn:
        raise SystemExit(f"families with cases in both splits: {', '.join(torn)}")
    return {family: held.pop() for family, held in sides.items()}


def split(
    of_case: dict[str, tuple[str, str]], kept: dict[str, str] | None = None
) -> dict[str, str]:
    """The split of every family (family → "tune" or "check"); ``kept`` families stay put."""
    kept = kept or {}
    types: dict[str, Counter[str]] = {}
    for family, kind in of_case.values():
        types.setdefault(family, Counter())[kind] += 1
    sizes = {family: sum(kinds.values()) for family, kinds in types.items()}
    # The type most of a family's cases have; the first in name order on a tie.
    major = {f: max(sorted(kinds), key=lambda k: kinds[k]) for f, kinds in types.items()}
    rng = random.Random(SEED)
    placed = {family: side for family, side in kept.items() if family in types}
    for kind in sorted(set(major.values())):
        held = dict.fromkeys(SPLITS, 0)
        for family, side in placed.items():
            if major[family] == kind:
                held[side] += sizes[family]
        order = sorted(f for f in major if major[f] == kind and f not in placed)
        rng.shuffle(order)
        for family in order:
            side = "tune" if held["tune"] <= held["check"] else "check"
            placed[family] = side
            held[side] += sizes[family]
    return placed


def move(root: Path = HERE) -> dict[str, str]:
    """Move every top-level case's two files to its family's side; the split it dealt."""
    of_case = families(root)
    placed = split(of_case, placement(root))
    for meta in sorted(root.glob("*.json")):
        target = root / placed[of_case[meta.stem][0]]
        target.mkdir(exist_ok=True)
        for path in (meta, meta.with_suffix(".txt")):
            path.rename(target / path.name)
    return placed


def main() -> None:
    """Print the split; with ``--apply``, move each top-level case's two files into it."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--apply", action="store_true", help="move the top-level files")
    args = parser.parse_args()
    of_case = families()
    kept = placement()
    placed = split(of_case, kept)
    for side in SPLITS:
        chosen = sorted(f for f, s in placed.items() if s == side)
        new = sorted(f for f in chosen if f not in kept)
        cases = sum(1 for f, _ in of_case.values() if placed[f] == side)
        print(f"{side}: {cases} cases, {len(chosen)} families: {', '.join(chosen)}")
        print(f"  newly dealt to {side}: {', '.join(new) or 'none'}")
    if args.apply:
        move()


if __name__ == "__main__":
    main()
