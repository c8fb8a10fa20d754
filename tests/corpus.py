"""Load a directory of real tool outputs (``NAME.txt`` + ``NAME.json``) as typed cases."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from producer.contract import ToolType
from worker.evaluation import kept

__all__ = ["SAMPLE_DIR", "Case", "kept", "load_case", "load_cases"]

# The shared corpus sample sits beside the repository (``../shared/corpus-sample``).
SAMPLE_DIR = Path(__file__).resolve().parents[2] / "shared" / "corpus-sample"


@dataclass(frozen=True, slots=True)
class Case:
    """One real tool output and what a good shrink of it must keep."""

    name: str
    output: str
    tool_name: str
    command: str | None
    expected_type: ToolType
    must_keep: tuple[str, ...]
    should_keep: tuple[str, ...]
    query: str | None
    notes: str


def _strings(meta: dict[str, Any], key: str) -> tuple[str, ...]:
    value = meta.get(key) or []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"{key} must be a list of strings")
    return tuple(value)


def load_case(meta_path: Path) -> Case:
    """The case described by ``meta_path`` (``NAME.json``) and its output ``NAME.txt``."""
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    if not isinstance(meta, dict):
        raise ValueError(f"{meta_path}: expected a JSON object")
    # Raw bytes decoded as they are: CRLF stays CRLF, undecodable bytes stay recoverable.
    output = meta_path.with_suffix(".txt").read_bytes().decode("utf-8", "surrogateescape")
    return Case(
        name=meta_path.stem,
        output=output,
        tool_name=str(meta["tool_name"]),
        command=meta.get("command") or None,
        expected_type=ToolType(meta["expected_type"]),
        must_keep=_strings(meta, "must_keep"),
        should_keep=_strings(meta, "should_keep"),
        query=meta.get("query") or None,
        notes=str(meta.get("notes") or ""),
    )


def load_cases(directory: Path = SAMPLE_DIR, names: Sequence[str] = ()) -> list[Case]:
    """Every case of ``directory`` (or only ``names``), sorted by name."""
    paths = sorted(directory.glob("*.json"))
    if names:
        paths = [p for p in paths if p.stem in set(names)]
    return [load_case(path) for path in paths]
