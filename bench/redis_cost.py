"""Redis commands per job: what one primary does for each summary, counted by Redis itself.

One shipped worker and one ``Producer`` on a private redis-server; ``--jobs`` jobs over
``--sessions`` sessions are submitted, then each is waited for. The server's statistics are
reset just before the first submit and read (``INFO commandstats``) once the last result is
in, so everything is counted: the producer's writes and reads, the worker's take, heartbeats,
lease renewals and chores, and the commands Lua scripts run inside Redis (Redis counts those
too). A ``MONITOR`` connection beside it tells the commands a client sent apart from those a
script ran (``sent_per_job``), and ``INFO cpu`` gives the server's own CPU time per job (what
bounds how many jobs one primary serves; the MONITOR stream adds to it alike for every
revision). ``--by-key`` lists, from the watched run, each command per key family (ids folded),
sent or run by a script, an ``EVALSHA`` by the name of its script where it is one of tersify's
(``{id}`` otherwise). Run: ``.venv/bin/python bench/redis_cost.py --help``.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import re
import sys
import threading
import time
from collections import Counter
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from tempfile import TemporaryDirectory

import redis
from _harness import FakeModelProcess, start_tersify_worker, tool_output

from tersify.client import Producer
from tersify.settings import Settings
from tersify.worker.processes.redis_server import LocalRedis

# The bench's own bookkeeping, never charged to the jobs.
OWN = {"config|resetstat", "info", "monitor", "client|setname", "echo"}
# Ids folded out of key names, so keys of one family count together.
_SESSION = re.compile(r"cost-\d+")
_ID = re.compile(r"[0-9a-f]{16,}")


# Scripts run by EVALSHA, named by module and attribute (those a revision lacks are skipped).
_SCRIPTS = {
    "tersify.worker.jobs.summary": {"_TAKE": "take"},
    "tersify.worker.model.circuit": {"_ADMIT": "circuit admit", "_RECORD": "circuit record"},
    "tersify.worker.model.ratelimit": {"_TAKE": "rate limit"},
    "tersify.worker.store.passthroughs": {"_TAKE": "session log take"},
}


def script_names() -> dict[str, str]:
    """SHA-1 → name of every script of tersify's that is run by ``EVALSHA``."""
    found: dict[str, str] = {}
    sources: list[tuple[str, object]] = []
    try:
        from tersify.gate.scripts import SOURCES

        sources += [(f"gate {name}", source) for name, source in SOURCES.items()]
    except ImportError:
        pass
    for module, names in _SCRIPTS.items():
        try:
            loaded = importlib.import_module(module)
        except ImportError:
            continue
        sources += [(name, getattr(loaded, attr, None)) for attr, name in names.items()]
    for name, source in sources:
        if isinstance(source, str):
            found[hashlib.sha1(source.encode(), usedforsecurity=False).hexdigest()] = name
    return found


def family(words: list[str], scripts: dict[str, str] | None = None) -> str:
    """The key family a command names first: its key with session ids and hex ids folded (an
    ``EVALSHA``'s script by name when ``scripts`` knows it)."""
    if len(words) < 2:
        return ""
    first = words[1].strip('"')
    if scripts and words[0].strip('"').lower() == "evalsha" and first in scripts:
        return f"[{scripts[first]}]"
    return _ID.sub("{id}", _SESSION.sub("{s}", first))


class Monitor:
    """Counts, from ``MONITOR``, the commands clients sent and the commands scripts ran."""

    def __init__(self, url: str) -> None:
        self._client = redis.Redis.from_url(url)
        self.sent: Counter[str] = Counter()
        self.scripted: Counter[str] = Counter()
        self.by_key: Counter[tuple[bool, str, str]] = Counter()
        self._on = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._scripts = script_names()

    def _read(self) -> None:
        with self._client.monitor() as monitor:
            self._on.set()
            for line in monitor.listen():
                text = str(line.get("command", ""))
                if "stop-monitor" in text:
                    return
                words = text.split(" ", 2)
                command = words[0].strip('"').lower()
                scripted = line.get("client_type") == "lua"
                (self.scripted if scripted else self.sent)[command] += 1
                self.by_key[(scripted, command, family(words, self._scripts))] += 1

    def __enter__(self) -> Monitor:
        self._thread.start()
        self._on.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        marker = redis.Redis(connection_pool=self._client.connection_pool)
        marker.echo("stop-monitor")
        self._thread.join(10)
        self._client.close()


def commandstats(client: redis.Redis) -> Counter[str]:
    """Calls per command since the last reset, the bench's own left out."""
    stats = client.info("commandstats")
    return Counter(
        {
            name.removeprefix("cmdstat_"): int(entry["calls"])
            for name, entry in stats.items()
            if name.removeprefix("cmdstat_") not in OWN
        }
    )


def server_cpu(client: redis.Redis) -> float:
    """The server's CPU seconds so far (user + system, every thread)."""
    cpu = client.info("cpu")
    return float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"])


@dataclass
class Pass:
    """One run's counts: every command Redis ran, those clients sent and those scripts ran."""

    counts: Counter[str]
    sent: Counter[str] = field(default_factory=Counter)
    scripted: Counter[str] = field(default_factory=Counter)
    by_key: Counter[tuple[bool, str, str]] = field(default_factory=Counter)
    seconds: float = 0.0
    cpu_seconds: float = 0.0


def run(args: argparse.Namespace, watch: bool) -> Pass:
    """Submit and wait for every job; what Redis ran for them (``watch``: through MONITOR too,
    which costs the server time of its own, so the CPU is read on a pass without it)."""
    texts = [tool_output(i, args.chars) for i in range(args.jobs)]
    with (
        TemporaryDirectory(prefix="tersify-bench-") as tmp,
        LocalRedis() as server,
        FakeModelProcess(args.latency_ms, Path(tmp)) as fake,
    ):
        worker = start_tersify_worker(
            server.url, fake.openai_base_url, args.pool, args.concurrency, Path(tmp)
        )
        admin = redis.Redis.from_url(server.url)
        try:
            with (
                Producer(Settings(redis_url=server.url)) as producer,
                Monitor(server.url) if watch else nullcontext() as monitor,
            ):
                producer.live_workers()  # connections made before the count starts
                time.sleep(args.settle_seconds)  # the worker's start-up chores are not jobs
                admin.config_resetstat()
                cpu, started = server_cpu(admin), time.perf_counter()
                handles = [
                    producer.submit(
                        session_id=f"cost-{i % args.sessions}",
                        tool_name="grep",
                        output=text,
                        command=args.command,
                    )
                    for i, text in enumerate(texts)
                ]
                deadline = time.monotonic() + args.max_seconds
                for handle in handles:
                    handle.wait(timeout=max(0.1, deadline - time.monotonic()))
                done = Pass(commandstats(admin), seconds=time.perf_counter() - started)
                done.cpu_seconds = server_cpu(admin) - cpu
            if monitor is not None:
                done.sent = Counter({k: v for k, v in monitor.sent.items() if k not in OWN})
                done.scripted = monitor.scripted
                done.by_key = monitor.by_key
            return done
        finally:
            admin.close()
            worker.stop()


def main(argv: list[str] | None = None) -> int:
    """Count the commands of two runs (plain, then watched); print the heaviest commands and
    one summary line."""
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--jobs", type=int, default=200)
    p.add_argument("--sessions", type=int, default=50)
    p.add_argument("--chars", type=int, default=4000)
    p.add_argument("--latency-ms", type=float, default=200.0, help="fake model latency")
    p.add_argument("--pool", default="threads")
    p.add_argument("--concurrency", type=int, default=50)
    p.add_argument("--settle-seconds", type=float, default=1.0)
    p.add_argument("--top", type=int, default=30, help="commands listed")
    p.add_argument("--max-seconds", type=float, default=120.0)
    p.add_argument(
        "--command", help="the command every job ran (its re-runs are looked up and recorded)"
    )
    p.add_argument("--by-key", action="store_true", help="each command per key family too")
    args = p.parse_args(argv)
    plain, watched = run(args, watch=False), run(args, watch=True)
    per = args.jobs
    for name, calls in plain.counts.most_common(args.top):
        print(
            f"  {name:<22} {calls / per:6.2f}/job  sent {watched.sent[name] / per:6.2f}  "
            f"in scripts {watched.scripted[name] / per:6.2f}"
        )
    if args.by_key:
        for (scripted, name, key), calls in watched.by_key.most_common():
            if name not in OWN and calls / per >= 0.005:
                where = "script" if scripted else "sent  "
                print(f"  {where} {name:<16} {key:<44} {calls / per:6.2f}/job")
    print(f"{args.jobs} jobs over {args.sessions} sessions in {plain.seconds:.2f} s")
    print(
        f"redis_cost: commands_per_job={plain.counts.total() / per:.1f} "
        f"sent_per_job={watched.sent.total() / per:.1f} "
        f"scripted_per_job={watched.scripted.total() / per:.1f} "
        f"redis_cpu_ms_per_job={plain.cpu_seconds * 1e3 / per:.3f} jobs={args.jobs} "
        f"sessions={args.sessions} latency_ms={args.latency_ms:g} seconds={plain.seconds:.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
