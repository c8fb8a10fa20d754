"""Very large compute steps of the asyncio producer run in a process of their own."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import threading

import pytest

from tersify.client import AsyncProducer
from tersify.client.apart import APART_CHARS, Apart
from tersify.errors import TersifyError
from tersify.settings import Settings


class Unpicklable(TersifyError):
    """An error whose constructor takes what its pickled form does not give back."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"{size} is over {limit}")


def refuse(size: int) -> None:
    raise Unpicklable(size, 10)


def test_a_step_runs_in_the_child_and_answers_what_it_would_in_place() -> None:
    apart = Apart()
    body = json.dumps({"output": 'line\t"quoted" é\n' * 500, "n": [1, 2.5, None]}).encode()
    try:
        assert asyncio.run(apart.run(json.loads, (body,))) == json.loads(body)
        assert apart.started
    finally:
        apart.close()


def test_the_steps_own_exception_is_raised_whether_or_not_it_pickles() -> None:
    apart = Apart()
    body = b'{"output": "' + b"x" * 4096 + b'"'
    with pytest.raises(json.JSONDecodeError) as in_place:
        json.loads(body)
    try:
        with pytest.raises(json.JSONDecodeError) as raised:
            asyncio.run(apart.run(json.loads, (body,)))
        assert (raised.value.msg, raised.value.pos) == (in_place.value.msg, in_place.value.pos)
        with pytest.raises(Unpicklable, match="20 is over 10"):
            asyncio.run(apart.run(refuse, (20,)))
    finally:
        apart.close()


def test_a_step_whose_arguments_do_not_pickle_runs_on_a_thread() -> None:
    apart = Apart()
    lock = threading.Lock()
    try:
        assert asyncio.run(apart.run(repr, (lock,))) == repr(lock)
    finally:
        apart.close()


def test_a_child_that_died_is_replaced_and_the_step_still_answered() -> None:
    apart = Apart()

    async def kill_then_run() -> object:
        await apart.run(json.loads, (b"[1]",))  # the child exists now
        pool = apart._pool
        assert pool is not None
        for pid in list(pool._processes):  # the pool's own child, nothing else
            os.kill(pid, signal.SIGKILL)
        await asyncio.sleep(0.5)
        return await apart.run(json.loads, (b"[2]",))

    try:
        assert asyncio.run(kill_then_run()) == [2]
    finally:
        apart.close()


def started(producer: AsyncProducer) -> bool:
    return producer._apart is not None and producer._apart.started


def test_a_producer_not_told_to_runs_every_step_in_its_own_process() -> None:
    async def run() -> bool:
        producer = AsyncProducer(Settings(redis_url="redis://127.0.0.1:9/0"))
        try:
            await producer.compute(len, "x" * APART_CHARS, size=APART_CHARS, apart=True)
            return producer._apart is None
        finally:
            await producer.close()

    assert asyncio.run(run())


def test_the_producer_keeps_small_and_large_steps_in_its_own_process() -> None:
    async def run() -> tuple[bool, bool]:
        producer = AsyncProducer(Settings(redis_url="redis://127.0.0.1:9/0"), apart=True)
        try:
            await producer.compute(len, "x" * 100_000, size=100_000, apart=True)
            thread_only = not started(producer)
            await producer.compute(len, "x" * APART_CHARS, size=APART_CHARS, apart=False)
            thread_only = thread_only and not started(producer)
            await producer.compute(len, "x" * APART_CHARS, size=APART_CHARS, apart=True)
            return thread_only, started(producer)
        finally:
            await producer.close()

    assert asyncio.run(run()) == (True, True)
