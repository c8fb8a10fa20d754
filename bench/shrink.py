"""Benchmark the local shrinks (fallback truncation, extractive) on large outputs of each type.

Inputs are generated deterministically (seeded, no network): ~2 MB per tool type of realistic
lines (a pytest log with failures in the middle, ``rg -n`` hits, ``ls -la``, Python source, a JSON
array, a rendered doc page). Each shrink runs ``--runs`` times per type at the default 2,000-char
budget with a query; the median is reported. Run ``.venv/bin/python bench/shrink.py`` (or
``--quick`` for a smoke run); the last line is machine-readable:
``shrink: fallback_ms=A extractive_ms=B`` (the slowest type's median for each shrink).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Callable

from tersify.contract import ToolType
from tersify.worker.shrink.extractive import extract
from tersify.worker.shrink.fallback import fallback_truncate
from tersify.worker.summarize.grounding import Source, unsupported

BUDGET = 2_000
BUDGET_SECONDS = 300.0
SEED = 20261122
QUERY = "Why did the timeout test fail?"
WORDS = (
    *("request", "session", "timeout", "retry", "connection", "pool", "adapter", "header"),
    *("cookie", "redirect", "proxy", "stream", "chunk", "encoding", "response", "status"),
    *("client", "server", "handler", "worker", "queue", "broker", "result", "cache"),
)
MODULES = ("httpx", "requests", "urllib3", "celery", "kombu", "redis", "pydantic", "structlog")


def _words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _path(rng: random.Random) -> str:
    parts = [rng.choice(MODULES), *(rng.choice(WORDS) for _ in range(rng.randint(0, 2)))]
    return "/".join(parts) + f"/{rng.choice(WORDS)}_{rng.randint(1, 99)}.py"


def command_output(rng: random.Random, i: int, size: int) -> str:
    """One line of a long pytest run; failures with tracebacks near the middle."""
    if i % 997 == 500 and i * 90 < size:
        path = _path(rng)
        return (
            f"{path}:{rng.randint(10, 900)}: in test_{rng.choice(WORDS)}\n"
            f"    raise TimeoutError('read timed out after {rng.randint(1, 30)}s')\n"
            f"E   httpx.ReadTimeout: timed out\nFAILED tests/test_{rng.choice(WORDS)}.py::"
            f"test_{rng.choice(WORDS)}_{i} - httpx.ReadTimeout: timed out"
        )
    pct = min(99, i * 100 * 90 // max(size, 1))
    test = f"test_{_words(rng, 2).replace(' ', '_')}_{i}"
    return f"tests/test_{rng.choice(WORDS)}.py::{test} PASSED [{pct:3d}%]"


def search_results(rng: random.Random, i: int, size: int) -> str:
    """One ``rg -n`` hit."""
    return f"{_path(rng)}:{rng.randint(1, 4000)}:    {rng.choice(WORDS)} = {_words(rng, 6)}"


def directory_listing(rng: random.Random, i: int, size: int) -> str:
    """One ``ls -la`` row."""
    kind = rng.choice("-----d")
    suffix = "" if kind == "d" else rng.choice((".py", ".txt", ".json"))
    name = f"{rng.choice(WORDS)}_{i}{suffix}"
    return (
        f"{kind}rw-r--r--  1 dev dev {rng.randint(0, 10**7):>9} "
        f"Nov {rng.randint(1, 30):>2} {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d} {name}"
    )


def file_content(rng: random.Random, i: int, size: int) -> str:
    """One line of a Python module: definitions every few lines, bodies between."""
    if i % 12 == 0:
        return f"\ndef {rng.choice(WORDS)}_{i}(self, {rng.choice(WORDS)}: str) -> None:"
    if i % 12 == 1:
        return f'    """{_words(rng, 8).capitalize()}."""'
    args = _words(rng, 2).replace(" ", ", ")
    return f"    {rng.choice(WORDS)}_{i % 7} = self.{rng.choice(WORDS)}({args})"


def structured_data(rng: random.Random, i: int, size: int) -> str:
    """One record of a pretty-printed JSON array (the brackets are added around the lines)."""
    record = {
        "name": f"{rng.choice(MODULES)}-{rng.choice(WORDS)}-{i}",
        "version": f"{rng.randint(0, 9)}.{rng.randint(0, 40)}.{rng.randint(0, 20)}",
        "summary": _words(rng, 10),
        "requires": [rng.choice(MODULES) for _ in range(rng.randint(0, 3))],
    }
    return "  " + json.dumps(record) + ","


def web_content(rng: random.Random, i: int, size: int) -> str:
    """One line of a rendered documentation page."""
    if i % 15 == 0:
        return f"\n## {_words(rng, 3).title()}\n"
    return f"{_words(rng, 14).capitalize()}; see {rng.choice(MODULES)}.{rng.choice(WORDS)}()."


LINES: dict[ToolType, Callable[[random.Random, int, int], str]] = {
    ToolType.COMMAND_OUTPUT: command_output,
    ToolType.SEARCH_RESULTS: search_results,
    ToolType.DIRECTORY_LISTING: directory_listing,
    ToolType.FILE_CONTENT: file_content,
    ToolType.STRUCTURED_DATA: structured_data,
    ToolType.WEB_CONTENT: web_content,
}


def generate(tool_type: ToolType, size: int) -> str:
    """A deterministic output of ``tool_type`` of about ``size`` chars."""
    rng = random.Random(f"{SEED}-{tool_type.value}")
    lines: list[str] = []
    total = 0
    i = 0
    while total < size:
        line = LINES[tool_type](rng, i, size)
        lines.append(line)
        total += len(line) + 1
        i += 1
    if tool_type is ToolType.STRUCTURED_DATA:
        lines[-1] = lines[-1].rstrip(",")
        return "[\n" + "\n".join(lines) + "\n]\n"
    if tool_type is ToolType.COMMAND_OUTPUT:
        lines.append(f"==== 3 failed, {i - 3} passed in 812.44s (0:13:32) ====")
    return "\n".join(lines) + "\n"


def time_ms(shrink: Callable[[], str], runs: int) -> float:
    """Median wall time of ``runs`` calls, in milliseconds."""
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        out = shrink()
        samples.append(1000 * (time.perf_counter() - started))
        if len(out) > BUDGET:
            raise SystemExit(f"shrink returned {len(out)} chars over the {BUDGET} budget")
    return statistics.median(samples)


def measure(tool_type: ToolType, text: str, runs: int) -> tuple[float, float, float]:
    """Median ms of the fallback, the extractive shrink and grounding an answer on ``text``."""
    fb = time_ms(lambda: fallback_truncate(text, tool_type, BUDGET, QUERY), runs)
    ex = time_ms(lambda: extract(text, tool_type, BUDGET, QUERY), runs)
    # Grounding a claim-dense 800-char answer (an extract) against the whole output.
    answer = extract(text, tool_type, 800, QUERY)
    gr = time_ms(lambda: str(unsupported(answer, Source.of(text)))[:BUDGET], runs)
    return fb, ex, gr


def main(argv: list[str] | None = None) -> int:
    """Time both shrinks per type and print one line each, then the summary line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=2 * 1024 * 1024, help="chars per input")
    parser.add_argument("--runs", type=int, default=5, help="runs per type and shrink")
    parser.add_argument("--quick", action="store_true", help="smoke run: --size 65536 --runs 1")
    args = parser.parse_args(argv)
    size, runs = (65_536, 1) if args.quick else (args.size, max(1, args.runs))
    deadline = time.monotonic() + BUDGET_SECONDS
    worst = {"fallback": 0.0, "extractive": 0.0, "grounding": 0.0}
    for tool_type in ToolType:
        text = generate(tool_type, size)
        fb, ex, gr = measure(tool_type, text, runs)
        for name, ms in (("fallback", fb), ("extractive", ex), ("grounding", gr)):
            worst[name] = max(worst[name], ms)
        print(f"{tool_type.value:>16}: {len(text):>9} chars  fallback {fb:8.1f} ms  "
              f"extractive {ex:8.1f} ms  grounding {gr:6.1f} ms  (median of {runs})")  # fmt: skip
        if time.monotonic() > deadline:
            print(f"stopped: over the {BUDGET_SECONDS:.0f} s budget", file=sys.stderr)
            return 1
    print(f"grounding: slowest_ms={worst['grounding']:.1f} (800-char answer against the output)")
    print(f"shrink: fallback_ms={worst['fallback']:.1f} extractive_ms={worst['extractive']:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
