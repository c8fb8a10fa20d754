"""Task state: the user's requests, and the agent's own plan or todo items with their last state.

Plans come from any tool call whose arguments hold a list of items each with a text and a
status (whatever the tool is called; the todo tools of known agents, TodoWrite, update_plan,
task_tracker, write_todos, are also read without statuses) and from markdown checklists in the
agent's messages; each call restates the whole list, so the last one holds the current state.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tersify.chat.messages import Role, Turn
from tersify.worker.compaction.facts.actions import Action

_LISTS = ("todos", "plan", "task_list", "tasks", "items")
_TEXTS = ("content", "step", "title", "description", "task", "text")
_CHECKLIST = re.compile(r"^\s*[-*] \[( |x|X)\] (.+?)\s*$", re.MULTILINE)
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


_STATUSES = ("status", "state")


def _listed(entries: list[Any]) -> tuple[list[PlanItem], bool]:
    """The plan items of a list, and whether every item states its status."""
    items: list[PlanItem] = []
    stated = True
    for entry in entries[:200]:
        if not isinstance(entry, dict):
            continue
        text = next((entry[k] for k in _TEXTS if isinstance(entry.get(k), str)), None)
        if text:
            status = next((entry[k] for k in _STATUSES if isinstance(entry.get(k), str)), None)
            stated = stated and status is not None
            items.append(PlanItem(text.strip(), status or "pending"))
    return items, stated and bool(items)


def _items(arguments: Mapping[str, Any], planner: bool) -> list[PlanItem] | None:
    """A plan in the arguments: a list of items with statuses under any name, or (for a known
    planning tool) a list under a plan-like name."""
    for key, entries in arguments.items():
        if not isinstance(entries, list):
            continue
        items, stated = _listed(entries)
        if stated or (planner and key in _LISTS):
            return items
    return None


def plan(actions: Sequence[Action], turns: Sequence[Turn]) -> list[PlanItem]:
    """The agent's latest plan: its last todo-tool list, or its last checklist in a message."""
    latest: tuple[int, list[PlanItem]] | None = None
    for action in actions:
        planner = "todo" in action.tool or action.tool in ("update_plan", "task_tracker")
        items = _items(action.arguments, planner)
        if items is not None:
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
