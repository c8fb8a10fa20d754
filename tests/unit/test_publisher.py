"""The producer's queue entries, written without Celery, are complete messages to a worker."""

from __future__ import annotations

import base64
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tersify.contract import Queue
from tersify.store.publisher import entry
from tersify.store.wire import SUMMARIZE_TASK
from tersify.worker.broker.envelope import check_entry
from tests.entries import json_values

MESSAGES = st.dictionaries(st.text(max_size=10), json_values, max_size=5)


@given(
    MESSAGES, st.sampled_from(list(Queue)), st.from_regex(r"[A-Za-z0-9_-]{8,64}", fullmatch=True)
)
def test_every_entry_passes_the_workers_check_and_carries_the_message_as_the_only_argument(
    message: dict[str, Any], queue: Queue, task_id: str
) -> None:
    raw = entry(SUMMARIZE_TASK, message, queue, task_id)
    envelope = check_entry(raw, 4 * 1024 * 1024)
    args, kwargs, embed = json.loads(base64.b64decode(envelope["body"]))
    assert (args, kwargs) == ([message], {})
    assert not any(embed.values())  # never a linked task
    assert envelope["headers"]["task"] == SUMMARIZE_TASK
    assert envelope["headers"]["id"] == task_id == envelope["properties"]["correlation_id"]
    assert envelope["properties"]["delivery_info"]["routing_key"] == queue.value


def test_the_shown_arguments_name_the_job_only() -> None:
    raw = entry(SUMMARIZE_TASK, {"command": "curl -H 'token: s3cret'"}, Queue.INTERACTIVE, "j" * 8)
    headers = json.loads(raw)["headers"]
    assert headers["argsrepr"] == f"(<job {'j' * 8}>,)"
    assert "s3cret" not in json.dumps(headers)
