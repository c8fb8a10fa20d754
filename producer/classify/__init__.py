"""Classify a tool output: by tool name, else by the program its command ran, else by content.

What tells each kind apart lives in one place per kind (``kinds``: names, programs,
subcommands, content tests); this module reads a tool call through them. When neither the
name nor the program tells, a classifier fitted on the corpus (``learned``, over the generic
features of ``features``) reads the output and the command's shape.
"""

from __future__ import annotations

import re

from tersify.classify.features import Reading
from tersify.classify.kinds import HINTS, NameWords, by_name, words
from tersify.classify.learned import Classifier, shipped
from tersify.classify.shellcmd import Invocation, command_lists
from tersify.classify.sniff import Sample, is_machine_data, log_lines, parses_as_data
from tersify.contract import ToolType

FILE, SEARCH, LISTING = ToolType.FILE_CONTENT, ToolType.SEARCH_RESULTS, ToolType.DIRECTORY_LISTING
COMMAND, DATA, WEB = ToolType.COMMAND_OUTPUT, ToolType.STRUCTURED_DATA, ToolType.WEB_CONTENT


# Agent tool names (normalized), and the programs of a shell command line (after wrappers).
# Shells are absent from the names: their command decides. A program absent: judge by content.
TOOL_NAMES = by_name(((h.tool_type, h.tool_names) for h in HINTS.values()), "tool name")
PROGRAMS = by_name(((h.tool_type, h.programs) for h in HINTS.values()), "program")
SHELL_NAMES = words(
    "bash sh zsh fish shell exec execute run terminal powershell pwsh cmd command "
    "run-command execute-command run-shell-command shell-command run-terminal-cmd "
    "run-in-terminal local-shell container-exec bash-output run-bash bash-tool exec-command"
)
# A word of a shell's name is read after the kinds ranked above it, before those below.
_SHELL_WORDS = NameWords(6, words("bash sh shell exec execute run terminal command cmd powershell"))
_NAME_TOKENS: tuple[tuple[ToolType | None, frozenset[str]], ...] = tuple(
    (kind, named.words)
    for named, kind in sorted(
        [(n, h.tool_type) for h in HINTS.values() for n in h.name_words] + [(_SHELL_WORDS, None)],
        key=lambda pair: pair[0].rank,
    )
)
_STRUCTURING = frozenset({"jq", "jc", "yq", "gron", "json_pp", "json.tool", "fx", "xq", "mlr"})
_SETUP = words(
    "cd pushd popd export source . set unset alias true : mkdir touch cp mv rm chmod chown "
    "ln sleep clear trap shopt ulimit umask hash echo printf activate conda-activate wait"
)


def _subcommand_table() -> dict[str, dict[str, ToolType]]:
    """Per program that prints several kinds, each subcommand's kind (others: a command's)."""
    table: dict[str, dict[str, ToolType]] = {}
    for hints in HINTS.values():
        for program, subs in hints.subcommands.items():
            table.setdefault(program, {}).update(dict.fromkeys(subs, hints.tool_type))
    return table


_SUBCOMMANDS = _subcommand_table()


def normalize_tool_name(name: str) -> str:
    """'mcp__files__Read_File' -> 'read-file': MCP and server prefixes gone, kebab case."""
    raw = name.strip()
    if "__" in raw:
        raw = [part for part in raw.split("__") if part][-1] if raw.strip("_") else raw
    for separator in ("/", ".", ":"):
        if separator in raw.strip(separator):
            raw = [part for part in raw.split(separator) if part][-1]
    raw = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", raw)
    raw = re.sub(r"[\s_]+", "-", raw.lower())
    return re.sub(r"-{2,}", "-", raw).strip("-")


def _by_name(name: str) -> ToolType | None:
    """The type a tool's name gives, None for shells and unknown names."""
    if name in TOOL_NAMES:
        return TOOL_NAMES[name]
    tokens = set(name.split("-"))
    if tokens & {"list", "get"} and not tokens & {"file", "files", "dir", "directory", "tree"}:
        return (
            DATA if tokens & {"issues", "pulls", "prs", "commits", "tables", "packages"} else None
        )
    for kind, named in _NAME_TOKENS:
        if tokens & named:
            return kind
    return None


def _is_shell(name: str) -> bool:
    tokens = set(name.split("-"))
    return name in SHELL_NAMES or bool(tokens & {"bash", "shell", "terminal", "exec"})


def program_type(invocation: Invocation) -> ToolType | None:
    """The type of what ``invocation`` prints, or None when only its output can tell."""
    program, sub = invocation.program, invocation.subcommand
    program = "pip" if program in {"pip3", "uv-pip"} else program
    if program in _SUBCOMMANDS:
        if program == "git" and sub == "show" and any(":" in a for a in invocation.args):
            return FILE
        return _SUBCOMMANDS[program].get(sub, COMMAND)
    if program == "tar" and invocation.args and "t" in invocation.args[0].lstrip("-"):
        return LISTING
    if program in {"unzip", "7z"} and invocation.has("-l", "l"):
        return LISTING
    if program == "dpkg":
        if invocation.has("-L", "--listfiles"):
            return LISTING
        if invocation.has("-S", "--search"):
            return SEARCH
        return DATA if invocation.has("-l", "--list", "-s", "--status") else COMMAND
    if "lint" in program or program.endswith("check"):  # yamllint, golangci-lint, shellcheck
        return COMMAND
    if program == "ps" or program == "top":
        return COMMAND
    return PROGRAMS.get(program)


_LOG_FILE = re.compile(r"\.(?:log|out|err)(?:\.\d+)?$|(?:^|/)(?:nohup\.out|syslog|messages)$")


def _reads_a_log(invocation: Invocation) -> bool:
    """Whether a file-reading program reads a log: what it shows is a command's output."""
    return any(_LOG_FILE.search(arg) for arg in invocation.args if not arg.startswith("-"))


def _meaningful(lists: list[list[Invocation]]) -> list[Invocation]:
    """The first pipeline whose program does real work (not cd, export, source, …)."""
    for pipeline in lists:
        if pipeline and pipeline[0].program not in _SETUP:
            return pipeline
    return lists[-1] if lists else []


def _unknown_subcommand(invocation: Invocation) -> bool:
    """Whether ``invocation`` runs a subcommand the table has no type for."""
    known = _SUBCOMMANDS.get(invocation.program)
    return known is not None and invocation.subcommand not in known


def _command_rules(command: str, output: str) -> ToolType | None:
    """The type the program of the shell ``command`` gives, None when only content can tell."""
    pipeline = _meaningful(command_lists(command))
    if not pipeline:
        return None
    first = pipeline[0]
    kind = program_type(first)
    for stage in pipeline[1:]:
        if stage.program in _STRUCTURING:
            return DATA
        if stage.program == "xargs" and stage.args:
            target = program_type(Invocation(stage.args[0], stage.args[1:]))
            if target in (SEARCH, FILE, LISTING):
                kind = target
        elif PROGRAMS.get(stage.program) is SEARCH and kind is FILE:
            kind = SEARCH
    if kind is None:
        return None
    # JSON or XML is data whatever printed it (config files read whole stay files, and so do
    # documents); YAML or a table counts only from a program whose subcommand the table does
    # not know: a known command's log may look like "key: value" lines.
    if kind in (COMMAND, FILE) and is_machine_data(output):
        return DATA
    if kind is COMMAND and _unknown_subcommand(first) and parses_as_data(output):
        return DATA
    if kind is FILE and (_reads_a_log(first) or log_lines(Sample.of(output))):
        return COMMAND
    return kind


def by_rules(tool_name: str, command: str | None, output: str) -> ToolType | None:
    """The type the tool's name or its command's program gives; None when neither tells."""
    name = normalize_tool_name(tool_name)
    if not _is_shell(name):
        by_name = _by_name(name)
        if by_name is FILE and log_lines(Sample.of(output)):
            return COMMAND  # a log read as a file is still a program's report
        if by_name is not None:
            return by_name
    if command and command.strip():
        return _command_rules(command, output)
    return None


def by_content(command: str | None, output: str, model: Classifier | None = None) -> ToolType:
    """The type a decisive content test gives, else the one the fitted classifier (``model``,
    else the shipped one) reads in ``output`` and the shape of the ``command`` that printed it."""
    reading = Reading.of(command, output)
    if reading.verdict is not None and reading.verdict[1]:
        return reading.verdict[0]
    return (model or shipped()).predict(reading.values())


def classify(tool_name: str, command: str | None, output: str) -> ToolType:
    """The tool type of one output: the tool's name, else its command's program, else what
    the fitted classifier reads in the output and the command's shape."""
    try:
        return by_rules(tool_name, command, output) or by_content(command, output)
    except Exception:  # classification only steers a summary; it must never fail a job
        return COMMAND
