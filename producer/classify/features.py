"""What the fitted classifier reads of a tool call: generic features, named, in a fixed order.

None names a program: the command gives its shape (a pipe into a structuring tool, a format
flag, the kind of file it reads, a test or lint word), the output its line shapes (shares of
lines that look like ``path:line:``, ``key: value``, a listing, a table, code, prose, a log…)
read from the same bounded sample the content tests read. ``learned`` weighs them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from tersify.classify.kinds import ranked_verdict, words
from tersify.classify.shellcmd import Invocation, command_lists
from tersify.classify.sniff import (
    _CAT_N,
    _CODE,
    _INDEX,
    _LOG_LINE,
    _LS_LONG,
    _PATH_ONLY,
    _SEARCH_HIT,
    _TREE,
    _YAML,
    Sample,
    SniffTest,
    _is_table,
    _is_yaml,
    _prose_share,
    diagnostics,
    html,
    is_machine_data,
    json_document,
    log_lines,
    long_listing,
    looks_like_xml,
    md_headings,
    path_list,
    run_report,
    search_hits,
    templated_share,
    unified_diff,
    yaml_lines,
)
from tersify.contract import ToolType

_READERS = words("cat bat batcat head tail less more nl tac zcat bzcat xzcat zstdcat")
_STRUCTURING = words("jq jc yq gron json_pp json.tool fx xq mlr xmllint xmlstarlet")
_SETUP = words("cd pushd popd export source . set unset alias true : mkdir touch")
_LISTING_SUBS = words("list ls show get info describe dump view status inspect")
_DOC_EXT = re.compile(r"\.(?:md|rst|txt|html?|adoc|pdf|odt|texi|man|\d)$", re.I)
_DATA_EXT = re.compile(r"\.(?:json|ya?ml|toml|xml|csv|tsv|ics|geojson|ndjson|ini|conf)$", re.I)
_CODE_EXT = re.compile(r"\.(?:py|c|h|cc|cpp|hpp|js|ts|rs|go|java|rb|php|lua|sh|sql|pl)$", re.I)
_LOG_EXT = re.compile(r"\.(?:log|out|err)(?:\.\d+)?$", re.I)
_TEST_WORD = re.compile(r"(?:^|[\W_])(?:test|tests|spec|specs|check|eunit|unittest)(?:$|[\W_])")
_LINT_WORD = re.compile(r"lint|check|audit|scan|analy[sz]e|vet")
_CONVERTER = re.compile(r"[a-z](?:2|to)[a-z]|html|txt|text|doc|markdown|pandoc")

_KEY_COLON = re.compile(r"^\s*[\w\"'./ -]{1,40}:(?:\s|$)")
_KEY_EQUALS = re.compile(r"^\s*[\w.\"'/-]{1,60}\s*=\s*\S")
_GAP_COLUMNS = re.compile(r"\S {2,}\S.* {2,}\S|\S\t\S")
_HEADING_CAPS = re.compile(r"^[A-Z][A-Z0-9 ]{2,40}$")
_BULLET = re.compile(r"^\s*(?:[-*•+]|\d+[.)])\s+\w")
_URL = re.compile(r"\bhttps?://")
_HEX = re.compile(r"\b(?:0x)?[0-9a-f]{6,16}\b")
_TAG_LINE = re.compile(r"^\s*</?[A-Za-z][\w:.-]*[\s>/]")
_VERDICT_WORD = re.compile(r"\b(?:PASS(?:ED)?|FAIL(?:ED|URE)?|ok|not ok|OK|ERROR|SKIP(?:PED)?)\b")
_ISSUE_WORD = re.compile(r"\b(?:error|warning|fail|failed|failure|exception|severity)\b", re.I)
_ENDS_COLON = re.compile(r":\s*$")
_BRACKET = re.compile(r"^\s*[\[{(]")
_PIPE_ROW = re.compile(r"^\s*\|.*\|\s*$|^[+|]-{3,}")
_COMMA_ROW = re.compile(r"^[^,]*(?:,[^,]*){2,}$")
_INDENTED = re.compile(r"^(?: {2,}|\t)\S")
_PUNCT_END = re.compile(r"[.!?]\s*$")
_NUMBER = re.compile(r"\b\d+(?:\.\d+)?\b")


def _share(pattern: re.Pattern[str]) -> Callable[[list[str]], float]:
    def share(lines: list[str]) -> float:
        return sum(1 for line in lines if pattern.search(line)) / len(lines) if lines else 0.0

    return share


_LINE_SHARES: tuple[tuple[str, Callable[[list[str]], float]], ...] = (
    ("lines_key_colon", _share(_KEY_COLON)),
    ("lines_key_equals", _share(_KEY_EQUALS)),
    ("lines_yaml", _share(_YAML)),
    ("lines_search_hit", _share(_SEARCH_HIT)),
    ("lines_cat_n", _share(_CAT_N)),
    ("lines_ls_long", _share(_LS_LONG)),
    ("lines_tree", _share(_TREE)),
    ("lines_path_only", lambda ls: sum(1 for x in ls if _PATH_ONLY.match(x.strip())) / len(ls)),
    ("lines_code", _share(_CODE)),
    ("lines_prose", _prose_share),
    ("lines_log", _share(_LOG_LINE)),
    ("lines_symbol_index", _share(_INDEX)),
    ("lines_templated", templated_share),
    ("lines_indented", _share(_INDENTED)),
    ("lines_gap_columns", _share(_GAP_COLUMNS)),
    ("lines_heading_caps", _share(_HEADING_CAPS)),
    ("lines_bullet", _share(_BULLET)),
    ("lines_url", _share(_URL)),
    ("lines_hex", _share(_HEX)),
    ("lines_tag", _share(_TAG_LINE)),
    ("lines_verdict_word", _share(_VERDICT_WORD)),
    ("lines_issue_word", _share(_ISSUE_WORD)),
    ("lines_end_colon", _share(_ENDS_COLON)),
    ("lines_bracket", _share(_BRACKET)),
    ("lines_pipe_row", _share(_PIPE_ROW)),
    ("lines_comma_row", _share(_COMMA_ROW)),
    ("lines_sentence_end", _share(_PUNCT_END)),
)
_TESTS: tuple[tuple[str, SniffTest], ...] = (
    ("looks_json", json_document),
    ("looks_html", html),
    ("looks_run_report", run_report),
    ("looks_log", log_lines),
    ("looks_diagnostics", diagnostics),
    ("looks_diff", unified_diff),
    ("looks_search_hits", search_hits),
    ("looks_listing", long_listing),
    ("looks_path_list", path_list),
    ("looks_yaml", yaml_lines),
)
_COMMAND = (
    "cmd_none", "cmd_reader", "cmd_structuring_pipe", "cmd_pipe", "cmd_json", "cmd_xml",
    "cmd_csv", "cmd_test_word", "cmd_lint_word", "cmd_converter", "cmd_listing_sub",
    "cmd_arg_doc", "cmd_arg_data", "cmd_arg_code", "cmd_arg_log", "cmd_verbose",
)  # fmt: skip
_SHAPE = (
    "out_xml", "out_machine_data", "out_table", "out_yaml_doc", "out_lines_log",
    "out_mean_width_log", "out_blank_share", "out_digit_share", "out_upper_share",
    "out_number_density", "out_md_headings",
)  # fmt: skip

_VERDICTS = tuple(f"ranked_tests_say_{kind.name.lower()}" for kind in ToolType)

FEATURES: tuple[str, ...] = (
    _COMMAND + _SHAPE + tuple(n for n, _ in _LINE_SHARES) + tuple(n for n, _ in _TESTS) + _VERDICTS
)
"""The feature names, in the order ``features`` returns their values."""


def _pipeline(command: str | None) -> list[Invocation]:
    if not command or not command.strip():
        return []
    lists = command_lists(command)
    for pipeline in lists:
        if pipeline and pipeline[0].program not in _SETUP:
            return pipeline
    return lists[-1] if lists else []


def _command_features(command: str | None) -> list[float]:
    pipeline = _pipeline(command)
    if not pipeline:
        return [1.0] + [0.0] * (len(_COMMAND) - 1)
    first = pipeline[0]
    text = (command or "").lower()
    args = [a for stage in pipeline for a in stage.args if not a.startswith("-")]
    flags = " ".join(a.lower() for stage in pipeline for a in stage.args if a.startswith("-"))
    said = f"{first.program} {first.subcommand} {flags}"

    def arg(pattern: re.Pattern[str]) -> float:
        return float(any(pattern.search(a) for a in args))

    return [
        0.0,
        float(first.program in _READERS),
        float(any(stage.program in _STRUCTURING for stage in pipeline)),
        float(len(pipeline) > 1),
        float("json" in text),
        float("xml" in text),
        float("csv" in text or "opprint" in text or "tsv" in text),
        float(_TEST_WORD.search(f"{first.program} {' '.join(first.args)}".lower()) is not None),
        float(_LINT_WORD.search(first.program) is not None),
        float(_CONVERTER.search(first.program) is not None),
        float(first.subcommand in _LISTING_SUBS or first.program.endswith("ls")),
        arg(_DOC_EXT),
        arg(_DATA_EXT),
        arg(_CODE_EXT),
        arg(_LOG_EXT),
        float(re.search(r"(?:^| )-(?:v+|-verbose)\b", said) is not None),
    ]


_DIGITS = str.maketrans("", "", "0123456789")
# A line's head tells its shape (a 1 MB JSON line is no slower), and a few hundred lines from
# the head and the tail of the sample tell the shares: every line is searched by every pattern.
_LINE_CHARS = 240
_HEAD_LINES, _TAIL_LINES = 120, 40
_TEXT_CHARS = 16_000


def _shape_features(sample: Sample, lines: list[str]) -> list[float]:
    text = sample.text[:_TEXT_CHARS]
    chars = max(1, len(text))
    raw_lines = text.count("\n") + 1
    width = sum(len(line) for line in sample.lines) / len(sample.lines) if sample.lines else 0.0
    tokens = max(1, text.count(" ") + raw_lines)
    return [
        float(looks_like_xml(sample.output)),
        float(is_machine_data(sample.output)),
        float(len(lines) >= 3 and _is_table(lines)),
        float(len(lines) >= 3 and _is_yaml(lines)),
        math.log1p(len(lines)) / 6.0,
        math.log1p(width) / 5.0,
        sum(1 for line in text.split("\n") if not line.strip()) / raw_lines,
        (chars - len(text.translate(_DIGITS))) / chars,
        sum(1 for line in lines if line.lstrip()[:1].isupper()) / len(lines) if lines else 0.0,
        min(1.0, len(_NUMBER.findall(text)) / tokens),
        min(1.0, md_headings(text) / 5),
    ]


@dataclass(frozen=True, slots=True)
class Reading:
    """One output as the classifier reads it: a bounded sample of its lines and the verdict
    of the kinds' ranked content tests (``kinds.ranked_verdict``); the features on demand,
    so a decisive verdict costs no more than the tests before it."""

    command: str | None
    sample: Sample
    fewer: Sample
    lines: list[str]
    verdict: tuple[ToolType, bool] | None
    held: dict[SniffTest, bool]

    @classmethod
    def of(cls, command: str | None, output: str) -> Reading:
        """The reading of ``output``, printed by ``command``."""
        sample = Sample.of(output)
        kept = sample.lines
        if len(kept) > _HEAD_LINES + _TAIL_LINES:
            kept = kept[:_HEAD_LINES] + kept[-_TAIL_LINES:]
        fewer = Sample(sample.output, sample.text, kept, sample.tail)
        held: dict[SniffTest, bool] = {}
        verdict = ranked_verdict(fewer, held)
        return cls(command, sample, fewer, [line[:_LINE_CHARS] for line in kept], verdict, held)

    def values(self) -> list[float]:
        """The values of ``FEATURES``, in order."""
        lines, fewer, held = self.lines, self.fewer, self.held
        shares = [share(lines) if lines else 0.0 for _, share in _LINE_SHARES]
        tests = [
            float(held[test] if test in held else test(fewer)) if lines else 0.0
            for _, test in _TESTS
        ]
        verdict = self.verdict
        verdicts = [float(verdict is not None and kind is verdict[0]) for kind in ToolType]
        shape = _shape_features(self.sample, lines)
        return _command_features(self.command) + shape + shares + tests + verdicts


def features(command: str | None, output: str) -> list[float]:
    """The values of ``FEATURES`` for one output and the command that printed it."""
    return Reading.of(command, output).values()
