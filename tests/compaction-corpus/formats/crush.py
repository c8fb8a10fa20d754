"""Crush's session database (``.crush/crush.db``, SQLite): each session's messages in order.

Each session's messages follow a session marker naming it (a case's window picks one):
``user`` messages' text parts are user messages, an ``assistant`` message's text and
``tool_call`` parts an assistant turn, and ``tool`` messages' ``tool_result`` parts the results
(an error result keeps its text). Reasoning and finish parts are left out.
"""

from __future__ import annotations

import json
import sqlite3
import tempfile
from pathlib import Path

from formats.openai import SESSION, Message, Turns


def sessions(raw: bytes) -> dict[str, list[tuple[str, str]]]:
    """Each session's (role, parts JSON) rows in order, by session id."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "crush.db"
        path.write_bytes(raw)
        with sqlite3.connect(path) as db:
            rows = db.execute(
                "select session_id, role, parts from messages order by created_at, rowid"
            ).fetchall()
    found: dict[str, list[tuple[str, str]]] = {}
    for session, role, parts in rows:
        found.setdefault(session, []).append((role, parts))
    return found


def convert_session(rows: list[tuple[str, str]]) -> list[Message]:
    """One session's rows → OpenAI chat messages."""
    turns = Turns()
    for role, parts_json in rows:
        parts = json.loads(parts_json)
        if role == "user":
            texts = [p["data"]["text"] for p in parts if p["type"] == "text"]
            turns.add({"role": "user", "content": "\n".join(texts)})
        elif role == "assistant":
            for part in parts:
                data = part["data"]
                if part["type"] == "text" and data.get("text", "").strip():
                    turns.say(data["text"])
                elif part["type"] == "tool_call":
                    turns.call(data["id"], data["name"], data.get("input") or "{}")
        elif role == "tool":
            for part in parts:
                if part["type"] == "tool_result":
                    turns.answer(part["data"]["tool_call_id"], part["data"].get("content", ""))
    return turns.flush()


def convert(raw: bytes) -> list[Message]:
    """Every session of a Crush database → OpenAI chat messages, each after its marker."""
    out: list[Message] = []
    for session, rows in sessions(raw).items():
        out += [{"role": SESSION, "content": session}, *convert_session(rows)]
    return out
