"""A corpus of real tool outputs on disk (``NAME.txt`` + ``NAME.json``), loaded as typed cases."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tersify.contract import ToolType


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
    family: str = ""
    """The program family it comes from (a split keeps a family whole); its name when unsaid."""


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
        family=str(meta.get("family") or meta_path.stem),
    )


def load_cases(directory: Path, names: Sequence[str] = ()) -> list[Case]:
    """Every case of ``directory`` that has its ``.txt`` beside it (or only ``names``), by name."""
    wanted = set(names)
    paths = sorted(
        path
        for path in directory.glob("*.json")
        if path.with_suffix(".txt").is_file() and (not wanted or path.stem in wanted)
    )
    return [load_case(path) for path in paths]


HELD_BACK_SHARE = 0.1
"""The share of ``tune/`` families held back from shaping: only ever scored, as ``check/`` is."""


def held_back(families: set[str]) -> set[str]:
    """The tenth of ``families`` held back: the first by the SHA-256 of their names."""
    ordered = sorted(families, key=lambda name: hashlib.sha256(name.encode()).hexdigest())
    return set(ordered[: round(len(ordered) * HELD_BACK_SHARE)])
