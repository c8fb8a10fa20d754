"""``tersify savings`` as a user runs it: sample sessions of two agents and a generated long one
shrunk locally, and the same outputs summarized through a real worker and the fake model."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tersify.settings import Settings
from tersify.worker.model.pricing import cost
from tersify.worker.processes.worker_process import WorkerProcess
from tests.agentlogs import MODEL, long_session
from tests.fakemodel import FakeModelServer
from tests.helpers import tersify
from tests.integration.conftest import provider_env
from tests.sessions import build

StartWorker = Callable[..., WorkerProcess]
SESSIONS = Path(__file__).resolve().parents[1] / "sessions"
SHELL = SESSIONS / "shell-agent"


def tool_messages() -> list[str]:
    """The outputs of the shell agent's sample session, read from the file."""
    document = json.loads((SHELL / f"{build.SHELL_SESSION}.messages.json").read_text())
    return [m["content"] for m in document["messages"] if m["role"] == "tool"]


def claude_results() -> int:
    """How many tool results the Claude Code sample session holds."""
    lines = (SESSIONS / "claude-code" / f"{build.CLAUDE_SESSION}.jsonl").read_text().splitlines()
    return sum("toolUseResult" in json.loads(line) for line in lines)


def over_threshold(settings: Settings) -> int:
    """How many of the shell agent's outputs are long enough to be summarized."""
    return sum(len(text) > settings.summarize_threshold_chars for text in tool_messages())


def savings(settings: Settings, *args: str, **env: str) -> dict[str, Any]:
    """``tersify savings ARGS… --json`` (``env``: setting overrides), parsed."""
    done = tersify(settings, "savings", *args, "--json", "--no-progress", timeout=300, **env)
    assert done.returncode == 0, done.stderr
    parsed: dict[str, Any] = json.loads(done.stdout)
    return parsed


def test_savings_reports_two_real_agents_and_a_long_session_with_a_csv_row_per_output(
    settings: Settings, tmp_path: Path
) -> None:
    written = long_session(tmp_path / "generated.jsonl", calls=400, seed=3)
    table = tmp_path / "rows.csv"
    got = savings(settings, str(SESSIONS), str(tmp_path / "generated.jsonl"), "--csv", str(table))
    assert (got["files"], got["sessions"], got["skipped"]) == (3, 3, [])
    assert set(got["by_model"]) == {build.CLAUDE_MODEL, build.SHELL_MODEL, MODEL}
    total = got["total"]
    assert total["outputs"] == claude_results() + len(tool_messages()) + len(written)
    assert total["saved"] == total["tokens_before"] - total["tokens_after"] > 0
    assert total["unpriced"] == 0 and total["usd_carried"] > total["usd_once"] > 0
    rows = list(csv.DictReader(io.StringIO(table.read_text())))
    assert len(rows) == total["outputs"]
    assert sum(int(r["saved"]) for r in rows) == total["saved"]
    by_session = {name: t["outputs"] for name, t in got["by_session"].items()}
    assert by_session[build.SHELL_SESSION] == len(tool_messages()) and len(got["largest"]) == 10
    assert got["largest"][0]["tokens_before"] == max(int(r["tokens_before"]) for r in rows)


def test_savings_prints_tables_and_refuses_bad_input_clearly(settings: Settings) -> None:
    shown = tersify(settings, "savings", str(SHELL), "--no-progress")
    assert shown.returncode == 0, shown.stderr
    assert "by tool type" in shown.stdout and "largest 10 outputs" in shown.stdout
    missing = tersify(settings, "savings", "/no/such/dir/x.jsonl")
    assert missing.returncode == 2 and "no such file" in missing.stderr
    bad = tersify(settings, "savings", str(SHELL), "--prices", "gpt-5=free")
    assert bad.returncode == 2 and "bad model price" in bad.stderr


def test_savings_with_a_model_sends_the_long_outputs_through_a_worker_and_prices_them(
    settings: Settings, start_worker: StartWorker, fake_model: FakeModelServer
) -> None:
    env = provider_env(fake_model, "openai")
    start_worker(**env)
    long = over_threshold(settings)
    dry = tersify(settings, "savings", str(SHELL), "--model", "--dry-run", **env)
    assert dry.returncode == 0, dry.stderr
    requests = int(dry.stdout.split(" model request(s)")[0].rsplit(" ", 1)[1])
    assert requests > long  # an output past one window is read in windows and merged
    got = savings(settings, str(SHELL), "--model", **env)
    rows = got["largest"]
    assert got["mode"].startswith("model summaries") and got["not_sent"] == 0
    assert got["total"]["summarized"] == long
    llm = [r for r in rows if r["method"] == "llm"]
    assert llm and all(r["summary_usd"] > 0 for r in llm)
    assert got["total"]["summary_usd"] > 0
    assert fake_model.request_count == requests  # every window and merge, as estimated
    model = str(fake_model.requests[0].body["model"])
    bound = cost(Settings(), model, 50_000, 2_000, provider="openai")
    assert got["total"]["summary_usd"] <= requests * bound


def test_savings_stops_sending_at_the_cost_ceiling_and_counts_the_rest_unchanged(
    settings: Settings, start_worker: StartWorker, fake_model: FakeModelServer, tmp_path: Path
) -> None:
    env = provider_env(fake_model, "anthropic")
    start_worker(**env)
    long, outputs = over_threshold(settings), len(tool_messages())
    dry = tersify(settings, "savings", str(SHELL), "--model", "--dry-run", **env)
    assert dry.returncode == 0 and dry.stdout.startswith(f"estimate: {long} of {outputs} output(s)")
    usd = float(dry.stdout.split("~$")[1].split()[0])
    table = tmp_path / "rows.csv"
    got = savings(
        settings, str(SHELL), "--model", "--max-cost", f"{usd / 3:.6f}", "--csv", str(table), **env
    )
    assert got["stopped_on_budget"] is True and 0 < got["not_sent"] < long
    rows = list(csv.DictReader(io.StringIO(table.read_text())))
    unsent = [r for r in rows if r["method"] == "not_sent"]
    assert len(unsent) == got["not_sent"]
    assert all(r["tokens_after"] == r["tokens_before"] for r in unsent)
    assert fake_model.request_count == long - got["not_sent"]
    assert got["total"]["summary_usd"] <= usd / 3
