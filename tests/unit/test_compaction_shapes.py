"""Facts read from the shape of tool calls and results, whatever the tools are called.

Every tool name below is made up (or drawn by hypothesis): a rule that needs a known name fails
here. Each rule has its own test: files changed (a path beside new content, a replacement or a
list of edits; patch text; shell commands; edit blocks of a conversation that acts in text),
errors (each shape of an error line), tests (each shape of a test id with a verdict) and
decisions (statements of cause, choice, constraint or plan about something named) and plans (a
list of items with statuses).
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tersify.chat.messages import Turn, parse
from tersify.worker.compaction.facts.actions import Status, actions
from tersify.worker.compaction.facts.arguments import command, file_paths, only_names_a_file
from tersify.worker.compaction.facts.decisions import decisions
from tersify.worker.compaction.facts.errorlines import error_lines, fold
from tersify.worker.compaction.facts.errors import seen_errors
from tersify.worker.compaction.facts.files import changed_files, patch_changes
from tersify.worker.compaction.facts.tasks import plan
from tersify.worker.compaction.facts.testruns import reported
from tests.chat import exchange

Msg = dict[str, Any]
NAMES = st.from_regex(r"[a-z][a-z_]{2,20}", fullmatch=True)


def call(name: str, arguments: dict[str, Any], result: str = "", call_id: str = "c1") -> list[Msg]:
    """One tool round trip in the OpenAI shape: a call and its result."""
    return exchange(call_id, name, arguments, result)


def turns(*rounds: list[Msg]) -> list[Turn]:
    messages: list[Msg] = [{"role": "user", "content": "Do the work."}]
    for number, r in enumerate(rounds):
        for m in r:  # a distinct id per round trip
            if "tool_calls" in m:
                m["tool_calls"][0]["id"] = f"c{number}"
            if "tool_call_id" in m:
                m["tool_call_id"] = f"c{number}"
        messages += r
    return parse(messages).turns


def changed(*rounds: list[Msg]) -> dict[str, list[str]]:
    return {c.path: c.verbs for c in changed_files(actions(turns(*rounds)))}


# --- files changed ---------------------------------------------------------------------------


@given(name=NAMES)
def test_a_path_beside_new_content_is_a_file_written_whatever_the_tool_is_called(
    name: str,
) -> None:
    found = changed(call(name, {"filePath": "src/app/main.py", "content": "print(1)\n"}))
    assert found == {"src/app/main.py": ["written"]}


@given(name=NAMES)
def test_a_path_beside_a_replacement_is_a_file_edited_whatever_the_tool_is_called(
    name: str,
) -> None:
    arguments = {"target": "lib/util.ts", "old_text": "a", "new_text": ""}
    assert changed(call(name, arguments)) == {"lib/util.ts": ["edited"]}


def test_a_path_beside_a_list_of_edits_or_a_diff_is_a_file_edited() -> None:
    edits = {"path": "docs/guide.md", "edits": [{"oldText": "x", "newText": "y"}]}
    diff = {"file": "setup.cfg", "diff": "<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE"}
    found = changed(call("t_one", edits), call("t_two", diff))
    assert found == {"docs/guide.md": ["edited"], "setup.cfg": ["edited"]}


def test_a_path_alone_or_beside_a_directory_and_code_is_no_change() -> None:
    found = changed(
        call("t_read", {"file_path": "src/a.py", "offset": 10, "limit": 40}, "1\tx = 1"),
        call("t_run", {"cwd": "/work/repo", "code": "print(2)"}),
        call("t_find", {"path": "src", "pattern": "def main"}),
    )
    assert found == {}


def test_a_one_word_command_beside_a_path_is_a_subcommand_not_a_shell_command() -> None:
    assert command({"command": "view", "path": "src/a.py"}) is None
    assert command({"command": "pytest -q", "description": "run the tests"}) == "pytest -q"
    assert command({"cmd": ["bash", "-lc", "make test"]}) == "make test"
    assert only_names_a_file({"command": "view", "path": "src/a.py", "view_range": [1, 9]})
    assert not only_names_a_file({"path": "src/a.py", "content": "x"})
    assert file_paths({"workdir": "/repo", "file": "a.py", "new_text": "b.py"}) == ["a.py"]


@given(name=NAMES)
def test_patch_text_in_any_argument_changes_the_files_it_names(name: str) -> None:
    patch = (
        "*** Begin Patch\n*** Update File: src/a.py\n@@ def run():\n-x\n+y\n"
        "*** Add File: src/b.py\n+z\n*** Delete File: src/c.py\n*** End Patch"
    )
    assert changed(call(name, {"input": patch})) == {
        "src/a.py": ["edited"],
        "src/b.py": ["created"],
        "src/c.py": ["deleted"],
    }


def test_a_unified_diff_in_any_argument_changes_its_files() -> None:
    diff = (
        "diff --git a/pkg/x.go b/pkg/x.go\n--- a/pkg/x.go\n+++ b/pkg/x.go\n@@ -1 +1 @@ func A\n"
        "-a\n+b\n--- /dev/null\n+++ b/pkg/new.go\n@@ -0,0 +1 @@\n+c\n"
        "--- a/pkg/old.go\n+++ /dev/null\n@@ -1 +0,0 @@\n-d\n"
    )
    assert patch_changes(diff) == [
        ("pkg/x.go", "edited", ["func A"]),
        ("pkg/new.go", "created", []),
        ("pkg/old.go", "deleted", []),
    ]


def test_a_patch_inside_a_quoted_string_with_escaped_new_lines_is_read() -> None:
    code = 'const p = "*** Begin Patch\\n*** Update File: app/x.rs\\n@@\\n-a\\n+b\\n*** End Patch";'
    assert changed(call("t_code", {"source_code": code})) == {"app/x.rs": ["edited"]}


def test_a_patch_inside_the_content_of_a_file_written_is_not_applied() -> None:
    content = "--- a/other.py\n+++ b/other.py\n@@ -1 +1 @@\n-a\n+b\n"
    found = changed(call("t_write", {"path": "fix.patch", "content": content}))
    assert found == {"fix.patch": ["written"]}


@given(name=NAMES)
def test_a_shell_command_in_any_tools_command_field_changes_files_by_its_shape(
    name: str,
) -> None:
    line = (
        "sed -i 's/a/b/' conf/app.ini && echo x > out/report.txt | tee -a logs/run.log\n"
        "git apply <<'EOF'\n--- a/src/m.c\n+++ b/src/m.c\n@@ -1 +1 @@\n-a\n+b\nEOF"
    )
    found = changed(call(name, {"command": line}))
    assert set(found) == {"conf/app.ini", "out/report.txt", "logs/run.log", "src/m.c"}


def test_a_code_string_that_calls_a_shell_gives_its_commands() -> None:
    code = 'await tools.run({cmd: "cargo test -q"}); await tools.run({"cmd": "rm old.txt"})'
    found = actions(turns(call("t_code", {"code": code}, "ok")))
    assert found[0].command == "cargo test -q\nrm old.txt"
    assert changed(call("t_code", {"code": code})) == {"old.txt": ["deleted"]}


def test_edit_blocks_in_the_text_of_a_conversation_without_tool_calls_are_edits() -> None:
    text = (
        "I will rename it.\n\nsrc/lib/util.py\n```python\n<<<<<<< SEARCH\nold\n=======\nnew\n"
        ">>>>>>> REPLACE\n```\n\n"
        "```diff\n--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-a\n+b\n```"
    )
    messages = [{"role": "user", "content": "Rename it."}, {"role": "assistant", "content": text}]
    found = changed_files(actions(parse(messages).turns))
    assert {c.path for c in found} == {"src/lib/util.py", "README.md"}
    with_tools = [*messages, *call("t_any", {"query": "x"})]
    assert changed_files(actions(parse(with_tools).turns)) == []  # text there is only text


# --- errors ----------------------------------------------------------------------------------


def test_an_exception_and_a_tracebacks_last_line_are_errors() -> None:
    output = (
        'Traceback (most recent call last):\n  File "x.py", line 3, in <module>\n'
        "    main()\nmodule.CustomProblem: the widget broke\nValueError: bad value"
    )
    assert error_lines(output) == [
        "module.CustomProblem: the widget broke",
        "ValueError: bad value",
    ]


def test_a_severity_word_as_a_field_is_an_error() -> None:
    output = (
        "[ERROR] build failed for target x\n"
        "2024-05-01T10:00:00Z ERROR worker crashed\n"
        'time=1 level=error msg="cannot bind port"\n'
        "##[error]Process completed with exit code 13.\n"
        "warning[unpinned-uses]: action is not pinned\n"
        "  12:5  error  'x' is not defined  no-undef\n"
        "error: could not compile `app`\n"
    )
    assert error_lines(output + "fatal: unreachable") == [
        "[ERROR] build failed for target x",
        "ERROR worker crashed",
        "cannot bind port",
        "Process completed with exit code 13.",
        "warning[unpinned-uses]: action is not pinned",
    ]
    assert error_lines("12:5  error  'x' is not defined  no-undef") == [
        "12:5  error  'x' is not defined  no-undef"
    ]


def test_a_compiler_diagnostic_with_a_path_and_position_is_an_error() -> None:
    output = (
        "src/app.ts(12,5): error TS2345: Argument of type 'string' is not assignable.\n"
        "pkg/main.go:10:2: missing return\n"
        "lib/x.c:4: error: expected ';'\n"
    )
    assert error_lines(output) == [
        "src/app.ts(12,5): error TS2345: Argument of type 'string' is not assignable.",
        "pkg/main.go:10:2: missing return",
        "lib/x.c:4: error: expected ';'",
    ]


def test_failures_said_in_words_and_stated_exit_codes_are_errors() -> None:
    output = (
        "Command was aborted due to timeout\nImport not found: /x/Builtins.pkl\n"
        "request timed out after 30s\nmake: *** [all] Error 2\n"
        "thread 'main' panicked at src/settings.rs:101:30:\n"
    )
    assert error_lines(output) == [
        "Command was aborted due to timeout",
        "Import not found: /x/Builtins.pkl",
        "request timed out after 30s",
        "make: *** [all] Error 2",
        "thread 'main' panicked at src/settings.rs:101:30:",
    ]
    assert error_lines('Access denied for user\n`assert_output --partial "ok"\' failed') == [
        "Access denied for user",
        '`assert_output --partial "ok"\' failed',
    ]


def test_colours_and_log_prefixes_are_set_aside_before_reading_a_line() -> None:
    line = (
        "job\tstep\t2026-07-01T21:30:47.04Z \x1b[1m\x1b[33mwarning[pin]\x1b[0m: hash pin mismatch"
    )
    assert error_lines(line) == ["warning[pin]: hash pin mismatch"]
    assert error_lines("^[[31merror: red^[[0m") == ["error: red"]


def test_ordinary_output_listings_zero_counts_empty_fields_and_exit_statuses_are_not_errors() -> (
    None
):
    output = (
        "Compiling app v0.1.0\n   12\tif err != nil { panic(err) }\n+    raise ValueError('x')\n"
        "3 passed, 0 failed\nall good\nError: (none)\nerrors: 0\n<exited with exit code 1>\n"
        "[The command completed with exit code 2.]\n"
    )
    assert error_lines(output) == []


def test_a_severity_field_of_a_structured_log_line_gives_its_message() -> None:
    output = '{"level":"error","message":"disk full"}\nts=1 status=error error="bad gateway"'
    assert error_lines(output) == ["disk full", "bad gateway"]


@given(first=st.integers(0, 10**6), second=st.integers(0, 10**6), name=NAMES)
def test_errors_differing_in_numbers_quoted_names_and_temporary_paths_fold_to_one(
    first: int, second: int, name: str
) -> None:
    a = f"Error: port {first} in use by '{name}' at /tmp/run.{first}/sock"
    b = f"Error: port {second} in use by 'other' at /tmp/run.{second}/sock"
    assert fold(a) == fold(b)
    rounds = [call("t_run", {"command": f"serve {i}"}, line) for i, line in enumerate((a, b))]
    errors = seen_errors(actions(turns(*rounds)))
    assert [(e.line, e.count) for e in errors] == [(b, 2)]


def test_a_failed_call_without_an_error_line_gives_the_line_that_says_what_was_wrong() -> None:
    output = 'Exit code: 1\nfetching\nUnknown JSON field: "checks"\nAvailable fields:\n  url'
    found = actions(turns(call("t_run", {"command": "gh pr list --json checks"}, output)))
    assert found[0].status is Status.FAILED
    assert [e.line for e in seen_errors(found)] == ['Unknown JSON field: "checks"']


def test_of_a_file_printing_output_only_the_programs_own_complaints_are_errors() -> None:
    output = "src/a.py:3:    raise KeyError('missing')\nrg: src/gone: No such file or directory"
    found = actions(turns(call("t_run", {"command": "rg -n raise src src/gone"}, output)))
    assert [e.line for e in seen_errors(found)] == ["rg: src/gone: No such file or directory"]


def test_an_exit_code_is_read_from_a_line_stating_it_or_a_json_result() -> None:
    rounds = [
        call("t_a", {"command": "make"}, "Stdout: x\nStderr: boom\nExit Code: 2\nSignal: none"),
        call("t_b", {"command": "make"}, json.dumps({"output": "x", "exitCode": 0})),
        call("t_c", {"command": "make"}, "built\n<exited with exit code 3>"),
        call("t_d", {"command": "make"}, "x\n[The command completed with exit code 0.]"),
        call("t_e", {"command": "curl x"}, "HTTP status 404"),
    ]
    found = actions(turns(*rounds))
    assert [(a.exit_code, a.status) for a in found] == [
        (2, Status.FAILED),
        (0, Status.OK),
        (3, Status.FAILED),
        (0, Status.OK),
        (None, Status.UNKNOWN),
    ]


# --- tests -----------------------------------------------------------------------------------


def test_test_ids_with_a_verdict_are_read_in_every_shape() -> None:
    output = (
        "ok 1 - parses args\nnot ok 2 builtins run\nok 3 slow one # SKIP no time\n"
        "PASS src/app.test.ts (1.2 s)\nFAIL src/b.test.ts\n"
        "ok  \tgithub.com/x/y\t0.01s\nFAIL\tgithub.com/x/z\t0.02s\n"
        "[PASS] test_one\n[FAIL] test two\n"
        "  Passed Suite.Adds [12 ms]\n  Failed Suite.Subtracts [3 ms]\n✔ renders\n✖ breaks\n"
    )
    assert reported(output) == [
        ("parses args", "passed"),
        ("builtins run", "failed"),
        ("slow one", "skipped"),
        ("src/app.test.ts", "passed"),
        ("src/b.test.ts", "failed"),
        ("github.com/x/y", "passed"),
        ("github.com/x/z", "failed"),
        ("test_one", "passed"),
        ("test two", "failed"),
        ("Suite.Adds", "passed"),
        ("Suite.Subtracts", "failed"),
        ("renders", "passed"),
        ("breaks", "failed"),
    ]


# --- decisions -------------------------------------------------------------------------------


def said(*texts: str) -> list[str]:
    messages: list[Msg] = [{"role": "user", "content": "Go."}]
    messages += [{"role": "assistant", "content": t} for t in texts]
    return [text for _, text in decisions(parse(messages).turns)]


def test_choices_constraints_and_plans_about_something_named_are_decisions() -> None:
    found = said(
        "I'm updating only the version comments, leaving the SHA pins untouched.",
        "Cache writes must go through `atomic_write()` from now on.",
        "The new functions will be named by appending `Gen` to the old names.",
        "We should set MAX_RETRIES=5 in config/app.toml for the flaky job.",
    )
    assert set(found) == {
        "I'm updating only the version comments, leaving the SHA pins untouched.",
        "We should set MAX_RETRIES=5 in config/app.toml for the flaky job.",
        "The new functions will be named by appending `Gen` to the old names.",
        "Cache writes must go through `atomic_write()` from now on.",
    }


def test_looking_around_questions_headings_code_and_unnamed_plans_are_not_decisions() -> None:
    assert (
        said(
            "Let me check `src/app.py` to see what it does.",
            "I'll read the config in `settings.toml` first.",
            "Should we keep `--verbose` as the default?",
            "## Step 3: the plan we will follow for `x.py`",
            "```python\n# we must never call `exit()` here\n```",
            "I will make it better and more robust overall.",
        )
        == []
    )


# --- plans -----------------------------------------------------------------------------------


@given(name=NAMES)
def test_a_list_of_items_with_statuses_is_the_agents_plan_whatever_the_tool_is_called(
    name: str,
) -> None:
    items = [{"title": "write the parser", "status": "done"}, {"title": "test it", "state": "open"}]
    rounds = [call(name, {"items_now": items}), call(name, {"query": "x", "hits": [{"text": "a"}]})]
    found = plan(actions(turns(*rounds)), turns(*rounds))
    assert [(i.text, i.state, i.open) for i in found] == [
        ("write the parser", "done", False),
        ("test it", "open", True),
    ]
