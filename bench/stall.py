"""No client stalls another: one client's latency while another floods the server.

A quiet client sends small requests one after another and times each answer, while:

- ``gateway-flood``: a loud client sends ``--loud`` Anthropic Messages requests through
  ``tersify gateway``, each with one new tool result of ``--mb`` (20) MB (cut, classified,
  hashed, compressed and summarized by a real worker); the quiet client's requests carry no
  tool result;
- ``api-flood``: a loud client POSTs ``--loud`` outputs of ``--mb`` MB to ``tersify api`` (cut,
  hashed, compressed and passed through: ``summarize: false``, no job for the worker the
  gateways share); the quiet client reads a session's gate (``GET /v1/sessions/ID/gate``);
- ``gateway-half-open`` and ``api-half-open``: ``--half-open`` (1,100) connections are opened
  and left half-sent (a third silent, a third in their headers, a third in their body); the
  quiet client's ``--probes`` requests each get 15 s, and those answered are counted;
- ``gateway-alone`` and ``api-alone``: the quiet client with nobody else, for comparison.

Servers run under a soft descriptor limit of 1,024 (``ulimit -Sn``, the usual default). With
``--against REF`` a second gateway and API run a git revision's code (``bench/shrink.py``'s
export), and every round measures both, alternately. Latencies are of the quiet client only.
Run: ``.venv/bin/python bench/stall.py --help``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import resource
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx
from _harness import FakeModelProcess, percentile, start_tersify_worker, tool_output
from shrink import export

from tersify.settings import Settings
from tersify.worker.processes.group import GroupProcess
from tersify.worker.processes.redis_server import LocalRedis, free_port
from tests.rawhttp import half_open_many

TOKEN = "bench-stall-token-0123456789abcdef"  # noqa: S105 - a loopback bench's token
HEADERS = {"x-api-key": "bench-key", "anthropic-version": "2023-06-01"}
PROBE_SECONDS = 15.0
SMALL = json.dumps(
    {"model": "m", "max_tokens": 16, "messages": [{"role": "user", "content": "ping"}]}
).encode()
OPENERS = (
    b"",
    b"POST /v1/messages HTTP/1.1\r\nHost: x\r\n",
    b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 9999\r\n\r\n{",
)


class Servers:
    """A gateway and an API of one tree (``path``: a revision's, first on the path; None: this)."""

    def __init__(self, name: str, path: Path | None, redis_url: str, upstream: str, logs: Path):
        self.name = name
        env = {"PYTHONPATH": str(path)} if path is not None else {}
        common = {"redis_url": redis_url, "log_format": "json", "log_level": "WARNING"}
        self.gateway_port, self.api_port = free_port(), free_port()
        self._processes = [
            _start(
                ["gateway", "--listen", f"127.0.0.1:{self.gateway_port}"],
                {**common, "gateway_anthropic_upstream": upstream},
                env,
                logs / f"gateway-{name}.log",
            ),
            _start(
                ["api", "--port", str(self.api_port)],
                {**common, "api_tokens": TOKEN},
                env,
                logs / f"api-{name}.log",
            ),
        ]
        for process, port in zip(self._processes, (self.gateway_port, self.api_port), strict=True):
            process.wait_until(lambda p=port: _listening(p), "server start", 60)

    def stop(self) -> None:
        """Stop both."""
        for process in self._processes:
            process.stop()


def _start(
    args: list[str], settings: dict[str, str], env: dict[str, str], log: Path
) -> GroupProcess:
    argv = ["sh", "-c", 'ulimit -Sn 1024 && exec "$@"', "sh", sys.executable, "-m"]
    argv += ["tersify.worker.cli", *args]
    child = Settings().child_env(**settings) | env
    return GroupProcess(argv, env=child, log_path=log).start()


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def quiet_until(done: threading.Event, call: Callable[[], object]) -> list[float]:
    """Milliseconds of each of the quiet client's calls, back to back, until ``done``."""
    samples = []
    while not done.is_set():
        started = time.perf_counter()
        call()
        samples.append(1000 * (time.perf_counter() - started))
    return samples


def alone(servers: Servers, api: bool, seconds: float) -> list[float]:
    """The quiet client's latencies with nobody else sending, for ``seconds``."""
    port = servers.api_port if api else servers.gateway_port
    done = threading.Event()
    threading.Timer(seconds, done.set).start()
    with httpx.Client(timeout=120) as quiet:
        call = _quiet_call(quiet, api, port)
        call()
        return quiet_until(done, call)


def flooded(servers: Servers, api: bool, loud: int, mb: float) -> list[float]:
    """The quiet client's latencies while the loud one sends ``loud`` requests of ``mb`` MB."""
    done = threading.Event()
    chars = int(mb * 1024 * 1024)
    bodies = [_big_body(api, next(_FRESH), chars) for _ in range(loud)]  # never seen
    port = servers.api_port if api else servers.gateway_port

    path, headers = ("/v1/summaries", _auth()) if api else ("/v1/messages", HEADERS)

    def shout() -> None:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=300) as client:
            for body in bodies:
                started = time.perf_counter()
                answer = client.post(path, content=body, headers=headers)
                took = time.perf_counter() - started
                what = answer.headers.get("tersify-rewrites", "")
                print(f"loud {servers.name} {path}: {answer.status_code} {what} {took:.1f}s")
        done.set()

    with httpx.Client(timeout=120) as quiet:
        call = _quiet_call(quiet, api, port)
        call()  # connected, warm
        loud_thread = threading.Thread(target=shout)
        loud_thread.start()
        samples = quiet_until(done, call)
        loud_thread.join()
    return samples


def half_open(servers: Servers, api: bool, probes: int, count: int) -> tuple[int, list[float]]:
    """How many of ``probes`` quiet requests were answered under ``count`` half-sent
    connections, and their milliseconds (an unanswered one counts ``PROBE_SECONDS``)."""
    port = servers.api_port if api else servers.gateway_port
    answered, samples = 0, []
    with half_open_many(port, count, OPENERS):
        for _ in range(probes):
            started = time.perf_counter()
            try:
                with httpx.Client(timeout=PROBE_SECONDS) as client:
                    _quiet_call(client, api, port)()
                answered += 1
            except httpx.HTTPError:
                pass
            samples.append(1000 * (time.perf_counter() - started))
    return answered, samples


def _quiet_call(client: httpx.Client, api: bool, port: int) -> Callable[[], object]:
    if api:
        url = f"http://127.0.0.1:{port}/v1/sessions/quiet/gate"
        return lambda: client.get(url, headers=_auth()).raise_for_status()
    url = f"http://127.0.0.1:{port}/v1/messages"
    return lambda: client.post(url, content=SMALL, headers=HEADERS).raise_for_status()


def _auth() -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}


def _big_body(api: bool, index: int, chars: int) -> bytes:
    output = tool_output(index, chars)
    if api:
        # passed through after the cut: the API's own work, no job for the shared worker
        submit = {"session_id": f"loud-{index}", "tool_name": "rg", "output": output}
        submit["options"] = {"summarize": False}
        return json.dumps(submit).encode()
    call = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "rg compute_"}}
    result = {"type": "tool_result", "tool_use_id": "t1", "content": output}
    messages = [
        {"role": "user", "content": "Find where compute_ is slow."},
        {"role": "assistant", "content": [call]},
        {"role": "user", "content": [result]},
    ]
    return json.dumps({"model": "m", "max_tokens": 16, "messages": messages}).encode()


_FRESH = itertools.count()
Samples = dict[tuple[str, str], list[float]]


Answered = dict[tuple[str, str], list[int]]


def run(args: argparse.Namespace, trees: list[Servers]) -> tuple[Samples, Answered]:
    """Every scenario for every tree, ``args.rounds`` times, the trees' order alternating."""
    latency: Samples = {}
    answered: Answered = {}
    deadline = time.monotonic() + args.max_seconds
    for round_no in range(args.rounds):
        order = trees if round_no % 2 == 0 else trees[::-1]
        for servers in order:
            for api in (False, True):
                kind = "api" if api else "gateway"
                latency.setdefault((f"{kind}-alone", servers.name), []).extend(
                    alone(servers, api, args.alone_seconds)
                )
                latency.setdefault((f"{kind}-flood", servers.name), []).extend(
                    flooded(servers, api, args.loud, args.mb)
                )
                got, samples = half_open(servers, api, args.probes, args.half_open)
                latency.setdefault((f"{kind}-half-open", servers.name), []).extend(samples)
                answered.setdefault((f"{kind}-half-open", servers.name), []).append(got)
        if time.monotonic() > deadline:
            print(f"timeout_after={round_no + 1} rounds", file=sys.stderr)
            break
    return latency, answered


def report(latency: Samples, answered: Answered, probes: int) -> str:
    """Print the table of the quiet client's latencies by scenario and tree; return the
    summary line (this tree's)."""
    columns = f"{'n':>6}{'p50 ms':>10}{'p99 ms':>10}{'max ms':>10}"
    print(f"{'scenario':<20}{'tree':<10}{columns}  answered")
    for (scenario, tree), samples in sorted(latency.items()):
        got = answered.get((scenario, tree))
        shown = f"{sum(got)}/{probes * len(got)}" if got else "-"
        print(
            f"{scenario:<20}{tree:<10}{len(samples):>6}{percentile(samples, 0.5):>10.1f}"
            f"{percentile(samples, 0.99):>10.1f}{max(samples):>10.1f}  {shown}"
        )
    fields = []
    for (scenario, tree), samples in sorted(latency.items()):
        if tree == "this":
            fields.append(f"{scenario.replace('-', '_')}_p99_ms={percentile(samples, 0.99):.1f}")
    for (scenario, tree), got in sorted(answered.items()):
        if tree == "this":
            fields.append(f"{scenario.replace('-', '_')}_answered={sum(got)}/{probes * len(got)}")
    return "stall: " + " ".join(fields)


def main() -> None:
    """Run the benchmark and print its table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="rounds of every scenario")
    parser.add_argument("--loud", type=int, default=3, help="20 MB requests per round")
    parser.add_argument("--probes", type=int, default=20, help="quiet requests under half-open")
    parser.add_argument("--alone-seconds", type=float, default=3.0, help="quiet client alone")
    parser.add_argument("--mb", type=float, default=20.0, help="size of each loud request")
    parser.add_argument("--half-open", type=int, default=1100, help="half-open connections")
    parser.add_argument("--against", metavar="REF", help="also measure git revision REF")
    parser.add_argument("--max-seconds", type=float, default=1800.0, help="stop after a round")
    args = parser.parse_args()
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))  # our own sockets
    with tempfile.TemporaryDirectory(prefix="tersify-bench-stall-") as tmp:
        logs = Path(tmp)
        redis = LocalRedis()
        redis.start()
        trees: list[Servers] = []
        try:
            with FakeModelProcess(0.0, logs) as fake:
                worker = start_tersify_worker(redis.url, fake.openai_base_url, "threads", 8, logs)
                try:
                    trees.append(Servers("this", None, redis.url, fake.url, logs))
                    if args.against:
                        path, legacy = export(args.against, logs / "against")
                        if legacy:
                            raise SystemExit(f"{args.against} predates the tersify layout")
                        trees.append(Servers(args.against, path, redis.url, fake.url, logs))
                    latency, answered = run(args, trees)
                finally:
                    for servers in trees:
                        servers.stop()
                    worker.stop()
        finally:
            redis.cleanup()
    print(f"quiet client's latency; loud: {args.loud} x {args.mb:g} MB per round; ", end="")
    print(f"{args.half_open} half-open")
    print(report(latency, answered, args.probes))


if __name__ == "__main__":
    main()
