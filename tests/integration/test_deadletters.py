"""``tersify deadletters``: refused entries listed, shown, replayed with a new id, purged."""

from __future__ import annotations

import json
from collections.abc import Callable

from tersify.client import Producer
from tersify.contract import Method, Queue
from tersify.settings import Settings
from tersify.store import keys, payloads
from tersify.worker.processes.worker_process import WorkerProcess
from tests.helpers import tersify, wait_for

OUTPUT = "x" * 5000 + "\nerror: replay me\n"


def listed(settings: Settings, *args: str) -> list[dict]:
    """``tersify deadletters list --json`` as records."""
    done = tersify(settings, "deadletters", "list", "--json", *args)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_a_job_whose_output_expired_is_not_replayed_until_the_output_is_stored_again(
    start_worker: Callable[..., WorkerProcess], settings: Settings, producer: Producer, redis_client
) -> None:
    handle = producer.submit(
        session_id="s-replay", tool_name="bash", output=OUTPUT, queue=Queue.BATCH
    )
    digest, blob = payloads.encode(OUTPUT)
    assert redis_client.delete(keys.payload(digest)) == 1  # expired before a worker took it
    start_worker()
    (record,) = wait_for(lambda: listed(settings), "the job dead-lettered")
    assert (record["reason"], record["replayable"]) == ("payload_missing", True)

    refused = tersify(settings, "deadletters", "replay", record["id"])
    assert refused.returncode == 1
    assert "output is no longer stored" in refused.stdout
    assert [r["id"] for r in listed(settings)] == [record["id"]]

    redis_client.set(keys.payload(digest), blob)  # the same output, stored again
    replayed = tersify(settings, "deadletters", "replay", record["id"])
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    new_id = replayed.stdout.split("replayed as job ")[1].split()[0]
    assert new_id != handle.job_id
    result = producer.wait(new_id, 30)
    assert (result.job_id, result.session_id) == (new_id, "s-replay")
    assert result.method is Method.EXTRACTIVE
    assert producer.get(handle.job_id) is None  # the refused job itself stays unanswered
    assert listed(settings) == []


def test_records_are_listed_by_reason_shown_whole_and_purged(
    start_worker: Callable[..., WorkerProcess], settings: Settings, redis_client
) -> None:
    start_worker()
    redis_client.lpush("interactive", "not json, one")
    redis_client.lpush("batch", "not json, two")
    redis_client.lpush("batch", json.dumps({"body": 1}))
    found = wait_for(lambda: (r := listed(settings)) and len(r) == 3 and r, "three dead letters")
    assert sorted(r["reason"] for r in found) == ["bad_envelope", "not_json", "not_json"]
    assert len({r["id"] for r in found}) == 3
    assert not any(r["replayable"] for r in found)
    assert [r["reason"] for r in listed(settings, "--reason", "bad_envelope")] == ["bad_envelope"]

    shown = tersify(settings, "deadletters", "show", found[0]["id"])
    assert shown.returncode == 0
    assert json.loads(shown.stdout)["message"] in {"not json, one", "not json, two", '{"body": 1}'}
    missing = tersify(settings, "deadletters", "show", "nosuchid")
    assert (missing.returncode, missing.stdout) == (1, "")
    assert missing.stderr == "tersify deadletters: no dead letter has the id nosuchid\n"
    table = tersify(settings, "deadletters", "list").stdout.splitlines()
    assert table[0].split() == ["ID", "WHEN", "(UTC)", "REASON", "QUEUE", "REPLAYABLE", "DETAIL"]
    assert len(table) == 4 and all(r["id"] in "\n".join(table) for r in found)

    not_replayable = tersify(settings, "deadletters", "replay", found[0]["id"])
    assert not_replayable.returncode == 1
    assert "no complete summary job message" in not_replayable.stdout

    assert tersify(settings, "deadletters", "purge").returncode == 2  # says what to purge
    purged = tersify(settings, "deadletters", "purge", "--reason", "not_json")
    assert purged.stdout.strip() == "purged 2 dead letter(s)"
    assert [r["reason"] for r in listed(settings)] == ["bad_envelope"]
    purged = tersify(settings, "deadletters", "purge", "--all")
    assert purged.stdout.strip() == "purged 1 dead letter(s)"
    assert redis_client.llen(keys.DEAD_LETTERS) == 0
    empty = tersify(settings, "deadletters", "list")
    assert (empty.returncode, empty.stdout) == (0, "no dead letters: every queue entry was taken\n")
