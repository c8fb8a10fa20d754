"""Classification by tool name, by the program a shell command ran, and by content."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tersify.classify import classify, normalize_tool_name
from tersify.classify.shellcmd import command_lists
from tersify.contract import ToolType

FILE, SEARCH, LISTING = ToolType.FILE_CONTENT, ToolType.SEARCH_RESULTS, ToolType.DIRECTORY_LISTING
COMMAND, DATA, WEB = ToolType.COMMAND_OUTPUT, ToolType.STRUCTURED_DATA, ToolType.WEB_CONTENT

PLAIN = "some output\nwith a few lines\nof nothing in particular\n"
LS_LONG = (
    "total 8\ndrwxr-xr-x 2 root root 4096 Jun 24  2025 .\n"
    "-rw-r--r-- 1 root root 12 Jun 1 10:00 a.txt\n"
)


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [
        ("Read", "read"),
        ("mcp__filesystem__read_file", "read-file"),
        ("mcp__github__list_issues", "list-issues"),
        ("filesystem.read_text_file", "read-text-file"),
        ("server/tool_name", "tool-name"),
        ("WebFetch", "web-fetch"),
        ("LS", "ls"),
        ("  Bash  ", "bash"),
    ],
)
def test_tool_names_are_normalized_without_prefixes(raw: str, normalized: str) -> None:
    assert normalize_tool_name(raw) == normalized


@pytest.mark.parametrize(
    ("tool", "expected"),
    [
        ("read", FILE), ("cat", FILE), ("Read", FILE), ("mcp__fs__read_file", FILE),
        ("grep", SEARCH), ("rg", SEARCH), ("search", SEARCH), ("Grep", SEARCH),
        ("ls", LISTING), ("find", LISTING), ("fd", LISTING), ("Glob", LISTING),
        ("nix-search", DATA), ("gh", DATA), ("mcp__github__list_issues", DATA),
        ("web-search", WEB), ("web_fetch", WEB), ("WebFetch", WEB), ("fetch", WEB),
        ("mcp__brave__brave_web_search", WEB),
    ],
)  # fmt: skip
def test_the_tool_name_decides_for_known_tools(tool: str, expected: ToolType) -> None:
    assert classify(tool, None, PLAIN) is expected


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("rg -n timeout src", SEARCH),
        ("cd /repo && rg foo", SEARCH),
        ("FOO=1 BAR=2 grep -rn x .", SEARCH),
        ("cat README.md", FILE),
        ("sudo -u app cat /etc/app.conf", FILE),
        ("cat log.txt | grep ERROR", SEARCH),
        ("ls -la", LISTING),
        ("timeout 5 ls -R /srv", LISTING),
        ("git -C repo ls-files", LISTING),
        ("find . -name '*.py' | head -50", LISTING),
        ("find . -name '*.py' | xargs grep -n TODO", SEARCH),
        ("pytest -x tests", COMMAND),
        ("python -m pytest -q", COMMAND),
        ("uv run ruff check .", COMMAND),
        ("make -j4 2>&1 | tail -40", COMMAND),
        ("jq '.items' data.json", DATA),
        ("curl -s https://api.example.com/x | jq .", DATA),
        ("pip list --format json 2>/dev/null", DATA),
        ("dpkg -l 'lib*' | jc --dpkg-l", DATA),
        ("zcat spec.json.gz | python -m json.tool", DATA),
        ("kubectl get pods -o wide", DATA),
        ('bash -c "cd /src && rg -n needle"', SEARCH),
        ("sh -lc 'ls -la /tmp'", LISTING),
        ("export X=1; source env.sh; npm test", COMMAND),
        ("man grep", WEB),
        ("w3m -dump https://docs.python.org/3/", WEB),
    ],
)
def test_a_shell_is_classified_by_the_program_its_command_ran(
    command: str, expected: ToolType
) -> None:
    assert classify("bash", command, PLAIN) is expected


def test_curl_is_judged_by_what_came_back() -> None:
    assert classify("bash", "curl -s https://x", '{"ok": true, "items": [1, 2]}') is DATA
    html = "<!DOCTYPE html><html><head><title>x</title></head><body><p>Hi</p></body></html>"
    assert classify("bash", "curl -s https://x", html) is WEB


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        (json.dumps([{"name": "a", "version": "1"}] * 20), DATA),
        ('{"a": 1,\n "b": [1, 2, 3]}\n', DATA),
        ('{"a": 1}\n{"a": 2}\n{"a": 3}\n', DATA),
        ("src/a.py:12:    x = 1\nsrc/b.py:40:def f():\nsrc/c.py:7:import os\n", SEARCH),
        ("src/a.py:3\nsrc/b.py:12\nlib/c.py:1\n", SEARCH),
        (LS_LONG, LISTING),
        ("./src/a.py\n./src/b.py\n./tests/test_a.py\n./README.md\n", LISTING),
        (".\n├── src\n│   └── a.py\n└── README.md\n\n1 directory, 2 files\n", LISTING),
        ("<html><body><h1>Title</h1><p>Some text here.</p></body></html>", WEB),
        (
            'Traceback (most recent call last):\n  File "x.py", line 3, in <module>\n'
            "    f()\nValueError: boom\n",
            COMMAND,
        ),
        ("a.c:3:5: error: expected ';'\na.c:9:1: warning: unused\n", COMMAND),
        (
            "collected 3 items\n\ntests/test_a.py ..F\n\n===== 1 failed, 2 passed in 0.1s =====\n",
            COMMAND,
        ),
        ("import os\n\n\ndef main():\n    return os.getcwd()\n\n\nclass A:\n    pass\n", FILE),
    ],
)
def test_content_decides_when_neither_name_nor_command_says(
    output: str, expected: ToolType
) -> None:
    assert classify("mcp__custom__do_thing", None, output) is expected


def test_an_unknown_tool_without_signals_is_command_output() -> None:
    assert classify("frobnicate", None, "") is COMMAND
    assert classify("frobnicate", "frob --all", "done\n") is COMMAND


def test_command_lists_see_through_wrappers_and_pipes() -> None:
    lists = command_lists("cd x && FOO=1 sudo timeout 5 rg -n a | head -3; echo done")
    programs = [[inv.program for inv in pipeline] for pipeline in lists]
    assert programs == [["cd"], ["rg", "head"], ["echo"]]


def test_broken_quoting_does_not_break_classification() -> None:
    assert classify("bash", "rg 'unterminated", PLAIN) is SEARCH


@settings(max_examples=60, deadline=None)
@given(
    name=st.text(max_size=40),
    command=st.none() | st.text(max_size=80),
    output=st.text(st.characters(exclude_categories=()), max_size=400),
)
def test_classify_never_raises_and_always_answers_a_tool_type(
    name: str, command: str | None, output: str
) -> None:
    assert isinstance(classify(name, command, output), ToolType)


def test_a_unified_diff_from_an_unknown_program_is_command_output() -> None:
    diff = (
        "--- a/x.c\n+++ b/x.c\n@@ -1,3 +1,3 @@\n int main(void) {\n-  return 1;\n+  return 0;\n }\n"
    )
    assert classify("bash", "mydiff old new", diff * 5) is ToolType.COMMAND_OUTPUT


def test_log_lines_that_open_with_a_bracket_are_not_json() -> None:
    log = "".join(
        f"[{i}.5s][info][gc] GC({i}) Pause Young {i}M->2M(96M) 1.2ms\n" for i in range(40)
    )
    assert classify("bash", "runner --verbose", log) is not ToolType.STRUCTURED_DATA
    progress = "".join(f"[ {i:2d}%] Building C object part{i}.o\n" for i in range(40))
    assert classify("bash", "builder", progress) is not ToolType.STRUCTURED_DATA


def test_a_report_table_over_a_rule_is_not_a_page_of_headings() -> None:
    rows = "".join(f"src/mod{i}.py      {i * 7:5d}   {i:4d}   {90 - i}%\n" for i in range(30))
    rule = "-" * 44 + "\n"
    header = "Name               Stmts   Miss  Cover\n"
    report = f"{header}{rule}{rows}{rule}TOTAL                999    99    90%\n"
    assert classify("bash", "reporter", report) is not ToolType.WEB_CONTENT


def test_aligned_settings_ending_in_braced_tags_are_not_source_code() -> None:
    flags = "".join(
        f"     bool Option{i}Enabled          = true           {{product}} {{default}}\n"
        for i in range(50)
    )
    assert classify("bash", "vm --print-flags", flags) is not ToolType.FILE_CONTENT


def test_a_symbol_index_is_search_results() -> None:
    index = "".join(
        f"symbol_{i:<10} function   {i * 3 + 10:4d} src/file{i % 7}.c   int symbol_{i}(void) {{\n"
        for i in range(40)
    )
    assert classify("bash", "indexer -x", index) is ToolType.SEARCH_RESULTS


def test_yaml_from_a_subcommand_the_table_does_not_know_is_data() -> None:
    manifest = "".join(
        f"apiVersion: v1\nkind: Service\nmetadata:\n  name: svc-{i}\n  labels:\n"
        f"    app: web\nspec:\n  ports:\n  - port: {8000 + i}\n---\n"
        for i in range(12)
    )
    assert classify("bash", "kubectl kustomize overlays/prod", manifest) is (
        ToolType.STRUCTURED_DATA
    )


def test_findings_that_read_like_sentences_but_repeat_one_template_are_a_report() -> None:
    findings = "".join(
        f"The file at path number {i} in the tree was found to have a weak setting here\n"
        f"Severity of the finding number {i} is rated as moderate by the scanner today\n"
        for i in range(30)
    )
    assert classify("bash", "scanner --all", findings) is ToolType.COMMAND_OUTPUT


def test_running_text_a_document_converter_printed_is_a_document() -> None:
    rng = random.Random(7)
    words = ["the", "quick", "brown", "fox", "jumps", "over", "a", "lazy", "dog", "while"]
    marks = ("", "", "", "", ",", ";", ":")
    page = "".join(
        " ".join(rng.choice(words) + rng.choice(marks) for _ in range(rng.randint(6, 14))) + ".\n"
        for _ in range(60)
    )
    assert classify("bash", "docx2txt page.docx", page) is ToolType.WEB_CONTENT
