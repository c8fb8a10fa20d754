"""``tersify doctor``: check the configuration from the environment and print what was found.

The same checks guard ``tersify worker``, ``tersify api`` and ``tersify mcp-proxy`` at start
(``preflight``): a failure refuses to start with one line, a warning is logged.
"""

from __future__ import annotations

import argparse
import json
import sys

import structlog

from tersify.settings import Settings
from tersify.worker.cli.commands import summary
from tersify.worker.cli.failures import ExitCode, Failure
from tersify.worker.model.providers import Finding, Level
from tersify.worker.preflight.checks import Role, run

_log = structlog.get_logger("tersify.preflight")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``doctor`` subcommand."""
    p = sub.add_parser(
        "doctor",
        help=summary("doctor"),
        description="Run the checks a worker, the API and the MCP proxy run at start, and print "
        "each; exit 1 when one would refuse to start.",
    )
    p.add_argument("--json", action="store_true", help="one JSON object per check")
    p.set_defaults(run=_doctor)


def _doctor(args: argparse.Namespace, settings: Settings) -> int:
    from tersify.worker.runtime.logconfig import configure_logging

    configure_logging(settings)  # on stderr: stdout holds the findings
    found = run(settings, Role.DOCTOR)
    if args.json:
        for f in found:
            print(json.dumps({"check": f.check, "level": f.level.value, "detail": f.detail}))
    else:
        width = max(len(f.check) for f in found)
        for f in found:
            print(f"{f.level.value:<4}  {f.check:<{width}}  {f.detail}")
        failed = sum(f.level is Level.FAIL for f in found)
        warned = sum(f.level is Level.WARN for f in found)
        print(f"{len(found)} checks: {failed} failed, {warned} warned", file=sys.stderr)
    return ExitCode.NO if any(f.level is Level.FAIL for f in found) else ExitCode.OK


def preflight(settings: Settings, role: Role) -> list[Finding]:
    """Run ``role``'s start-up checks: log each warning; refuse to start on a failure."""
    found = run(settings, role)
    failed = [f for f in found if f.level is Level.FAIL]
    if failed:
        raise Failure("; ".join(f.detail for f in failed), ExitCode.USAGE)
    for f in found:
        if f.level is Level.WARN:
            _log.warning("startup_check_warned", check=f.check, detail=f.detail)
    return found
