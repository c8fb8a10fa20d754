"""The ``tersify`` command line: thin wrappers over the producer, the gate and the worker.

One module per subcommand, registered in ``commands.COMMANDS``: each has ``add_parser(subparsers)
-> None`` and sets ``run`` (a ``Command``) on its parser. Only the module of the command being
run is imported, so every command starts as fast as the little it needs allows (the others are
listed by ``--help`` from the registry alone). The top layer: it may import anything.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import NoReturn

from tersify.settings import Settings, debug_requested
from tersify.worker.cli.commands import COMMANDS
from tersify.worker.cli.failures import ExitCode, end

Command = Callable[[argparse.Namespace, Settings], int]

DESCRIPTION = (
    "tersify: summarize large tool outputs for LLM agents on a queue of workers. "
    "Every command reads its configuration from TERSIFY_* variables (docs/CONFIGURATION.md)."
)
EPILOG = (
    "exit status: 0 done; 1 the answer is no (not found, still closed, not alive, a problem "
    "found); 2 a mistake in the command, its input or the configuration; 3 not ready yet "
    "(queued, running, or the wait timed out); 4 a service out of reach (Redis, a model API); "
    "70 an unexpected error (--debug shows its traceback); 130 interrupted; 141 stdout closed."
)


class Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line that points at ``--help`` (exit 2)."""

    def error(self, message: str) -> NoReturn:
        """Print the mistake in one line and exit 2."""
        print(f"{self.prog}: {message} (see {self.prog} --help)", file=sys.stderr)
        raise SystemExit(ExitCode.USAGE)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``tersify`` console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _parser(_chosen(argv))
    args = parser.parse_args(argv)
    prog = f"tersify {args.command_name}" if getattr(args, "command_name", None) else "tersify"
    debug = bool(args.debug) or debug_requested()
    redis_url = "the configured Redis"
    try:
        settings = Settings()
        redis_url = settings.redis_url
        command: Command = args.run
        return command(args, settings)
    except SystemExit:
        raise
    except ModuleNotFoundError as exc:  # a base (producer-only) install runs a worker command
        hint = _install_hint(getattr(args, "command_name", None), str(exc.name))
        print(f"{prog}: {hint}", file=sys.stderr)
        return ExitCode.USAGE
    except BaseException as exc:
        return end(prog, exc, redis_url, debug=debug)


def _chosen(argv: Sequence[str]) -> str | None:
    """The command ``argv`` runs: its first word that is not an option."""
    return next((word for word in argv if not word.startswith("-")), None)


def _parser(chosen: str | None = None) -> argparse.ArgumentParser:
    """The command line, with the full parser of ``chosen`` (its module imported) and every other
    command listed by name and help only."""
    parser: argparse.ArgumentParser = Parser(prog="tersify", description=DESCRIPTION, epilog=EPILOG)
    parser.add_argument("--version", action="version", version=f"tersify {_version()}")
    parser.add_argument(
        "--debug", action="store_true", help="show the traceback of an error (TERSIFY_DEBUG)"
    )
    sub = parser.add_subparsers(required=True, metavar="COMMAND")
    home = COMMANDS[chosen][0] if chosen in COMMANDS else None
    for name, (module_name, line) in COMMANDS.items():
        if module_name != home:
            sub.add_parser(name, help=line, add_help=False)  # listed; never parsed
        elif name == chosen:  # its module builds its parser (and its siblings': submit, result)
            try:
                importlib.import_module(f"tersify.worker.cli.{module_name}").add_parser(sub)
            except ModuleNotFoundError as exc:  # a base (producer-only) install lacks its extra
                _not_installed(sub, name, str(exc.name))
    for command, child in sub.choices.items():
        child.set_defaults(command_name=command)
    return parser


def _version() -> str:
    try:
        return version("tersify")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "(not installed)"


# The extra each serving command needs beyond the base install; every other command: worker.
_EXTRAS = {"api": "api", "mcp-proxy": "mcp", "gateway": "gateway"}


def _install_hint(command: str | None, missing: str) -> str:
    """What a base install running ``command`` lacks and how to add it: there is no package
    index release, so the extra comes from a checkout or a wheel built from one (README)."""
    extra = _EXTRAS.get(command or "", "worker")
    release = _version() if _version()[:1].isdigit() else "VERSION"
    wheel = f"dist/tersify-{release}-py3-none-any.whl"
    return (
        f"needs {missing}, from the {extra} extra: pip install -e '.[{extra}]' in a tersify "
        f"checkout, or pip install '{wheel}[{extra}]' with a wheel built there (README: Install)"
    )


def _not_installed(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], command: str, missing: str
) -> None:
    hint = _install_hint(command, missing)
    p = sub.add_parser(command, help=f"(not installed: {hint})", add_help=False)
    p.add_argument("rest", nargs=argparse.REMAINDER)

    def refuse(args: argparse.Namespace, settings: Settings) -> int:
        print(f"tersify {command}: {hint}", file=sys.stderr)
        return ExitCode.USAGE

    p.set_defaults(run=refuse)
