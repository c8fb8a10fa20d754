"""The family split of this corpus: every program family whole in tune/ or in check/.

Families are grouped by the type most of their cases have (their ``expected_type``); type by
type in sorted order, a group's families are sorted by name, shuffled with one
``random.Random(SEED)``, and dealt one at a time to the split holding fewer cases of that type
so far (tune on a tie), so both splits see every type. ``python tests/corpus/split.py`` prints
the split it computes from the cases' ``family`` fields; ``--apply`` moves the files to match.
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


def split(of_case: dict[str, tuple[str, str]]) -> dict[str, str]:
    """The split of every family (family → "tune" or "check")."""
    types: dict[str, Counter[str]] = {}
    for family, kind in of_case.values():
        types.setdefault(family, Counter())[kind] += 1
    sizes = {family: sum(kinds.values()) for family, kinds in types.items()}
    # The type most of a family's cases have; the first in name order on a tie.
    major = {f: max(sorted(kinds), key=lambda k: kinds[k]) for f, kinds in types.items()}
    rng = random.Random(SEED)
    placed: dict[str, str] = {}
    for kind in sorted(set(major.values())):
        order = sorted(f for f in major if major[f] == kind)
        rng.shuffle(order)
        held = dict.fromkeys(SPLITS, 0)
        for family in order:
            side = "tune" if held["tune"] <= held["check"] else "check"
            placed[family] = side
            held[side] += sizes[family]
    return placed


def main() -> None:
    """Print the computed split; with ``--apply``, move each case's two files into it."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--apply", action="store_true", help="move the files to match")
    args = parser.parse_args()
    of_case = families()
    placed = split(of_case)
    for side in SPLITS:
        chosen = sorted(f for f, s in placed.items() if s == side)
        cases = sum(1 for f, _ in of_case.values() if placed[f] == side)
        print(f"{side}: {cases} cases, {len(chosen)} families: {', '.join(chosen)}")
    if not args.apply:
        return
    for meta in sorted(HERE.rglob("*.json")):
        target = HERE / placed[of_case[meta.stem][0]]
        target.mkdir(exist_ok=True)
        for path in (meta, meta.with_suffix(".txt")):
            if path.parent != target:
                path.rename(target / path.name)


if __name__ == "__main__":
    main()
