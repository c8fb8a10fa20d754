"""What a dead-letter record keeps for replay: a whole summary message, never anything else."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from tersify.worker.jobs.deadletter import REPLAY_KEEP_BYTES, replayable

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=20,
)


@given(json_values)
def test_an_entry_is_kept_only_when_it_has_a_job_and_a_payload(entry: object) -> None:
    kept = replayable(entry)
    if not (isinstance(entry, dict) and {"job", "payload"} <= entry.keys()):
        assert kept is None
    else:
        assert kept == entry


def test_a_summary_message_over_the_limit_is_not_kept_whole() -> None:
    message = {"job": {"command": "x" * REPLAY_KEEP_BYTES}, "payload": "0" * 64}
    assert len(json.dumps(message)) > REPLAY_KEEP_BYTES
    assert replayable(message) is None
    assert replayable({**message, "job": {"command": "x"}}) is not None
