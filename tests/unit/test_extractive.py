"""The built-in extractive summarizer: structure-aware per type, always within budget."""

from __future__ import annotations

import json
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from tersify.contract import ToolType
from tersify.worker.shrink import extract, mapped_lines
from tersify.worker.shrink.hashlines import line_hash

FILE, SEARCH, LISTING = ToolType.FILE_CONTENT, ToolType.SEARCH_RESULTS, ToolType.DIRECTORY_LISTING
COMMAND, DATA, WEB = ToolType.COMMAND_OUTPUT, ToolType.STRUCTURED_DATA, ToolType.WEB_CONTENT


def test_output_that_fits_comes_back_whole() -> None:
    assert extract("a\r\nb\n", COMMAND, 100) == "a\nb\n"


MARKER = re.compile(r"^… \d+ lines? …$", re.MULTILINE)


def test_search_hits_are_counted_per_file_and_the_hit_asked_about_is_kept() -> None:
    hits = [f"pkg/mod{i % 40}/core.py:{i}:    value = compute({i})" for i in range(1, 600)]
    hits.insert(333, "httpx/_config.py:246:DEFAULT_TIMEOUT_CONFIG = Timeout(timeout=5.0)")
    out = extract("\n".join(hits), SEARCH, 2000, "What is httpx's default timeout?")
    assert len(out) <= 2000
    assert out.startswith("600 hits in 41 files; most in: pkg/mod1/core.py (15)")
    assert "httpx/_config.py:246:DEFAULT_TIMEOUT_CONFIG = Timeout(timeout=5.0)" in out
    assert MARKER.search(out)


def test_search_counts_are_totalled_and_the_biggest_count_kept_for_a_most_question() -> None:
    rows = [f"lib/file{i}.py:{(i * 7) % 5 + 1}" for i in range(900)]
    rows[450] = "lib/hot.py:97"
    out = extract("\n".join(rows), SEARCH, 1000, "Which files have the most TODOs?")
    assert out.startswith(f"{sum(int(r.rsplit(':', 1)[1]) for r in rows)} matches in 900 files")
    assert "lib/hot.py:97" in out


def test_listings_keep_errors_counts_and_the_entry_asked_about() -> None:
    rows = [f"-rw-r--r-- 1 root root {100 + i} Jun 13  2025 cert_{i:03d}.crt" for i in range(300)]
    rows.insert(150, "-rw-r--r-- 1 root root 1939 Jun 13  2025 ISRG_Root_X1.crt")
    text = "ls: cannot access 'nope': No such file or directory\ntotal 584\n" + "\n".join(rows)
    out = extract(text, LISTING, 1500, "Is the ISRG Root X1 certificate there?")
    assert out.startswith("301 entries (301 files, 0 folders); 1 errors")
    assert "ls: cannot access 'nope': No such file or directory" in out
    assert "-rw-r--r-- 1 root root 1939 Jun 13  2025 ISRG_Root_X1.crt" in out


def test_a_path_listing_keeps_the_path_asked_about() -> None:
    paths = [f"tests/case_{i}.c" for i in range(120)] + [f"src/m{i}.h" for i in range(60)]
    paths.append("tests/parse_number.c")
    out = extract("\n".join(paths), LISTING, 800, "Where is the test for parse_number?")
    assert out.startswith("181 entries")
    assert "tests/parse_number.c" in out


def body(summary: str) -> str:
    """A summary without its last line's map of what it left out (``leftout``)."""
    return summary if not mapped_lines(summary) else summary.rsplit("\n", 1)[0]


def test_command_output_keeps_the_verdict_the_failure_and_folds_repeats() -> None:
    lines = [f"tests/test_a.py::test_{i} PASSED" for i in range(300)]
    lines[120] = "E       assert 3 == 4"
    lines[121] = "tests/test_a.py:88: AssertionError"
    lines += ["FAILED tests/test_a.py::test_120 - assert 3 == 4"] * 3
    lines.append("========= 3 failed, 297 passed in 2.31s =========")
    out = extract("\n".join(lines), COMMAND, 900)
    assert body(out).endswith("========= 3 failed, 297 passed in 2.31s =========")
    assert "FAILED tests/test_a.py::test_120 - assert 3 == 4 (×3 similar)" in out
    assert "tests/test_a.py:88: AssertionError" in out


def test_linter_diagnostics_of_one_rule_fold_into_one_with_a_count() -> None:
    blocks = []
    for i in range(40):
        rule = (
            "B904 Within an `except` clause, raise with from" if i % 4 else "B007 Unused loop var"
        )
        blocks += [rule, f"  --> pkg/mod{i}.py:{i + 10}:5", "   |", f"{i} |     code()", ""]
    blocks += ["Found 40 errors."]
    out = extract("\n".join(blocks), COMMAND, 1200)
    assert body(out).endswith("Found 40 errors.")
    assert "B007 Unused loop var\n  --> pkg/mod0.py:10:5 (×10 similar)" in out
    assert (
        "B904 Within an `except` clause, raise with from\n  --> pkg/mod1.py:11:5 (×30 similar)"
        in out
    )


def test_json_gets_its_shape_and_the_record_asked_about_verbatim() -> None:
    records = [{"name": f"lib{i}", "version": f"1.{i}", "status": "installed"} for i in range(4000)]
    text = json.dumps(records, separators=(",", ":"))
    assert "\n" not in text and len(text) > 150_000
    out = extract(text, DATA, 2000, "Which version of lib3210 is installed?")
    assert out.startswith("array of 4000 objects; keys: name, version, status")
    assert '{"name":"lib3210","version":"1.3210","status":"installed"}' in out


def test_nested_json_keeps_the_matching_key_with_its_members() -> None:
    doc = {
        "operations": {f"Op{i}": {"input": {"shape": f"Op{i}Request"}} for i in range(50)},
        "shapes": {
            f"Op{i}Request": {"members": {f"Field{i}": {"shape": "String"}}} for i in range(50)
        },
    }
    doc["operations"]["SendMessage"] = {"input": {"shape": "SendMessageRequest"}}
    doc["shapes"]["SendMessageRequest"] = {"members": {"MessageGroupId": {"shape": "String"}}}
    out = extract(json.dumps(doc, indent=2), DATA, 1200, "What does SendMessage accept?")
    assert '"SendMessageRequest": {' in out
    assert '"MessageGroupId": {' in out


def test_files_show_the_line_asked_about_as_a_hashline_under_its_definition() -> None:
    source = ["import os", ""]
    for i in range(80):
        source += [f"def helper_{i}(x):", f'    """Helper {i}."""', f"    return x + {i}", ""]
    source[200] = "    token = os.environ['API_TOKEN']  # read the secret"
    out = extract("\n".join(source), FILE, 1500, "Where is API_TOKEN read?")
    assert f"201#{line_hash(source[200])}|{source[200]}" in out
    assert f"199#{line_hash(source[198])}|def helper_49(x):" in out
    assert out.startswith("[321 lines, 80 definitions]")


def test_a_numbered_file_keeps_its_lines_as_printed() -> None:
    text = "\n".join(f"{i + 100:6d}\tline {i}" for i in range(400)).replace(
        "line 250", "def target():"
    )
    out = extract(text, FILE, 800, "where is target defined")
    assert "350#" in out and "   350\tdef target():" in out


def test_web_pages_keep_the_paragraph_asked_about_under_its_heading() -> None:
    parts = ["Navigation", ""]
    for i in range(30):
        parts += [f"Section {i}¶", "", f"Filler paragraph number {i} with nothing special.", ""]
    parts[60:60] = ["Exit status¶", "", "The exit status is 0 on success and 2 on error.", ""]
    out = extract("\n".join(parts), WEB, 600, "What is the exit status?")
    assert out.startswith("outline: Section 0 · Section 1")
    assert "The exit status is 0 on success and 2 on error." in out


def test_a_near_fit_output_keeps_most_lines_and_marks_what_it_drops() -> None:
    lines = [f"src/file{i}.py:{i}:    noise = {i}" for i in range(60)]
    lines[30] = "src/core.py:104:DEFAULT_REDIRECT_LIMIT: int = 30"
    text = "\n".join(lines)
    out = extract(text, SEARCH, int(len(text) * 0.85), "default redirect limit")
    assert "src/core.py:104:DEFAULT_REDIRECT_LIMIT: int = 30" in out
    assert MARKER.search(out)
    assert len(out.splitlines()) > 40


CHUNKS = st.sampled_from(
    ["\r\n", "\n", "\x00", "\x1b[1m", "\ud800", "\ud83d\ude00", "{", "}", "[", '"k": 1,',
     "x" * 5000,
     "a.py:1:2: error: e\n", "-rw-r--r-- 1 u g 12 Jun 1 10:00 f.txt\n", "def f():\n", "# H\n\n",
     "src/a.py:3:hit\n", "Traceback (most recent call last):\n", "¶\n"]
)  # fmt: skip
TEXTS = st.lists(
    st.one_of(st.text(st.characters(exclude_categories=()), max_size=50), CHUNKS), max_size=50
).map("".join)


@settings(max_examples=150, deadline=None)
@given(
    text=TEXTS,
    tool_type=st.sampled_from(list(ToolType)),
    budget=st.integers(min_value=-5, max_value=2500),
    query=st.none() | st.text(max_size=30),
)
def test_extract_never_exceeds_the_budget_nor_raises(
    text: str, tool_type: ToolType, budget: int, query: str | None
) -> None:
    out = extract(text, tool_type, budget, query)
    assert len(out) <= max(budget, 0)
    assert "\x00" not in out and "\r" not in out


@settings(max_examples=25, deadline=None)
@given(tool_type=st.sampled_from(list(ToolType)), seed=st.integers(0, 10_000))
def test_extract_handles_huge_single_lines(tool_type: ToolType, seed: int) -> None:
    text = json.dumps([{"id": i, "name": f"n{(i * seed) % 997}"} for i in range(8000)])
    out = extract(text, tool_type, 2000, f"n{seed % 997}")
    assert 0 < len(out) <= 2000
