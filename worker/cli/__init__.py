"""The ``tersify`` command line: thin wrappers over the producer, the gate and the worker.

One module per subcommand, registered in ``COMMAND_MODULES``; the top layer, it may import
anything.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence

from tersify.errors import ResultTimeoutError, TersifyError
from tersify.settings import Settings

Command = Callable[[argparse.Namespace, Settings], int]

# One module per subcommand: each has ``add_parser(subparsers) -> None`` and sets ``run`` (a
# ``Command``) on its parser. Keep the list sorted. Modules are imported only to build the parser,
# and import what their command needs inside it, so ``tersify --help`` stays fast.
COMMAND_MODULES: tuple[str, ...] = (
    "tersify.worker.cli.api",
    "tersify.worker.cli.cancel",
    "tersify.worker.cli.compact",
    "tersify.worker.cli.deadletters",
    "tersify.worker.cli.demo",
    "tersify.worker.cli.eval",
    "tersify.worker.cli.forget",
    "tersify.worker.cli.gate",
    "tersify.worker.cli.gateway",
    "tersify.worker.cli.repair",
    "tersify.worker.cli.mcp_proxy",
    "tersify.worker.cli.output",
    "tersify.worker.cli.reprocess",
    "tersify.worker.cli.status",
    "tersify.worker.cli.submit",
    "tersify.worker.cli.worker",
)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``tersify`` console script."""
    parser = _parser()
    args = parser.parse_args(argv)
    settings = Settings()
    command: Command = args.run
    try:
        return command(args, settings)
    except ResultTimeoutError as exc:
        print(f"tersify: {exc}", file=sys.stderr)
        return 3
    except TersifyError as exc:
        print(f"tersify: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    except ModuleNotFoundError as exc:  # a base (producer-only) install runs a worker command
        print(f"tersify: {_install_hint(str(exc.name))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tersify", description=(__doc__ or "").split("\n\n")[0])
    sub = parser.add_subparsers(required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:  # a base (producer-only) install lacks its extra
            _not_installed(sub, name, str(exc.name))
            continue
        module.add_parser(sub)
    return parser


def _install_hint(missing: str) -> str:
    return f"needs {missing}: pip install 'tersify[worker,api,mcp,gateway]'"


def _not_installed(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], name: str, missing: str
) -> None:
    command = name.rsplit(".", 1)[-1].replace("_", "-")
    hint = _install_hint(missing)
    p = sub.add_parser(command, help=f"(not installed: {hint})", add_help=False)
    p.add_argument("rest", nargs=argparse.REMAINDER)

    def refuse(args: argparse.Namespace, settings: Settings) -> int:
        print(f"tersify {command}: {hint}", file=sys.stderr)
        return 1

    p.set_defaults(run=refuse)
