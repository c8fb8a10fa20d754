"""``tersify eval --method model`` end to end through the fake model, in both wire formats: the
facts kept, tokens, cost and latency per case, two models side by side, the kept answers that
make a rerun free, the cost ceiling, a provider failing mid-run, and older prompt versions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tersify.settings import Settings
from tersify.worker.model.pricing import cost
from tersify.worker.quality.answers import AnswerStore, StoredAnswer, answer_key
from tersify.worker.quality.corpus import load_cases
from tersify.worker.summarize.cache import PROMPT_VERSION
from tests.fakemodel import FakeModelServer, status
from tests.helpers import tersify
from tests.integration.conftest import provider_env

PRICES = "fast-model=1/5,slow-model=3/15"
FILLER = "".join(f"collected item {i} of the suite ran fine\n" for i in range(200))
CASES = {
    "alpha": ("FAILED tests/test_a.py::test_one alpha-fact-top\n" + FILLER + "alpha-fact-deep\n",
              ["alpha-fact-top", "alpha-fact-deep"]),
    "beta": ("FAILED tests/test_b.py::test_two beta-fact CASE-BETA\n" + FILLER, ["beta-fact"]),
    "gamma": ("FAILED tests/test_c.py::test_three gamma-fact\n" + FILLER, ["gamma-fact"]),
}  # fmt: skip


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """Three cases whose facts sit at the top (kept by the fake's answer) or deep (missed)."""
    folder = tmp_path / "corpus"
    folder.mkdir()
    for name, (output, facts) in CASES.items():
        (folder / f"{name}.txt").write_text(output)
        meta = {"tool_name": "bash", "command": "pytest", "expected_type": "CommandOutput"}
        (folder / f"{name}.json").write_text(json.dumps({**meta, "must_keep": facts}))
    return folder


def env_for(fake: FakeModelServer, provider: str) -> dict[str, str]:
    """The provider on the fake, quick retries, and prices for the two fake models."""
    return {
        **provider_env(fake, provider),
        "model_prices": PRICES,
        "model_max_attempts": "2",
        "model_retry_base_seconds": "0.01",
    }


def evaluate(settings: Settings, corpus: Path, *args: str, **env: str) -> tuple[int, Any]:
    """``tersify eval CORPUS --method model --json ARGS…``: exit code and parsed report."""
    done = tersify(
        settings,
        "eval",
        str(corpus),
        "--method",
        "model",
        "--json",
        "--answers",
        str(corpus.parent / "answers"),
        *args,
        **env,
    )
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


def by_case(report: dict[str, Any]) -> dict[tuple[str, str, str], dict[str, Any]]:
    """The report's results by (case, model, prompt version)."""
    return {(r["case"], r["model"], r["prompt_version"]): r for r in report["results"]}


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_two_models_are_scored_per_case_and_a_rerun_is_free(
    provider: str, settings: Settings, fake_model: FakeModelServer, corpus: Path
) -> None:
    env = env_for(fake_model, provider)
    code, report = evaluate(settings, corpus, "--model", "fast-model,slow-model", **env)
    assert code == 0
    sent = sorted(str(r.body["model"]) for r in fake_model.requests)
    assert sent == ["fast-model"] * 3 + ["slow-model"] * 3
    results = by_case(report)
    priced = Settings(model_prices=PRICES)
    for model in ("fast-model", "slow-model"):
        alpha = results[("alpha", model, PROMPT_VERSION)]
        assert (alpha["status"], alpha["kept"], alpha["total"]) == ("answered", 1, 2)
        assert alpha["missing"] == ["alpha-fact-deep"] and alpha["text"].startswith("Summary: ")
        for name in CASES:
            row = results[(name, model, PROMPT_VERSION)]
            assert row["input_tokens"] > 0 and row["output_tokens"] > 0 and row["seconds"] > 0
            tokens = row["input_tokens"], row["output_tokens"]
            expected = cost(priced, model, *tokens, provider=provider)
            assert row["usd"] == pytest.approx(expected, abs=1e-6)
            assert row["chars_out"] == len(row["text"]) and not row["cached"]
    totals = {t["model"]: t for t in report["models"]}
    assert totals["fast-model"]["kept"] == 3 and totals["fast-model"]["total"] == 4
    assert totals["slow-model"]["usd"] > totals["fast-model"]["usd"] > 0
    assert report["spent_usd"] == pytest.approx(sum(t["usd"] for t in report["models"]), abs=1e-5)

    before = fake_model.request_count
    code, again = evaluate(settings, corpus, "--model", "fast-model,slow-model", **env)
    assert code == 0 and fake_model.request_count == before
    assert all(r["cached"] for r in again["results"]) and again["spent_usd"] == 0
    assert [r["text"] for r in again["results"]] == [r["text"] for r in report["results"]]


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_provider_failing_mid_run_fails_that_case_only_and_the_rerun_asks_for_it_alone(
    provider: str, settings: Settings, fake_model: FakeModelServer, corpus: Path
) -> None:
    env = env_for(fake_model, provider)
    fake_model.add_rule("CASE-BETA", status(500))
    code, report = evaluate(settings, corpus, "--model", "fast-model", **env)
    assert code == 1
    results = by_case(report)
    beta = results[("beta", "fast-model", PROMPT_VERSION)]
    assert beta["status"] == "failed" and beta["fallback_reason"] == "server_error"
    assert beta["kept"] == 0 and beta["text"] is None
    assert [results[(n, "fast-model", PROMPT_VERSION)]["status"] for n in ("alpha", "gamma")] == [
        "answered",
        "answered",
    ]
    assert report["models"][0]["failed"] == 1 and report["models"][0]["answered"] == 2

    fake_model.reset()
    code, again = evaluate(settings, corpus, "--model", "fast-model", **env)
    assert code == 0 and fake_model.request_count == 1  # beta only: the others were kept
    assert b"CASE-BETA" in json.dumps(fake_model.requests[0].body).encode()
    assert by_case(again)[("beta", "fast-model", PROMPT_VERSION)]["status"] == "answered"


def test_the_cost_ceiling_stops_the_run_before_a_call_that_would_pass_it(
    settings: Settings, fake_model: FakeModelServer, corpus: Path
) -> None:
    env = env_for(fake_model, "anthropic")
    answers = str(corpus.parent / "answers")
    dry = tersify(settings, "eval", str(corpus), "--method", "model", "--model", "fast-model",
                  "--dry-run", "--answers", answers, **env)  # fmt: skip
    assert dry.returncode == 0 and dry.stdout.startswith("estimate: 3 model call(s)")
    assert fake_model.request_count == 0
    whole = float(dry.stdout.split("~$")[1].split()[0])
    code, report = evaluate(
        settings, corpus, "--model", "fast-model", "--max-cost", f"{whole / 2:.8f}", **env
    )
    statuses = [r["status"] for r in report["results"]]
    assert code == 0 and report["stopped_on_budget"] is True
    assert statuses[0] == "answered" and "ceiling" in statuses
    assert fake_model.request_count == statuses.count("answered")
    assert report["spent_usd"] <= whole / 2


def test_an_older_prompt_version_is_read_from_kept_answers_beside_the_current_one(
    settings: Settings, fake_model: FakeModelServer, corpus: Path
) -> None:
    env = env_for(fake_model, "openai")
    kept_settings = Settings(**{k: v for k, v in env.items() if k != "model_timeout_seconds"})
    store = AnswerStore(corpus.parent / "answers")
    for case in load_cases(corpus):
        old = StoredAnswer(
            "an older answer: alpha-fact-deep", "llm", "fast-model", "openai", 9, 9, 0.0, 0.1
        )
        store.put(answer_key(case, "fast-model", "2", kept_settings), old)
    code, report = evaluate(
        settings,
        corpus,
        "--model",
        "fast-model",
        "--prompt-version",
        f"2,{PROMPT_VERSION},1",
        **env,
    )
    assert code == 0 and fake_model.request_count == 3  # only the current version is asked
    results = by_case(report)
    old_alpha = results[("alpha", "fast-model", "2")]
    assert old_alpha["cached"] and (old_alpha["kept"], old_alpha["missing"]) == (
        1,
        ["alpha-fact-top"],
    )
    assert results[("alpha", "fast-model", PROMPT_VERSION)]["missing"] == ["alpha-fact-deep"]
    assert {r["status"] for k, r in results.items() if k[2] == "1"} == {"not_kept"}


def test_without_a_model_provider_the_model_method_refuses_clearly(
    settings: Settings, corpus: Path
) -> None:
    refused = tersify(settings, "eval", str(corpus), "--method", "model")
    assert refused.returncode == 2 and "no model provider" in refused.stderr
