"""The re-run evaluation: a sequence replayed as a session, each pair scored both ways, and the
corpus in the repository held to the targets of change summaries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tersify.settings import Settings
from tersify.worker.cli import main
from tersify.worker.quality.reruns import load_sequences, score_sequence, summarize_scores
from tests.runlogs import runner_log

CORPUS = Path(__file__).parents[1] / "rerun-corpus"


def write_sequence(folder: Path, outputs: list[str], pairs: list[dict[str, object]]) -> None:
    runs = []
    for n, text in enumerate(outputs, 1):
        (folder / f"seq.{n}.txt").write_text(text, encoding="utf-8")
        runs.append({"command": "python -m pytest tests/", "output": f"seq.{n}.txt"})
    meta = {"source": {"repository": "made/here"}, "tool_name": "Bash", "runs": runs}
    (folder / "seq.json").write_text(json.dumps({**meta, "pairs": pairs}), encoding="utf-8")


def test_each_pair_is_scored_told_as_a_change_and_on_its_own(tmp_path: Path) -> None:
    outputs = [runner_log([3, 17]), runner_log([17, 52]), runner_log([17, 52], seconds=4.0)]
    write_sequence(
        tmp_path,
        outputs,
        [
            {"runs": [1, 2], "new": ["test_case_52 - assert 104 == 53"], "gone": ["test_case_3"]},
            {"runs": [2, 3]},
        ],
    )
    (case,) = load_sequences(tmp_path)
    first, second = score_sequence(case, Settings())
    assert first.told_as_change and second.told_as_change
    assert first.facts["new"] == (1, 1, 1) and first.facts["gone"] == (1, 1, 0)
    assert first.tokens_change < first.tokens_alone and second.tokens_change < first.tokens_change
    assert second.share == 0.0 and first.share > 0.0
    assert first.model_chars_rerun is not None and first.model_chars_rerun < first.model_chars_alone
    total = summarize_scores([first, second])
    assert total["facts"]["new"] == {"total": 1, "change": 1, "alone": 1}
    assert total["missed"] == [] and total["small_pairs"] == 1


def test_a_pair_that_is_not_two_runs_in_order_is_refused(tmp_path: Path) -> None:
    write_sequence(tmp_path, ["a" * 2000, "b" * 2000], [{"runs": [2, 1]}])
    with pytest.raises(ValueError, match="not two of its runs in order"):
        load_sequences(tmp_path)


def test_the_command_prints_each_split_and_refuses_what_is_not_a_corpus(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["eval-reruns", str(tmp_path / "missing")]) == 2
    assert "is not a directory" in capsys.readouterr().err
    write_sequence(tmp_path, [runner_log([3]), runner_log([4])], [{"runs": [1, 2]}])
    assert main(["eval-reruns", str(tmp_path), "--pairs"]) == 0
    out = capsys.readouterr().out
    assert "== all: 1 pairs, 1 told as changes" in out and "seq 1->2" in out


@pytest.mark.parametrize("split", ["tune", "check"])
def test_the_corpus_keeps_every_new_failure_and_changed_verdict_and_is_never_longer(
    split: str,
) -> None:
    scored = [
        s for case in load_sequences(CORPUS / split) for s in score_sequence(case, Settings())
    ]
    total = summarize_scores(scored)
    assert total["missed"] == []
    assert total["longest_ratio"] <= 1.0
    assert total["small_fewer_percent"] is not None and total["small_fewer_percent"] >= 60.0
