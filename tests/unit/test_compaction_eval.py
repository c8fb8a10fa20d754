"""``tersify eval-compaction``: loading a conversation corpus and scoring compactions over it."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tersify.settings import Settings
from tersify.worker.cli import eval_compaction
from tersify.worker.quality.compaction_eval import baseline_text, evaluate_conversations
from tersify.worker.quality.conversations import Fact, FactKind, load_conversations, normalize
from tests.chat import bash_steps

Msg = dict[str, Any]
ERROR = "ModuleNotFoundError: No module named 'yaml'"


def conversation() -> list[Msg]:
    """A long OpenAI-shaped conversation: an error early in the middle, an edit, long
    listings, a passing run."""
    messages: list[Msg] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Make the config loader read YAML."},
    ]
    steps = [("python load.py", f"Traceback (most recent call last):\n{ERROR}\nExit code: 1")]
    steps += [("sed -i 's/json/yaml/' src/config/loader.py", "Exit code: 0")]
    listing = "\n".join(f"module_{j}.py" for j in range(150))  # ~2,000 chars each
    steps += [(f"ls src/part_{i}", listing) for i in range(8)]
    steps += [("pytest -q", "12 passed in 0.3s")]
    messages += bash_steps(steps)
    return [*messages, {"role": "assistant", "content": "Done: the loader reads YAML now."}]


def write_case(
    directory: Path,
    name: str,
    facts: list[Msg],
    reference: str | None = None,
    agent: str = "test-agent",
) -> None:
    meta = {"agent": agent, "model": "m", "facts": facts, "source": {"repository": "x/y"}}
    (directory / f"{name}.json").write_text(json.dumps(meta), encoding="utf-8")
    (directory / f"{name}.messages.json").write_text(json.dumps(conversation()), encoding="utf-8")
    if reference is not None:
        (directory / f"{name}.reference.md").write_text(reference, encoding="utf-8")


FACTS = [
    {"kind": "task", "any": ["read YAML"]},
    {"kind": "file", "any": ["src/config/loader.py"]},
    {"kind": "error", "any": [ERROR]},
    {"kind": "decision", "any": ["a fact nobody wrote down"]},
]


def test_facts_match_any_spelling_ignoring_case_and_runs_of_white_space() -> None:
    fact = Fact(FactKind.ERROR, ("No module named  'yaml'", "ImportError"))
    assert fact.found_in(normalize("Traceback\nNO MODULE named\n'yaml'"))
    assert not fact.found_in(normalize("No module named 'toml'"))


def test_a_compaction_is_scored_by_kind_overall_and_by_the_summary_alone(tmp_path: Path) -> None:
    write_case(tmp_path, "case", FACTS, reference=f"The loader failed with {ERROR}.")
    report = evaluate_conversations(load_conversations(tmp_path), Settings())
    result = report.results[0]
    assert result.method == "fallback" and result.pairs_intact and result.verbatim
    assert (result.overall[FactKind.TASK].kept, result.overall[FactKind.TASK].total) == (1, 1)
    assert result.summary_only[FactKind.TASK].total == 0  # the request is kept verbatim
    assert result.summary_only[FactKind.ERROR].kept == 1  # only the summary can carry it
    assert result.summary_only[FactKind.FILE].kept == 1
    assert result.missing == ("decision: a fact nobody wrote down",)
    assert result.reference is not None and result.reference.kept == 1  # the error, not the file
    assert result.reference_ours is not None and result.reference_ours.kept == 2
    assert result.tokens[1] < result.tokens[0]


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser(prog="tersify")
    eval_compaction.add_parser(parser.add_subparsers(required=True))
    args = parser.parse_args(["eval-compaction", *argv])
    code = args.run(args, Settings())
    out, err = capsys.readouterr()
    return code, out, err


def test_the_command_reports_tune_and_check_agents_apart_beside_the_baseline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for split in ("tune", "check"):
        (tmp_path / split).mkdir()
        write_case(tmp_path / split, f"{split}_case", FACTS, agent=f"{split}-agent")
    code, out, _ = run_cli(capsys, str(tmp_path), "--json")
    assert code == 0
    report = json.loads(out)["splits"]
    assert set(report) == {"tune", "check"}
    check = report["check"]
    assert check["agents"] == ["check-agent"] and report["tune"]["agents"] == ["tune-agent"]
    assert check["summary_only"] == {"kept": 2, "total": 3}
    assert check["by_agent"]["check-agent"]["summary_only"] == {"kept": 2, "total": 3}
    # the baseline (the middle's last messages in the summary's room) holds neither the early
    # error nor the early edit: both lie before the listings that fill its room
    assert check["baseline"] == {"kept": 0, "total": 3}
    assert check["baseline_by_kind"]["error"] == {"kept": 0, "total": 1}
    earlier = tmp_path / "before.json"
    earlier.write_text(out, encoding="utf-8")
    code, out, _ = run_cli(capsys, str(tmp_path), "--before", str(earlier), "--split", "check")
    assert code == 0 and "check before" in out and "pairs_intact=1/1" in out
    assert "check-agent" in out and "baseline=0/3" in out


def test_the_baseline_is_the_last_messages_not_kept_that_fit_the_room() -> None:
    messages = [{"role": "user", "content": f"message {i} " + "x" * 40} for i in range(10)]
    kept = [messages[0], messages[-1]]
    text, count = baseline_text(messages, kept, limit=120)
    assert count == 2  # two messages of about 50 chars fit in 120, a third does not
    assert "message 8" in text and "message 7" in text and "message 9" not in text
    text, count = baseline_text(messages, kept, limit=10)
    assert count == 1 and len(text) == 10  # one message at least, cut to the room


def test_the_command_refuses_a_missing_corpus_and_says_when_messages_are_not_built(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli(capsys, str(tmp_path / "nowhere"))[0] == 2
    (tmp_path / "lonely.json").write_text(json.dumps({"facts": FACTS}), encoding="utf-8")
    code, _, err = run_cli(capsys, str(tmp_path))
    assert code == 2
    assert "1 cases" in err and "no NAME.json + NAME.messages.json cases" in err
    write_case(tmp_path, "bad", [{"kind": "mood", "any": ["x"]}])
    code, _, err = run_cli(capsys, str(tmp_path))
    assert code == 2 and "bad case" in err


def test_the_json_report_of_a_model_floor_run_is_alone_on_stdout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Log lines (here, a transcript read in windows) go to stderr, never into the JSON."""
    write_case(tmp_path, "case", FACTS)
    monkeypatch.setenv("TERSIFY_MODEL_WINDOW_CHARS", "2000")  # the child inherits these
    monkeypatch.setenv("TERSIFY_LOG_FORMAT", "json")
    argv = [sys.executable, "-m", "tersify.worker.cli", "eval-compaction", str(tmp_path), "--json"]
    done = subprocess.run(
        [*argv, "--method", "model-floor"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "compaction_windows_read" in done.stderr  # the run did log
    report = json.loads(done.stdout)  # and stdout is the report alone
    assert report["splits"]["all"]["cases"] == 1
