"""The session a request belongs to: named by a header, else derived from the conversation.

A session id keys the gate, ``forget``, the counts and the session log, so it must stay the
same for every turn of one agent session. A configured header wins (Claude Code sends its own
session id in ``x-claude-code-session-id``); otherwise the id is a hash of the client and the
conversation's opening user text, which every later turn repeats unchanged. The client is the
hash of its API key (``x-api-key``, ``Authorization``, ``api-key``), else its address: two
agents with the same opening share a session only when they share a key, or have none and run
on one host. Header values tersify would refuse as a session id (too long, odd characters) are
hashed too, so every request gets one.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Final

from tersify.worker.gateway.formats import RequestView

_SESSION_ID: Final = re.compile(r"^[A-Za-z0-9._:@/+=-]{1,200}$")
PREFIX: Final = "gw-"
_KEY_HEADERS: Final = ("x-api-key", "authorization", "api-key")


def client_of(headers: Mapping[str, str], address: str | None) -> str:
    """Who sent a request: the hash of its API key, else its address (see the module)."""
    for name in _KEY_HEADERS:
        value = headers.get(name, "").strip()
        if value:
            return "key:" + _digest(value)
    return f"address:{address or '-'}"


def session_of(
    headers: Mapping[str, str],
    names: tuple[str, ...],
    conversation: RequestView | None,
    client: str,
) -> str:
    """The session id of a request from ``client`` (``client_of``; see the module)."""
    for name in names:
        value = headers.get(name, "").strip()
        if value:
            return value if _SESSION_ID.match(value) else PREFIX + _digest(value)
    if conversation is None:
        return PREFIX + "unparsed"
    return PREFIX + _digest(f"{client}\0{conversation.api.value}\0{conversation.opening}")


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]
