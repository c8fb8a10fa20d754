"""Output tokens per model summary: facts retyped in the prose (the old form) against quotes by
line number (the new form), sent through the loopback fake model.

For every case of a corpus, two answers that carry the same facts: the case's must-keep items
that the model was shown (in the numbered view it reads).

- old: the prose, then each fact retyped verbatim, as the earlier prompt asked
  ("quote error messages, failing test ids and file:line locations verbatim");
- new: the JSON object the prompt now asks for: the same prose and the line ranges that hold
  those facts (a file's prose as ``before``, ``after`` 'none').

The prose stands in as the case's should-keep notes (what a summary should say in its own
words), the same in both. Each answer goes through our providers to the fake model (the old one
as a plain answer, the new one as the structured answer of the real request) in both wire
formats; the output tokens are those the fake reports (chars / 4, as ``estimate_tokens``). Also
reported: old answers over the 800-char summary cap (a model had to drop facts), and the size
of what the agent receives (the new summary carries whole lines, numbered).

Run ``.venv/bin/python bench/quote_tokens.py [CORPUS_DIR] [--example NAME]``; the last line is
``quote_tokens: cases=N old_mean=A new_mean=B ratio=B/A old_over_cap=K ...``.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as ``python bench/x.py``: ``tests`` is at the root
    sys.path.insert(0, str(ROOT))

from pydantic import SecretStr  # noqa: E402

from tersify.classify import classify  # noqa: E402
from tersify.contract import PendingSummary  # noqa: E402
from tersify.worker.model.providers import (  # noqa: E402
    AnthropicProvider,
    Completion,
    ModelRequest,
    OpenAIProvider,
)
from tersify.worker.quality.corpus import Case, load_cases  # noqa: E402
from tersify.worker.quality.evaluation import missing  # noqa: E402
from tersify.worker.summarize.answers import compose, read_answer  # noqa: E402
from tersify.worker.summarize.prompts import SummaryPrompt, build_request  # noqa: E402
from tests.fakemodel import FakeModelServer, answer, ok  # noqa: E402

# A quoted line's number in front of it: facts are read through it (a fact may span lines).
_LABEL = re.compile(r"^\d+(?:#[0-9a-f]{2})?\|", re.MULTILINE)
SUMMARY_CAP = 800
QUOTE_BUDGET = 1200
MAX_CASES = 1000


@dataclass(frozen=True, slots=True)
class Pair:
    """One case's two answers and what each costs and gives."""

    name: str
    facts: int
    old_tokens: int  # the facts retyped
    lines_tokens: int  # the lines that hold them retyped whole
    new_tokens: int
    old_chars: int
    lines_chars: int
    new_summary_chars: int
    old_kept: int  # facts in the old answer cut to the summary cap
    new_kept: int  # facts in the composed summary


def located(prompt: SummaryPrompt, facts: list[str]) -> list[tuple[str, range]]:
    """Each fact the model was shown, with the lines (indices) that hold it."""
    lines = prompt.view.source.lines
    text = "\n".join(lines)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    found: list[tuple[str, range]] = []
    for fact in (f.replace("\r\n", "\n") for f in facts):
        at = text.find(fact)
        if at < 0 or not fact.strip():
            continue
        first = next(i for i in range(len(lines)) if starts[i + 1] > at)
        last = next(i for i in range(first, len(lines)) if starts[i + 1] > at + len(fact) - 1)
        span = range(first, last + 1)
        if all(i in prompt.view.seen for i in span):
            found.append((fact, span))
    return found


def ranges(spans: list[range], numbers: Any) -> list[str]:
    """The spans as the answer's line ranges: in order of first mention, overlaps merged."""
    merged: list[range] = []
    for span in spans:
        for index, taken in enumerate(merged):
            if span.start <= taken.stop and taken.start <= span.stop:
                merged[index] = range(min(span.start, taken.start), max(span.stop, taken.stop))
                break
        else:
            merged.append(span)
    ends = [(numbers[s.start], numbers[s.stop - 1]) for s in merged]
    return [f"{a}-{b}" if a != b else str(a) for a, b in ends]


def answers(case: Case, prompt: SummaryPrompt) -> tuple[str, str, dict[str, Any], list[str]]:
    """The old answer (the facts retyped; the lines holding them retyped), the new answer's
    object, and the facts they carry."""
    facts = located(prompt, list(case.must_keep))
    prose = "; ".join(case.should_keep) or "The command finished."
    old = "\n".join([prose, *(fact for fact, _ in facts)])
    lines = prompt.view.source.lines
    held = sorted({i for _, span in facts for i in span})
    whole = "\n".join([prose, *(lines[i] for i in held)])
    quotes = ranges([span for _, span in facts], prompt.view.source.numbers)
    new: dict[str, Any] = {"quotes": quotes}
    if prompt.shape.prose == ("summary",):
        new["summary"] = prose
    else:
        new.update(before=prose, after="none")
    if prompt.shape.full_output_flag:
        new["needs_full_output"] = False
    return old, whole, new, [fact for fact, _ in facts]


def prompt_of(case: Case) -> SummaryPrompt:
    """The request the worker would send for ``case``, classified as the worker would."""
    tool_type = classify(case.tool_name, case.command, case.output)
    job = PendingSummary.build(
        deadline_seconds=60, session_id="bench", tool_name=case.tool_name,
        command=case.command, output=case.output, query=case.query,
    )  # fmt: skip
    return build_request(job, tool_type, max_input_chars=50_000, max_summary_chars=SUMMARY_CAP)


def measure(case: Case, fake: FakeModelServer, providers: list[Any]) -> Iterator[Pair]:
    """The case's answers through each provider."""
    prompt = prompt_of(case)
    old, whole, new, facts = answers(case, prompt)
    plain = ModelRequest(system=prompt.request.system, user=prompt.request.user, max_tokens=4096)
    for provider in providers:
        fake.script([ok(old), ok(whole), answer(new)])
        old_answer = provider.complete(plain, timeout=10.0)
        lines_answer = provider.complete(plain, timeout=10.0)
        new_answer = provider.complete(prompt.request, timeout=10.0)
        summary = compose(read_answer(new_answer, prompt.shape, prompt.view), prompt.view,
                          QUOTE_BUDGET)  # fmt: skip
        yield Pair(
            name=case.name,
            facts=len(facts),
            old_tokens=old_answer.output_tokens or 0,
            lines_tokens=lines_answer.output_tokens or 0,
            new_tokens=new_answer.output_tokens or 0,
            old_chars=len(old),
            lines_chars=len(whole),
            new_summary_chars=len(summary),
            old_kept=len(facts) - len(missing(old[:SUMMARY_CAP], facts)),
            new_kept=len(facts) - len(missing(_LABEL.sub("", summary), facts)),
        )


def example(case: Case) -> None:
    """Print one case's answers and the summary the agent gets (the worked example)."""
    prompt = prompt_of(case)
    tool_type = classify(case.tool_name, case.command, case.output)
    old, whole, new, _ = answers(case, prompt)
    print(f"--- {case.name} ({tool_type.value}): the old answer, facts retyped, {len(old)} chars")
    print(old)
    print(f"--- the old answer, lines retyped, {len(whole)} chars")
    print(whole)
    encoded = json.dumps(new)
    print(f"--- the new answer, {len(encoded)} chars")
    print(encoded)
    summary = compose(read_answer(Completion(text="", model="m", data=new), prompt.shape,
                                  prompt.view), prompt.view, QUOTE_BUDGET)  # fmt: skip
    print(f"--- the summary the agent gets, {len(summary)} chars")
    print(summary)


def main(argv: list[str] | None = None) -> None:
    """Measure every case of the corpus and print the totals."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("corpus", nargs="?", default=str(ROOT / "tests" / "corpus"))
    parser.add_argument("--example", help="print this case's two answers and its summary")
    args = parser.parse_args(argv)
    corpus = Path(args.corpus)
    dirs = [d for d in (corpus / "tune", corpus / "check") if d.is_dir()] or [corpus]
    cases = [case for d in dirs for case in load_cases(d)][:MAX_CASES]
    if args.example:
        example(next(c for c in cases if c.name == args.example))
    pairs: dict[str, list[Pair]] = {}
    with FakeModelServer() as fake:
        key, options = SecretStr("bench"), {"connect_timeout": 2.0, "pool_size": 1}
        wires = {
            "anthropic": AnthropicProvider(key, fake.url, "m", **options),
            "openai": OpenAIProvider(key, fake.openai_base_url, "m", **options),
        }
        try:
            for case in cases:
                for wire, pair in zip(
                    wires, measure(case, fake, list(wires.values())), strict=True
                ):
                    pairs.setdefault(wire, []).append(pair)
        finally:
            for provider in wires.values():
                provider.close()
    report(pairs)


def report(pairs: dict[str, list[Pair]]) -> None:
    """Per wire format: output tokens of each form; then the totals, the cap, the facts kept."""
    for wire, rows in pairs.items():
        forms = {
            "old, facts retyped": [p.old_tokens for p in rows],
            "old, lines retyped": [p.lines_tokens for p in rows],
            "new, lines quoted": [p.new_tokens for p in rows],
        }
        shown = ", ".join(
            f"{form} mean {statistics.mean(v):.1f} median {statistics.median(v):.0f}"
            for form, v in forms.items()
        )
        print(f"{wire:>9}: cases={len(rows)} output tokens per summary: {shown}")
    rows = next(iter(pairs.values()))
    old = statistics.mean(p.old_tokens for p in rows)
    lines = statistics.mean(p.lines_tokens for p in rows)
    new = statistics.mean(p.new_tokens for p in rows)
    print(
        f"quote_tokens: cases={len(rows)} facts={sum(p.facts for p in rows)} "
        f"old_mean={old:.1f} lines_mean={lines:.1f} new_mean={new:.1f} "
        f"ratio={new / old:.3f} lines_ratio={new / lines:.3f} "
        f"old_over_cap={sum(p.old_chars > SUMMARY_CAP for p in rows)} "
        f"lines_over_cap={sum(p.lines_chars > SUMMARY_CAP for p in rows)} "
        f"old_kept={sum(p.old_kept for p in rows)} new_kept={sum(p.new_kept for p in rows)} "
        f"new_summary_chars_mean={statistics.mean(p.new_summary_chars for p in rows):.0f}"
    )


if __name__ == "__main__":
    main()
