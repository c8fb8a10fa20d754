"""Measure the pass that makes an output past the cap summarizable: speed and peak memory.

A seeded ``git log -p``-like output of ``--mb`` megabytes (with an error line every 5,000
commits) is fed in 1 MiB chunks to the streaming pass ``tersify submit`` runs
(``tersify.text.excerpt``) with the default caps (16 MiB summarized, 64 MiB stored). Speed is
the median of ``--runs`` passes; peak memory is the most ``tracemalloc`` saw allocated during
one more pass (the input is generated chunk by chunk, never held whole). Run
``.venv/bin/python bench/excerpt.py``; the last line is machine-readable:
``excerpt: mb=M seconds=S mb_per_s=R peak_mb=P stored_mb=T kept_between=K``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tersify.contract import ToolType  # noqa: E402
from tersify.settings import Settings  # noqa: E402
from tersify.text.excerpt import Excerpt, excerpt_from_stream  # noqa: E402

CHUNK = 1 << 20


def commits(megabytes: float) -> Iterator[bytes]:
    """The output, 1 MiB at a time: commits with a 20-line diff each, the same every run."""
    target = int(megabytes * 1_000_000)
    made, buffer, index = 0, [], 0
    while made < target:
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
        text = ("\n".join(block) + "\n").encode()
        buffer.append(text)
        made += len(text)
        if sum(map(len, buffer)) >= CHUNK:
            yield b"".join(buffer)
            buffer = []
    if buffer:
        yield b"".join(buffer)


def one_pass(megabytes: float, settings: Settings) -> Excerpt:
    """The excerpt of the generated output, as ``tersify submit`` would make it."""
    return excerpt_from_stream(
        commits(megabytes),
        settings.max_output_bytes,
        settings.max_stored_output_bytes,
        lambda _head: ToolType.COMMAND_OUTPUT,
        "why does the build fail",
    )


def main() -> None:
    """Time the pass, then measure its peak memory; print the summary line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=40.0, help="size of the output (default 40)")
    parser.add_argument("--runs", type=int, default=3, help="timed passes (default 3)")
    args = parser.parse_args()
    settings = Settings()
    seconds = []
    for _ in range(max(1, args.runs)):
        started = time.perf_counter()
        got = one_pass(args.mb, settings)
        seconds.append(time.perf_counter() - started)
    tracemalloc.start()
    one_pass(args.mb, settings)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    median = statistics.median(seconds)
    cut = got.cut
    stored = len((got.stored or got.text).encode()) / 1e6
    print(
        f"excerpt: mb={args.mb:g} seconds={median:.2f} mb_per_s={args.mb / median:.1f} "
        f"peak_mb={peak / 1e6:.1f} stored_mb={stored:.1f} "
        f"kept_between={cut.kept_between if cut else 0}"
    )


if __name__ == "__main__":
    main()
