"""The cluster's state as Redis holds it, read cheaply and bounded: for scrapes and ``status``.

Every read here is a handful of round trips whatever the load: queue depths are ``LLEN``, the
gate is one bounded ``ZRANGEBYSCORE`` on its global expiry index plus one pipeline over at most
``limit`` sessions, workers are a bounded ``SCAN`` of their heartbeat keys.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

import redis

from tersify.contract import Queue
from tersify.gate.protocol import stored_holds
from tersify.store import keys, sessions
from tersify.worker.model.providers.registry import remote

# Kombu's Redis transport keeps delivered, unacknowledged messages in this hash.
UNACKED_KEY = "unacked"
CIRCUIT_STATES = ("closed", "open", "probing")


def text(value: object) -> str:
    """A Redis reply as text, whether the client decodes replies or not."""
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def server_now(client: redis.Redis) -> float:
    """Redis server time in seconds: the gate's scores are server time, not ours."""
    reply = client.time()
    assert isinstance(reply, tuple)  # a blocking client answers at once
    seconds, micros = reply
    return float(seconds) + float(micros) / 1e6


def queue_depths(client: redis.Redis) -> dict[str, int]:
    """Messages waiting in each queue (not yet delivered to a worker)."""
    with client.pipeline(transaction=False) as pipe:
        for queue in Queue:
            pipe.llen(queue.value)
        counts = pipe.execute()
    return {queue.value: int(n) for queue, n in zip(Queue, counts, strict=True)}


def in_flight(client: redis.Redis) -> int:
    """Messages delivered to some worker and not yet acknowledged, across all workers."""
    count = client.hlen(UNACKED_KEY)
    assert isinstance(count, int)  # a blocking client answers at once
    return count


@dataclass(frozen=True, slots=True)
class GatedSession:
    """A session whose input gate is closed now."""

    session_id: str
    jobs: int
    held_inputs: int
    closed_seconds: float


def gated_sessions(client: redis.Redis, now: float, limit: int = 1000) -> list[GatedSession]:
    """Sessions with a live hold (expiry after ``now``), longest closed first, at most ``limit``."""
    members = client.zrange(keys.gate_due(), 0, limit - 1)
    assert isinstance(members, list)  # a blocking client answers at once
    names = [text(member) for member in members]
    with client.pipeline(transaction=False) as pipe:
        for session_id in names:
            pipe.llen(keys.gate_held(session_id))
            pipe.hget(keys.session(session_id), sessions.GATE)
        replies = pipe.execute()
    found = []
    now_ms = now * 1000
    for i, session_id in enumerate(names):
        held, gate = replies[2 * i], replies[2 * i + 1]
        live = [h for h in stored_holds(gate) if h.live(now_ms)]
        if not live:
            continue
        since = min(h.closed_at_ms for h in live)
        closed = max(0.0, now - since / 1000)
        found.append(GatedSession(session_id, len(live), int(held), round(closed, 3)))
    return sorted(found, key=lambda s: s.closed_seconds, reverse=True)


def circuit_states(client: redis.Redis) -> dict[str, str]:
    """Each model provider's circuit: closed (also when no record exists), open or probing."""
    providers = remote()
    with client.pipeline(transaction=False) as pipe:
        for provider in providers:
            pipe.hget(keys.circuit(provider), "state")
        states = pipe.execute()
    return {
        provider: text(state) if state is not None else "closed"
        for provider, state in zip(providers, states, strict=True)
    }


def workers(client: redis.Redis, now: float, limit: int = 200) -> list[dict[str, Any]]:
    """Workers with a live heartbeat: their record plus how long ago they beat."""
    names = []
    for name in client.scan_iter(match=keys.worker_alive("*"), count=500):
        names.append(name)
        if len(names) >= limit:
            break
    records = client.mget(names) if names else []
    assert isinstance(records, list)  # a blocking client answers at once
    found = []
    for raw in records:
        if raw is None:
            continue  # expired between the scan and the read
        record = json.loads(text(raw))
        record["seen_seconds_ago"] = round(max(0.0, now - float(record.get("seen", now))), 3)
        found.append(record)
    return sorted(found, key=lambda r: str(r.get("hostname")))


def recent_fallbacks(client: redis.Redis, limit: int) -> list[dict[str, Any]]:
    """The newest fallback results (as ``worker.metrics.jobs`` recorded them), newest first."""
    return [json.loads(text(raw)) for raw in _range(client, keys.RECENT_FALLBACKS, limit)]


def dead_letters(client: redis.Redis, limit: int) -> list[dict[str, Any]]:
    """The newest refused messages with their reasons (the message excerpt left out)."""
    found = []
    for raw in _range(client, keys.DEAD_LETTERS, limit):
        record = json.loads(text(raw))
        found.append(
            {
                "id": record.get("id"),
                "reason": record.get("reason"),
                "detail": record.get("detail"),
                "queue": record.get("queue"),
                "at": record.get("at"),
            }
        )
    return found


def fallback_rate(client: redis.Redis, now: float, window: float) -> dict[str, Any]:
    """Jobs finished and fallbacks among them over the last ``window`` seconds."""
    completed = client.zcount(keys.RECENT_COMPLETIONS, now - window, "+inf")
    assert isinstance(completed, int)  # a blocking client answers at once
    fallbacks = sum(
        1 for f in recent_fallbacks(client, 10_000) if float(f.get("at", 0)) >= now - window
    )
    rate = fallbacks / completed if completed else 0.0
    return {
        "window_seconds": window,
        "completed": completed,
        "fallbacks": fallbacks,
        "rate": round(rate, 4),
    }


def _range(client: redis.Redis, key: str, limit: int) -> list[Any]:
    items = client.lrange(key, 0, limit - 1)
    assert isinstance(items, list)  # a blocking client answers at once
    return items


def gated_as_dicts(sessions: list[GatedSession]) -> list[dict[str, Any]]:
    """Gated sessions as plain JSON-ready dicts."""
    return [asdict(s) for s in sessions]


def _counts(raw: dict[Any, Any]) -> dict[str, float]:
    """A gateway counts hash as numbers (``saved_usd`` a float, the rest integers)."""
    found = {text(k): text(v) for k, v in raw.items()}
    return {k: float(v) if k == "saved_usd" else int(v) for k, v in found.items()}


def gateway_savings(client: redis.Redis, limit: int = 10) -> dict[str, Any]:
    """The model-API gateway's totals and its latest sessions' counts: two round trips."""
    recent: list[tuple[Any, float]] = client.zrevrange(  # type: ignore[assignment]  # sync client
        keys.GATEWAY_SESSIONS, 0, limit - 1, withscores=True
    )
    with client.pipeline(transaction=False) as pipe:
        pipe.hgetall(keys.GATEWAY_TOTALS)
        for member, _ in recent:
            pipe.hgetall(keys.gateway_session(text(member)))
        totals, *sessions = pipe.execute()
    latest = [
        {"session_id": text(member), "last_request": float(at), **_counts(counts)}
        for (member, at), counts in zip(recent, sessions, strict=True)
        if counts
    ]
    return {"totals": _counts(totals), "sessions": latest}
