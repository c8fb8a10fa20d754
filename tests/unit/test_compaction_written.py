"""What the agent writes down in its actions (commit messages, comments and prose its edits
add) read as decisions, whatever the tools are called."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tersify.chat.messages import Turn, parse
from tersify.worker.compaction.facts.actions import actions
from tersify.worker.compaction.facts.decisions import decisions
from tersify.worker.compaction.facts.written import messages, written
from tests.chat import call, result

Msg = dict[str, Any]
NAMES = st.from_regex(r"[a-z]{3,8}", fullmatch=True)


def turns_of(messages_: list[Msg]) -> list[Turn]:
    return parse(messages_).turns


def test_commit_and_pull_request_messages_are_read_from_any_command_line() -> None:
    line = 'git add a.py && git commit -m "fix: retry the upload when the token expired"'
    assert messages(line) == ["fix: retry the upload when the token expired"]
    pr = "gh pr create --title 'Stop pinning the cache action' --body $'## Summary\\n- keep it'"
    assert messages(pr) == ["Stop pinning the cache action", "## Summary\n- keep it"]
    heredoc = "git commit -F - <<'EOF'\nUse a lock file instead of a pid file\nEOF"
    assert messages(heredoc) == ["Use a lock file instead of a pid file"]
    assert messages("git log -m --oneline") == [] and messages("echo -m 'not a commit'") == []


@given(
    tool=NAMES,
    prefix=NAMES,
    new=st.sampled_from(["new", "replace", "insert", "updated"]),
    old=st.sampled_from(["old", "search", "original"]),
)
def test_comments_and_prose_an_edit_adds_are_statements_and_code_is_not(
    tool: str, prefix: str, new: str, old: str
) -> None:
    before = "    return cancel(bareiss(self))\n"
    after = (
        "    try:\n        return cancel(bareiss(self))\n    except (TypeError, ValueError):\n"
        "        # if the bareiss algorithm fails on nan comparisons,\n"
        "        # fall back to the berkowitz algorithm\n        return self._berkowitz()\n"
    )
    doc = "## Errors\n\n- Unknown commands print one error message and exit 1.\n| a | b |\n"
    turns = turns_of(
        [
            call("c1", tool, {f"{prefix}_{old}": before, f"{prefix}_{new}": after, "at": "m.py"}),
            result("c1", "ok"),
            call("c2", tool, {"path": "docs/cli.md", "content": doc}),
            result("c2", "ok"),
        ]
    )
    said = [text for _, text in written(actions(turns))]
    assert said[0] == (
        "if the bareiss algorithm fails on nan comparisons, fall back to the berkowitz algorithm"
    )
    assert "Unknown commands print one error message and exit 1." in said
    assert not any("return" in text or "except" in text or "|" in text for text in said)


def test_a_commit_message_counts_as_a_decision_beside_the_agents_sentences() -> None:
    turns = turns_of(
        [
            {"role": "user", "content": "Make the release task stop updating the lockfile."},
            {"role": "assistant", "content": "Let me look at the task."},
            call("c1", "run", {"command": "git commit -am 'stop running cargo update in release'"}),
            result("c1", "[main 1a2b3c] stop running cargo update in release"),
        ]
    )
    assert "stop running cargo update in release" in [text for _, text in decisions(turns)]


def test_each_requests_work_keeps_its_best_decision_however_long_the_others_are() -> None:
    script: list[Msg] = [{"role": "user", "content": "Speed up the parser."}]
    script += [{"role": "assistant", "content": "The root cause is the regex backtracking."}]
    script += [{"role": "user", "content": "Now make the exporter handle dates."}]
    script += [
        {"role": "assistant", "content": f"The fix is to set `opt_{n}` because `x_{n}` is slow."}
        for n in range(30)
    ]
    found = [text for _, text in decisions(turns_of(script), limit=2)]
    assert "The root cause is the regex backtracking." in found
