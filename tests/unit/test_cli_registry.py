"""The command registry: each command is built by the module it names, and only that one runs."""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys

from tersify.worker.cli import _parser
from tersify.worker.cli.commands import COMMANDS


def test_each_module_builds_exactly_the_commands_the_registry_gives_it() -> None:
    for module_name in {module for module, _ in COMMANDS.values()}:
        sub = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(f"tersify.worker.cli.{module_name}").add_parser(sub)
        named = {name for name, (module, _) in COMMANDS.items() if module == module_name}
        assert set(sub.choices) == named, module_name
        listed = {action.dest: action.help for action in sub._choices_actions}
        assert listed == {name: COMMANDS[name][1] for name in named}


def test_every_command_parses_its_own_arguments_when_it_is_the_one_run() -> None:
    args = _parser("output").parse_args(["output", "a" * 32, "--grep", "x"])
    assert (args.command_name, args.grep) == ("output", "x")
    args = _parser("result").parse_args(["result", "job-1", "--wait", "3"])
    assert (args.command_name, args.wait) == ("result", 3.0)


def test_a_command_that_is_not_run_has_its_module_left_unimported() -> None:
    code = (
        "import sys; from tersify.worker.cli import main\n"
        "try: main(['--version'])\n"
        "except SystemExit: pass\n"
        "print(sorted(m for m in sys.modules if m.startswith(('fastapi', 'tersify.worker.api'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip().endswith("[]"), done.stdout
