"""How query lines are weighed: BM25's length normalization, rare terms never folded away."""

from __future__ import annotations

from dataclasses import fields, replace

from tersify.contract import ToolType
from tersify.text.signals import Kind
from tersify.worker.shrink import Reading
from tersify.worker.shrink.document import Doc
from tersify.worker.shrink.reading import candidates
from tersify.worker.shrink.worth import Candidate, Source, line_worth


def test_a_short_line_holding_a_term_outranks_a_long_line_of_prose_holding_it() -> None:
    prose = (
        "the collector may pause the world when the heap limit is reached, and other "
        "threads will wait until it resumes, which is the documented behaviour here"
    )
    lines = [f"note {i}: nothing to see on this line at all" for i in range(300)]
    lines[100] = prose
    lines[200] = "heap_limit = 512m"
    items = Reading.of(
        Doc("\n".join(lines)), ToolType.COMMAND_OUTPUT, "what is the heap limit"
    ).salient
    ranked = [s.number - 1 for s in items]
    assert ranked.index(200) < ranked.index(100)


def test_a_diagnostic_holding_a_rare_query_term_is_not_folded_into_its_look_alikes() -> None:
    lines = [f"src/m{i}.c:{i}:1: error: unused variable 'v{i}'" for i in range(400)]
    lines[250] = "src/m250.c:250:1: error: unused variable 'zebra_cache'"
    doc = Doc("\n".join(lines))
    found = candidates(Reading.of(doc, ToolType.COMMAND_OUTPUT, "why is zebra_cache unused"))
    chosen = next(c for c in found if c.anchor == 250)
    assert chosen.note == "" and chosen.focused


def test_each_salient_lines_features_give_its_worth() -> None:
    lines = [f"step {i} ok" for i in range(400)]
    lines[100] = "error: the heap limit was reached"
    lines[300] = "heap_limit = 512m"
    reading = Reading.of(Doc("\n".join(lines)), ToolType.COMMAND_OUTPUT, "what is the heap limit")
    by_line = {s.number - 1: s for s in reading.salient}
    assert {100, 300} <= set(reading.features)
    for index, features in reading.features.items():
        assert line_worth(features) == by_line[index].weight
    assert reading.features[300].query_match > 0 and reading.features[100].kind > Kind.QUERY


def test_a_candidate_weighed_anew_differs_in_its_worth_alone() -> None:
    candidate = Candidate(7, 2.5, "…snip…", " (×3 similar)", (6, 9), 4, 0.5, True, Source.FOCUS, 3)
    assert [f.name for f in fields(Candidate)][:2] == ["anchor", "weight"]
    assert candidate.weighed(-1.25) == replace(candidate, weight=-1.25)
    # Every field set apart from its default: a field added later must be copied too.
    defaults = Candidate(0, 0.0)
    assert all(getattr(candidate, f.name) != getattr(defaults, f.name) for f in fields(Candidate))
