"""Focus: the block holding most of the query's evidence is read as a unit, first."""

from __future__ import annotations

from tersify.contract import ToolType
from tersify.worker.shrink import Query, Reading, extract
from tersify.worker.shrink.document import Doc
from tersify.worker.shrink.engine import Plan, follow_evidence
from tersify.worker.shrink.focus import block_of, focus_blocks
from tersify.worker.shrink.reading import candidates


def _entries(count: int, special: int) -> str:
    """Records of a few lines each, separated by blank lines; one of them is asked about."""
    out = []
    for i in range(count):
        name = "zephyr-gateway" if i == special else f"service-{i:03d}"
        out.append(
            f"Entry name: {name}\nCreated: day {i}\nKind: trusted\n\n"
            f"Owner: {name} team\nValid until: year {2030 + i % 9}\n"
            f"Fingerprint: {i:04x}:{i * 7:04x}:{i * 13:04x}\n"
        )
    return "\n".join(out)


def _routine(count: int, special: int) -> str:
    """A label line and an indented body per routine; one routine is asked about."""
    out = []
    for i in range(count):
        name = "decode_frame" if i == special else f"routine_{i}"
        body = "\n".join(f"    {i:04x}{k:02x}: move register {k}" for k in range(20))
        calls = f"    {i:04x}99: call <checksum_{i}>\n    {i:04x}9a: call <allocate_{i}>"
        out.append(f"{i:08x} <{name}>:\n{body}\n{calls}\n    {i:04x}9f: return")
    return "\n\n".join(out)


def test_an_indented_line_belongs_to_the_block_under_its_label() -> None:
    doc = Doc(_routine(5, 2))
    label = next(i for i, line in enumerate(doc.lines) if "<decode_frame>" in line)
    start, end = block_of(doc, label + 3)
    assert start == label and doc.lines[end - 1].strip().endswith("return")


def test_a_margin_line_belongs_to_its_paragraph_and_a_long_run_to_none() -> None:
    doc = Doc("a\nb\nc\n\nd\ne\n")
    assert block_of(doc, 1) == (0, 3)
    endless = Doc("\n".join(f"line {i}" for i in range(500)))
    assert block_of(endless, 250) == (250, 250)


def test_the_block_holding_the_rare_query_terms_ranks_first() -> None:
    doc = Doc(_entries(300, 177))
    query = "when is the zephyr gateway valid until and what is its fingerprint"
    weights = doc.weights(Query.parse(query))
    anchors = [i for i, line in enumerate(doc.lines) if "zephyr" in line or "valid" in line.lower()]
    best = focus_blocks(doc, anchors, weights)[0]
    assert "Owner: zephyr-gateway team" in doc.lines[best.start : best.end]


def test_a_record_asked_about_by_name_is_shown_whole_with_its_fields() -> None:
    text = _entries(300, 177)
    query = "when is the zephyr gateway valid until and what is its fingerprint"
    shown = extract(text, ToolType.COMMAND_OUTPUT, 1500, query)
    record = "Owner: zephyr-gateway team\nValid until: year 2036\nFingerprint: 00b1:04d7:08fd"
    assert record in shown


def test_a_long_block_shows_its_label_and_the_lines_holding_the_other_terms() -> None:
    text = _routine(200, 120)
    # The budget holds the block's lines besides the map of what the summary left out.
    shown = extract(text, ToolType.COMMAND_OUTPUT, 1700, "which routines does decode_frame call")
    assert "00000078 <decode_frame>:" in shown
    assert "    00789a: call <allocate_120>" in shown
    assert "    00789a: call <allocate_120>" in shown.split("<decode_frame>:", 1)[1]


def test_the_fixed_head_and_tail_give_way_when_the_evidence_is_in_a_block() -> None:
    doc = Doc(_entries(300, 177))
    plan = Plan(1500, head=400, tail=400)
    focused = follow_evidence(
        plan, candidates(Reading.of(doc, ToolType.COMMAND_OUTPUT, "zephyr gateway"))
    )
    unfocused = follow_evidence(
        plan, candidates(Reading.of(doc, ToolType.COMMAND_OUTPUT, "owner kind"))
    )
    assert focused.head < plan.head and focused.tail < plan.tail
    assert unfocused == plan


def test_a_block_of_common_query_words_is_not_focused_on() -> None:
    doc = Doc(_entries(300, 177))
    weights = doc.weights(Query.parse("owner kind created"))
    anchors = [i for i, line in enumerate(doc.lines) if line.startswith("Owner")]
    blocks = focus_blocks(doc, anchors, weights)
    assert blocks and all(block.rarest < 3.0 for block in blocks)


def test_a_file_shows_the_region_holding_most_of_the_query_not_its_best_single_line() -> None:
    lines = [f"filler line {i} of the module" for i in range(600)]
    lines[100] = "def connect_retry_backoff_jitter(): pass  # connect retry backoff jitter"
    for k, word in enumerate(("connect", "retry", "backoff", "jitter")):
        lines[400 + 2 * k] = f"    {word} = settings.{word}"
    shown = extract("\n".join(lines), ToolType.FILE_CONTENT, 900, "connect retry backoff jitter")
    assert "    jitter = settings.jitter" in shown
