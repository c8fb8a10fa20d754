"""Benchmark the local shrinks (fallback truncation, extractive) on large outputs of each type.

Inputs are generated deterministically (seeded, no network): ~2 MB per tool type of realistic
lines (a pytest log with failures in the middle, ``rg -n`` hits, ``ls -la``, Python source, a JSON
array, a rendered doc page). Each shrink runs ``--runs`` times per type at the default 2,000-char
budget with a query; the median is reported. Run ``.venv/bin/python bench/shrink.py`` (or
``--quick`` for a smoke run); the last line is machine-readable:
``shrink: fallback_ms=A extractive_ms=B`` (the slowest type's median for each shrink).

``--against REF`` times the engine of a git revision (``git archive REF`` of ``worker/`` and
``producer/``, unpacked in a temporary folder and laid out as the package that revision
installs: ``tersify``, or the older top-level ``producer`` and ``worker``) beside this one on
the same inputs: each of
``--rounds`` rounds runs this tree, then REF, each in a fresh process, so drift of a shared
machine shows in both columns alike; the medians over the rounds are printed side by side,
with ``against: fallback_ms=C extractive_ms=D ref=REF`` before the last line.

``--clock cpu`` times each run by the process's own CPU time rather than the wall clock (on a
shared, loaded machine the wall clock measures the others' work too). ``--content flood`` gives
every type the same input: compiler errors on every line, the flood whose cost must stay
bounded.
"""

from __future__ import annotations

import argparse
import importlib
import json
import random
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from io import BytesIO
from pathlib import Path
from typing import Any

from tersify.contract import ToolType

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


def flood(rng: random.Random, i: int, size: int) -> str:
    """A compiler that reports an error on every line (``--content flood``, for every type)."""
    return f"src/{_path(rng)}:{i % 9000}:{i % 80}: error: expected ';' before '}}' in f_{i}"


FLOOD = False
"""``--content flood``: every type's input is ``flood`` lines, the case that must stay linear."""


def generate(tool_type: ToolType, size: int) -> str:
    """A deterministic output of ``tool_type`` of about ``size`` chars."""
    rng = random.Random(f"{SEED}-{tool_type.value}")
    lines: list[str] = []
    total = 0
    i = 0
    make = flood if FLOOD else LINES[tool_type]
    while total < size:
        line = make(rng, i, size)
        lines.append(line)
        total += len(line) + 1
        i += 1
    if FLOOD:
        return "\n".join(lines) + "\n"
    if tool_type is ToolType.STRUCTURED_DATA:
        lines[-1] = lines[-1].rstrip(",")
        return "[\n" + "\n".join(lines) + "\n]\n"
    if tool_type is ToolType.COMMAND_OUTPUT:
        lines.append(f"==== 3 failed, {i - 3} passed in 812.44s (0:13:32) ====")
    return "\n".join(lines) + "\n"


CLOCK = time.perf_counter
"""Wall time; ``--clock cpu`` counts only the process's own CPU time, which a shared machine's
other work disturbs far less."""


def time_ms(shrink: Callable[[], str], runs: int) -> float:
    """Median wall time of ``runs`` calls, in milliseconds."""
    samples = []
    for _ in range(runs):
        started = CLOCK()
        out = shrink()
        samples.append(1000 * (CLOCK() - started))
        if len(out) > BUDGET:
            raise SystemExit(f"shrink returned {len(out)} chars over the {BUDGET} budget")
    return statistics.median(samples)


def measure(
    tool_type: ToolType, text: str, runs: int, *, legacy: bool = False
) -> tuple[float, float, float]:
    """Median ms of the fallback, the extractive shrink and grounding an answer on ``text``.

    ``legacy``: time a revision from before the ``tersify`` import name (its path set first).
    """
    # Imported here: a process timing another revision puts that tree first on its path.
    extract, fallback_truncate, grounding = _engine(legacy)  # the same names either layout
    Source, unsupported = grounding.Source, grounding.unsupported

    fb = time_ms(lambda: fallback_truncate(text, tool_type, BUDGET, QUERY), runs)
    ex = time_ms(lambda: extract(text, tool_type, BUDGET, QUERY), runs)
    # Grounding a claim-dense 800-char answer (an extract) against the whole output.
    answer = extract(text, tool_type, 800, QUERY)
    gr = time_ms(lambda: str(unsupported(answer, Source.of(text)))[:BUDGET], runs)
    return fb, ex, gr


def _engine(legacy: bool) -> tuple[Any, Any, Any]:
    """``extract``, ``fallback_truncate`` and the grounding module of the engine on the path:
    this tree's library (``tersify.worker.shrink``) or a revision's older modules."""
    worker = "tersify.worker"
    grounding = importlib.import_module(f"{worker}.summarize.grounding")
    shrink = importlib.import_module(f"{worker}.shrink")
    if hasattr(shrink, "extract"):  # the library's exports, from its first revision on
        return shrink.extract, shrink.fallback_truncate, grounding
    extractive = importlib.import_module(f"{worker}.shrink.extractive")
    fallback = importlib.import_module(f"{worker}.shrink.fallback")
    return extractive.extract, fallback.fallback_truncate, grounding


ROOT = Path(__file__).resolve().parents[1]
_CHILD = (
    "import json, sys, time; root, legacy = sys.argv[1], sys.argv[5] == 'legacy'; "
    "sys.path[:0] = [p for p in (root, sys.argv[2]) if p]; import shrink; "
    "shrink.CLOCK = time.process_time if sys.argv[6] == 'cpu' else time.perf_counter; "
    "shrink.FLOOD = sys.argv[7] == 'flood'; "
    "ToolType = __import__('producer.contract' if legacy else 'tersify.contract', "
    "fromlist=['ToolType']).ToolType; "
    "print(json.dumps({t.value: shrink.measure(t, shrink.generate(t, int(sys.argv[3])), "
    "int(sys.argv[4]), legacy=legacy)[:2] for t in ToolType}))"
)


def export(ref: str, into: Path) -> tuple[Path, bool]:
    """Revision ``ref``'s engine unpacked under ``into``: the folder to put first on the path,
    and whether it predates the ``tersify`` name (top-level ``producer`` and ``worker``)."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref, "worker", "producer"],
        check=True,
        capture_output=True,
        timeout=60,
    ).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    if not (into / "producer" / "client").is_dir():
        return into, True
    tree = into / "tree"  # the installed layout: producer/ is tersify, worker/ tersify.worker
    tree.mkdir()
    (into / "producer").rename(tree / "tersify")
    (into / "worker").rename(tree / "tersify" / "worker")
    return tree, False


def timed_in_child(
    root: Path | None, size: int, runs: int, legacy: bool = False
) -> dict[str, list[float]]:
    """``measure`` of every type in a fresh process importing the engine under ``root`` (None:
    the installed one, this tree)."""
    layout = "legacy" if legacy else "tersify"
    clock = "cpu" if CLOCK is time.process_time else "wall"
    content = "flood" if FLOOD else "typed"
    args = [str(root or ""), str(ROOT / "bench"), str(size), str(runs), layout, clock, content]
    timings: dict[str, list[float]] = json.loads(child_output(_CHILD, args, BUDGET_SECONDS))
    return timings


def child_output(code: str, args: list[str], timeout: float) -> str:
    """What ``python -c CODE ARGS…`` printed in a fresh interpreter (nothing this process has
    imported or warmed is in it); a failure or ``timeout`` raises."""
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        check=True,
        capture_output=True,
        text=True,
        timeout=timeout,
    ).stdout


def against(ref: str, size: int, runs: int, rounds: int) -> int:
    """This tree and ``ref`` timed alternately, ``rounds`` times; medians side by side."""
    samples: dict[str, dict[str, list[list[float]]]] = {"this": {}, ref: {}}
    with tempfile.TemporaryDirectory(prefix="tersify-bench-") as tmp:
        other, legacy = export(ref, Path(tmp))
        deadline = time.monotonic() + BUDGET_SECONDS
        for _ in range(rounds):
            for name, root, old in (("this", None, False), (ref, other, legacy)):
                for kind, pair in timed_in_child(root, size, runs, old).items():
                    samples[name].setdefault(kind, []).append(pair)
            if time.monotonic() > deadline:
                print(f"stopped: over the {BUDGET_SECONDS:.0f} s budget", file=sys.stderr)
                break
    worst: dict[str, list[float]] = {"this": [0.0, 0.0], ref: [0.0, 0.0]}
    print(f"{'':>16}  {'fallback ms':>22}  {'extractive ms':>22}   (median of rounds)")
    print(f"{'':>16}  {'this':>10} {ref[:10]:>11}  {'this':>10} {ref[:10]:>11}")
    for kind in samples["this"]:
        cells = []
        for shrink in (0, 1):
            for name in ("this", ref):
                ms = statistics.median(pair[shrink] for pair in samples[name][kind])
                worst[name][shrink] = max(worst[name][shrink], ms)
                cells.append(ms)
        print(f"{kind:>16}  {cells[0]:10.1f} {cells[1]:11.1f}  {cells[2]:10.1f} {cells[3]:11.1f}")
    print(f"against: fallback_ms={worst[ref][0]:.1f} extractive_ms={worst[ref][1]:.1f} ref={ref}")
    print(f"shrink: fallback_ms={worst['this'][0]:.1f} extractive_ms={worst['this'][1]:.1f}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Time both shrinks per type and print one line each, then the summary line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=2 * 1024 * 1024, help="chars per input")
    parser.add_argument("--runs", type=int, default=5, help="runs per type and shrink")
    parser.add_argument("--quick", action="store_true", help="smoke run: --size 65536 --runs 1")
    parser.add_argument("--against", metavar="REF", help="also time git revision REF, alternately")
    parser.add_argument("--rounds", type=int, default=3, help="alternations with --against")
    parser.add_argument(
        "--clock", choices=("wall", "cpu"), default="wall", help="what a run's time counts"
    )
    parser.add_argument(
        "--content",
        choices=("typed", "flood"),
        default="typed",
        help="each type's own lines, or compiler errors on every line for every type",
    )
    args = parser.parse_args(argv)
    global CLOCK, FLOOD
    CLOCK = time.process_time if args.clock == "cpu" else time.perf_counter
    FLOOD = args.content == "flood"
    size, runs = (65_536, 1) if args.quick else (args.size, max(1, args.runs))
    if args.against:
        return against(args.against, size, runs, max(1, args.rounds))
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
