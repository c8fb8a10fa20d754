"""Hostile callback URLs and receivers against real workers, Redis and a loopback receiver."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator

import pytest
from pydantic import SecretStr

from tersify.client import Producer
from tersify.errors import InvalidJobError
from tersify.settings import Settings
from tersify.store import webhooks
from tersify.worker.processes.worker_process import WorkerProcess
from tests.helpers import wait_for
from tests.hooks import DRIP_SECONDS, HookReceiver

StartWorker = Callable[..., WorkerProcess]
SECRET = "whsec-hostile-0123456789abcdef"
OUTPUT = "".join(f"{i:04d} INFO request {i} served in {i % 97} ms\n" for i in range(600))


@pytest.fixture
def hooks() -> Iterator[HookReceiver]:
    """A loopback receiver, closed when the test ends."""
    receiver = HookReceiver()
    yield receiver
    receiver.close()


def hooked(settings: Settings, allowed: str) -> Settings:
    """A producer's settings with webhooks on for ``allowed``."""
    return settings.model_copy(
        update={"webhook_allowed_urls": allowed, "webhook_secret": SecretStr(SECRET)}
    )


def webhook_env(allowed: str, **more: str) -> dict[str, str]:
    """A worker's environment with webhooks on for ``allowed``, retrying fast."""
    return {
        "webhook_allowed_urls": allowed,
        "webhook_secret": SECRET,
        "webhook_max_attempts": "2",
        "webhook_retry_base_seconds": "0.05",
        **more,
    }


@contextlib.contextmanager
def hooked_producer(
    settings: Settings, start_worker: StartWorker, hooks: HookReceiver, **env: str
) -> Iterator[Producer]:
    """A worker that delivers to the receiver's ``/hooks/`` (``env``: more of its settings)
    and a producer allowed the same, closed when the block ends."""
    allowed = hooks.url("/hooks/")
    start_worker(**webhook_env(allowed, **env))
    with Producer(hooked(settings, allowed)) as producer:
        yield producer


def submit(producer: Producer, url: str, session: str = "hooks") -> str:
    """Submit a job whose result goes to ``url``; its id."""
    options = {"callback_url": url}
    return producer.submit(
        session_id=session, tool_name="bash", output=OUTPUT, options=options
    ).job_id


def test_a_dot_segment_never_leaves_the_allowed_path(
    settings: Settings, start_worker: StartWorker, hooks: HookReceiver
) -> None:
    with hooked_producer(settings, start_worker, hooks) as producer:
        for escape in ("/hooks/../admin/reset", "/hooks/%2e%2e/admin/ok", "/hooks/..;/admin/ok"):
            with pytest.raises(InvalidJobError, match="dot segment"):
                submit(producer, hooks.url(escape))
        submit(producer, hooks.url("/hooks/ok"))
    wait_for(lambda: hooks.of("ok"), "the allowed POST")
    assert [hit.target for hit in hooks.hits] == ["/hooks/ok"]


def test_a_control_character_is_refused_and_the_sender_keeps_sending(
    settings: Settings, start_worker: StartWorker, hooks: HookReceiver
) -> None:
    with hooked_producer(settings, start_worker, hooks) as producer:
        for bad in ("\n", "\t", "\x00", " ", "\x7f"):
            with pytest.raises(InvalidJobError, match="control character"):
                submit(producer, hooks.url(f"/hooks/a{bad}b/ok"))
        jobs = {submit(producer, hooks.url("/hooks/ok")) for _ in range(3)}
    wait_for(lambda: {hit.job_id for hit in hooks.of("ok")} == jobs, "every later POST")


def test_a_dripping_receiver_holds_no_other_delivery_and_a_huge_answer_is_not_read(
    settings: Settings, start_worker: StartWorker, hooks: HookReceiver
) -> None:
    with hooked_producer(settings, start_worker, hooks, webhook_timeout_seconds="3") as producer:
        submit(producer, hooks.url("/hooks/drip"))
        wait_for(lambda: hooks.of("drip"), "the dripping receiver reached")
        submit(producer, hooks.url("/hooks/huge"))
        prompt = submit(producer, hooks.url("/hooks/ok"))
    wait_for(lambda: [h for h in hooks.of("ok") if h.job_id == prompt], "the other POST")
    drip = hooks.of("drip")[0]
    assert drip.ended is None or drip.ended - drip.at < DRIP_SECONDS  # cut, not waited out
    wait_for(lambda: all(h.ended for h in hooks.of("huge")), "the huge answer hung up on", 20)
    assert hooks.huge_sent < 64 * 1024 * 1024  # what socket buffers take, not 200 MB


@pytest.mark.slow
def test_deliveries_claimed_by_a_killed_worker_are_sent_by_another(
    settings: Settings, start_worker: StartWorker, hooks: HookReceiver
) -> None:
    allowed = hooks.url("/hooks/")
    env = webhook_env(allowed, webhook_timeout_seconds="2")
    first = start_worker(**env)
    with Producer(hooked(settings, allowed)) as producer:
        jobs = {submit(producer, hooks.url("/hooks/hold")) for _ in range(4)}
        wait_for(lambda: hooks.of("hold"), "a delivery in flight")
    first.kill()  # with the deliveries it claimed
    killed = time.monotonic()
    hooks.release()  # from now on the receiver answers at once
    start_worker(**env)
    after = lambda: {h.job_id for h in hooks.of("hold") if h.at > killed and h.answered}  # noqa: E731
    wait_for(lambda: after() == jobs, "every delivery sent again and answered", timeout=40)


def test_the_worker_enforces_its_own_allow_list(
    settings: Settings, start_worker: StartWorker, hooks: HookReceiver
) -> None:
    worker = start_worker(**webhook_env(hooks.url("/narrow/")))
    with Producer(hooked(settings, hooks.url("/hooks/"))) as producer:  # a wider list
        submit(producer, hooks.url("/hooks/ok"))
    wait_for(lambda: "webhook_refused" in worker.log() or hooks.hits, "the delivery settled")
    assert hooks.hits == []


def test_a_delivery_verifies_and_no_replay_or_malformed_header_does(
    settings: Settings, start_worker: StartWorker, hooks: HookReceiver
) -> None:
    with hooked_producer(settings, start_worker, hooks) as producer:
        submit(producer, hooks.url("/hooks/ok"))
    hit = wait_for(lambda: hooks.of("ok"), "the POST")[0]
    secret, verify = SecretStr(SECRET), webhooks.verify
    assert verify(secret, hit.body, hit.headers)
    assert not verify(secret, hit.body, {**hit.headers, webhooks.ID_HEADER: "msg_replayed"})
    for bad in (
        {webhooks.SIGNATURE_HEADER: "v1,é"},
        {webhooks.TIMESTAMP_HEADER: "1" * 401},
        {webhooks.ID_HEADER: "é"},
    ):
        assert verify(secret, hit.body, {**hit.headers, **bad}) is False
