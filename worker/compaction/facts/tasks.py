"""Task state: the user's requests, and the agent's own plan or todo items with their last state.

Plans come from todo tools (Claude Code's TodoWrite, Codex's update_plan, OpenHands'
task_tracker, Gemini CLI's write_todos) and from markdown checklists in the agent's messages;
each tool call restates the whole list, so the last one holds the current state.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tersify.chat.messages import Role, Turn
from tersify.worker.compaction.facts.actions import Action, observations

_LISTS = ("todos", "plan", "task_list", "tasks", "items")
_TEXTS = ("content", "step", "title", "description", "task", "text")
_CHECKLIST = re.compile(r"^\s*[-*] \[( |x|X)\] (.+?)\s*$", re.MULTILINE)
_WRAPPERS = re.compile(
    r"^\s*(?:<(?:command-name|command-message|local-command-stdout|local-command-caveat|"
    r"system-reminder|returncode)|Please always provide EXACTLY ONE action|\[Request interrupted)"
)
_DONE = frozenset({"completed", "complete", "done", "x"})


@dataclass(frozen=True, slots=True)
class PlanItem:
    """One item of the agent's plan and its last state (``pending``, ``completed``…)."""

    text: str
    state: str

    @property
    def open(self) -> bool:
        """True while the item is not done."""
        return self.state.lower() not in _DONE


def _items(arguments: Mapping[str, Any]) -> list[PlanItem] | None:
    for key in _LISTS:
        entries = arguments.get(key)
        if not isinstance(entries, list):
            continue
        items = []
        for entry in entries:
            if not isinstance(entry, dict):
                continue
            text = next((entry[k] for k in _TEXTS if isinstance(entry.get(k), str)), None)
            if text:
                items.append(PlanItem(text.strip(), str(entry.get("status") or "pending")))
        return items
    return None


def plan(actions: Sequence[Action], turns: Sequence[Turn]) -> list[PlanItem]:
    """The agent's latest plan: its last todo-tool list, or its last checklist in a message."""
    latest: tuple[int, list[PlanItem]] | None = None
    for action in actions:
        items = _items(action.arguments)
        planner = "todo" in action.tool or action.tool in ("update_plan", "task_tracker")
        if items is not None and planner:
            latest = (action.index, items)
    for index, turn in enumerate(turns):
        if turn.role is not Role.ASSISTANT or (latest and latest[0] > index):
            continue
        boxes = _CHECKLIST.findall(turn.text)
        if boxes:
            latest = (
                index,
                [PlanItem(t, "completed" if m.strip() else "pending") for m, t in boxes],
            )
    return latest[1] if latest else []


def is_request(turn: Turn) -> bool:
    """True for a user message that asks something (not a tool result, wrapper or summary)."""
    return (
        turn.role is Role.USER
        and not turn.results
        and bool(turn.text.strip())
        and not _WRAPPERS.match(turn.text)
    )


def requests(turns: Sequence[Turn]) -> list[tuple[int, str]]:
    """The user's requests in ``turns``, with their index, in order (text-action outputs not)."""
    outputs = observations(turns)
    return [(i, t.text.strip()) for i, t in enumerate(turns) if is_request(t) and i not in outputs]
