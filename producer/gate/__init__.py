"""The Redis-backed session gate: while a job for a session runs, the user's next input waits.

- ``session``   ``SessionGate`` (blocking redis-py) and ``AsyncSessionGate`` (``redis.asyncio``)
- ``protocol``  each operation's script call and reply parsing, shared by both faces
- ``scripts``   the Lua scripts, one per operation

May import ``store``, ``errors`` and ``settings``.
"""

from tersify.gate.protocol import CompletionOutcome, ExpiredHold, GateJob, GateStatus
from tersify.gate.session import AsyncSessionGate, SessionGate

__all__ = [
    "AsyncSessionGate",
    "CompletionOutcome",
    "ExpiredHold",
    "GateJob",
    "GateStatus",
    "SessionGate",
]
