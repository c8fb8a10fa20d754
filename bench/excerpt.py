"""Measure the pass that makes an output past the cap summarizable: speed and peak memory.

A seeded output of ``--mb`` megabytes is fed in 1 MiB chunks to the streaming pass ``tersify
submit`` runs (``tersify.text.excerpt``) with the default caps (16 MiB summarized, 64 MiB
stored). ``--content commits`` (the default) is ``git log -p``-like, an error line every 5,000
commits; ``--content errors`` is nothing but compiler error lines, every one of them a line
that matters (the flood that must stay linear); ``--content short`` is short lines that all
hold a word the pass looks for and none of which matters. Speed is the median of ``--runs``
passes; peak memory is the most ``tracemalloc`` saw allocated during one more pass (the input
is generated chunk by chunk, never held whole). Run ``.venv/bin/python bench/excerpt.py``; the
last line is machine-readable:
``excerpt: mb=M seconds=S mb_per_s=R peak_mb=P stored_mb=T kept_between=K``.

``--against REF`` times git revision REF's pass (its ``producer/`` exported as ``bench/shrink.py
--against`` does) beside this tree's, alternately for ``--rounds`` rounds, each pass in a fresh
process, and prints both medians: ``against: content=C this_s=A ref_s=B ref=REF``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tersify.contract import ToolType  # noqa: E402
from tersify.settings import Settings  # noqa: E402
from tersify.text.excerpt import Excerpt, excerpt_from_stream  # noqa: E402

CHUNK = 1 << 20
BUDGET_SECONDS = 900.0


def _chunked(lines: Iterator[str], megabytes: float) -> Iterator[bytes]:
    """``lines`` joined and cut into chunks of about ``CHUNK`` bytes, ``megabytes`` in all."""
    target = int(megabytes * 1_000_000)
    made, size, buffer = 0, 0, []
    for line in lines:
        data = line.encode()
        buffer.append(data)
        size += len(data)
        made += len(data)
        if size >= CHUNK:
            yield b"".join(buffer)
            buffer, size = [], 0
        if made >= target:
            break
    if buffer:
        yield b"".join(buffer)


def _commits() -> Iterator[str]:
    """Commits with a 20-line diff each, the same every run."""
    index = 0
    while True:
        index += 1
        block = [f"commit {index:040x}", "Author: Dev <dev@example.com>", ""]
        block += [f"    change {index} to module_{index % 97}.py", ""]
        block += [
            f"diff --git a/module_{index % 97}.py b/module_{index % 97}.py",
            "@@ -1,5 +1,6 @@",
        ]
        block += [f"+    value_{j} = compute(item_{j}, factor={j * index % 13})" for j in range(20)]
        if index % 5000 == 0:
            block.append(f"error: build failed at step {index}")
        yield "\n".join(block) + "\n"


def _errors() -> Iterator[str]:
    """A compiler that reports an error on every line."""
    index = 0
    while True:
        index += 1
        yield (
            f"src/module_{index % 500}.c:{index % 9000}:{index % 80}: error: expected ';' "
            f"before '}}' token in function_{index}\n"
        )


def _short() -> Iterator[str]:
    """Short lines that all hold a looked-for word, none of them a line that matters."""
    index = 0
    while True:
        index += 1
        yield f"error {index}\n"


CONTENT: dict[str, Callable[[], Iterator[str]]] = {
    "commits": _commits,
    "errors": _errors,
    "short": _short,
}


def commits(megabytes: float) -> Iterator[bytes]:
    """The ``git log -p``-like output, 1 MiB at a time."""
    return _chunked(_commits(), megabytes)


def one_pass(megabytes: float, settings: Settings, content: str = "commits") -> Excerpt:
    """The excerpt of the generated output, as ``tersify submit`` would make it."""
    return excerpt_from_stream(
        _chunked(CONTENT[content](), megabytes),
        settings.max_output_bytes,
        settings.max_stored_output_bytes,
        lambda _head: ToolType.COMMAND_OUTPUT,
        "why does the build fail",
    )


_CHILD = (
    "import sys, time; sys.path[:0] = [p for p in sys.argv[1:3] if p]; import excerpt; "
    "from tersify.settings import Settings; s = Settings(); t = time.perf_counter(); "
    "excerpt.one_pass(float(sys.argv[3]), s, sys.argv[4]); print(time.perf_counter() - t)"
)


def _timed_in_child(root: Path | None, megabytes: float, content: str) -> float:
    """One pass in a fresh process importing the pass under ``root`` (None: this tree)."""
    from shrink import child_output  # bench/shrink.py, beside this script

    args = [str(root or ""), str(ROOT / "bench"), str(megabytes), content]
    return float(child_output(_CHILD, args, BUDGET_SECONDS).strip().splitlines()[-1])


def against(ref: str, megabytes: float, content: str, rounds: int) -> None:
    """This tree and ``ref`` timed alternately, ``rounds`` times; medians side by side."""
    from shrink import export  # bench/shrink.py: a revision's engine laid out as installed

    times: dict[str, list[float]] = {"this": [], ref: []}
    with tempfile.TemporaryDirectory(prefix="tersify-bench-") as tmp:
        other, _ = export(ref, Path(tmp))
        deadline = time.monotonic() + BUDGET_SECONDS
        for _ in range(rounds):
            for name, root in (("this", None), (ref, other)):
                times[name].append(_timed_in_child(root, megabytes, content))
            if time.monotonic() > deadline:
                print(f"stopped: over the {BUDGET_SECONDS:.0f} s budget", file=sys.stderr)
                break
    print(json.dumps({name: [round(t, 2) for t in got] for name, got in times.items()}))
    print(
        f"against: content={content} mb={megabytes:g} "
        f"this_s={statistics.median(times['this']):.2f} "
        f"ref_s={statistics.median(times[ref]):.2f} ref={ref}"
    )


def main() -> None:
    """Time the pass, then measure its peak memory; print the summary line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=40.0, help="size of the output (default 40)")
    parser.add_argument("--runs", type=int, default=3, help="timed passes (default 3)")
    parser.add_argument("--content", choices=sorted(CONTENT), default="commits")
    parser.add_argument("--against", metavar="REF", help="also time git revision REF")
    parser.add_argument("--rounds", type=int, default=3, help="alternations with --against")
    args = parser.parse_args()
    if args.against:
        against(args.against, args.mb, args.content, max(1, args.rounds))
        return
    settings = Settings()
    seconds = []
    for _ in range(max(1, args.runs)):
        started = time.perf_counter()
        got = one_pass(args.mb, settings, args.content)
        seconds.append(time.perf_counter() - started)
    tracemalloc.start()
    one_pass(args.mb, settings, args.content)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    median = statistics.median(seconds)
    cut = got.cut
    stored = len((got.stored or got.text).encode()) / 1e6
    print(
        f"excerpt: mb={args.mb:g} seconds={median:.2f} mb_per_s={args.mb / median:.1f} "
        f"peak_mb={peak / 1e6:.1f} stored_mb={stored:.1f} "
        f"kept_between={cut.kept_between if cut else 0} content={args.content}"
    )


if __name__ == "__main__":
    main()
