"""The tool kinds as the worker knows them: everything it does differently for one tool type.

One ``ToolKind`` per ``ToolType``: what the model's prompt asks it to focus on, how much of a
cut the head holds, the words and patterns that find the lines that matter, the facts an
extractive summary states, and the shape of the output (a file's numbered lines, prose). Each
registers against the producer's kind names and hints (``tersify.classify.kinds``); the check
that every tool type has both parts runs at import, so a kind missing a part fails the import,
never a job.

Adding a tool type: a member of ``ToolType``, its ``Hints`` in the producer, its ``ToolKind``
here (docs/ARCHITECTURE.md, "Where to add").
"""

from __future__ import annotations

from dataclasses import dataclass

from tersify.classify.kinds import HINTS, complete
from tersify.contract import ToolType
from tersify.errors import RegistryError
from tersify.worker.shrink.facts import (
    Facts,
    listing_facts,
    no_facts,
    search_facts,
    structured_facts,
    web_facts,
)
from tersify.worker.shrink.scans import Scan, command_lines, match_counts


@dataclass(frozen=True, slots=True)
class ToolKind:
    """Everything type-specific the worker does with one tool type's outputs."""

    tool_type: ToolType
    focus: str
    """What the model's prompt asks it to focus on (``worker.summarize.prompts``)."""
    head_ratio: float
    """Of a cut's fixed frame, the share the head holds (the fallback, the model's view)."""
    anchors: tuple[str, ...]
    """Lower-case words whose lines are weighed as salient: each costs one pass over the
    text, so few, short and broad ("err" finds "error", "stderr" and "npm ERR!")."""
    scans: tuple[Scan, ...]
    """Line finders of the kind's own (``scans``): tracebacks, match counts."""
    facts: Facts
    """The facts line(s) an extractive summary states first (``facts``)."""
    numbered_file: bool
    """Its lines are a file's: hashlines, a relevant range kept verbatim, two prose parts."""
    prose: bool
    """A line with nothing indented under it belongs to its paragraph."""
    full_output_flag: bool
    """Its answers may say that the agent needs the whole output (records, a page, a file)."""


_COMMAND_ANCHORS = (
    "err", "fail", "warn", "traceback", "exception", "fatal", "panic", "exit", "denied",
    "cannot", "no such", "not found", "abort", "assert",
)  # fmt: skip


def _registry(*kinds: ToolKind) -> dict[ToolType, ToolKind]:
    found = {kind.tool_type: kind for kind in kinds}
    if len(found) != len(kinds):
        raise RegistryError("a tool kind is registered twice")
    complete(found, "worker part")
    complete(HINTS, "hints")
    return found


KINDS = _registry(
    ToolKind(
        ToolType.FILE_CONTENT,
        focus=(
            "The output is the content of a file, in three parts: the lines before the "
            "relevant range, the relevant range, and the lines after it, each line a LINE#HH| "
            "hashline. The relevant range reaches the agent verbatim, between your two parts: "
            'never repeat it. Describe in "before" the structure of the lines before the range '
            '(the main definitions with their line numbers), and in "after" the same for the '
            "lines after it ('none' for an empty part); quote only lines outside the range that "
            "the agent needs exactly."
        ),
        head_ratio=0.7,
        anchors=(),
        scans=(),
        facts=no_facts,
        numbered_file=True,
        prose=False,
        full_output_flag=True,
    ),
    ToolKind(
        ToolType.SEARCH_RESULTS,
        focus=(
            "The output is search results. Summarize the matching paths with their hit counts, "
            "grouped by file; quote first the hits that answer the agent's intent."
        ),
        head_ratio=0.5,
        anchors=("no such file", "permission denied", "error:"),
        scans=(match_counts,),
        facts=search_facts,
        numbered_file=False,
        prose=False,
        full_output_flag=False,
    ),
    ToolKind(
        ToolType.DIRECTORY_LISTING,
        focus=(
            "The output is a directory listing. Group the entries by type and folder with "
            "counts, name the key files (build and config files, entry points, tests, the "
            "largest ones) and quote any error lines."
        ),
        head_ratio=0.3,
        anchors=("cannot", "no such", "denied", "error", "not found"),
        scans=(),
        facts=listing_facts,
        numbered_file=False,
        prose=False,
        full_output_flag=False,
    ),
    ToolKind(
        ToolType.COMMAND_OUTPUT,
        focus=(
            "The output is a command's output. Give the outcome first (success or failure, "
            "exit code, test totals) and fold repeated lines into one with a count; quote the "
            "error messages, failing test ids and file:line locations."
        ),
        head_ratio=0.6,
        anchors=_COMMAND_ANCHORS,
        scans=(command_lines,),
        facts=no_facts,
        numbered_file=False,
        prose=False,
        full_output_flag=False,
    ),
    ToolKind(
        ToolType.STRUCTURED_DATA,
        focus=(
            "The output is structured data (JSON, YAML or a table). Describe its shape briefly, "
            "then give names, versions and key fields; quote the records relevant to the "
            "agent's intent."
        ),
        head_ratio=0.5,
        anchors=(),
        scans=(),
        facts=structured_facts,
        numbered_file=False,
        prose=False,
        full_output_flag=True,
    ),
    ToolKind(
        ToolType.WEB_CONTENT,
        focus=(
            "The output is a web page or document. Give its main facts and quote the passages "
            "relevant to the agent's intent."
        ),
        head_ratio=0.5,
        anchors=(),
        scans=(),
        facts=web_facts,
        numbered_file=False,
        prose=True,
        full_output_flag=True,
    ),
)


def kind_of(tool_type: ToolType) -> ToolKind:
    """The worker's part of ``tool_type``'s kind (every type has one: checked at import)."""
    return KINDS[tool_type]
