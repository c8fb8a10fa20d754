"""What a shell command line runs: its command lists, pipelines and the programs behind wrappers."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

_LIST_SEPARATORS = frozenset({";", "&&", "||", "&", "(", ")", ";;", "{", "}"})
_PIPES = frozenset({"|", "|&"})
_REDIRECTS = frozenset({">", ">>", "<", "<<", "<<<", ">&", "&>", "&>>", "<&", ">|", "<>"})
_STDOUT_REDIRECTS = frozenset({">", ">>", "&>", "&>>", ">|"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\+?=")
_DURATION = re.compile(r"^\d+(?:\.\d+)?[smhd]?$")
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "fish", "ash"})

# Wrappers run the command that follows them; the value is their options that take an argument.
_WRAPPERS: dict[str, frozenset[str]] = {
    "sudo": frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"}),
    "doas": frozenset({"-u", "-C"}),
    "nice": frozenset({"-n"}),
    "ionice": frozenset({"-c", "-n", "-p"}),
    "nohup": frozenset(),
    "time": frozenset({"-f", "-o"}),
    "command": frozenset(),
    "exec": frozenset({"-a"}),
    "builtin": frozenset(),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "unbuffer": frozenset(),
    "xvfb-run": frozenset({"-s", "-n", "-e", "-f"}),
    "env": frozenset({"-u", "-C", "-S"}),
    "watch": frozenset({"-n", "-d"}),
    "chronic": frozenset(),
    "caffeinate": frozenset(),
    "strace": frozenset({"-e", "-o", "-p", "-s"}),
    "ltrace": frozenset({"-e", "-o", "-p"}),
    "valgrind": frozenset(),
    "catchsegv": frozenset(),
}
# Runners whose subcommand runs a program: "uv run pytest", "npx eslint", "poetry run mypy".
_RUNNERS: dict[str, frozenset[str]] = {
    "uv": frozenset({"run"}),
    "uvx": frozenset({""}),
    "pipx": frozenset({"run"}),
    "poetry": frozenset({"run"}),
    "pipenv": frozenset({"run"}),
    "pdm": frozenset({"run"}),
    "hatch": frozenset({"run"}),
    "rye": frozenset({"run"}),
    "npx": frozenset({""}),
    "bunx": frozenset({""}),
    "pnpx": frozenset({""}),
    "pnpm": frozenset({"exec", "dlx"}),
    "yarn": frozenset({"dlx", "exec"}),
    "bundle": frozenset({"exec"}),
    "conda": frozenset({"run"}),
    "mamba": frozenset({"run"}),
    "micromamba": frozenset({"run"}),
    "nix": frozenset({"shell", "run", "develop"}),
}
_RUNNER_VALUE_OPTIONS = frozenset({"-n", "--name", "-p", "--prefix", "--with", "--python", "-c"})
_GIT_VALUE_OPTIONS = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace"})


@dataclass(frozen=True, slots=True)
class Invocation:
    """One program run by a command line, behind any wrappers, with its arguments."""

    program: str
    args: tuple[str, ...] = ()

    @property
    def subcommand(self) -> str:
        """The first non-option argument ('ls-files' in 'git -C x ls-files'), or ''."""
        skip = False
        for arg in self.args:
            if skip:
                skip = False
                continue
            if arg in _GIT_VALUE_OPTIONS:
                skip = True
                continue
            if not arg.startswith("-"):
                return arg.lower()
        return ""

    def has(self, *options: str) -> bool:
        """Whether any of ``options`` is among the arguments (also as ``--opt=value``)."""
        for arg in self.args:
            head = arg.split("=", 1)[0]
            if arg in options or head in options:
                return True
        return False


def program_name(token: str) -> str:
    """A program token reduced to its lower-case base name: '/usr/bin/RG.exe' -> 'rg'."""
    base = re.split(r"[\\/]", token)[-1].lower()
    for suffix in (".exe", ".cmd", ".bat", ".ps1"):
        if base.endswith(suffix) and len(base) > len(suffix):
            return base[: -len(suffix)]
    return base


def _tokens(command: str) -> list[str]:
    """Shell tokens of ``command``, separators split out; a naive split if the quoting is broken."""
    text = command.replace("\\\n", " ").replace("\n", " ; ")
    lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|<>()")
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError:
        return re.findall(r"&&|\|\||[;&|<>()]|[^\s;&|<>()]+", text)


def command_lists(command: str, *, depth: int = 0) -> list[list[Invocation]]:
    """The command lists of ``command`` in order, each a pipeline of invocations."""
    lists: list[list[Invocation]] = []
    silenced: list[list[Invocation]] = []  # pipelines whose output went to a file
    pipeline: list[Invocation] = []
    words: list[str] = []
    quiet = False
    tokens = _tokens(command)

    def flush_words() -> None:
        invocation = _unwrap(words, depth)
        words.clear()
        if isinstance(invocation, list):
            if pipeline:
                # "x | bash -c 'y | z'": the inner lists continue this pipeline.
                pipeline.extend(inv for inner in invocation for inv in inner)
            else:
                lists.extend(invocation)
        elif invocation is not None:
            pipeline.append(invocation)

    skip_next = False
    for token in tokens:
        if skip_next:
            skip_next = False
            continue
        if token in _REDIRECTS:
            skip_next = True
            if token in _STDOUT_REDIRECTS and not (words and words[-1] == "2"):
                quiet = True
            if words and words[-1] in ("1", "2"):
                words.pop()  # "2>" and "1>": a descriptor, not an argument
            continue
        if token in _PIPES:
            flush_words()
            quiet = False  # the output went on down the pipe
        elif token in _LIST_SEPARATORS:
            flush_words()
            if pipeline:
                (silenced if quiet else lists).append(pipeline)
                pipeline = []
            quiet = False
        else:
            words.append(token)
    flush_words()
    if pipeline:
        (silenced if quiet else lists).append(pipeline)
    # What was sent to a file printed nothing: the other lists made the output, if any did.
    return lists or silenced


def _unwrap(words: list[str], depth: int) -> Invocation | list[list[Invocation]] | None:
    """The program behind env assignments, wrappers, runners and ``bash -c``."""
    i = 0
    while i < len(words):
        word = words[i]
        if _ASSIGNMENT.match(word):
            i += 1
            continue
        name = program_name(word)
        rest = words[i + 1 :]
        if name in _WRAPPERS:
            i += 1 + _skip_options(rest, _WRAPPERS[name], env=name == "env")
            continue
        if name == "timeout":
            skip = _skip_options(rest, frozenset({"-s", "--signal", "-k", "--kill-after"}))
            if skip < len(rest) and _DURATION.match(rest[skip]):
                skip += 1
            i += 1 + skip
            continue
        if name == "xargs":
            skip = _skip_options(rest, frozenset({"-n", "-I", "-P", "-L", "-d", "-E", "-s", "-a"}))
            target = _unwrap(rest[skip:], depth)
            if isinstance(target, Invocation):
                return Invocation("xargs", (target.program, *target.args))
            return Invocation("xargs")
        if name in _SHELLS and depth < 3:
            script = _shell_script(rest)
            if script is not None:
                return command_lists(script, depth=depth + 1)
        if name in _RUNNERS:
            runner = _runner_target(name, rest)
            if runner is not None:
                i += 1 + runner
                continue
        if name.startswith("python") or name in {"py", "pypy", "pypy3"}:
            module = _python_module(rest)
            if module is not None:
                return Invocation(module[0], tuple(module[1]))
        return Invocation(name, tuple(rest))
    return None


def _skip_options(args: list[str], with_value: frozenset[str], *, env: bool = False) -> int:
    """How many leading ``args`` are options of a wrapper (and, for env, assignments)."""
    i = 0
    while i < len(args):
        arg = args[i]
        if env and _ASSIGNMENT.match(arg):
            i += 1
        elif arg == "--":
            return i + 1
        elif arg.startswith("-") and len(arg) > 1:
            i += 2 if arg in with_value else 1
        else:
            break
    return i


def _shell_script(args: list[str]) -> str | None:
    """The script of ``bash -c 'script'`` (also ``-lc``, ``-ec``), or None."""
    for j, arg in enumerate(args):
        if not arg.startswith("-"):
            return None
        if "c" in arg.lstrip("-") and not arg.startswith("--") and j + 1 < len(args):
            return args[j + 1]
    return None


def _runner_target(name: str, args: list[str]) -> int | None:
    """How many ``args`` to skip to reach the program a runner runs, or None if it runs none."""
    verbs = _RUNNERS[name]
    i = 0
    if "" not in verbs:
        if not args or args[0] not in verbs:
            return None
        i = 1
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in _RUNNER_VALUE_OPTIONS else 1
    if i < len(args) and args[i] == "--":
        i += 1
    return i if i < len(args) else None


def _python_module(args: list[str]) -> tuple[str, list[str]] | None:
    """``python -m pytest -x`` -> ('pytest', ['-x']); None when no module is run."""
    for j, arg in enumerate(args):
        if arg == "-m" and j + 1 < len(args):
            return args[j + 1].lower(), args[j + 2 :]
        if arg.startswith("-m") and len(arg) > 2:
            return arg[2:].lower(), args[j + 1 :]
        if not arg.startswith("-"):
            return None
    return None
