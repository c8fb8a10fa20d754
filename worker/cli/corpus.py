"""The corpus an evaluation command scores: one directory of cases, or one split into ``tune/``
(tuned on) and ``check/`` (only ever scored), each half scored on its own."""

from __future__ import annotations

from pathlib import Path

SPLITS = ("tune", "check")
"""The halves of a split corpus: tuned on, and only ever scored."""


def corpus_parts(directory: Path, split: str | None) -> list[tuple[str | None, Path]]:
    """The parts to score and their folders: the half ``split`` names, both halves of a split
    corpus (``both`` or None), or the whole directory (part None). ValueError says why there
    is nothing to score: no such directory, or a half asked of a corpus that is not split."""
    if not directory.is_dir():
        raise ValueError(f"{directory} is not a directory")
    halves = all((directory / name).is_dir() for name in SPLITS)
    if split is not None and not halves:
        raise ValueError(f"{directory} has no tune/ and check/ to score")
    parts = [split] if split in SPLITS else list(SPLITS) if halves else [None]
    return [(part, directory / part if part else directory) for part in parts]
