"""Bad input is refused with a typed error before anything is enqueued; bad messages end in the
dead-letter list instead of being retried forever."""

from __future__ import annotations

import base64
import json
import random
import re
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tersify.client import Producer
from tersify.contract import Method, Queue
from tersify.errors import InvalidJobError, UnsupportedSchemaError
from tersify.settings import Settings
from tersify.store import keys
from tersify.store.commands import execute
from tersify.store.publisher import push
from tersify.store.wire import SUMMARIZE_TASK, parse_message
from tersify.worker.processes.worker_process import WorkerProcess
from tests.helpers import tersify

BIG = "x" * 5000


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        ({"session_id": "", "tool_name": "bash", "output": BIG}, InvalidJobError),
        ({"session_id": "has space", "tool_name": "bash", "output": BIG}, InvalidJobError),
        ({"session_id": "s", "tool_name": "", "output": BIG}, InvalidJobError),
        ({"session_id": "s", "tool_name": "bash", "output": 42}, InvalidJobError),
        ({"session_id": "s", "tool_name": "bash", "output": None}, InvalidJobError),
        (
            {"session_id": "s", "tool_name": "bash", "output": BIG, "relevant_lines": (5, 2)},
            InvalidJobError,
        ),
    ],
)
def test_bad_input_is_refused_and_leaves_nothing_behind(
    fields: dict, error: type[Exception], producer: Producer, redis_client
) -> None:
    with pytest.raises(error):
        producer.submit(**fields)
    assert redis_client.keys("*") == []


def test_an_output_over_the_cap_is_queued_cut_with_its_whole_text_stored(
    settings: Settings, redis_client
) -> None:
    capped = settings.model_copy(update={"max_output_bytes": 10_000})
    with Producer(capped) as producer:
        for output in ("é\n" * 5001, b"x\n" * 5001):
            handle = producer.submit(session_id="s", tool_name="bash", output=output)
            assert not handle.done  # queued: a cut output always goes to a worker
    jobs = [json.loads(redis_client.get(key))["job"] for key in redis_client.keys("tersify:job:*")]
    assert sorted(job["cut"]["bytes_in"] for job in jobs) == [10_002, 15_003]


def test_an_unknown_schema_version_is_refused() -> None:
    with pytest.raises(UnsupportedSchemaError):
        parse_message({"schema_version": 99, "job": {}, "payload": "0" * 64})


def test_invalid_utf8_is_replaced_and_flagged(producer: Producer) -> None:
    handle = producer.submit(session_id="s", tool_name="bash", output=b"caf\xe9 \xff ok")
    result = handle.wait(1)
    assert result.decoded_with_replacement
    assert result.text == "caf\ufffd \ufffd ok"


def test_lone_surrogates_and_nul_are_accepted_as_text(producer: Producer) -> None:
    result = producer.submit(session_id="s", tool_name="bash", output="a\ud800b\x00c").wait(1)
    assert result.text == "a\ufffdb\x00c"
    assert result.decoded_with_replacement


def test_a_malformed_message_is_dead_lettered_not_retried(
    start_worker: Callable[..., WorkerProcess], settings: Settings, producer: Producer, redis_client
) -> None:
    start_worker()
    execute(
        redis_client,
        push(SUMMARIZE_TASK, {"schema_version": 1, "job": {"oops": 1}}, Queue.INTERACTIVE, "bad-1"),
        push(SUMMARIZE_TASK, {"schema_version": 7}, Queue.INTERACTIVE, "bad-2"),
    )
    deadline = time.monotonic() + 20
    while redis_client.llen(keys.DEAD_LETTERS) < 2:
        assert time.monotonic() < deadline, "messages were not dead-lettered"
        time.sleep(0.05)
    records = redis_client.lrange(keys.DEAD_LETTERS, 0, -1)
    assert any("schema_version" in json.loads(r)["detail"] for r in records)
    # the worker is still healthy: a real job after the bad ones completes
    result = producer.submit(session_id="after", tool_name="bash", output=BIG + "\nerror: x").wait(
        30
    )
    assert result.method is Method.EXTRACTIVE
    assert redis_client.llen(keys.DEAD_LETTERS) == 2


def test_garbage_written_straight_into_the_queue_is_dead_lettered_and_the_worker_lives_on(
    start_worker: Callable[..., WorkerProcess], producer: Producer, redis_client
) -> None:
    worker = start_worker()
    properties = {
        "delivery_tag": "t",
        "body_encoding": "base64",
        "delivery_info": {"exchange": "", "routing_key": "interactive"},
    }

    def envelope(body: bytes, task: str, tag: str) -> str:
        return json.dumps(
            {
                "body": base64.b64encode(body).decode(),
                "content-encoding": "utf-8",
                "content-type": "application/json",
                "headers": {"id": tag, "task": task},
                "properties": {**properties, "delivery_tag": tag},
            }
        )

    redis_client.lpush("interactive", "this is not json at all")
    redis_client.lpush("interactive", envelope(b"\xff\xfe not utf-8", SUMMARIZE_TASK, "t1"))
    redis_client.lpush("interactive", envelope(b"[[], {}, {}]", "no.such.task", "t2"))
    deadline = time.monotonic() + 20
    while redis_client.llen(keys.DEAD_LETTERS) < 3:
        assert time.monotonic() < deadline, "the poison messages were not dead-lettered"
        time.sleep(0.05)
    records = [json.loads(r) for r in redis_client.lrange(keys.DEAD_LETTERS, 0, -1)]
    assert sorted(r["reason"] for r in records) == ["bad_body", "not_json", "unknown_task"]
    assert any("no.such.task" in r["detail"] for r in records)
    assert worker.alive()
    result = producer.submit(session_id="after-poison", tool_name="bash", output=BIG + "\nerror: x")
    assert result.wait(30).method is Method.EXTRACTIVE
    assert redis_client.llen("interactive") == 0


@pytest.mark.parametrize("kind", ["an ELF executable", "random bytes"])
def test_binary_input_is_described_as_what_it_is_never_summarized_as_garbage(
    kind: str, settings: Settings, start_worker: Callable[..., WorkerProcess], tmp_path: Path
) -> None:
    start_worker()
    if kind == "an ELF executable":
        path = Path(shutil.which("true") or "/bin/true").resolve()
    else:
        path = tmp_path / "random.bin"
        path.write_bytes(random.Random(7).randbytes(200_000))
    done = tersify(settings, "submit", str(path), "--tool", "cat", "--command", f"cat {path}")
    assert done.returncode == 0, done.stderr
    summary = done.stdout
    assert "\ufffd" not in summary and "\x00" not in summary
    expected = "[ELF 64-bit " if kind == "an ELF executable" else "[binary data"
    assert summary.startswith(expected), summary[:200]
    assert "not summarized as text" in summary and len(summary) < 2_000
    if kind == "an ELF executable":
        assert "printable strings: " in summary and "libc" in summary
    assert re.search(r"· extractive · [\d,]+ → [\d,]+ chars", done.stderr), done.stderr
