"""``tersify doctor`` against real servers: it names the Redis it reached, fails when none
answers, tells a refused password or database from an outage, warns about misspelled
variables, and checks the gateway's settings; a configuration mistake is one line, exit 2."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from tersify.client import Producer
from tersify.contract import FallbackReason, Method
from tersify.settings import Settings
from tersify.worker.processes.redis_server import LocalRedis, free_port
from tersify.worker.processes.worker_process import WorkerProcess
from tests.fakemodel import FakeModelServer
from tests.helpers import tersify
from tests.integration.conftest import provider_env

LONG = "".join(f"step {i}: compiled module_{i}.py\n" for i in range(400))


def doctor(settings: Settings, **env: str) -> tuple[int, list[dict[str, Any]]]:
    """Run ``tersify doctor --json``: its exit code and its findings."""
    done = tersify(settings, "doctor", "--json", timeout=90, **env)
    return done.returncode, [json.loads(line) for line in done.stdout.splitlines()]


def finding(found: list[dict[str, Any]], check: str) -> dict[str, Any]:
    """The one finding of ``check``."""
    [only] = [f for f in found if f["check"] == check]
    return only


def test_doctor_names_the_redis_it_reached_and_fails_when_none_answers(
    settings: Settings, redis_server: LocalRedis
) -> None:
    _, found = doctor(settings)
    redis = finding(found, "redis")
    port = redis_server.url.rsplit(":", 1)[1].split("/")[0]
    assert redis["level"] == "ok"
    server = rf"Redis \d+\.\d+\.\d+ \(standalone, port {port}\)"
    assert re.fullmatch(rf"{server} answers at {re.escape(settings.redis_url)}", redis["detail"])
    dead = f"redis://127.0.0.1:{free_port()}/0"
    code, found = doctor(settings, redis_url=dead)
    assert code == 1
    assert finding(found, "redis")["level"] == "fail"
    assert finding(found, "redis")["detail"].startswith(f"cannot reach Redis at {dead} (")


def test_a_wrong_database_or_password_is_named_as_such_not_as_an_outage(
    settings: Settings, redis_server: LocalRedis
) -> None:
    no_such_db = redis_server.url.rsplit("/", 1)[0] + "/99"
    code, found = doctor(settings, redis_url=no_such_db)
    assert code == 1 and "has no such database" in finding(found, "redis")["detail"]
    done = tersify(settings, "status", redis_url=no_such_db)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "has no such database (DB index is out of range)" in done.stderr
    with_password = redis_server.url.replace("redis://", "redis://:hunter2@")
    done = tersify(settings, "status", redis_url=with_password)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "refused the password" in done.stderr and "hunter2" not in done.stderr


def test_a_port_where_something_else_listens_is_told_quickly(
    settings: Settings, fake_model: FakeModelServer
) -> None:
    http = fake_model.url.replace("http://", "redis://") + "/0"
    code, found = doctor(settings, redis_url=http)
    assert code == 1
    assert finding(found, "redis")["level"] == "fail"


def test_a_misspelled_variable_is_warned_with_the_closest_name(
    settings: Settings, start_worker: Callable[..., WorkerProcess]
) -> None:
    code, found = doctor(settings, max_output_byte="100")
    assert code == 0
    assert finding(found, "settings") == {
        "check": "settings",
        "level": "warn",
        "detail": "TERSIFY_MAX_OUTPUT_BYTE is not a tersify setting: did you mean "
        "TERSIFY_MAX_OUTPUT_BYTES?",
    }
    worker = start_worker(redis_ulr="redis://elsewhere:6379/0")
    assert worker.log_path.read_text().count("TERSIFY_REDIS_ULR is not a tersify setting") == 1


def test_a_gateway_upstream_without_a_scheme_stops_every_command_in_one_line(
    settings: Settings,
) -> None:
    for command in (("doctor",), ("gateway",)):
        done = tersify(settings, *command, gateway_anthropic_upstream="api.anthropic.com")
        assert (done.returncode, done.stdout) == (2, ""), done.stderr
        assert done.stderr == (
            f"tersify {command[0]}: TERSIFY_GATEWAY_ANTHROPIC_UPSTREAM=api.anthropic.com: not an "
            "http(s) URL: write it with its scheme, as https://api.anthropic.com\n"
        )
    _, found = doctor(settings)
    assert finding(found, "gateway")["detail"].startswith(
        "`tersify gateway` forwards to https://api.anthropic.com (Anthropic)"
    )


def test_a_providers_fallback_names_the_provider_and_the_url_that_answered(
    settings: Settings,
    fake_model: FakeModelServer,
    start_worker: Callable[..., WorkerProcess],
    producer: Producer,
) -> None:
    wrong = fake_model.openai_base_url + "/v1"  # one /v1 too many: every call is a 404
    env = {**provider_env(fake_model, "openai"), "openai_base_url": wrong}
    start_worker(**env, model_max_attempts="1")
    result = producer.submit(session_id="s", tool_name="bash", output=LONG).wait(30)
    assert (result.method, result.fallback_reason) == (Method.FALLBACK, FallbackReason.CLIENT_ERROR)
    assert result.provider == "openai"
    assert result.fallback_detail and f"({wrong}/chat/completions)" in result.fallback_detail
    status = json.loads(tersify(settings, "status", "--json").stdout)
    [failure] = status["recent_failures"]
    assert failure["provider"] == "openai" and wrong in failure["detail"]
