"""Measure how long the producer takes to classify one big output, by the way it is decided.

Five seeded outputs of ``--mb`` megabytes: an application log read with ``tail``, a build log
from ``make``, JSON from ``curl``, an ``ls -l`` listing (each decided by its program or a
decisive content test) and the build log again from a program no table knows (read by the
fitted classifier). Each is classified ``--runs`` times; the fastest run counts. Run
``.venv/bin/python bench/classify.py``; one line per output, then the machine-readable
``classify: mb=M log_us=… build_us=… json_us=… listing_us=… unknown_us=…``.
"""

from __future__ import annotations

import argparse
import json
import time

from tersify.classify import classify


def outputs(size: int) -> dict[str, tuple[str, str, str]]:
    """Each measured output by name: its tool, its command and its text of ``size`` chars."""
    log = "".join(
        f"2026-01-01 12:00:{i % 60:02d} INFO worker {i} processed batch {i * 7} in 12ms\n"
        for i in range(2_000)
    )
    build = "".join(f"gcc -c -O2 src/module_{i}.c -o build/module_{i}.o\n" for i in range(2_000))
    data = json.dumps([{"id": i, "name": f"item {i}", "price": i * 1.5} for i in range(2_000)])
    listing = "".join(
        f"-rw-r--r-- 1 dev dev {i * 13} Nov  1 12:00 f_{i}.txt\n" for i in range(2_000)
    )

    def sized(text: str) -> str:
        return (text * (size // len(text) + 1))[:size]

    return {
        "log": ("bash", "tail -n 50000 app.log", sized(log)),
        "build": ("bash", "make -j2", sized(build)),
        "json": ("bash", "curl -s http://127.0.0.1/api", sized(data)),
        "listing": ("bash", "ls -l", sized(listing)),
        "unknown": ("bash", "frobnicate --all", sized(build)),
    }


def main() -> None:
    """Classify each output ``--runs`` times and print the fastest run of each."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=2.0, help="size of each output")
    parser.add_argument("--runs", type=int, default=15, help="runs per output")
    args = parser.parse_args()
    best: dict[str, float] = {}
    for name, (tool, command, output) in outputs(int(args.mb * 1_000_000)).items():
        times = []
        for _ in range(args.runs):
            start = time.perf_counter()
            kind = classify(tool, command, output)
            times.append(time.perf_counter() - start)
        best[name] = min(times) * 1e6
        print(f"{name}: {best[name]:.0f} µs ({kind.value})")
    fields = " ".join(f"{name}_us={us:.0f}" for name, us in best.items())
    print(f"classify: mb={args.mb:g} {fields}")


if __name__ == "__main__":
    main()
