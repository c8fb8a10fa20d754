"""More shapes of facts, each tested with made-up tool names: a tool's refusal in plain words,
error fields and tags, JSON results, Windows paths and PowerShell, code that writes a file, the
lines an edit adds, test runners' verdict and summary lines in many forms, and findings as
decisions.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tersify.chat.messages import Turn, parse
from tersify.worker.compaction.facts.actions import actions
from tersify.worker.compaction.facts.arguments import is_path
from tersify.worker.compaction.facts.decisions import FEATURES, WEIGHTS, decisions, statements
from tersify.worker.compaction.facts.edits import added_lines, patch_added, sed_added
from tersify.worker.compaction.facts.errorlines import error_lines, refusal
from tersify.worker.compaction.facts.errors import seen_errors
from tersify.worker.compaction.facts.files import changed_files
from tersify.worker.compaction.facts.results import readable
from tersify.worker.compaction.facts.testruns import last_summary, reported, states_of_tests
from tests.chat import exchange

Msg = dict[str, Any]
NAMES = st.from_regex(r"[a-z][a-z_]{2,20}", fullmatch=True)


def rounds(*pairs: tuple[str, dict[str, Any], str]) -> list[Turn]:
    """A conversation of tool round trips in the OpenAI shape, one call each."""
    messages: list[Msg] = [{"role": "user", "content": "Do the work."}]
    for number, (name, arguments, result) in enumerate(pairs):
        messages += exchange(f"c{number}", name, arguments, result)
    return parse(messages).turns


def errors_of(*pairs: tuple[str, dict[str, Any], str]) -> list[str]:
    return [e.line for e in seen_errors(actions(rounds(*pairs)))]


def changed(command: str) -> dict[str, list[str]]:
    found = changed_files(actions(rounds(("t_run", {"command": command}, ""))))
    return {c.path: c.verbs for c in found}


# --- errors ----------------------------------------------------------------------------------


@given(name=NAMES)
def test_a_short_result_refusing_the_call_in_plain_words_is_an_error_without_any_flag(
    name: str,
) -> None:
    arguments = {"path": "src/a.py", "old": "x", "new": "y"}
    for result in (
        "Failed to edit, 0 occurrences found for old text",
        "Parameter 'old' is required for this command.",
        "User denied execution.",
        "Cannot overwrite a file that exists; use another mode.",
        "File is too large (3 MB); read it in parts.",
    ):
        assert errors_of((name, arguments, result)) == [result]


def test_a_line_opening_with_a_failure_is_an_error_in_any_result() -> None:
    output = "Working...\nUnable to resolve host: example.invalid\nCould not open lock file\n"
    assert error_lines(output) == [
        "Unable to resolve host: example.invalid",
        "Could not open lock file",
    ]
    assert error_lines("curl: (7) Failed to connect to localhost port 1") == [
        "curl: (7) Failed to connect to localhost port 1"
    ]


@given(name=NAMES)
def test_text_that_does_not_match_a_conflict_and_a_thread_exception_are_errors(name: str) -> None:
    arguments = {"target": "src/a.py", "search": "x", "replace": "y"}
    result = "The search block\nx = 1\ndoes not match anything in the file."
    assert errors_of((name, arguments, result)) == ["does not match anything in the file."]
    assert error_lines("Auto-merging a.py\nCONFLICT (content): Merge conflict in a.py") == [
        "CONFLICT (content): Merge conflict in a.py"
    ]
    assert error_lines('Exception in thread "main" java.lang.IllegalStateException\n\tat M.m') == [
        'Exception in thread "main" java.lang.IllegalStateException'
    ]


def test_a_severity_word_heading_a_field_an_error_field_and_an_error_tag_are_errors() -> None:
    assert error_lines("Error response from daemon: no such container: web") == [
        "Error response from daemon: no such container: web"
    ]
    assert error_lines('{"ok": false, "error": "quota exceeded for key"}') == [
        "quota exceeded for key"
    ]
    assert error_lines("<tool_error>File has not been read yet.</tool_error>") == [
        "File has not been read yet."
    ]


def test_windows_and_other_shells_failures_said_in_words_are_errors() -> None:
    output = (
        "Get-Content : Cannot find path 'C:\\w\\a.txt' because it does not exist.\n"
        "'pytest' is not recognized as an internal or external command,\n"
        "The system cannot find the file specified.\n"
    )
    assert len(error_lines(output)) == 3


def test_short_ordinary_results_and_counts_of_nothing_are_not_refusals() -> None:
    for output in (
        "File written: src/a.py",
        "No errors found.",
        "3 passed, 0 failed",
        "Done. 0 failures.",
        '{"status": "ok", "note": "invalid entries: none"}',
    ):
        assert refusal(output) is None, output
    long = "\n".join(f"line {i} is missing nothing" for i in range(20))
    assert refusal(long) is None  # not short: each line is judged by its own shape


def test_a_json_result_is_read_as_key_value_lines_whole_or_after_a_header() -> None:
    whole = json.dumps({"exit_code": 1, "output": "running\nerror: cannot bind port 80\n"})
    assert "error: cannot bind port 80" in readable(whole).splitlines()
    after = "Done\nOutput:\n" + json.dumps({"output": "ok 1 parses\nnot ok 2 loads\n"})
    assert reported(readable(after)) == [("parses", "passed"), ("loads", "failed")]
    assert readable("plain text {not json}") == "plain text {not json}"


# --- files -----------------------------------------------------------------------------------


def test_windows_paths_are_paths_and_keep_their_backslashes() -> None:
    assert is_path("C:\\Users\\me\\docs\\log.md")
    assert is_path("D:/work/app/main.go")
    assert changed("echo done > C:\\tmp\\out.log") == {"C:\\tmp\\out.log": ["written by shell"]}
    assert changed("del build\\old.txt") == {"build\\old.txt": ["deleted"]}


def test_powershell_file_commands_change_the_files_they_name() -> None:
    command = (
        "Set-Content -Path docs\\a.md -Value 'x'; Add-Content notes.txt 'y'; "
        "Remove-Item .\\old.txt; Move-Item -Path a.txt -Destination b\\c.txt; "
        "Rename-Item C:\\w\\y.txt z.txt; Copy-Item src.cfg dst.cfg"
    )
    assert changed(command) == {
        "docs\\a.md": ["written"],
        "notes.txt": ["edited"],
        ".\\old.txt": ["deleted"],
        "b\\c.txt": ["moved here"],
        "a.txt": ["moved away"],
        "C:\\w\\z.txt": ["moved here"],
        "C:\\w\\y.txt": ["moved away"],
        "dst.cfg": ["copied here"],
    }


def test_a_here_string_piped_to_a_file_command_writes_that_file_and_its_text_runs_nothing() -> None:
    command = '$t = @"\nrm -rf build.txt\n"@\n$t | Out-File -FilePath report.md'
    assert changed(command) == {"report.md": ["written"]}


def test_code_a_shell_runs_writes_the_files_it_opens_for_writing() -> None:
    heredoc = "python3 - <<'EOF'\nwith open('out/data.json', 'w') as f:\n    f.write('{}')\nEOF"
    assert changed(heredoc) == {"out/data.json": ["written by code"]}
    inline = "node -e \"require('fs').writeFileSync('dist/x.js', 'y')\""
    assert changed(inline) == {"dist/x.js": ["written by code"]}
    kept = "cat > gen.py <<'EOF'\nopen('never.txt', 'w')\nEOF"
    assert changed(kept) == {"gen.py": ["written by shell"]}  # a file's text is not run


# --- what an edit added ----------------------------------------------------------------------


def test_an_edit_shows_its_first_added_comment_and_line_of_code_whatever_the_names() -> None:
    arguments = {
        "file": "src/calc.py",
        "old_text": "def det(m):\n    return bareiss(m)\n",
        "new_text": "def det(m):\n    try:\n        return bareiss(m)\n"
        "    except ValueError:\n        # fall back to a slower, exact method\n"
        "        return berkowitz(m)\n",
    }
    assert added_lines(arguments) == [
        "except ValueError:",
        "# fall back to a slower, exact method",
    ]
    found = changed_files(actions(rounds(("t_change", arguments, "ok"))))
    assert found[0].added == added_lines(arguments)


def test_a_patch_and_a_sed_script_show_what_they_add() -> None:
    patch = "*** Begin Patch\n*** Update File: a.py\n@@\n-x = 1\n+x = compute_limit()\n"
    assert patch_added(patch) == {"a.py": ["x = compute_limit()"]}
    assert sed_added("s/if v < 0:/if v <= 0:/") == ["if v <= 0:"]
    assert sed_added("12,14d") == []


# --- tests -----------------------------------------------------------------------------------


def test_test_ids_with_a_verdict_after_the_name_or_in_a_failure_list_are_read() -> None:
    output = (
        "Suite > adds numbers FAILED\n"
        "Test Case '-[Calc.Tests testAdd]' passed (0.01 seconds).\n"
        "  ● Parser › reads dates\n"
        "  1) Tests\\ParserTest::testDates\n"
        "rspec ./spec/parser_spec.rb:12 # Parser reads dates\n"
        "reads dates ... FAILED (3ms)\n"
        "[unit:core] ok 4 keeps order\n"
        "  FAIL  src/a.test.ts > parser > trims\n"
    )
    assert reported(output) == [
        ("Suite > adds numbers", "failed"),
        ("Calc.Tests testAdd", "passed"),
        ("Parser › reads dates", "failed"),
        ("Tests\\ParserTest::testDates", "failed"),
        ("./spec/parser_spec.rb:12", "failed"),
        ("reads dates", "failed"),
        ("keeps order", "passed"),
        ("src/a.test.ts > parser > trims", "failed"),
    ]


SUMMARIES = st.sampled_from(
    [
        "{f} failed, {p} passed in 0.5s",
        "Tests:       {f} failed, {p} passed, {t} total",
        "{p} passing (20ms)",
        "{t} examples, {f} failures",
        "test result: FAILED. {p} passed; {f} failed; 0 ignored; 0 filtered out",
        "Tests run: {t}, Failures: {f}, Errors: 0, Skipped: 0",
        "tests: {p}/{t} passed, {f} failed",
        "FAILED | {p} passed | {f} failed (20ms)",
        "Failed!  - Failed:     {f}, Passed:     {p}, Skipped:     0, Total:     {t}",
        "{t} runs, {t} assertions, {f} failures, 0 errors, 0 skips",
    ]
)


@given(shape=SUMMARIES, passed=st.integers(0, 500), failed=st.integers(1, 50))
def test_a_runners_closing_count_line_is_the_runs_summary_in_any_runners_words(
    shape: str, passed: int, failed: int
) -> None:
    line = shape.format(p=passed, f=failed, t=passed + failed)
    output = f"collecting\nsomething ran\n{line}\n"
    assert last_summary(output) == line.strip("= ")
    run = rounds(("t_check", {"command": "run-checks"}, output))
    assert states_of_tests(actions(run))[1] == f"{line} ← run-checks"


def test_lines_that_count_other_things_are_not_a_runs_summary() -> None:
    for line in ("3 files changed, 10 insertions(+)", "Found 2 errors in 1 file", "12 items"):
        assert last_summary(line) is None, line


# --- decisions -------------------------------------------------------------------------------


def said(*texts: str) -> list[str]:
    messages: list[Msg] = [{"role": "user", "content": "Go."}]
    messages += [{"role": "assistant", "content": t} for t in texts]
    return [text for _, text in decisions(parse(messages).turns)]


def test_a_finding_about_something_named_is_a_decision() -> None:
    found = said(
        "Running the suite now.",
        "`ErrorEvent` is not defined in `events/types.py`, which is why the import fails.",
        "So `merge_setting` only removes keys set to `None` from `request_setting`.",
    )
    assert (
        "`ErrorEvent` is not defined in `events/types.py`, which is why the import fails." in found
    )
    assert "So `merge_setting` only removes keys set to `None` from `request_setting`." in found
    assert "Running the suite now." not in found


def test_a_statement_scores_higher_for_a_cause_than_for_narration_of_the_same_thing() -> None:
    messages: list[Msg] = [
        {"role": "user", "content": "Go."},
        {"role": "assistant", "content": "Let me look at `parse_date` in `src/dates.py` now."},
        {"role": "assistant", "content": "The root cause is that `parse_date` swaps the month."},
    ]
    looked, cause = statements(parse(messages).turns)
    assert cause.score > looked.score
    assert cause.counts and not looked.counts


def test_the_decision_weights_name_every_feature_once_and_a_bias() -> None:
    assert set(WEIGHTS) == {*FEATURES, "bias"}
    assert len(FEATURES) == len(set(FEATURES))
