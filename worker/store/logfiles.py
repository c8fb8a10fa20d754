"""Log files named on a command line, read by ``tersify reprocess`` and ``tersify savings``: a
directory stands for the log files in it, and a line or a file that cannot be used is a counted
``Skip``, never an error."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

LISTED_SKIPS = 10  # enough to find the damage; the count says how much there is


@dataclass(frozen=True, slots=True)
class Skip:
    """Something that was not used: where it is (line 0: the whole file) and why."""

    path: Path
    line: int
    reason: str


def log_files(paths: Iterable[Path], suffixes: tuple[str, ...], *, recursive: bool) -> list[Path]:
    """Each file as given, and each directory's files ending in one of ``suffixes`` (sorted;
    all below it when ``recursive``, else its own)."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            inside = path.rglob("*") if recursive else path.iterdir()
            found += sorted(p for p in inside if p.name.endswith(suffixes))
        else:
            found.append(path)
    return found


def skipped_lines(skips: Sequence[Skip]) -> list[str]:
    """A report's lines for ``skips``: the first ``LISTED_SKIPS`` each on a line, then how many
    more there are."""
    lines = [f"  skipped {s.path}:{s.line}: {s.reason}" for s in skips[:LISTED_SKIPS]]
    if len(skips) > LISTED_SKIPS:
        lines.append(f"  ... and {len(skips) - LISTED_SKIPS} more")
    return lines
