"""A job's CPU in the worker, item by item: what tersify does around the one model call.

One thread runs ``tersify.worker.jobs.summary.process`` — the whole job after Celery handed it
over — on ``--jobs`` real messages (submitted by a ``Producer`` to a private redis-server, each
a ~4 KB grep-like output summarized by the loopback fake model answering at once), with the
shipped settings. Each item is a function of the job's path, timed with ``time.thread_time``
around its calls (its own time: an item's inner items are not counted twice); "the rest" is
what ``process`` spends outside them. Celery's own work per message (taking, acking, its
request and trace objects) is not in it: ``throughput.py`` measures whole workers. Run:
``.venv/bin/python bench/job_cpu.py --help``.
"""

from __future__ import annotations

import argparse
import base64
import functools
import json
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

import redis
from _harness import FakeModelProcess, percentile, tool_output

import tersify.contract
from tersify.client import Producer
from tersify.settings import Settings
from tersify.worker.jobs import results, summary
from tersify.worker.model.providers import http
from tersify.worker.processes.redis_server import LocalRedis
from tersify.worker.redact import Redactor
from tersify.worker.runtime.logconfig import configure_logging
from tersify.worker.runtime.runtime import Runtime
from tersify.worker.summarize import summarizer

WARM_UP = 20


class Clock:
    """Thread CPU spent in each timed item, its own only (inner items are subtracted)."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = defaultdict(float)
        self._inner: list[float] = []

    def timed(self, item: str, function: Callable[..., Any]) -> Callable[..., Any]:
        """``function``, its calls' own CPU time added to ``item``."""

        @functools.wraps(function)
        def measured(*args: Any, **kwargs: Any) -> Any:
            started = time.thread_time()
            self._inner.append(0.0)
            try:
                return function(*args, **kwargs)
            finally:
                took = time.thread_time() - started
                self.spent[item] += took - self._inner.pop()
                if self._inner:
                    self._inner[-1] += took

        return measured


def instrument(clock: Clock, rt: Runtime) -> None:
    """Time each item of the job's path where ``process`` finds it."""
    t = clock.timed
    summary.parse_message = t("message: validated into the typed job", summary.parse_message)
    take = getattr(summary, "_take", None)  # older revisions read in a pipeline: "the rest"
    if take is not None:
        reads = "reads: one script (result, output, marker, cache)"
        summary._take = lambda client: t(reads, take(client))
    summary.classify = t("classification (the worker's own)", summary.classify)
    header = getattr(tersify.contract, "SummaryHeader", None)  # older: the job rebuilt, "the rest"
    if header is not None:
        header.with_output = t("job: header joined with its output", header.with_output)
    summary.log_output = t("session log: the output", summary.log_output)
    Redactor.job = t("redaction: the model's input", Redactor.job)
    # The prompt is built where the summarizer's path calls it: sized to the context (``fit``)
    # since windows, in the summarizer itself before.
    builder = sys.modules.get("tersify.worker.summarize.fit", summarizer)
    builder.build_request = t("prompt: the numbered view, fenced", builder.build_request)
    summarizer.ask_model = t("model route: circuit, rate limit, retries", summarizer.ask_model)
    provider = rt.routes[0].provider
    provider._build = t("model call: the request body (JSON)", provider._build)
    http.post_json = t("model call: HTTP (httpx)", http.post_json)
    summarizer.check_answer = t("answer: read and grounded", summarizer.check_answer)
    summary.make_result = t("result: assembled", summary.make_result)
    summary.store = t("store: the rest (result redaction, callbacks)", results.store)
    rt.gate.complete = t("store: result, gate, counts (one script)", rt.gate.complete)
    results.metrics.observe = t("metrics: Prometheus counters", results.metrics.observe)
    rt.session_log.append_result = t("session log: the result", rt.session_log.append_result)
    results.log = _Logger(t("log line: summary_completed", results.log.info), results.log)


class _Logger:
    """``results.log`` with its ``info`` timed."""

    def __init__(self, info: Callable[..., Any], logger: Any) -> None:
        self.info = info
        self._logger = logger

    def __getattr__(self, name: str) -> Any:
        return getattr(self._logger, name)


def messages(url: str, count: int, first: int) -> list[dict[str, Any]]:
    """Submit ``count`` jobs (outputs ``first``… : none repeats, or the summary cache would
    answer it) and take their messages off the queue, as a worker would."""
    settings = Settings(redis_url=url)
    with Producer(settings) as producer:
        for i in range(first, first + count):
            output = tool_output(i)
            producer.submit(session_id=f"cpu-{i % 64}", tool_name="grep", output=output)
    client = redis.Redis.from_url(url)
    taken = []
    try:
        while (raw := client.rpop("interactive")) is not None:
            body = json.loads(base64.b64decode(json.loads(raw)["body"]))
            taken.append(body[0][0])
    finally:
        client.close()
    return taken


def run(jobs: int, rounds: int) -> tuple[dict[str, list[float]], list[float]]:
    """Each item's CPU per job in each round, and each round's total per job (ms)."""
    spent: dict[str, list[float]] = defaultdict(list)
    totals: list[float] = []
    with (
        TemporaryDirectory(prefix="tersify-bench-") as tmp,
        LocalRedis() as server,
        FakeModelProcess(0, Path(tmp)) as fake,
    ):
        settings = Settings(
            redis_url=server.url,
            summary_provider="openai",
            openai_base_url=fake.openai_base_url,
            openai_api_key="k",
            log_format="json",
            session_log_dir=Path(tmp) / "sessions",
            job_deadline_seconds=900,  # one thread runs them all: no deadline may end one
            gate_lease_seconds=900,
            gate_max_seconds=960,
        )
        configure_logging(settings)
        rt = Runtime.build(settings)
        try:
            for message in messages(server.url, WARM_UP, -WARM_UP):
                summary.process(message, rt)
            clock = Clock()
            instrument(clock, rt)
            for number in range(rounds):
                taken = messages(server.url, jobs, number * jobs)
                clock.spent.clear()
                started = time.thread_time()
                for message in taken:
                    summary.process(message, rt)
                total = time.thread_time() - started
                clock.spent["the rest: spans, contexts, cache key"] = total - sum(
                    clock.spent.values()
                )
                for item, seconds in clock.spent.items():
                    spent[item].append(seconds * 1e3 / len(taken))
                totals.append(total * 1e3 / len(taken))
        finally:
            rt.close()
    return spent, totals


def main(argv: list[str] | None = None) -> int:
    """Run the jobs, print each item's CPU per job (median round) and one summary line."""
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--jobs", type=int, default=2000)
    p.add_argument("--rounds", type=int, default=3, help="each item's median over rounds")
    args = p.parse_args(argv)
    spent, totals = run(args.jobs, args.rounds)
    medians = {item: percentile(values, 0.5) for item, values in spent.items()}
    for item, ms in sorted(medians.items(), key=lambda kv: -kv[1]):
        print(f"{ms:7.3f} ms  {item}")
    total = percentile(totals, 0.5)
    model = sum(ms for item, ms in medians.items() if item.startswith("model call"))
    print(
        f"job_cpu: total_ms={total:.3f} model_call_ms={model:.3f} around_ms={total - model:.3f} "
        f"jobs={args.jobs} rounds={args.rounds}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
