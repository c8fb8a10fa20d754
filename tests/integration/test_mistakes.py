"""Each mistake a new user makes, through the real ``tersify`` command: one exact line, the
documented exit code, no traceback (real processes, a real Redis, a port where none listens)."""

from __future__ import annotations

import contextlib
import json
import re
import socket
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from tersify.settings import Settings
from tersify.worker.processes.redis_server import free_port
from tests.helpers import json_lines, tersify, tersify_argv
from tests.integration.test_api import ApiServer

LONG = "".join(f"step {i}: compiled module_{i}.py\n" for i in range(400))
REDIS_HINT = "start redis-server there, or point TERSIFY_REDIS_URL at a running one"


@dataclass(frozen=True)
class Mistake:
    """One command line a user got wrong, and what tersify must answer."""

    argv: tuple[str, ...]
    code: int
    line: str  # the whole line: {file}, {dir} and {port} filled in, {n} any number
    env: dict[str, str] = field(default_factory=dict)
    stdin: str | None = None


DEAD = "redis://127.0.0.1:{port}/0"
MISTAKES = {
    "redis down, submit": Mistake(
        ("submit", "{file}", "--tool", "bash"),
        4,
        f"tersify submit: cannot reach Redis at {DEAD} (connection refused): " + REDIS_HINT,
        {"redis_url": DEAD},
    ),
    "redis down, status": Mistake(
        ("status",),
        4,
        f"tersify status: cannot reach Redis at {DEAD} (connection refused): " + REDIS_HINT,
        {"redis_url": DEAD},
    ),
    "redis down, dead letters": Mistake(
        ("deadletters", "list"),
        4,
        f"tersify deadletters: cannot reach Redis at {DEAD} (connection refused): " + REDIS_HINT,
        {"redis_url": DEAD},
    ),
    "a password in the redis url is never shown": Mistake(
        ("gate", "status", "s1"),
        4,
        "tersify gate: cannot reach Redis at redis://***@127.0.0.1:{port}/0 (connection "
        + "refused): "
        + REDIS_HINT,
        {"redis_url": "redis://:hunter2@127.0.0.1:{port}/0"},
    ),
    "a redis url without its scheme": Mistake(
        ("submit", "{file}", "--tool", "bash"),
        2,
        (
            "tersify submit: TERSIFY_REDIS_URL=localhost:6390: not a Redis URL: use "
            "redis://HOST:PORT/DB, rediss://HOST:PORT/DB, unix:///PATH or "
            "sentinel://HOST:PORT/PRIMARY"
        ),
        {"redis_url": "localhost:6390"},
    ),
    "a sentinel url with a bad port": Mistake(
        ("submit", "{file}", "--tool", "bash"),
        2,
        ("tersify submit: TERSIFY_REDIS_URL: a Sentinel port or the database is not a number"),
        {"redis_url": "sentinel://127.0.0.1:x/primary"},
    ),
    "a missing input file": Mistake(
        ("submit", "{dir}/missing.log", "--tool", "bash"),
        2,
        ("tersify submit: cannot open {dir}/missing.log: no such file or directory"),
    ),
    "a directory as the input": Mistake(
        ("submit", "{dir}", "--tool", "bash"),
        2,
        ("tersify submit: cannot open {dir}: is a directory"),
    ),
    "a setting with a value it cannot take": Mistake(
        ("submit", "{file}", "--tool", "bash"),
        2,
        (
            "tersify submit: TERSIFY_WORKER_POOL=fork: input should be 'threads', 'prefork', "
            "'solo' or 'gevent'"
        ),
        {"worker_pool": "fork"},
    ),
    "a provider that does not exist": Mistake(
        ("worker",),
        2,
        (
            "tersify worker: TERSIFY_SUMMARY_PROVIDER=claude: no such provider (known: "
            "anthropic, extractive, openai)"
        ),
        {"summary_provider": "claude"},
    ),
    "a relative session-log directory": Mistake(
        ("forget", "s1"),
        2,
        (
            "tersify forget: TERSIFY_SESSION_LOG_DIR=logs: must be an absolute path (every "
            "command and worker must find the same files)"
        ),
        {"session_log_dir": "logs"},
    ),
    "an option value under its floor": Mistake(
        ("submit", "{file}", "--tool", "bash", "--budget-chars", "5"),
        2,
        ("tersify submit: --budget-chars 5: input should be greater than or equal to 200"),
    ),
    "a webhook with no secret to sign it": Mistake(
        ("submit", "{file}", "--tool", "bash", "--callback-url", "http://127.0.0.1:9/hook"),
        2,
        ("tersify submit: refused: callback_url needs TERSIFY_WEBHOOK_SECRET to sign the POST"),
    ),
    "a required option left out": Mistake(
        ("submit", "{file}"),
        2,
        (
            "tersify submit: the following arguments are required: --tool "
            "(see tersify submit --help)"
        ),
    ),
    "an unknown job": Mistake(
        ("result", "0" * 32),
        1,
        (f"tersify result: no job {'0' * 32!r} (never submitted, or its result expired)"),
    ),
    "a conversation over the cap": Mistake(
        ("compact", "-"),
        2,
        "tersify compact: refused: the conversation is {n} bytes, over the cap of 1,024 "
        + ("(TERSIFY_MAX_OUTPUT_BYTES): compact fewer messages, or raise the cap"),
        {"max_output_bytes": "1024"},
        json.dumps([{"role": "user", "content": "x" * 900}] * 3),
    ),
    "a worker whose provider has no key": Mistake(
        ("worker",),
        2,
        (
            "tersify worker: TERSIFY_SUMMARY_PROVIDER=anthropic but TERSIFY_ANTHROPIC_API_KEY "
            "is unset: set TERSIFY_ANTHROPIC_API_KEY, or TERSIFY_ALLOW_MISSING_KEY=true to "
            "start with fallbacks only"
        ),
        {"summary_provider": "anthropic"},
    ),
    "a worker with webhooks on and no secret": Mistake(
        ("worker",),
        2,
        (
            "tersify worker: TERSIFY_WEBHOOK_ALLOWED_URLS is set but TERSIFY_WEBHOOK_SECRET is "
            "not: no webhook could be signed or sent; set the secret (the same on producers and "
            "workers), or empty the allow-list"
        ),
        {"webhook_allowed_urls": "http://127.0.0.1:9/hooks/"},
    ),
    "the api with a setting it cannot take": Mistake(
        ("api", "--port", "{port}"),
        2,
        "tersify api: TERSIFY_API_MAX_WAIT_SECONDS=900: input should be less than "
        + ("or equal to 300"),
        {"api_max_wait_seconds": "900", "api_insecure_no_auth": "true"},
    ),
    "the mcp proxy with no server to run": Mistake(
        ("mcp-proxy",),
        2,
        "tersify mcp-proxy: give the MCP server's command: tersify mcp-proxy -- "
        + ("COMMAND [ARGS…]"),
    ),
}


@pytest.mark.parametrize("mistake", MISTAKES.values(), ids=list(MISTAKES))
def test_each_mistake_ends_in_one_exact_line_and_its_exit_code(
    mistake: Mistake, settings: Settings, tmp_path: Path
) -> None:
    (tmp_path / "out.log").write_text(LONG)
    names = {"file": str(tmp_path / "out.log"), "dir": str(tmp_path), "port": str(free_port())}
    argv = [arg.format(**names) for arg in mistake.argv]
    env = {k: v.format(**names) for k, v in mistake.env.items()}
    done = tersify(settings, *argv, stdin=mistake.stdin, timeout=60, **env)
    assert (done.returncode, done.stdout) == (mistake.code, ""), done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.endswith("\n") and done.stderr.count("\n") == 1, done.stderr
    parts = mistake.line.format(**names, n="\x00").split("\x00")
    assert re.fullmatch(r"[\d,]+".join(map(re.escape, parts)), done.stderr[:-1]), done.stderr


def test_version_and_help_are_plain_text(settings: Settings) -> None:
    version = tersify(settings, "--version")
    assert re.fullmatch(r"tersify \d+\.\d+\.\d+\n", version.stdout)
    helped = tersify(settings, "--help")
    assert "``" not in helped.stdout and "exit status: 0 done;" in helped.stdout
    assert "-E, --task-events" in tersify(settings, "worker", "--help").stdout


def test_debug_adds_the_traceback_above_the_same_line(settings: Settings, tmp_path: Path) -> None:
    (tmp_path / "out.log").write_text(LONG)
    dead = f"redis://127.0.0.1:{free_port()}/0"
    plain = tersify(settings, "submit", str(tmp_path / "out.log"), "--tool", "b", redis_url=dead)
    flagged = tersify(
        settings, "--debug", "submit", str(tmp_path / "out.log"), "--tool", "b", redis_url=dead
    )
    by_env = tersify(
        settings, "submit", str(tmp_path / "out.log"), "--tool", "b", redis_url=dead, debug="1"
    )
    for debugged in (flagged, by_env):
        assert debugged.returncode == plain.returncode == 4
        assert debugged.stderr.startswith("Traceback (most recent call last):")
        assert debugged.stderr.endswith(plain.stderr)


def test_a_result_queued_with_no_live_worker_says_so(settings: Settings) -> None:
    queued = tersify(settings, "submit", "-", "--tool", "bash", "--no-wait", stdin=LONG)
    assert queued.returncode == 0, queued.stderr
    job_id = queued.stdout.strip()
    done = tersify(settings, "result", job_id)
    assert (done.returncode, done.stdout) == (3, "")
    assert done.stderr == (
        f"tersify result: job {job_id} is queued — no live worker serves interactive (no "
        "heartbeat in 30s): start one with `tersify worker`\n"
    )


def test_a_reader_that_goes_away_ends_the_command_quietly(
    settings: Settings, tmp_path: Path
) -> None:
    # `tersify submit … | head -0`: the pipe's reader is gone before the summary is printed
    reader_gone = subprocess.Popen(
        tersify_argv("submit", "-", "--tool", "bash"),
        env=settings.child_env(redis_url=settings.redis_url),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert reader_gone.stdout is not None and reader_gone.stdin is not None
    reader_gone.stdout.close()
    _, err = reader_gone.communicate(b"short output\n" * 10, timeout=60)
    assert reader_gone.returncode == 141
    assert all(line.startswith(b"# ") for line in err.splitlines()), err  # what it is, only


def test_the_api_on_a_dead_redis_warns_at_start_and_answers_one_problem(
    settings: Settings, tmp_path: Path
) -> None:
    dead = Settings(redis_url=f"redis://127.0.0.1:{free_port()}/0")
    logs = str(tmp_path / "sessions")
    api = ApiServer(
        dead, tmp_path, workers=1, api_insecure_no_auth="true", session_log_dir=logs
    ).start()
    try:
        answer = httpx.post(
            f"{api.url}/v1/summaries",
            json={"session_id": "s1", "tool_name": "bash", "output": LONG},
            timeout=30,
        )
    finally:
        api.stop()
    assert answer.status_code == 503
    assert answer.json()["detail"] == "Redis is unreachable; nothing was done, try again"
    logged = json_lines(api.log())
    warned = [e for e in logged if e.get("event") == "startup_check_warned"]
    assert [w["check"] for w in warned] == ["redis"]
    assert warned[0]["detail"].startswith(f"cannot reach Redis at {dead.redis_url} ")
    (listening,) = [e for e in logged if e.get("event") == "api_listening"]
    assert listening["url"] == api.url


SERVERS_ON_A_BUSY_PORT = {
    "api": (("api", "--port", "{port}"), "--port"),
    "api --workers 2": (("api", "--port", "{port}", "--workers", "2"), "--port"),
    "gateway": (("gateway", "--listen", "127.0.0.1:{port}"), "--listen"),
    "mcp-proxy": (("mcp-proxy", "--listen", "127.0.0.1:{port}", "--", "true"), "--listen"),
}


@pytest.mark.parametrize(
    "argv, option", SERVERS_ON_A_BUSY_PORT.values(), ids=list(SERVERS_ON_A_BUSY_PORT)
)
def test_a_server_on_a_port_in_use_says_so_in_one_line_before_any_listening_line(
    argv: tuple[str, ...], option: str, settings: Settings
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = tersify(
            settings,
            *(arg.format(port=port) for arg in argv),
            timeout=60,
            api_insecure_no_auth="true",
            log_format="json",
        )
    command = argv[0]
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"tersify {command}: cannot listen on 127.0.0.1:{port}: the port is in use (another "
        f"server is there): stop it, or choose another {option}\n"
    )


@contextlib.contextmanager
def listener(greeting: bytes) -> Iterator[int]:
    """A loopback port that takes every connection, says ``greeting`` and nothing more."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        held: list[socket.socket] = []
        server.settimeout(0.2)
        stop = threading.Event()

        def take() -> None:
            while not stop.is_set():
                with contextlib.suppress(OSError):
                    conn = server.accept()[0]
                    held.append(conn)
                    conn.sendall(greeting)

        taker = threading.Thread(target=take, daemon=True)
        taker.start()
        yield server.getsockname()[1]
        stop.set()
        taker.join(timeout=5)
        for conn in held:
            conn.close()


@pytest.mark.parametrize(
    "argv", [("submit", "-", "--tool", "bash"), ("result", "abc"), ("status",)]
)
def test_a_url_where_something_else_listens_is_a_configuration_mistake_told_at_once(
    argv: tuple[str, ...], settings: Settings
) -> None:
    silent, web = b"", b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"
    for greeting, why in (
        (silent, "gave no Redis answer within 5 s"),
        (web, "answered, but not as Redis does"),
    ):
        with listener(greeting) as port:
            url = f"redis://127.0.0.1:{port}/0"
            # bounded well under the retries of a silent server (4 × 10 s) it used to wait out
            done = tersify(settings, *argv, stdin=LONG, timeout=30, redis_url=url)
        assert (done.returncode, done.stdout) == (2, ""), done.stderr
        assert done.stderr == (
            f"tersify {argv[0]}: the server at {url} is not Redis (127.0.0.1:{port} {why}): "
            "TERSIFY_REDIS_URL names the wrong port or host\n"
        )
