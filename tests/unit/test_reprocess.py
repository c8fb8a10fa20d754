"""Reprocessing's reader, filters, estimates, checkpoint and report, on files in tmp_path."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from rich.console import Console

from tersify.contract import FallbackReason, Method, PendingSummary, SummaryResult, ToolType
from tersify.settings import Settings
from tersify.worker.model.tokens import estimate_tokens
from tersify.worker.reprocess.checkpoint import Checkpoint, checkpoint_path, read_output
from tersify.worker.reprocess.estimate import estimate_all, estimate_job
from tersify.worker.reprocess.filters import Filters
from tersify.worker.reprocess.progress import progress_bar
from tersify.worker.reprocess.reader import ArchivedJob, read_logs
from tersify.worker.reprocess.report import Report
from tersify.worker.summarize.sending import opening_prompts

T0 = datetime(2026, 11, 1, tzinfo=UTC)


def make_job(session: str, n: int, *, size: int = 3000, minutes: int = 0) -> PendingSummary:
    """A logged job with a distinct output of ``size`` characters."""
    lines = [f"{session} line {n}.{i}: build step {i} ok" for i in range(size // 30 + 1)]
    return PendingSummary.build(
        deadline_seconds=30,
        session_id=session,
        tool_name="bash",
        command="make",
        output="\n".join(lines)[:size].ljust(size, "."),
        created_at=T0 + timedelta(minutes=minutes),
    )


def make_result(job: PendingSummary, method: Method = Method.FALLBACK) -> SummaryResult:
    """The old result a log holds for ``job``."""
    return SummaryResult(
        job_id=job.job_id,
        session_id=job.session_id,
        text="old summary",
        method=method,
        tool_type=ToolType.COMMAND_OUTPUT,
        chars_in=len(job.output),
        chars_out=100,
        input_tokens=10 if method is Method.LLM else None,
        output_tokens=5 if method is Method.LLM else None,
        fallback_reason=FallbackReason.TIMEOUT if method is Method.FALLBACK else None,
        queued_at=job.created_at,
        started_at=job.created_at,
        finished_at=job.created_at,
    )


def log_lines(job: PendingSummary, result: SummaryResult | None = None) -> list[str]:
    """The JSONL lines a worker writes for ``job`` (and its result)."""
    lines = [json.dumps({"kind": "output", **job.model_dump(mode="json")})]
    if result is not None:
        lines.append(json.dumps({"kind": "result", **result.model_dump(mode="json")}))
    return lines


def write_archive(directory: Path, sessions: dict[str, int], **job_args: int) -> list[str]:
    """Write session logs with ``count`` jobs per session (old method: fallback); their ids."""
    directory.mkdir(parents=True, exist_ok=True)
    ids: list[str] = []
    for session, count in sessions.items():
        lines: list[str] = []
        for n in range(count):
            job = make_job(session, n, minutes=n, **job_args)
            lines += log_lines(job, make_result(job))
            ids.append(job.job_id)
        (directory / f"{session}.jsonl").write_text("\n".join(lines) + "\n")
    return ids


def test_the_reader_counts_a_corrupt_and_a_truncated_line_and_reads_the_rest(
    tmp_path: Path,
) -> None:
    a, b = make_job("s1", 0), make_job("s1", 1)
    good = log_lines(a, make_result(a)) + log_lines(b)
    path = tmp_path / "s1.jsonl"
    path.write_text(good[0] + "\n{not json at all\n" + "\n".join(good[1:]) + "\n" + good[0][:40])
    read = read_logs([tmp_path])
    assert [item.job.job_id for item in read.jobs] == [a.job_id, b.job_id]
    assert read.jobs[0].old is not None and read.jobs[1].old is None
    assert [(s.line, s.reason) for s in read.skips] == [
        (2, "not JSON (corrupt or truncated)"),
        (5, "not JSON (corrupt or truncated)"),
    ]
    assert (read.files, read.lines) == (1, 5)


def test_the_reader_reports_invalid_entries_and_keeps_the_first_of_repeated_lines(
    tmp_path: Path,
) -> None:
    job = make_job("s2", 0)
    lines = log_lines(job, make_result(job)) * 2
    lines += ["[1, 2]", json.dumps({"kind": "mystery"}), json.dumps({"kind": "output", "x": 1})]
    path = tmp_path / "s2.jsonl"
    path.write_text("\n".join(lines) + "\n")
    read = read_logs([path])
    assert len(read.jobs) == 1
    reasons = [s.reason for s in read.skips]
    assert reasons[0] == "not a JSON object"
    assert reasons[1] == "unknown kind 'mystery'"
    assert reasons[2].startswith("invalid output:")


def test_filters_select_by_session_time_method_tool_type_and_size() -> None:
    early, late = make_job("a", 0, minutes=0), make_job("b", 1, size=5000, minutes=60)
    items = [
        ArchivedJob(early, make_result(early, Method.FALLBACK), Path("a.jsonl")),
        ArchivedJob(late, make_result(late, Method.LLM), Path("b.jsonl")),
        ArchivedJob(make_job("a", 2), None, Path("a.jsonl")),
    ]

    def pick(filters: Filters) -> list[int]:
        return [i for i, item in enumerate(items) if filters.matches(item)]

    assert pick(Filters()) == [0, 1, 2]
    assert pick(Filters(sessions=frozenset({"b"}))) == [1]
    assert pick(Filters(since=T0 + timedelta(minutes=30))) == [1]
    assert pick(Filters(until=T0 + timedelta(minutes=30))) == [0, 2]
    assert pick(Filters(methods=frozenset({Method.FALLBACK}))) == [0]
    assert pick(Filters(min_chars=4000)) == [1]
    assert pick(Filters(max_chars=4000)) == [0, 2]
    assert pick(Filters(tool_types=frozenset({ToolType.COMMAND_OUTPUT}))) == [0, 1, 2]
    assert pick(Filters(tool_types=frozenset({ToolType.WEB_CONTENT}))) == []


def test_estimates_count_every_request_a_job_sends_and_nothing_for_passthrough() -> None:
    settings = Settings(
        anthropic_api_key="k",
        model_prices="claude-haiku-4-5-20251001=2.0/10.0",
        model_window_chars=10_000,
    )
    big = ArchivedJob(make_job("s", 0, size=4000), None, Path("s.jsonl"))
    small = ArchivedJob(make_job("s", 1, size=100), None, Path("s.jsonl"))
    one = estimate_job(settings, big)
    (prompt,) = opening_prompts(big.job, ToolType.COMMAND_OUTPUT, settings)
    request = prompt.request
    assert one.requests == 1
    assert one.input_tokens == estimate_tokens(request.system) + estimate_tokens(request.user)
    assert one.output_tokens == -(-settings.max_summary_chars // 4)
    assert one.usd == (one.input_tokens * 2.0 + one.output_tokens * 10.0) / 1e6
    assert estimate_job(settings, small).usd == 0.0
    total = estimate_all(settings, [big, small, big])
    assert (total.jobs, total.input_tokens, total.requests) == (3, 2 * one.input_tokens, 2)
    assert abs(total.usd - 2 * one.usd) < 1e-12
    huge = estimate_job(settings, ArchivedJob(make_job("s", 2, size=60_000), None, Path("s")))
    windows = opening_prompts(make_job("s", 2, size=60_000), ToolType.COMMAND_OUTPUT, settings)
    assert len(windows) >= 6 and huge.requests == len(windows) + 1  # the windows, the merge
    assert huge.input_tokens > 60_000 // 4
    assert huge.output_tokens == huge.requests * one.output_tokens


def test_a_resumed_checkpoint_cuts_a_torn_line_and_counts_unmarked_output_lines_as_done(
    tmp_path: Path,
) -> None:
    jobs = [make_job("s", n) for n in range(3)]
    items = [ArchivedJob(job, make_result(job), Path("s.jsonl")) for job in jobs]
    output = tmp_path / "out.jsonl"
    first = Checkpoint(output, sync_every=100)
    for item in items[:2]:
        first.record(item, make_result(item.job, Method.LLM))
    first.close()
    # a kill after the second output line but before its checkpoint line, mid third line
    marks = checkpoint_path(output).read_text().splitlines()
    checkpoint_path(output).write_text(marks[0] + "\n" + marks[1][:10])
    with output.open("a") as handle:
        handle.write('{"old_job_id": "torn')
    second = Checkpoint(output)
    assert second.done == {jobs[0].job_id, jobs[1].job_id}
    second.record(items[2], make_result(jobs[2], Method.LLM))
    second.close()
    assert [line["old_job_id"] for line in read_output(output)] == [j.job_id for j in jobs]
    third = Checkpoint(output)
    third.close()
    assert third.done == {j.job_id for j in jobs}


def test_the_report_compares_method_mix_compression_fallbacks_tokens_and_cost(
    tmp_path: Path,
) -> None:
    jobs = [make_job("s", n, size=2000) for n in range(2)]
    output = tmp_path / "out.jsonl"
    checkpoint = Checkpoint(output)
    for job in jobs:
        item = ArchivedJob(job, make_result(job), Path("s.jsonl"))
        checkpoint.record(item, make_result(job, Method.LLM))
    checkpoint.close()
    report = Report.compare(
        read_output(output), files=1, lines=4, skips=[], matched=2, already_done=0
    )
    assert report.old.methods == {"fallback": 2} and report.new.methods == {"llm": 2}
    assert report.old.fallback_reasons == {"timeout": 2} and not report.new.fallback_reasons
    assert report.new.ratio == 200 / 4000
    assert (report.new.input_tokens, report.new.output_tokens) == (20, 10)
    priced = Settings(anthropic_api_key="k", model_prices="claude-haiku-4-5-20251001=1.0/5.0")
    text = report.render(priced)
    assert "fallback=2" in text and "llm=2" in text and "timeout=2" in text
    assert "0.0001" in text  # (20 * 1 + 10 * 5) / 1e6 = 0.00007, rounded to 4 places


def test_the_progress_bar_shows_counts_rate_and_outcomes() -> None:
    bar = progress_bar(enabled=True)
    task = bar.add_task("reprocess", total=10, outcomes="")
    bar.update(task, completed=4, outcomes="fallback=1 llm=3")
    console = Console(width=160, record=True, file=io.StringIO())
    console.print(bar.make_tasks_table(bar.tasks))
    line = console.export_text()
    assert "4/10" in line and "jobs/s" in line and "fallback=1 llm=3" in line
