"""Classification on families never looked at: a held-back tenth of the ``tune/`` families.

The corpus's ``tune/`` families are the ones classification may be shaped on; a tenth of them,
chosen by the SHA-256 of their names (the first tenth in that order), is held back and only
ever scored, as ``check/`` is. This prints how many cases the classifier types as their
``expected_type`` in each part, and, with ``--misses``, the cases it gets wrong outside the
held-back families (the ones to learn from).

    .venv/bin/python tools/classify_check.py [--misses]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tersify.classify import classify
from tersify.worker.quality.corpus import Case, held_back, load_cases

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "corpus"


def right(cases: list[Case]) -> int:
    """How many of ``cases`` are classified as their expected type."""
    return sum(classify(c.tool_name, c.command, c.output) is c.expected_type for c in cases)


def main(argv: list[str] | None = None) -> int:
    """Print the classification of each part: tune shaped on, tune held back, check."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--misses", action="store_true", help="list misses of the shaped part")
    args = parser.parse_args(argv)
    tune = load_cases(CORPUS / "tune")
    back = held_back({c.family for c in tune})
    parts = {
        "tune, shaped on": [c for c in tune if c.family not in back],
        "tune, held back": [c for c in tune if c.family in back],
        "check": load_cases(CORPUS / "check"),
    }
    for name, cases in parts.items():
        got = right(cases)
        print(f"{name}: {got}/{len(cases)} ({100 * got / len(cases):.1f}%)")
    print(f"held back families: {', '.join(sorted(back))}")
    if args.misses:
        for case in parts["tune, shaped on"]:
            got = classify(case.tool_name, case.command, case.output)
            if got is not case.expected_type:
                print(f"  {case.name}: {case.expected_type.value} read as {got.value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
