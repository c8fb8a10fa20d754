"""The tool kinds as the producer knows them: what tells each tool type apart.

One ``Hints`` per ``ToolType``: the agent tool names that are of it, the words in a tool name
that point at it, the programs of a shell command that print it (and the subcommands of
programs that print several kinds), and the content tests that recognize it when neither the
name nor the command tells (a decisive test's verdict stands; the others are features the
fitted classifier weighs, ``tersify.classify.learned``). The worker's part of each kind (its
prompt, its shrink) registers against the same names (``tersify.worker.shrink.kinds``);
``complete`` is the check both sides run at import, so a kind missing a part fails the import,
not a job.

Adding a tool type: a member of ``ToolType`` (``tersify.contract``), its ``Hints`` here, its
``ToolKind`` in the worker.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from tersify.classify import sniff as looks
from tersify.contract import ToolType
from tersify.errors import RegistryError


def words(text: str) -> frozenset[str]:
    """The space-separated words of ``text``."""
    return frozenset(text.split())


@dataclass(frozen=True, slots=True)
class Sniff:
    """A content test and its rank: the tests of all kinds run in rank order, first true wins.

    A ``decisive`` test's verdict stands when it is the first to hold; any other test's verdict
    is one feature the fitted classifier weighs (``tersify.classify.learned``). Decisive are
    the tests of kinds the corpus's ``tune/`` part holds too few cases of to teach a fit.
    """

    rank: int
    test: looks.SniffTest
    decisive: bool = False


@dataclass(frozen=True, slots=True)
class NameWords:
    """Words that point at a kind when a tool's name holds one; lower ranks are tried first."""

    rank: int
    words: frozenset[str]


@dataclass(frozen=True, slots=True)
class Hints:
    """Everything that tells the producer an output is of ``tool_type``."""

    tool_type: ToolType
    tool_names: frozenset[str]
    name_words: tuple[NameWords, ...]
    programs: frozenset[str]
    content: tuple[Sniff, ...]
    subcommands: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """Per program that prints several kinds, its subcommands that print this one."""


def complete(registry: Mapping[ToolType, object], part: str) -> None:
    """Raise ``RegistryError`` unless ``registry`` holds one ``part`` for every tool type."""
    missing = [t.value for t in ToolType if t not in registry]
    if missing:
        raise RegistryError(f"tool kinds without their {part}: {', '.join(missing)}")
    wrong = [t.value for t, entry in registry.items() if getattr(entry, "tool_type", t) is not t]
    if wrong:
        raise RegistryError(f"{part} registered under another kind's name: {', '.join(wrong)}")


def _registry(*hints: Hints) -> dict[ToolType, Hints]:
    found = {h.tool_type: h for h in hints}
    if len(found) != len(hints):
        raise RegistryError("a tool kind's hints are registered twice")
    complete(found, "hints")
    return found


HINTS = _registry(
    Hints(
        ToolType.FILE_CONTENT,
        tool_names=words(
            "read cat view read-file file-read view-file open-file open read-text-file "
            "show-file read-multiple-files get-file-contents get-file notebook-read "
            "read-notebook head tail read-resource fs-read file-view bat type"
        ),
        name_words=(
            NameWords(3, words("read cat view open")),
            NameWords(5, words("file content contents")),
        ),
        programs=words(
            "cat bat batcat head tail less more nl tac zcat gzcat bzcat xzcat zstdcat zless "
            "get-content gc xxd hexdump od strings sed view"
        ),
        subcommands={"git": words("cat-file")},
        content=(Sniff(50, looks.numbered_file), Sniff(120, looks.source_code)),
    ),
    Hints(
        ToolType.SEARCH_RESULTS,
        tool_names=words(
            "grep rg ripgrep search ag ack git-grep search-files grep-search code-search "
            "search-code search-in-files find-in-files codebase-search semantic-search "
            "file-grep search-text text-search"
        ),
        name_words=(NameWords(2, words("grep rg ripgrep search ag ack")),),
        programs=words(
            "grep egrep fgrep zgrep rg ripgrep ag ack ack-grep ugrep pt sift findstr "
            "select-string sls ast-grep sg semgrep"
        ),
        subcommands={"git": words("grep")},
        content=(
            Sniff(60, looks.symbol_index, decisive=True),
            Sniff(70, looks.search_hits, decisive=True),
        ),
    ),
    Hints(
        ToolType.DIRECTORY_LISTING,
        tool_names=words(
            "ls find fd tree list list-dir list-directory list-files list-directory-contents "
            "directory-tree glob file-search find-files find-file dir list-allowed-directories "
            "ls-files git-ls-files list-folder folder-list"
        ),
        name_words=(
            NameWords(4, words("ls list dir directory directories folder tree glob listing files")),
        ),
        programs=words(
            "ls ll la dir vdir find fd fdfind tree exa eza lsd du locate plocate mlocate "
            "get-childitem gci zipinfo"
        ),
        subcommands={"git": words("ls-files ls-tree")},
        content=(
            Sniff(80, looks.long_listing, decisive=True),
            Sniff(90, looks.path_list, decisive=True),
        ),
    ),
    Hints(
        ToolType.COMMAND_OUTPUT,
        tool_names=frozenset(),  # shells: their command decides
        name_words=(),
        programs=words(
            "pytest py.test tox nox make cmake ninja gcc g++ clang clang++ cc rustc tsc eslint "
            "prettier ruff mypy pyright pylint flake8 black isort mvn gradle javac jest vitest "
            "mocha unittest ctest meson bazel"
        ),
        content=(
            Sniff(20, looks.run_report),
            Sniff(25, looks.log_lines),
            Sniff(30, looks.diagnostics),
            Sniff(40, looks.unified_diff),
            Sniff(140, looks.failure_words),
        ),
    ),
    Hints(
        ToolType.STRUCTURED_DATA,
        tool_names=words(
            "nix-search gh jq jc yq json sql query database db api github gitlab jira linear "
            "kubectl aws gcloud az psql sqlite mysql pip-list npm-list package-info list-packages"
        ),
        name_words=(
            NameWords(7, words("json sql query db database api table tables issue issues pr repo")),
        ),
        programs=words(
            "jq jc yq gron json_pp json.tool fx xq mlr sqlite3 psql mysql duckdb gh aws gcloud "
            "az env printenv nix-search dpkg-query rpm lsblk"
        ),
        subcommands={
            "pip": words("list freeze show inspect index"),
            "npm": words("ls list view info outdated"),
            "pnpm": words("ls list outdated"),
            "yarn": words("list info outdated"),
            "cargo": words("tree metadata search"),
            "go": words("list env"),
            "docker": words("ps images inspect volume network"),
            "podman": words("ps images inspect"),
            "kubectl": words("get describe top api-resources"),
            "helm": words("list ls show get"),
            "apt": words("list show policy search"),
            "apt-cache": words("policy show search madison"),
            "brew": words("list info search"),
            "conda": words("list info search"),
            "poetry": words("show"),
            "uv": words("tree"),
            "nix": words("search eval"),
            "terraform": words("output show state"),
            "systemctl": words("show list-units"),
        },
        content=(
            Sniff(10, looks.json_document, decisive=True),
            Sniff(15, looks.delimited_table, decisive=True),
            Sniff(110, looks.yaml_lines),
        ),
    ),
    Hints(
        ToolType.WEB_CONTENT,
        tool_names=words(
            "web-search web-fetch fetch browse browser url fetch-url read-url url-fetch "
            "http-get scrape crawl search-web google-search brave-search bing-search "
            "tavily-search tavily-extract firecrawl-scrape web-browse webpage wikipedia docs man"
        ),
        name_words=(
            NameWords(1, words("web url browse browser scrape crawl webpage wiki wikipedia")),
        ),
        programs=words("w3m lynx links elinks html2text pandoc man info pydoc tldr"),
        content=(Sniff(100, looks.html, decisive=True), Sniff(130, looks.prose)),
    ),
)


def by_name(table: Iterable[tuple[ToolType, frozenset[str]]], what: str) -> dict[str, ToolType]:
    """Each name of ``table`` (kind, names) mapped to its kind; a name of two kinds is refused."""
    found: dict[str, ToolType] = {}
    for tool_type, names in table:
        for name in names:
            if found.setdefault(name, tool_type) is not tool_type:
                raise RegistryError(f"{what} {name!r} is given to two tool kinds")
    return found


def _ranked(hints: Iterable[Hints]) -> tuple[tuple[Sniff, ToolType], ...]:
    tests = sorted(((s, h.tool_type) for h in hints for s in h.content), key=lambda p: p[0].rank)
    ranks = [s.rank for s, _ in tests]
    if len(set(ranks)) != len(ranks):
        raise RegistryError("two content tests share a rank: their order would be arbitrary")
    return tuple(tests)


CONTENT_TESTS = _ranked(HINTS.values())
"""Every kind's content tests, in rank order."""


def ranked_verdict(
    sample: looks.Sample, held: dict[looks.SniffTest, bool] | None = None
) -> tuple[ToolType, bool] | None:
    """The tool type of the first content test that holds for ``sample``, in rank order, and
    whether that test is decisive; None when none holds. ``held`` keeps each answer asked."""
    if not sample.text.strip():
        return None
    for sniffed, tool_type in CONTENT_TESTS:
        found = sniffed.test(sample)
        if held is not None:
            held[sniffed.test] = found
        if found:
            return tool_type, sniffed.decisive
    return None
