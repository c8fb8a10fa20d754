"""Measure the redaction pass: recall on made-up secrets, false positives on real outputs, speed.

Recall: ``--outputs`` realistic outputs of ``env``, ``cat .env``, ``git config -l``,
``curl -v``, ``kubectl get secret -o yaml`` and ``docker inspect`` (``tests/fakesecrets.py``,
seeded), each holding secrets in real formats, and as many transcripts of the hostile forms
(``curl -u``, ``mysql -p``, ``--password V``, connection strings and ``KEY=value`` whose
password holds a word like ``secret``, ``SECRET_KEY_BASE=…``, escaped and nested JSON), each
with random values; a secret counts as found when none of its text is left after redaction.
False positives: every redaction over the real-output corpus (``tests/corpus/`` and
``tests/corpus-sample/``), which holds no secret, each one listed.
Speed: the median of ``--runs`` passes over a 2 MB output of real outputs alone, then of real
outputs after generated ones dense with secrets (the summary line's figure). Run
``.venv/bin/python bench/redaction.py`` (``--quick`` for a smoke run); the last line is
machine-readable: ``redaction: recall=R fp_per_100kb=F ms_per_mb=M``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tersify.worker.redact import Redactor, find_secrets  # noqa: E402
from tests.fakesecrets import command_output, hostile_output  # noqa: E402

SEED = 20261125
CORPORA = (ROOT / "tests" / "corpus", ROOT / "tests" / "corpus-sample")
SIZE = 2 * 1024 * 1024


def recall(outputs: int, *, hostile: bool = False) -> tuple[int, int, Counter[str]]:
    """``(secrets, found, missed by kind)`` over ``outputs`` generated outputs (``hostile``: the
    command-line, connection-string and nested-JSON forms, ``tests/fakesecrets.hostile_output``)."""
    rng = random.Random(SEED + 2 if hostile else SEED)
    total = found = 0
    missed: Counter[str] = Counter()
    for _ in range(outputs):
        if hostile:
            text, secrets = hostile_output(rng)
        else:
            _command, text, secrets = command_output(rng)
        redacted = Redactor().redact(text)
        for secret in secrets:
            total += 1
            if any(part in redacted for part in secret.vanish):
                missed[secret.kind] += 1
            else:
                found += 1
    return total, found, missed


def false_positives() -> tuple[int, list[str]]:
    """``(bytes scanned, one line per redaction)`` over the real-output corpus."""
    scanned = 0
    listed: list[str] = []
    for path in sorted(p for corpus in CORPORA for p in corpus.rglob("*.txt")):
        text = path.read_text(encoding="utf-8", errors="replace")
        scanned += len(text.encode())
        for hit in find_secrets(text):
            line = text.count("\n", 0, hit.start) + 1
            value = text[hit.start : hit.end].replace("\n", "\\n")
            shown = value if len(value) <= 48 else value[:45] + "..."
            listed.append(f"  {path.relative_to(ROOT)}:{line} {hit.kind} {shown!r}")
    return scanned, listed


def sample_text(size: int, *, secrets: bool = True) -> str:
    """``size`` characters of real outputs, after generated ones holding secrets (about one per
    400 bytes) unless ``secrets`` is false, repeated."""
    rng = random.Random(SEED + 1)
    parts = [command_output(rng)[1] for _ in range(200)] if secrets else []
    real = sorted(CORPORA[1].glob("*.txt"))
    parts += [path.read_text(encoding="utf-8", errors="replace") for path in real]
    text = "".join(parts)
    return (text * (size // max(1, len(text)) + 1))[:size]


def speed(size: int, runs: int, *, secrets: bool = True) -> float:
    """Milliseconds per MB: the median of ``runs`` passes over ``size`` characters."""
    text = sample_text(size, secrets=secrets)
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        Redactor().redact(text)
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000 / (size / (1024 * 1024))


def main() -> None:
    """Print the three measures, the false positives, and the summary line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--outputs", type=int, default=150, help="generated outputs for recall")
    parser.add_argument("--runs", type=int, default=7, help="timed passes over 2 MB")
    parser.add_argument("--quick", action="store_true", help="a smoke run: few outputs, 256 KB")
    args = parser.parse_args()
    outputs, runs, size = (20, 2, SIZE // 8) if args.quick else (args.outputs, args.runs, SIZE)
    total, found, missed = recall(outputs)
    print(f"recall: {found}/{total} secrets in {outputs} outputs ({found / max(1, total):.2%})")
    for kind, count in sorted(missed.items()):
        print(f"  missed {kind}: {count}")
    h_total, h_found, h_missed = recall(outputs, hostile=True)
    h_rate = h_found / max(1, h_total)
    print(f"recall, hostile forms: {h_found}/{h_total} secrets in {outputs} outputs ({h_rate:.2%})")
    for kind, count in sorted(h_missed.items()):
        print(f"  missed {kind}: {count}")
    rate = (found + h_found) / max(1, total + h_total)
    scanned, listed = false_positives()
    per_100kb = len(listed) / max(1, scanned / 102_400)
    print(f"false positives: {len(listed)} in {scanned / 1024:.0f} KB of real outputs")
    print("\n".join(listed) if listed else "  none")
    plain = speed(size, runs, secrets=False)
    print(f"speed on real outputs: {plain:.2f} ms per MB ({plain * size / 2**20:.1f} ms/pass)")
    ms_per_mb = speed(size, runs)
    print(f"speed with secrets: {ms_per_mb:.2f} ms per MB ({ms_per_mb * size / 2**20:.1f} ms/pass)")
    print(f"redaction: recall={rate:.4f} fp_per_100kb={per_100kb:.3f} ms_per_mb={ms_per_mb:.2f}")


if __name__ == "__main__":
    main()
