"""Tool kinds: one object per tool type on each side, every part present, checked at import."""

from __future__ import annotations

import dataclasses
import sys
import textwrap
from pathlib import Path

import pytest

from tersify.classify import PROGRAMS, TOOL_NAMES, classify
from tersify.classify.kinds import HINTS, Hints, Sniff, by_name, complete
from tersify.classify.kinds import _ranked as ranked_tests
from tersify.classify.sniff import html, prose
from tersify.contract import ToolType
from tersify.errors import RegistryError, TersifyError
from tersify.worker.shrink import KINDS, ToolKind, extract, fallback_truncate
from tersify.worker.shrink.kinds import _registry as worker_registry
from tersify.worker.summarize.prompts import FOCUS


def test_every_tool_type_has_its_hints_and_its_worker_part() -> None:
    assert set(HINTS) == set(KINDS) == set(ToolType)
    for tool_type in ToolType:
        assert HINTS[tool_type].tool_type is tool_type
        assert KINDS[tool_type].tool_type is tool_type
        assert FOCUS[tool_type] == KINDS[tool_type].focus


def test_a_kind_without_one_of_its_parts_cannot_be_made() -> None:
    web = KINDS[ToolType.WEB_CONTENT]
    parts = {f.name: getattr(web, f.name) for f in dataclasses.fields(ToolKind)}
    for name in parts:
        missing = {k: v for k, v in parts.items() if k != name}
        with pytest.raises(TypeError):
            ToolKind(**missing)  # type: ignore[arg-type]


def test_a_registry_missing_a_kind_fails_naming_it() -> None:
    partial = [kind for kind in KINDS.values() if kind.tool_type is not ToolType.WEB_CONTENT]
    with pytest.raises(RegistryError, match="WebContent"):
        worker_registry(*partial)
    with pytest.raises(RegistryError, match="registered twice"):
        worker_registry(*KINDS.values(), KINDS[ToolType.FILE_CONTENT])
    misnamed = dict(HINTS)
    misnamed[ToolType.WEB_CONTENT] = HINTS[ToolType.FILE_CONTENT]
    with pytest.raises(RegistryError, match="another kind"):
        complete(misnamed, "hints")
    assert issubclass(RegistryError, TersifyError)


def test_a_module_registering_an_incomplete_kind_table_fails_at_import(tmp_path: Path) -> None:
    module = tmp_path / "throwaway_kinds.py"
    module.write_text(
        textwrap.dedent(
            """
            from tersify.contract import ToolType
            from tersify.worker.shrink.kinds import KINDS, _registry

            THROWAWAY = _registry(
                *(k for t, k in KINDS.items() if t is not ToolType.DIRECTORY_LISTING)
            )
            """
        ),
        encoding="utf-8",
    )
    sys.path.insert(0, str(tmp_path))
    try:
        with pytest.raises(RegistryError, match="DirectoryListing"):
            __import__("throwaway_kinds")
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("throwaway_kinds", None)


def test_a_name_given_to_two_kinds_and_two_tests_of_one_rank_are_refused() -> None:
    table = [
        (ToolType.FILE_CONTENT, frozenset({"cat"})),
        (ToolType.WEB_CONTENT, frozenset({"cat"})),
    ]
    with pytest.raises(RegistryError, match="'cat'"):
        by_name(table, "program")
    one = Hints(ToolType.WEB_CONTENT, frozenset(), (), frozenset(), (Sniff(5, html),))
    other = Hints(ToolType.FILE_CONTENT, frozenset(), (), frozenset(), (Sniff(5, prose),))
    with pytest.raises(RegistryError, match="rank"):
        ranked_tests([one, other])


def test_the_tables_the_classifier_reads_come_from_the_kinds() -> None:
    for tool_type, hints in HINTS.items():
        assert all(TOOL_NAMES[name] is tool_type for name in hints.tool_names)
        assert all(PROGRAMS[name] is tool_type for name in hints.programs)
    assert classify("bash", "git ls-files", "a.py\nb.py\n") is ToolType.DIRECTORY_LISTING
    assert classify("bash", "pip list", "Package Version\n") is ToolType.STRUCTURED_DATA


def test_every_kind_shrinks_every_kind_of_output_within_its_budget() -> None:
    text = "".join(f"line {i}: error: something failed at step {i}\n" for i in range(3_000))
    for tool_type in ToolType:
        for shrink in (extract, fallback_truncate):
            out = shrink(text, tool_type, 1_000, "why did step 1500 fail")
            assert 0 < len(out) <= 1_000, (shrink.__name__, tool_type)
