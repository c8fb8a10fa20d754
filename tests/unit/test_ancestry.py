"""Every kept line brings the line(s) that locate it: indentation parents, headers, table heads."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tersify.worker.shrink.ancestry import ancestors
from tersify.worker.shrink.document import Doc
from tersify.worker.shrink.headers import find_headers, is_header
from tersify.worker.shrink.hits import Hits


def lines_of(doc: Doc, indices: list[int]) -> list[str]:
    return [doc.lines[i] for i in indices]


def test_a_line_in_a_function_brings_its_def_and_class() -> None:
    doc = Doc(
        "class Pool:\n    size = 1\n\n    def grow(self, n):\n        x = 1\n        return n\n"
    )
    assert lines_of(doc, ancestors(doc, 5)) == [
        "class Pool:",
        "    def grow(self, n):",
        "        x = 1",  # the first line of its block
    ]


def test_a_commit_message_line_brings_the_subject_above_its_paragraph() -> None:
    doc = Doc(
        "commit 1111111111111111111111111111111111111111\nDate: d\n\n    cli: fix a bug\n"
        "    \n    Long explanation.\n    Therefore, CVE-2021-3013 was filed.\n"
    )
    assert lines_of(doc, ancestors(doc, 6)) == [
        "commit 1111111111111111111111111111111111111111",
        "Date: d",
        "    cli: fix a bug",
    ]


def test_a_multi_line_signature_gives_its_opening_line_not_its_closing_one() -> None:
    doc = Doc("class A:\n    def f(\n        self,\n    ) -> None:\n        return None\n")
    assert lines_of(doc, ancestors(doc, 4)) == ["class A:", "    def f("]


DIFF = (
    "diff --git a/s.py b/s.py\n--- a/s.py\n+++ b/s.py\n@@ -10,4 +10,6 @@ class Session:\n"
    "     def rebuild(\n-        self, request, proxies\n+        self,\n"
    "+        request: Request,\n+    ) -> None:\n         pass\n"
)


def test_in_a_diff_a_changed_line_brings_its_def_read_past_the_marker() -> None:
    doc = Doc(DIFF)
    assert "     def rebuild(" in lines_of(doc, ancestors(doc, 7))


def test_the_marker_counts_as_indentation_outside_a_diff() -> None:
    doc = Doc(DIFF.replace("@@ -10,4 +10,6 @@", "-- hunk --"))
    assert "     def rebuild(" not in lines_of(doc, ancestors(doc, 7))


def test_a_commit_message_line_brings_its_commit_header() -> None:
    text = "commit 1111111111111111111111111111111111111111\nAuthor: A\nDate: d\n\n    Fix it\n"
    text += "commit 2222222222222222222222222222222222222222\nAuthor: B\nDate: d\n\n    Add x\n"
    doc = Doc(text)
    assert lines_of(doc, ancestors(doc, 9)) == [
        "commit 2222222222222222222222222222222222222222",
        "Date: d",
    ]


def test_a_changelog_entry_brings_its_release_heading() -> None:
    doc = Doc("## 2.1.0 (2024-03-01)\n\n- Fixed a crash\n- Added --force\n\n## 2.0.0\n- Old\n")
    assert "## 2.1.0 (2024-03-01)" in lines_of(doc, ancestors(doc, 3))


def test_an_ls_recursive_entry_brings_its_directory_header() -> None:
    doc = Doc("./a:\ntotal 0\n-rw-r--r-- 1 u g 0 Jan 1 00:00 x\n\n./a/b:\ntotal 0\n-rw 1 u g 9 y\n")
    assert lines_of(doc, ancestors(doc, 6)) == ["./a/b:"]


def test_a_yaml_value_brings_its_parent_keys() -> None:
    doc = Doc("spec:\n  template:\n    spec:\n      containers:\n        - image: nginx:1.25\n")
    assert lines_of(doc, ancestors(doc, 4)) == [
        "spec:",
        "  template:",
        "    spec:",
        "      containers:",
    ]


def test_a_tree_entry_brings_its_folders() -> None:
    doc = Doc(".\n├── src\n│   ├── app\n│   │   └── main.py\n└── README.md\n")
    assert lines_of(doc, ancestors(doc, 3)) == [".", "├── src", "│   ├── app"]


def test_a_table_row_brings_the_header_row() -> None:
    text = "NAME      READY   STATUS    RESTARTS\n" + "".join(
        f"pod-{i}     1/1     Running   {i}\n" for i in range(8)
    )
    doc = Doc(text)
    assert ancestors(doc, 6) == [0]


@pytest.mark.parametrize(
    "line",
    ["# Title", "==== FAILURES ====", "commit 0123456789abcdef", "diff --git a/x b/x",
     "./src/pkg:", "SYNOPSIS", "2.31.0 (2023-05-22)", "pkg (1.2-1) unstable; urgency=low"],
)  # fmt: skip
def test_headers_are_recognized_by_their_shape(line: str) -> None:
    assert is_header(Doc(line + "\nbody\n").lines, 0)


@pytest.mark.parametrize(
    "line", ["plain words here", "127.0.0.1 - - [x]", "    indented:", "x = 1"]
)
def test_ordinary_lines_are_not_headers(line: str) -> None:
    assert not is_header(Doc(line + "\nbody\n").lines, 0)


def test_a_header_is_not_the_child_of_the_header_before_it() -> None:
    doc = Doc("commit aaaaaaa\n    a\ncommit bbbbbbb\n    b\n")
    assert ancestors(doc, 2) == []


_LINES = st.sampled_from(
    [
        "# Title", "## 1.2.0 (2024-01-02)", "commit 0123456789abcdef", "diff --git a/x b/x",
        "+++ b/x", "@@ -1,2 +1,3 @@", "Index: x.c", "==> a.log <==", "==== FAILURES ====",
        "____ test_x ____", "*** Summary ***", "1.2.3", "[v2.0.1]", "Version 3", "release v4",
        "CHANGES", "./dir:", "Section:", "def f(x) -> None:", "src/a.py", "12:hit", "3-ctx",
        "=====", "-----", "pkg (1.0-1) unstable; urgency=low", "plain text", "  indented:",
        "    body", "", "x = 1", "NOTES AND MORE",
    ]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(_LINES, max_size=40))
def test_the_whole_text_scan_finds_every_header_a_line_by_line_check_would(
    lines: list[str],
) -> None:
    doc = Doc("\n".join(lines))
    by_line = [
        i
        for i in range(len(doc))
        if is_header(doc.lines, i)
        and not (doc.lines[i].endswith(":") and i + 1 < len(doc) and doc.indent(i + 1) > 0)
    ]
    assert doc.headers == by_line


def test_a_folder_header_heads_its_entries_however_far_below_they_sit() -> None:
    entries = "".join(f"-rw-r--r-- 1 dev dev {i} Jan  1 00:00 file{i}.txt\n" for i in range(3000))
    doc = Doc(f"./first:\n{entries}\n./second/deep:\n{entries}")
    last = len(doc) - 1
    assert doc.lines[ancestors(doc, last)[0]] == "./second/deep:"


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            _LINES,
            st.sampled_from(["a:", "a: ", "a:\t", " b:", "x: y:", "::", "V1.2", "v3.1 (x)"]),
            st.text(alphabet="aA1:#=-_ \t[v.", max_size=8),
        )
    )
)
def test_headers_tried_only_where_a_fast_search_found_a_start_are_the_regex_scans(
    lines: list[str],
) -> None:
    for text in ("\n".join(lines), "\n".join(lines) + "\n", "é" + "\n".join(lines)):
        doc = Doc(text)
        assert find_headers(text, doc.lines, Hits(text)) == find_headers(text, doc.lines)
