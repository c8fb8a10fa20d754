"""One implementation of every producer operation, performed by a blocking or an asyncio face.

An operation is a generator that does no I/O itself (sans-I/O, as h11 and the shared cores of
redis-py and httpx are): it yields the ``Step`` values it needs — a Redis round trip, a gate
script, a wait for a stored result — and is sent each step's answer. ``Producer``
(``client.sync``) and ``AsyncProducer`` (``client.aio``) only know how to perform a step, and
drive every operation with ``run_sync`` or ``run_async``. A step that fails is thrown back into
the operation (a Redis error as ``RedisUnavailableError`` naming what could not be done), so
the validation, the order of writes and the undo after a failed publish are written once and
the two faces cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import redis

from tersify.errors import RedisUnavailableError
from tersify.gate.protocol import Call
from tersify.store.commands import Command
from tersify.store.redis_url import failure_reason, shown_url

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Round:
    """Commands sent in one round trip (a pipeline); the answer is the list of their replies.

    ``failure`` is what could not be done when Redis fails (``"could not store the job"``).
    """

    commands: tuple[Command, ...]
    failure: str
    transaction: bool = False


@dataclass(frozen=True, slots=True)
class GateScript:
    """One session-gate script call; the answer is the call's parsed reply."""

    call: Call[Any]


@dataclass(frozen=True, slots=True)
class WaitHead:
    """Wait (notified, not polled) for the first item of a list; the answer is it, or None
    once ``timeout`` seconds passed."""

    key: str
    timeout: float


@dataclass(frozen=True, slots=True)
class Compute:
    """CPU work on a client's text: cutting, classifying, hashing and compressing an output to
    submit, decoding and scanning one read back, and whatever a server built on the asyncio
    producer does to a request (``AsyncProducer.compute``). The answer is ``function(*args)``.

    ``size`` is how much text it works on (None: unknown, taken as large). The asyncio face
    runs small work in place (under ``INLINE_CHARS``: well under a millisecond) and large work
    on a thread, ``COMPUTE_SLOTS`` at once, so one client's large output never holds the event
    loop that serves the others, and a small request never queues behind a large one.

    ``apart``: the function has no effect but its answer and its arguments pickle, so from
    ``APART_CHARS`` on the asyncio face runs it in a process of its own (``client/apart.py``):
    a single C call on megabytes of text keeps the GIL, and a thread cannot share it.
    """

    function: Callable[..., Any]
    args: tuple[Any, ...]
    size: int | None = None
    apart: bool = False


COMPUTE_SLOTS = 1
"""Large compute steps an asyncio producer runs at once; more wait their turn. One: under the
GIL a second thread scans no faster, it only makes the event loop wait longer for the
interpreter (and memory stays bounded by one large output at a time)."""

INLINE_CHARS = 64 * 1024
"""Compute steps on less text than this run in place in the asyncio face."""

Step = Round | GateScript | WaitHead | Compute
Operation = Generator[Step, Any, T]
"""An operation: yields steps, is sent their answers, returns its result."""


class Drive:
    """One operation being driven: the step it needs next, and where that step's answer goes."""

    def __init__(self, operation: Operation[Any]) -> None:
        self._operation = operation
        self._answer: Any = None
        self._failure: BaseException | None = None
        self.result: Any = None

    def next(self) -> Step | None:
        """The next step to perform, or None once the operation returned its ``result``."""
        answer, failure = self._answer, self._failure
        self._answer = self._failure = None
        try:
            if failure is not None:
                return self._operation.throw(failure)
            return self._operation.send(answer)
        except StopIteration as done:
            self.result = done.value
            return None

    def answer(self, value: Any) -> None:
        """What the last step gave back."""
        self._answer = value

    def fail(self, exc: BaseException) -> None:
        """The last step failed: the operation decides (undo, ignore, or let it go)."""
        self._failure = exc


def run_sync(operation: Operation[T], perform: Callable[[Step], Any]) -> T:
    """Drive ``operation`` to its result, performing each step with ``perform``."""
    drive = Drive(operation)
    while (step := drive.next()) is not None:
        try:
            drive.answer(perform(step))
        except BaseException as exc:
            drive.fail(exc)
    return drive.result  # type: ignore[no-any-return]


async def run_async(operation: Operation[T], perform: Callable[[Step], Awaitable[Any]]) -> T:
    """Drive ``operation`` to its result, awaiting each step ``perform`` starts."""
    drive = Drive(operation)
    while (step := drive.next()) is not None:
        try:
            drive.answer(await perform(step))
        except BaseException as exc:
            drive.fail(exc)
    return drive.result  # type: ignore[no-any-return]


@contextmanager
def unavailable(step: Round, url: str) -> Iterator[None]:
    """Turn a Redis error inside a round into ``RedisUnavailableError`` naming what failed,
    where (``url``, its password hidden) and why."""
    try:
        yield
    except redis.RedisError as exc:
        why = failure_reason(exc)
        raise RedisUnavailableError(f"{step.failure}: Redis at {shown_url(url)}: {why}") from None
