"""A corpus of real agent conversations (``NAME.json`` + ``NAME.messages.json``), loaded as cases.

``NAME.json`` holds the source and the facts a faithful compaction must keep;
``NAME.messages.json`` the message list a ``CompactionJob`` takes; ``NAME.reference.md``, when
present, the agent's own compaction summary of exactly those messages.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from tersify.chat.messages import Conversation, parse


class FactKind(StrEnum):
    """What a fact is about."""

    TASK = "task"
    FILE = "file"
    ERROR = "error"
    TEST = "test"
    DECISION = "decision"
    REMAINS = "remains"


@dataclass(frozen=True, slots=True)
class Fact:
    """One thing a compaction must keep: present when any of its spellings occurs."""

    kind: FactKind
    any: tuple[str, ...]

    def found_in(self, normalized: str) -> bool:
        """True when one spelling occurs in ``normalized`` (a text passed through ``normalize``)."""
        return any(normalize(text) in normalized for text in self.any)


@dataclass(frozen=True, slots=True)
class CompactionCase:
    """One real conversation, where it came from, and its facts."""

    name: str
    agent: str
    model: str
    messages: list[dict[str, Any]]
    facts: tuple[Fact, ...]
    reference: str | None
    source: dict[str, str]

    @property
    def conversation(self) -> Conversation:
        """The messages as the one conversation model reads them."""
        return parse(self.messages)


_SPACE = re.compile(r"\s+")


def normalize(text: str) -> str:
    """``text`` lower-cased with every run of white space as one space (how facts are matched)."""
    return _SPACE.sub(" ", text).strip().lower()


def _facts(meta: dict[str, Any], where: Path) -> tuple[Fact, ...]:
    facts = meta.get("facts")
    if not isinstance(facts, list) or not facts:
        raise ValueError(f"{where}: facts must be a non-empty list")
    out: list[Fact] = []
    for item in facts:
        spellings = item.get("any") if isinstance(item, dict) else None
        if not isinstance(spellings, list) or not all(isinstance(s, str) and s for s in spellings):
            raise ValueError(f"{where}: each fact needs 'any', a list of non-empty strings")
        out.append(Fact(FactKind(item.get("kind")), tuple(spellings)))
    return tuple(out)


def load_conversation(meta_path: Path) -> CompactionCase:
    """The case described by ``meta_path`` with its built messages (and reference, if any)."""
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    if not isinstance(meta, dict):
        raise ValueError(f"{meta_path}: expected a JSON object")
    messages = json.loads(meta_path.with_suffix(".messages.json").read_text(encoding="utf-8"))
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        raise ValueError(f"{meta_path.stem}.messages.json: expected a list of message objects")
    parse(messages)  # a malformed message list is refused here (InvalidJobError, a ValueError)
    reference_path = meta_path.with_suffix(".reference.md")
    reference = reference_path.read_text(encoding="utf-8") if reference_path.is_file() else None
    return CompactionCase(
        name=meta_path.stem,
        agent=str(meta.get("agent") or "?"),
        model=str(meta.get("model") or "?"),
        messages=messages,
        facts=_facts(meta, meta_path),
        reference=reference,
        source={str(k): str(v) for k, v in (meta.get("source") or {}).items()},
    )


def conversation_paths(directory: Path) -> tuple[list[Path], list[Path]]:
    """The case files of ``directory``: those with their messages built, and those without."""
    metas = sorted(p for p in directory.glob("*.json") if p.name.count(".") == 1)
    built = [p for p in metas if p.with_suffix(".messages.json").is_file()]
    return built, [p for p in metas if p not in built]


def load_conversations(directory: Path, names: Sequence[str] = ()) -> list[CompactionCase]:
    """Every built case of ``directory`` (or only ``names``), by name."""
    built, _ = conversation_paths(directory)
    wanted = set(names)
    return [load_conversation(p) for p in built if not wanted or p.stem in wanted]
