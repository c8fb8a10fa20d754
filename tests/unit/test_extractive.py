"""The built-in extractive summarizer: structure-aware per type, always within budget."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from producer.contract import ToolType
from worker.shrink.extractive import extract

FILE, SEARCH, LISTING = ToolType.FILE_CONTENT, ToolType.SEARCH_RESULTS, ToolType.DIRECTORY_LISTING
COMMAND, DATA, WEB = ToolType.COMMAND_OUTPUT, ToolType.STRUCTURED_DATA, ToolType.WEB_CONTENT


def test_output_that_fits_comes_back_whole() -> None:
    assert extract("a\r\nb\n", COMMAND, 100) == "a\nb\n"


def test_search_hits_are_counted_per_file_and_the_query_hits_come_first() -> None:
    hits = [f"pkg/mod{i % 40}/core.py:{i}:    value = compute({i})" for i in range(1, 600)]
    hits.insert(333, "httpx/_config.py:246:DEFAULT_TIMEOUT_CONFIG = Timeout(timeout=5.0)")
    out = extract("\n".join(hits), SEARCH, 2000, "What is httpx's default timeout?")
    assert len(out) <= 2000
    assert out.startswith("600 hits in 41 files")
    assert out.index("httpx/_config.py:246:DEFAULT_TIMEOUT_CONFIG") < out.index("pkg/mod")
    assert "pkg/mod1/core.py (15)" in out


def test_search_counts_list_the_files_with_most_matches() -> None:
    rows = [f"lib/file{i}.py:{(i * 7) % 5 + 1}" for i in range(900)]
    rows[450] = "lib/hot.py:97"
    out = extract("\n".join(rows), SEARCH, 1000, "Which files have the most TODOs?")
    assert out.startswith(f"{sum(int(r.rsplit(':', 1)[1]) for r in rows)} matches in 900 files")
    assert out.index("lib/hot.py:97") < out.index("lib/file")


def test_listings_put_errors_first_then_counts_and_the_matching_entries() -> None:
    rows = [f"-rw-r--r-- 1 root root {100 + i} Jun 13  2025 cert_{i:03d}.crt" for i in range(300)]
    rows.insert(150, "-rw-r--r-- 1 root root 1939 Jun 13  2025 ISRG_Root_X1.crt")
    text = "ls: cannot access 'nope': No such file or directory\ntotal 584\n" + "\n".join(rows)
    out = extract(text, LISTING, 1500, "Is the ISRG Root X1 certificate there?")
    assert out.splitlines()[0] == "ls: cannot access 'nope': No such file or directory"
    assert "301 entries (301 files, 0 folders)" in out
    assert "ISRG_Root_X1.crt (1939)" in out
    assert "largest:" in out


def test_path_listings_are_grouped_by_folder_and_type() -> None:
    paths = [f"tests/case_{i}.c" for i in range(120)] + [f"src/m{i}.h" for i in range(60)]
    paths.append("tests/parse_number.c")
    out = extract("\n".join(paths), LISTING, 800, "Where is the test for parse_number?")
    assert "tests/parse_number.c" in out
    assert "by type: .c 121, .h 60" in out
    assert "by folder: tests/ (121), src/ (60)" in out


def test_command_output_leads_with_the_outcome_and_folds_repeats() -> None:
    lines = [f"tests/test_a.py::test_{i} PASSED" for i in range(300)]
    lines[120] = "E       assert 3 == 4"
    lines[121] = "tests/test_a.py:88: AssertionError"
    lines += ["FAILED tests/test_a.py::test_120 - assert 3 == 4"] * 3
    lines.append("========= 3 failed, 297 passed in 2.31s =========")
    out = extract("\n".join(lines), COMMAND, 900)
    assert out.splitlines()[0] == "========= 3 failed, 297 passed in 2.31s ========="
    assert "FAILED tests/test_a.py::test_120 - assert 3 == 4 (×3)" in out
    assert "tests/test_a.py:88: AssertionError" in out
    assert "similar]" in out


def test_linter_rules_are_grouped_with_their_locations() -> None:
    blocks = []
    for i in range(40):
        rule = (
            "B904 Within an `except` clause, raise with from" if i % 4 else "B007 Unused loop var"
        )
        blocks += [rule, f"  --> pkg/mod{i}.py:{i + 10}:5", "   |", f"{i} |     code()", ""]
    blocks += ["Found 40 errors."]
    out = extract("\n".join(blocks), COMMAND, 1200)
    assert out.splitlines()[0] == "Found 40 errors."
    assert "B904 Within an `except` clause, raise with from (×30): pkg/mod1.py:11:5" in out
    assert "B007 Unused loop var (×10): pkg/mod0.py:10:5" in out


def test_json_is_summarized_by_shape_with_the_records_matching_the_query() -> None:
    records = [{"name": f"lib{i}", "version": f"1.{i}", "status": "installed"} for i in range(4000)]
    text = json.dumps(records, separators=(",", ":"))
    assert "\n" not in text and len(text) > 150_000
    out = extract(text, DATA, 2000, "Which version of lib3210 is installed?")
    assert out.startswith("array of 4000 objects; keys: name, version, status")
    assert '{"name":"lib3210","version":"1.3210","status":"installed"}' in out
    assert "name version: lib0 1.0, lib1 1.1" in out


def test_nested_json_follows_the_matching_key_and_what_it_refers_to() -> None:
    doc = {
        "operations": {f"Op{i}": {"input": {"shape": f"Op{i}Request"}} for i in range(50)},
        "shapes": {
            f"Op{i}Request": {"members": {f"Field{i}": {"shape": "String"}}} for i in range(50)
        },
    }
    doc["operations"]["SendMessage"] = {"input": {"shape": "SendMessageRequest"}}
    doc["shapes"]["SendMessageRequest"] = {"members": {"MessageGroupId": {"shape": "String"}}}
    out = extract(json.dumps(doc, indent=2), DATA, 1200, "What does SendMessage accept?")
    assert 'SendMessage: {"input":{"shape":"SendMessageRequest"}}' in out
    assert "MessageGroupId" in out


def test_files_get_an_outline_with_line_numbers_and_the_matching_section() -> None:
    source = ["import os", ""]
    for i in range(80):
        source += [f"def helper_{i}(x):", f'    """Helper {i}."""', f"    return x + {i}", ""]
    source[200] = "    token = os.environ['API_TOKEN']  # read the secret"
    text = "\n".join(source)
    out = extract(text, FILE, 1500, "Where is API_TOKEN read?")
    assert "L3 def helper_0(x):" in out
    assert "201|     token = os.environ['API_TOKEN']  # read the secret" in out
    assert "199| def helper_49(x):" in out


def test_cat_n_numbers_are_kept_as_the_line_numbers() -> None:
    text = "\n".join(f"{i + 100:6d}\tline {i}" for i in range(400)).replace(
        "line 250", "def target():"
    )
    out = extract(text, FILE, 800, "where is target defined")
    assert "350| def target():" in out


def test_web_pages_give_headings_then_the_paragraphs_matching_the_query() -> None:
    parts = ["Navigation", ""]
    for i in range(30):
        parts += [f"Section {i}¶", "", f"Filler paragraph number {i} with nothing special.", ""]
    parts[60:60] = ["Exit status¶", "", "The exit status is 0 on success and 2 on error.", ""]
    out = extract("\n".join(parts), WEB, 600, "What is the exit status?")
    assert out.startswith("outline: Section 0 · Section 1")
    assert "## Exit status\nThe exit status is 0 on success and 2 on error." in out


def test_a_near_fit_output_keeps_its_lines_and_drops_the_least_useful() -> None:
    lines = [f"src/file{i}.py:{i}:    noise = {i}" for i in range(60)]
    lines[30] = "src/core.py:104:DEFAULT_REDIRECT_LIMIT: int = 30"
    text = "\n".join(lines)
    out = extract(text, SEARCH, int(len(text) * 0.85), "default redirect limit")
    assert "src/core.py:104:DEFAULT_REDIRECT_LIMIT: int = 30" in out
    assert "lines omitted...]" in out


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
