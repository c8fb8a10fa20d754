"""What ``tersify gateway`` adds to a model request: p50/p99, by what the request needs.

One client sends Anthropic Messages requests like a coding agent's — a system prompt, tools and
a history of ``--history`` large tool results — to the fake model directly and through the
gateway, alternately (the machine drifts), one request at a time:

- ``none``: no tool result over the threshold (the gateway reads the request and forwards it);
- ``cached``: the history's results, all replaced in an earlier turn (one Redis read, a splice);
- ``uncached``: the same history plus one new large result: a job through the queue to a real
  worker, which summarizes it with the fake model's OpenAI endpoint (``--latency-ms``).

Added latency is through-the-gateway minus direct, paired round by round. A real agent's model
answers in seconds; the fake answers at once, so every millisecond shown is tersify's.
Run: ``.venv/bin/python bench/gateway.py --help``.
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

import httpx
from _harness import FakeModelProcess, percentile, start_tersify_worker, tool_output

from tersify.settings import Settings
from tersify.worker.processes.group import GroupProcess
from tersify.worker.processes.redis_server import LocalRedis, free_port

HEADERS = {"x-api-key": "bench-key", "anthropic-version": "2023-06-01", "x-tersify-session": "b"}
KINDS = ("none", "cached", "uncached")


_COMMAND = {"type": "object", "properties": {"command": {"type": "string"}}}
_ANY = {"type": "object"}


def conversation(history: int, chars: int, new: int | None) -> dict[str, Any]:
    """An agent's request: ``history`` large tool results (``chars`` each), plus a new one."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Find where compute_ is slow."}]
    for index in [*range(history), *([] if new is None else [10_000 + new])]:
        call = {"type": "tool_use", "id": f"t{index}", "name": "Bash", "input": {"command": "rg x"}}
        result = {"type": "tool_result", "tool_use_id": f"t{index}"}
        messages.append({"role": "assistant", "content": [call]})
        messages.append(
            {"role": "user", "content": [{**result, "content": tool_output(index, chars)}]}
        )
    return {
        "model": "claude-opus-5-5",
        "max_tokens": 1024,
        "system": "You are a coding agent. " * 400,
        "tools": [
            {"name": "Bash", "description": "Runs a command.", "input_schema": _COMMAND},
            *(
                {"name": f"tool_{n}", "description": "d " * 200, "input_schema": _ANY}
                for n in range(7)
            ),
        ],
        "messages": messages,
    }


def small(history: int) -> dict[str, Any]:
    """The same shape with short tool results only: nothing to replace."""
    return conversation(history, 500, None)


def timed(client: httpx.Client, url: str, body: bytes) -> float:
    """Seconds for one request's whole answer."""
    started = time.perf_counter()
    response = client.post(url + "/v1/messages", content=body, headers=HEADERS)
    response.raise_for_status()
    return time.perf_counter() - started


def start_gateway(redis_url: str, upstream: str, log_dir: Path) -> tuple[GroupProcess, str]:
    """``tersify gateway`` on a free port in front of ``upstream``."""
    port = free_port()
    env = Settings().child_env(
        redis_url=redis_url,
        gateway_anthropic_upstream=upstream,
        log_format="json",
        log_level="WARNING",
    )
    argv = [sys.executable, "-m", "tersify.worker.cli", "gateway", "--listen", f"127.0.0.1:{port}"]
    process = GroupProcess(argv, env=env, log_path=log_dir / "gateway.log").start()
    process.wait_until(lambda: _listening(port), "gateway start", 30)
    return process, f"http://127.0.0.1:{port}"


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


Pairs = dict[str, list[tuple[float, float]]]


def measure(args: argparse.Namespace, direct: str, through: str) -> Pairs:
    """``(through, direct)`` seconds per kind, ``args.requests`` rounds (within ``max_seconds``)."""
    bodies: dict[str, Callable[[int], bytes]] = {
        "none": lambda _: json.dumps(small(args.history)).encode(),
        "cached": lambda _: json.dumps(conversation(args.history, args.chars, None)).encode(),
        "uncached": lambda n: json.dumps(conversation(args.history, args.chars, n)).encode(),
    }
    pairs: Pairs = {kind: [] for kind in KINDS}
    deadline = time.monotonic() + args.max_seconds
    with httpx.Client(timeout=60) as client:
        timed(client, through, bodies["cached"](0))  # the history's turn: replaced once
        for n in range(1, args.requests + 1):
            for kind in KINDS:
                body = bodies[kind](n)
                if n % 2:  # alternate which goes first
                    gone, base = timed(client, through, body), timed(client, direct, body)
                else:
                    base, gone = timed(client, direct, body), timed(client, through, body)
                pairs[kind].append((gone, base))
            if time.monotonic() > deadline:
                print(f"timeout_after={n} rounds", file=sys.stderr)
                break
    return pairs


def own_seconds(metrics: str) -> dict[str, float]:
    """Mean milliseconds the gateway spent before forwarding, by work, from its histogram."""
    sums: dict[str, dict[str, float]] = {}
    for line in metrics.splitlines():
        for part in ("sum", "count"):
            prefix = f'tersify_gateway_added_seconds_{part}{{work="'
            if line.startswith(prefix):
                work, value = line[len(prefix) :].split('"} ')
                sums.setdefault(work, {})[part] = float(value)
    return {w: 1000 * v["sum"] / v["count"] for w, v in sums.items() if v.get("count")}


def report(pairs: Pairs) -> str:
    """Print the table; return the summary line."""
    print(f"{'kind':<10}{'direct p50':>12}{'through p50':>13}{'added p50':>11}{'added p99':>11}")
    fields = []
    for kind in KINDS:
        added = [(gone - base) * 1000 for gone, base in pairs[kind]]
        direct = percentile([base * 1000 for _, base in pairs[kind]], 0.50)
        through = percentile([gone * 1000 for gone, _ in pairs[kind]], 0.50)
        p50, p99 = percentile(added, 0.50), percentile(added, 0.99)
        print(f"{kind:<10}{direct:>12.2f}{through:>13.2f}{p50:>11.2f}{p99:>11.2f}")
        fields += [f"{kind}_p50_ms={p50:.2f}", f"{kind}_p99_ms={p99:.2f}"]
    return "gateway: " + " ".join(fields) + f" rounds={len(pairs['none'])}"


def main() -> None:
    """Run the benchmark and print a table and a summary line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=200, help="rounds (one request per kind)")
    parser.add_argument("--history", type=int, default=10, help="large tool results in history")
    parser.add_argument("--chars", type=int, default=20_000, help="size of each large result")
    parser.add_argument("--latency-ms", type=float, default=0.0, help="the fake model's latency")
    parser.add_argument("--max-seconds", type=float, default=600.0, help="stop measuring after")
    args = parser.parse_args()
    with TemporaryDirectory(prefix="tersify-bench-gateway-") as tmp:
        log_dir = Path(tmp)
        redis = LocalRedis()
        redis.start()
        try:
            with FakeModelProcess(args.latency_ms, log_dir) as fake:
                worker = start_tersify_worker(
                    redis.url, fake.openai_base_url, "threads", 8, log_dir
                )
                gateway, url = start_gateway(redis.url, fake.url, log_dir)
                try:
                    pairs = measure(args, fake.url, url)
                    own = own_seconds(httpx.get(url + "/tersify/metrics", timeout=10).text)
                finally:
                    gateway.stop()
                    worker.stop()
        finally:
            redis.cleanup()
    size = len(json.dumps(conversation(args.history, args.chars, None)))
    print(f"request ~{size // 1024} KiB, {args.history} large results of {args.chars} chars; ms:")
    print(
        "the gateway's own time before forwarding (mean ms, tersify_gateway_added_seconds): ",
        end="",
    )
    print(", ".join(f"{work} {ms:.2f}" for work, ms in own.items()))
    print(report(pairs))


if __name__ == "__main__":
    main()
