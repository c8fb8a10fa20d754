"""The test-side view of the corpus loader: ``worker.quality.corpus`` plus the sample's location."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from tersify.worker.quality.corpus import Case, load_case
from tersify.worker.quality.corpus import load_cases as _load_cases
from tersify.worker.quality.evaluation import kept

__all__ = ["CORPUS_DIR", "SAMPLE_DIR", "Case", "kept", "load_case", "load_cases"]

# 18 real tool outputs with the facts a shrink must keep, shipped with the tests.
SAMPLE_DIR = Path(__file__).resolve().parent / "corpus-sample"
# 169 more, split into tune/ (looked at while changing the shrinks) and check/ (only scored).
CORPUS_DIR = Path(__file__).resolve().parent / "corpus"


def load_cases(directory: Path = SAMPLE_DIR, names: Sequence[str] = ()) -> list[Case]:
    """Every case of ``directory`` (the shared sample by default), or only ``names``."""
    return _load_cases(directory, names)
