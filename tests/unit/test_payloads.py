"""Stored outputs: their encoding, and who uses a payload several sessions stored (real Redis)."""

from __future__ import annotations

import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from tersify.store import keys, payloads
from tersify.store.commands import execute
from tersify.worker.processes.redis_server import LocalRedis

SESSIONS = ("team-a/one", "two", "x:jobs")
TEXT = "the same output\n" * 40


@given(text=st.text(), owner=st.sampled_from([None, *SESSIONS]), big=st.booleans())
def test_a_payload_decodes_to_the_text_it_was_encoded_from(
    text: str, owner: str | None, big: bool
) -> None:
    text = text.encode("utf-8", "replace").decode("utf-8")
    if big:  # past the compression threshold
        text = (text or "x") * (payloads.COMPRESS_FROM_BYTES // max(1, len(text)) + 1)
    digest, blob = payloads.encode(text, owner)
    assert payloads.decode(blob) == text
    assert digest == payloads.encode(text)[0]  # the digest names the content alone
    if owner is not None:
        assert blob.startswith(b"o" + payloads.owner_tag(owner))
        assert owner.encode() not in blob[:17]  # the owner is a tag, never the id


class Sharing(RuleBasedStateMachine):
    """Sessions store one output, forget themselves, and the payload expires; the payload must
    exist exactly while a session that stored it (since it was last stored anew) is not
    forgotten, and nothing of a forgotten session may stay in it or in its users' set."""

    def __init__(self, url: str) -> None:
        super().__init__()
        self.client = redis.Redis.from_url(url)
        self.client.flushall()
        self.digest = payloads.encode(TEXT)[0]
        self.users: set[str] = set()  # who stored the payload that exists now, not forgotten
        self.indexed: set[str] = set()  # whose index names the digest (any generation)
        self.forgotten: set[str] = set()

    @rule(sid=st.sampled_from(SESSIONS))
    def store(self, sid: str) -> None:
        _, blob = payloads.encode(TEXT, sid)
        execute(self.client, payloads.stage(sid, self.digest, blob, 600))
        self.users.add(sid)
        self.indexed.add(sid)
        self.forgotten.discard(sid)

    @rule(sid=st.sampled_from(SESSIONS))
    def forget(self, sid: str) -> None:
        if sid in self.indexed:  # a session's index names what it stored
            keys_ = (keys.payload(self.digest), keys.payload_sessions(self.digest))
            self.client.eval(payloads.RELEASE, 2, *keys_, sid)
        self.indexed.discard(sid)
        self.users.discard(sid)
        self.forgotten.add(sid)

    @rule()
    def expire(self) -> None:  # the payload and its users' set run out together
        self.client.delete(keys.payload(self.digest), keys.payload_sessions(self.digest))
        self.users.clear()

    @invariant()
    def the_payload_exists_while_a_session_still_uses_it(self) -> None:
        stored = self.client.get(keys.payload(self.digest))
        assert (stored is not None) == bool(self.users), (stored, self.users)
        if stored is not None:
            assert payloads.decode(stored) == TEXT

    @invariant()
    def nothing_of_a_forgotten_session_stays(self) -> None:
        stored = self.client.get(keys.payload(self.digest)) or b""
        members = self.client.smembers(keys.payload_sessions(self.digest))
        for sid in self.forgotten:
            tag = payloads.owner_tag(sid)
            assert not stored.startswith(b"o" + tag)
            assert sid.encode() not in members and b"#" + tag not in members

    def teardown(self) -> None:
        self.client.close()


def test_a_shared_payload_goes_exactly_when_its_last_user_is_forgotten(
    redis_server: LocalRedis,
) -> None:
    run_state_machine_as_test(
        lambda: Sharing(redis_server.url),
        settings=settings(
            max_examples=60,
            stateful_step_count=25,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )
