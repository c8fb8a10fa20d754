"""Facts read from a conversation's structure, on the tool-call shapes of several agents.

The messages below follow each agent's own wire shape: Claude Code (Anthropic ``tool_use``
blocks: Edit, MultiEdit, Write, Read, Bash, TodoWrite), Codex CLI (OpenAI function calls:
``shell`` with ``["bash", "-lc", …]``, ``apply_patch``, ``update_plan``), OpenHands and
SWE-agent (``str_replace_editor``, ``execute_bash``, ``task_tracker``), Gemini CLI
(``write_file``, ``replace``, ``run_shell_command``, ``write_todos``) and mini-swe-agent (a bash
block in the assistant's text, its output back as ``<returncode>`` user text).
"""

from __future__ import annotations

import json
from typing import Any

from tersify.chat.messages import Turn, parse
from tersify.worker.compaction.facts.actions import Status, actions, observations
from tersify.worker.compaction.facts.asks import asks
from tersify.worker.compaction.facts.commands import command_runs, normalized
from tersify.worker.compaction.facts.decisions import decisions
from tersify.worker.compaction.facts.errorlines import error_lines
from tersify.worker.compaction.facts.errors import seen_errors
from tersify.worker.compaction.facts.files import changed_files, is_path, read_files
from tersify.worker.compaction.facts.sections import Section, render, sections
from tersify.worker.compaction.facts.shell import parse_command
from tersify.worker.compaction.facts.tasks import plan
from tersify.worker.compaction.facts.testruns import last_summary, reported, states_of_tests

Msg = dict[str, Any]


def claude(
    name: str, call_id: str, tool_input: dict[str, Any], result: str, error: bool = False
) -> list[Msg]:
    """A Claude Code tool round trip: an assistant ``tool_use`` and its ``tool_result``."""
    use = {"type": "tool_use", "id": call_id, "name": name, "input": tool_input}
    answer: Msg = {"type": "tool_result", "tool_use_id": call_id, "content": result}
    if error:
        answer["is_error"] = True
    return [{"role": "assistant", "content": [use]}, {"role": "user", "content": [answer]}]


def openai(name: str, call_id: str, arguments: Any, result: str) -> list[Msg]:
    """An OpenAI-shaped round trip (Codex, OpenHands, SWE-agent, Gemini CLI through a proxy)."""
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}
    return [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call_id, "content": result},
    ]


def mini(thought: str, command: str, returncode: int, output: str) -> list[Msg]:
    """A mini-swe-agent step: the command in a bash block, the output as the next user turn."""
    return [
        {"role": "assistant", "content": f"THOUGHT: {thought}\n\n```bash\n{command}\n```"},
        {
            "role": "user",
            "content": f"<returncode>{returncode}</returncode>\n<output>\n{output}\n</output>",
        },
    ]


def turns_of(*rounds: list[Msg], head: list[Msg] | None = None) -> list[Turn]:
    messages = [*(head or []), *(m for r in rounds for m in r)]
    return parse(messages).turns


# --- files ---------------------------------------------------------------------------------


def test_claude_code_edits_writes_and_reads_are_files_changed_and_read_apart() -> None:
    turns = turns_of(
        claude("Read", "t1", {"file_path": "/repo/src/app.py"}, "     1→import os"),
        claude("Read", "t2", {"file_path": "/repo/README.md"}, "     1→# app"),
        claude(
            "Edit",
            "t3",
            {
                "file_path": "/repo/src/app.py",
                "old_string": "def load(path):\n    pass",
                "new_string": "def load(path):\n    return open(path).read()",
            },
            "The file /repo/src/app.py has been updated.",
        ),
        claude(
            "MultiEdit",
            "t4",
            {
                "file_path": "/repo/src/cli.py",
                "edits": [{"old_string": "x", "new_string": "class Runner:\n    pass"}],
            },
            "Applied 1 edit",
        ),
        claude(
            "Write",
            "t5",
            {"file_path": "/repo/tests/test_app.py", "content": "def test(): ..."},
            "ok",
        ),
    )
    found = actions(turns)
    changed = changed_files(found)
    assert [c.path for c in changed] == [
        "/repo/tests/test_app.py",
        "/repo/src/cli.py",
        "/repo/src/app.py",
    ]
    assert changed[2].verbs == ["edited"] and changed[2].places == ["load"]
    assert changed[1].places == ["Runner"]
    assert read_files(found, [c.path for c in changed]) == ["/repo/README.md"]


def test_codex_apply_patch_names_its_files_and_hunks_and_its_shell_runs_bash_lc() -> None:
    patch = (
        "*** Begin Patch\n*** Update File: src/parser.py\n"
        "@@ def parse_date(text):\n-    a\n+    b\n"
        "*** Add File: tests/test_dates.py\n+def test_leap(): ...\n"
        "*** Delete File: old/legacy.py\n*** End Patch"
    )
    turns = turns_of(
        openai("apply_patch", "c1", {"input": patch}, "Success. Updated the following files"),
        openai(
            "shell",
            "c2",
            {"command": ["bash", "-lc", "pytest -q tests/test_dates.py"]},
            '{"output": "1 passed", "metadata": {"exit_code": 0}}',
        ),
        openai(
            "shell",
            "c3",
            {
                "command": [
                    "bash",
                    "-lc",
                    "apply_patch <<'EOF'\n*** Begin Patch\n"
                    "*** Update File: src/cli.py\n@@\n-x\n+y\n*** End Patch\nEOF",
                ]
            },
            "Done!",
        ),
    )
    found = actions(turns)
    assert found[1].command == "pytest -q tests/test_dates.py"
    assert (found[1].status, found[1].exit_code) == (Status.OK, 0)
    changed = {c.path: c for c in changed_files(found)}
    assert set(changed) == {"src/parser.py", "tests/test_dates.py", "old/legacy.py", "src/cli.py"}
    assert changed["src/parser.py"].places == ["def parse_date(text):"]
    assert changed["old/legacy.py"].verbs == ["deleted"]
    assert changed["tests/test_dates.py"].verbs == ["created"]


def test_openhands_and_swe_agent_editor_commands_change_files_and_view_only_reads() -> None:
    turns = turns_of(
        openai(
            "str_replace_editor",
            "a",
            {"command": "view", "path": "/workspace/lib/io.py"},
            "1\timport os",
        ),
        openai(
            "str_replace_editor",
            "b",
            {"command": "create", "path": "/workspace/repro.py", "file_text": "print(1)"},
            "File created successfully",
        ),
        openai(
            "str_replace_editor",
            "c",
            {
                "command": "str_replace",
                "path": "/workspace/lib/io.py",
                "old_str": "def read(",
                "new_str": "def read(self, size=-1):",
            },
            "edited",
        ),
        openai(
            "execute_bash",
            "d",
            {"command": "python /workspace/repro.py"},
            "1\n[Command finished with exit code 0]",
        ),
    )
    found = actions(turns)
    assert [(c.path, c.verbs) for c in changed_files(found)] == [
        ("/workspace/lib/io.py", ["edited"]),
        ("/workspace/repro.py", ["created"]),
    ]
    assert read_files(found, ["/workspace/lib/io.py", "/workspace/repro.py"]) == []
    assert found[3].exit_code == 0


def test_gemini_cli_write_file_and_replace_change_files() -> None:
    turns = turns_of(
        openai("write_file", "g1", {"file_path": "/p/docs/guide.md", "content": "# Guide"}, "ok"),
        openai(
            "replace",
            "g2",
            {"file_path": "/p/src/main.ts", "old_string": "a", "new_string": "function start() {}"},
            "ok",
        ),
        openai("read_file", "g3", {"absolute_path": "/p/package.json"}, "{}"),
    )
    found = actions(turns)
    changed = changed_files(found)
    assert [c.path for c in changed] == ["/p/src/main.ts", "/p/docs/guide.md"]
    assert changed[0].places == ["start"]
    assert read_files(found, [c.path for c in changed]) == ["/p/package.json"]


def test_shell_commands_change_files_by_sed_redirects_git_and_rm_and_only_real_paths_count() -> (
    None
):
    commands = [
        "sed -i 's/old/new/' src/a.py src/b.py && python -m pytest 2>&1 | tail -5",
        "cat <<'EOF' > scripts/check.sh\nrm -rf /\nEOF",
        "echo 'x > y.txt' >> notes/log.txt; git mv lib/old.py lib/new.py",
        "git rm -q docs/stale.md && rm -f *.pyc build/ && git checkout -- src/b.py",
        "curl -o /dev/null https://example.com/x.py > /dev/null",
    ]
    turns = turns_of(*(openai("bash", f"s{i}", {"command": c}, "") for i, c in enumerate(commands)))
    changed = {c.path: c.verbs for c in changed_files(actions(turns))}
    assert changed == {
        "src/a.py": ["sed -i"],
        "src/b.py": ["sed -i", "reverted"],
        "scripts/check.sh": ["written by shell"],
        "notes/log.txt": ["written by shell"],
        "lib/old.py": ["moved away"],
        "lib/new.py": ["moved here"],
        "docs/stale.md": ["deleted"],
        "build/": ["deleted"],
    }
    assert not any(
        is_path(t) for t in ("-rf", "*.pyc", "$OUT", "https://x.io/a.py", "/dev/null", ".")
    )


def test_mini_swe_agent_text_actions_are_actions_and_their_outputs_are_not_requests() -> None:
    head = [
        {"role": "system", "content": "You run bash."},
        {"role": "user", "content": "Fix the bug."},
    ]
    turns = turns_of(
        mini(
            "Reproduce it.",
            "cat <<'EOF' > repro.py\nimport pkg\nEOF\npython repro.py",
            1,
            "Traceback (most recent call last):\nModuleNotFoundError: No module named 'pkg'",
        ),
        mini("Fix the import.", "sed -i 's/pkg/pkg2/' repro.py && python repro.py", 0, "done"),
        [
            {
                "role": "assistant",
                "content": "Submitting.\n\n```bash\necho SUBMIT && git diff\n```",
            },
            {"role": "user", "content": "diff --git a/repro.py b/repro.py"},
        ],
        head=head,
    )
    found = actions(turns)
    assert [(a.tool, a.exit_code) for a in found] == [("text-shell", 1), ("text-shell", 0)]
    assert observations(turns) == frozenset({3, 5, 7})
    assert [a.own for a in asks(turns)] == ["Fix the bug."]
    assert [c.path for c in changed_files(found)] == ["repro.py"]


# --- errors, tests, commands ---------------------------------------------------------------


def test_errors_come_from_tool_results_only_never_from_prose_arguments_or_listings() -> None:
    turns = turns_of(
        [
            {
                "role": "assistant",
                "content": "Let me reproduce the Error. TypeError: is what I expect.",
            }
        ],
        claude(
            "Bash",
            "b0",
            {"command": "grep -rn 'raise ValueError' src"},
            "src/x.py:10:    raise ValueError('bad')",
        ),
        claude("Read", "r1", {"file_path": "/r/src/x.py"}, "    10→    raise ValueError('bad')"),
        claude(
            "Bash",
            "b1",
            {"command": "python -c 'import x'"},
            'Exit code 1\nTraceback (most recent call last):\n  File "<string>", line 1\n'
            "TypeError: __init__() got an unexpected keyword argument 'network'",
            error=True,
        ),
    )
    errors = seen_errors(actions(turns))
    assert [e.line for e in errors] == [
        "TypeError: __init__() got an unexpected keyword argument 'network'"
    ]
    assert errors[0].command == "python -c 'import x'"


def test_errors_fold_by_shape_keep_the_last_and_are_resolved_by_a_later_clean_run() -> None:
    fail = (
        "E   AssertionError: assert 3 == 4\nFAILED tests/t.py::test_sum - AssertionError\n1 failed"
    )
    turns = turns_of(
        mini("Run.", "pytest tests/t.py", 1, fail),
        mini("Again.", "pytest tests/t.py", 1, fail.replace("3 == 4", "5 == 6")),
        mini(
            "Build.",
            "make",
            2,
            "main.c:3:10: fatal error: 'x.h' file not found\nmake: *** [all] Error 1",
        ),
        mini("Fixed.", "pytest tests/t.py 2>&1 | tail -3", 0, "1 passed in 0.01s"),
    )
    errors = seen_errors(actions(turns))
    by_line = {e.line: e for e in errors}
    assert by_line["AssertionError: assert 5 == 6"].count == 2
    assert by_line["AssertionError: assert 5 == 6"].resolved
    assert not by_line["main.c:3:10: fatal error: 'x.h' file not found"].resolved
    assert errors[0].line.startswith("main.c")  # the latest first


def test_error_lines_read_compilers_go_npm_and_shells() -> None:
    output = (
        "cmd/cli/setup.go:973:39: undefined: EntireSettings\n"
        "error[E0308]: mismatched types\n"
        "npm ERR! missing script: test\n"
        "bash: pnpm: command not found\n"
        "   12\tif err != nil { panic: never }\n"
        "FAIL: test_readonly (files.tests.StorageTests)\n"
        "FAIL: Distance between 2D and 3D points is wrong\n"
    )
    assert error_lines(output) == [
        "cmd/cli/setup.go:973:39: undefined: EntireSettings",
        "error[E0308]: mismatched types",
        "npm ERR! missing script: test",
        "bash: pnpm: command not found",
        "FAIL: Distance between 2D and 3D points is wrong",
    ]


def test_tests_keep_the_last_state_of_each_id_across_pytest_unittest_go_and_cargo() -> None:
    assert reported(
        "tests/a.py::test_one PASSED\nFAILED tests/a.py::test_two - ValueError\n"
        "FAIL: test_readonly (files.tests.StorageTests)\n"
        "    --- FAIL: TestParse/empty (0.00s)\ntest net::tcp ... ok\n"
    ) == [
        ("tests/a.py::test_one", "passed"),
        ("tests/a.py::test_two", "failed"),
        ("files.tests.StorageTests.test_readonly", "failed"),
        ("TestParse/empty", "failed"),
        ("net::tcp", "passed"),
    ]
    assert (
        last_summary("====== 1 failed, 72 passed in 3.1s ======") == "1 failed, 72 passed in 3.1s"
    )
    assert last_summary("Ran 3 tests\n\nFAILED (errors=1)") == "FAILED (errors=1)"


def test_a_failing_test_passes_again_when_a_later_run_of_that_command_is_clean() -> None:
    turns = turns_of(
        openai(
            "bash",
            "p1",
            {"command": "pytest -q"},
            "FAILED tests/a.py::test_two - KeyError\n1 failed, 3 passed",
        ),
        openai(
            "bash", "p2", {"command": "pytest -q tests/b.py"}, "FAILED tests/b.py::test_b\n1 failed"
        ),
        openai("bash", "p3", {"command": "pytest  -q 2>&1 | tail -n 3"}, "4 passed in 0.2s"),
    )
    states, summary = states_of_tests(actions(turns))
    assert [(s.test, s.state) for s in states] == [
        ("tests/b.py::test_b", "failed"),
        ("tests/a.py::test_two", "passed"),
    ]
    assert summary == "4 passed in 0.2s ← pytest  -q 2>&1 | tail -n 3"


def test_commands_keep_the_last_run_of_each_checks_first_without_looks_or_edits() -> None:
    turns = turns_of(
        openai("bash", "x1", {"command": "ls -la && cat setup.cfg"}, "..."),
        openai("bash", "x2", {"command": "python repro.py"}, "Exit code: 1"),
        openai("bash", "x3", {"command": "sed -i 's/a/b/' f.py"}, ""),
        openai("bash", "x4", {"command": "go test ./..."}, "ok\nExit code: 0"),
        openai("bash", "x5", {"command": "python  repro.py"}, "Exit code: 0"),
    )
    runs = command_runs(actions(turns))
    assert [(r.command, r.exit_code, r.runs) for r in runs] == [
        ("go test ./...", 0, 1),
        ("python repro.py", 0, 2),
    ]
    assert normalized("pytest -x  2>&1 | tail -20") == "pytest -x"


def test_shell_reading_splits_commands_outside_quotes_and_sets_heredocs_apart() -> None:
    parsed = parse_command("echo 'a && b > c' > out.txt && cat <<EOF | tee log.txt\nx > y\nEOF")
    assert parsed.commands == [["echo", "a && b > c"], ["cat"], ["tee", "log.txt"]]
    assert parsed.redirects == ["out.txt"]
    assert parsed.heredocs == ["x > y"]


# --- task state and decisions --------------------------------------------------------------


def test_the_last_todo_list_of_claude_codex_openhands_or_gemini_is_the_plan() -> None:
    todo_write = claude(
        "TodoWrite",
        "w1",
        {
            "todos": [
                {"content": "Add the flag", "status": "completed", "activeForm": "Adding"},
                {"content": "Write tests", "status": "in_progress", "activeForm": "Writing"},
            ]
        },
        "ok",
    )
    update_plan = openai(
        "update_plan",
        "u1",
        {
            "plan": [
                {"step": "Read the parser", "status": "completed"},
                {"step": "Fix dates", "status": "pending"},
            ]
        },
        "Plan updated",
    )
    tracker = openai(
        "task_tracker",
        "k1",
        {
            "command": "plan",
            "task_list": [
                {"title": "Reproduce", "status": "done"},
                {"title": "Patch", "status": "todo"},
            ],
        },
        "ok",
    )
    gemini = openai(
        "write_todos",
        "q1",
        {"todos": [{"description": "Port the CLI", "status": "in_progress"}]},
        "ok",
    )
    for rounds, expected in (
        ([todo_write], [("Add the flag", False), ("Write tests", True)]),
        ([update_plan], [("Read the parser", False), ("Fix dates", True)]),
        ([tracker], [("Reproduce", False), ("Patch", True)]),
        ([gemini], [("Port the CLI", True)]),
    ):
        turns = turns_of(*rounds)
        assert [(i.text, i.open) for i in plan(actions(turns), turns)] == expected


def test_a_checklist_in_the_agents_message_is_a_plan_too() -> None:
    turns = turns_of([{"role": "assistant", "content": "Plan:\n- [x] read it\n- [ ] fix it"}])
    assert [(i.text, i.state) for i in plan(actions(turns), turns)] == [
        ("read it", "completed"),
        ("fix it", "pending"),
    ]


def test_requests_leave_out_slash_command_wrappers_and_interruptions() -> None:
    turns = turns_of(
        [
            {"role": "user", "content": "<command-name>/ide</command-name>"},
            {"role": "user", "content": "[Request interrupted by user]"},
            {"role": "user", "content": "Add a --verbose flag"},
        ]
    )
    assert [(a.index, a.own) for a in asks(turns)] == [(2, "Add a --verbose flag")]


def test_decisions_are_the_agents_stated_causes_and_choices_not_code_or_questions() -> None:
    turns = turns_of(
        [
            {
                "role": "assistant",
                "content": "I looked around. The root cause is that reset() "
                "replaces the list instead of clearing it.\n```python\n# the fix is here\n```",
            },
            {"role": "assistant", "content": "Is the issue is in the parser?"},
            {"role": "assistant", "content": "The fix is to clone the query before compiling it."},
        ]
    )
    assert {text for _, text in decisions(turns)} == {
        "The fix is to clone the query before compiling it.",
        "The root cause is that reset() replaces the list instead of clearing it.",
    }


# --- rendering -----------------------------------------------------------------------------


def test_a_section_keeps_its_best_lines_and_says_how_many_it_left_out() -> None:
    section = Section("Files Changed", tuple(f"- src/module_{i}.py: edited" for i in range(40)))
    text = section.render(200)
    assert text.startswith("## Files Changed\n- src/module_0.py: edited")
    assert text.endswith(" more") and len(text) <= 200


def test_sections_share_the_budget_and_a_small_section_keeps_everything() -> None:
    big = Section("Decisions", tuple(f"- decision number {i} " + "x" * 80 for i in range(60)))
    small = Section("Errors", ("- TypeError: boom ← `python a.py`",))
    text = render([small, big], 1500)
    assert "- TypeError: boom" in text and len(text) <= 1500


def test_sections_of_a_conversation_hold_every_kind_of_fact() -> None:
    turns = turns_of(
        [{"role": "user", "content": "The dates test fails; fix it."}],
        claude(
            "Bash",
            "b1",
            {"command": "pytest tests/test_dates.py"},
            "FAILED tests/test_dates.py::test_leap - ValueError: day is out of range\n1 failed",
            error=True,
        ),
        [{"role": "assistant", "content": "The root cause is a wrong month index in parse_date."}],
        claude(
            "Edit",
            "e1",
            {"file_path": "src/dates.py", "old_string": "m", "new_string": "m - 1"},
            "ok",
        ),
        claude("Bash", "b2", {"command": "pytest tests/test_dates.py"}, "1 passed in 0.1s"),
    )
    text = render(sections(turns), 4000)
    for expected in (
        "## Files Changed\n- src/dates.py: edited",
        "## Errors\n- [resolved] ValueError: day is out of range",
        "## Tests\n- last run: 1 passed in 0.1s ← pytest tests/test_dates.py",
        "- passed (1): tests/test_dates.py::test_leap",
        "## Commands\n- `pytest tests/test_dates.py` → ok (×2)",
        "## Task State\n- request 1/1: The dates test fails; fix it.",
        "## Decisions\n- The root cause is a wrong month index in parse_date.",
    ):
        assert expected in text


def test_files_changed_fall_back_to_their_paths_alone_before_any_is_left_out() -> None:
    notes = tuple(
        f"- src/pkg/module_{i}.py: edited ×3 (load_config, save_config)" for i in range(20)
    )
    paths = tuple(f"- src/pkg/module_{i}.py" for i in range(20))
    files = Section("Files Changed", notes, paths)
    other = Section("Decisions", tuple(f"- decision {i} " + "y" * 90 for i in range(30)))
    text = render([files, other], 1400)
    assert all(p in text for p in paths) and "edited ×3" not in text
    assert len(text) <= 1400


def test_a_huge_line_of_dotted_words_is_read_by_its_start_without_backtracking() -> None:
    # Before the segment-wise patterns, this line alone took minutes (the per-test timeout).
    line = "a.b." * 50_000
    assert error_lines(f"{line}\n{line}ValueError: late") == []
    assert error_lines(f"{line[:200]} ValueError: early") == ["ValueError: early"]
