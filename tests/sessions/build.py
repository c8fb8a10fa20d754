"""Write this folder's two sample agent sessions around real tool outputs of ``tests/corpus``.

Every tool result in them is a corpus case's output exactly as the program printed it on this
project's machine (``tests/corpus/README.md``), given to a call whose arguments are that case's
``command``. Written here: the users' requests and the agents' words, the ids, the clock and
token counts, and the Edit tool's confirmation (Claude Code's own text about an edit it made,
computed from the file it read). The same files come out on every run:

    .venv/bin/python tests/sessions/build.py [--out DIR]
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import random
import re
import shlex
import sys
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tersify.worker.quality.corpus import Case, load_case

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parent / "corpus"
NAMESPACE = uuid.UUID("6f1c0b52-3a57-4e0e-9b1d-2c4f8d7e9a10")  # seeds every id below

CLAUDE_SESSION = str(uuid.uuid5(NAMESPACE, "claude-code"))
CLAUDE_MODEL = "claude-opus-4-5-20251101"
CLAUDE_VERSION = "2.0.55"
PROJECT = "/tmp/cw/proj/ledger"
SHELL_SESSION = "build-machine-audit"
SHELL_MODEL = "openai/gpt-5-mini-2025-08-07"
_CAT_N = re.compile(r"^ *\d+\t", re.MULTILINE)


def case(name: str) -> Case:
    """The corpus case ``name`` (of either split), read as ``tersify eval`` reads it."""
    (path,) = CORPUS.glob(f"*/{name}.json")
    found = load_case(path)
    if not found.command:
        raise ValueError(f"{name}: the case records no command")
    return found


def command(of: Case) -> str:
    """The command a case recorded (``case`` makes sure there is one)."""
    return str(of.command)


def _token(kind: str, number: int, length: int = 24) -> str:
    """A stable id of ``length`` letters and digits, as the agents' own ids look."""
    digest = hashlib.sha256(f"{NAMESPACE}:{kind}:{number}".encode()).hexdigest()
    alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz123456789"
    value = int(digest, 16)
    return "".join(alphabet[(value >> (6 * i)) % len(alphabet)] for i in range(length))


@dataclass
class ClaudeLog:
    """A Claude Code project JSONL being written line by line, its thread and clock kept."""

    lines: list[dict[str, Any]] = field(default_factory=list)
    parent: str | None = None
    clock: datetime = datetime(2026, 11, 20, 10, 2, 11, 408000, tzinfo=UTC)
    context: int = 14_310  # tokens of the system prompt and tool definitions
    cached: int = 0
    calls: int = 0
    tools: int = 0
    rng: random.Random = field(default_factory=lambda: random.Random(20261120))

    def _envelope(self, kind: str, pause: tuple[float, float]) -> dict[str, Any]:
        self.clock += timedelta(milliseconds=int(self.rng.uniform(*pause) * 1000))
        line_id = str(uuid.uuid5(NAMESPACE, f"line-{len(self.lines)}"))
        millis = self.clock.microsecond // 1000
        envelope = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": PROJECT,
            "sessionId": CLAUDE_SESSION,
            "version": CLAUDE_VERSION,
            "gitBranch": "main",
            "type": kind,
            "uuid": line_id,
            "timestamp": self.clock.strftime("%Y-%m-%dT%H:%M:%S.") + f"{millis:03d}Z",
        }
        self.parent = line_id
        return envelope

    def prompt(self, words: str) -> None:
        """The user types a request; a file-history snapshot line is logged just before it."""
        entry = self._envelope("user", (25.0, 90.0))
        self.lines.append(
            {
                "type": "file-history-snapshot",
                "messageId": entry["uuid"],
                "snapshot": {
                    "messageId": entry["uuid"],
                    "trackedFileBackups": {},
                    "timestamp": entry["timestamp"],
                },
                "isSnapshotUpdate": False,
            }
        )
        self.lines.append({**entry, "message": {"role": "user", "content": words}})
        self.context += len(words) // 4

    def use(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """A ``tool_use`` block with the next stable id."""
        self.tools += 1
        tool_id = f"toolu_01{_token('tool', self.tools)}"
        return {"type": "tool_use", "id": tool_id, "name": name, "input": arguments}

    def respond(self, blocks: list[dict[str, Any]], stop: str) -> None:
        """One API response, logged as one line per content block, all with its message id."""
        self.calls += 1
        message_id = f"msg_01{_token('msg', self.calls)}"
        request_id = f"req_011C{_token('req', self.calls)}"
        out_tokens = sum(len(json.dumps(b)) for b in blocks) // 4 + self.rng.randint(8, 60)
        usage = {
            "input_tokens": self.rng.randint(3, 9),
            "cache_creation_input_tokens": self.context - self.cached,
            "cache_read_input_tokens": self.cached,
            "output_tokens": out_tokens,
            "service_tier": "standard",
        }
        self.cached, self.context = self.context, self.context + out_tokens
        for index, block in enumerate(blocks):
            message = {
                "model": CLAUDE_MODEL,
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "content": [block],
                "stop_reason": stop if index == len(blocks) - 1 else None,
                "stop_sequence": None,
                "usage": usage,
            }
            entry = self._envelope("assistant", (1.2, 6.0) if index == 0 else (0.3, 2.5))
            self.lines.append({**entry, "message": message, "requestId": request_id})

    def result(self, use: dict[str, Any], content: str | list[dict[str, str]], detail: Any) -> None:
        """A tool's result in a user line; ``detail`` is what is logged as ``toolUseResult``."""
        block = {"tool_use_id": use["id"], "type": "tool_result", "content": content}
        entry = self._envelope("user", (0.2, 4.0))
        message = {"role": "user", "content": [block]}
        self.lines.append({**entry, "message": message, "toolUseResult": detail})
        self.context += len(json.dumps(content)) // 4


def text(words: str) -> dict[str, str]:
    """A ``text`` block."""
    return {"type": "text", "text": words}


def bash_detail(output: str) -> dict[str, Any]:
    """Claude Code's ``toolUseResult`` of a Bash call."""
    return {"stdout": output, "stderr": "", "interrupted": False, "isImage": False}


def read_lines(numbered: str, offset: int, limit: int) -> str:
    """What Read with ``offset`` and ``limit`` returns: those lines of the file's ``cat -n``."""
    return "".join(numbered.splitlines(keepends=True)[offset - 1 : offset - 1 + limit])


def read_detail(path: str, numbered: str, offset: int, limit: int) -> dict[str, Any]:
    """Claude Code's ``toolUseResult`` of a Read: the lines read, without their numbers."""
    body = _CAT_N.sub("", read_lines(numbered, offset, limit))
    file = {"filePath": path, "content": body, "numLines": len(body.splitlines())}
    return {
        "type": "text",
        "file": {**file, "startLine": offset, "totalLines": len(numbered.splitlines())},
    }


def grep_detail(mode: str, output: str) -> dict[str, Any]:
    """Claude Code's ``toolUseResult`` of a Grep call in ``content`` or ``files_with_matches``."""
    lines = output.splitlines()
    if mode == "files_with_matches":
        return {"mode": mode, "filenames": lines, "numFiles": len(lines)}
    return {"mode": mode, "numFiles": 0, "filenames": [], "content": output, "numLines": len(lines)}


def edit(path: str, numbered: str, old: str, new: str) -> tuple[str, dict[str, Any]]:
    """The Edit tool's answer to replacing ``old`` (once) by ``new``, and its ``toolUseResult``."""
    original = _CAT_N.sub("", numbered)
    if original.count(old) != 1:
        raise ValueError(f"the text to replace does not occur exactly once in {path}")
    edited = original.replace(old, new)
    before, after = original.splitlines(), edited.splitlines()
    first = original[: original.index(old)].count("\n")
    start, stop = max(first - 4, 0), min(first + new.count("\n") + 5, len(after))
    snippet = "\n".join(f"{n + 1:6d}\t{after[n]}" for n in range(start, stop))
    answer = (
        f"The file {path} has been updated. Here's the result of running `cat -n` on a snippet"
        f" of the edited file:\n{snippet}"
    )
    detail = {
        "filePath": path,
        "oldString": old,
        "newString": new,
        "originalFile": original,
        "structuredPatch": _hunks(before, after),
        "userModified": False,
        "replaceAll": False,
    }
    return answer, detail


def _hunks(before: list[str], after: list[str]) -> list[dict[str, Any]]:
    header = re.compile(r"^@@ -(\d+),(\d+) \+(\d+),(\d+) @@")
    hunks: list[dict[str, Any]] = []
    for line in difflib.unified_diff(before, after, n=3, lineterm=""):
        if found := header.match(line):
            a, b, c, d = (int(g) for g in found.groups())
            hunks.append({"oldStart": a, "oldLines": b, "newStart": c, "newLines": d, "lines": []})
        elif hunks:
            hunks[-1]["lines"].append(line)
    return hunks


def claude_code_session() -> list[dict[str, Any]]:
    """A Claude Code session in a Python project: four requests; Bash, Read, Edit, Grep, MCP."""
    log = ClaudeLog()
    _failing_tests(log)
    _debug_print(log)
    _searches(log)
    _c_headers(log)
    return log.lines


def _failing_tests(log: ClaudeLog) -> None:
    tests = case("co_pytest_ledger_durations")
    log.prompt("The tests fail since my refactor. What's failing, and which test is the slow one?")
    run = log.use("Bash", {"command": command(tests), "description": "Run the tests, slowest 12"})
    log.respond([text("I'll run the suite with the slowest tests listed."), run], "tool_use")
    log.result(run, tests.output, bash_detail(tests.output))
    answer = (
        "4 failed, 893 passed:\n"
        '- `test_load_quoted_comma`: `load_rows` splits `"Wayne Enterprises, Inc."` on its'
        " comma (`ledger/csvio.py:15`, 4 fields for 3 columns): the parser ignores quotes.\n"
        "- `test_round_cents_bankers[0.125-0.12]` and `[1.005-1.00]`: `round_cents` rounds half"
        " up (0.13, 1.01) where the tests expect half to even.\n"
        "- `test_split_evenly_sums[total2-3]`: splitting -100.00 three ways sums to -99.98; the"
        " remainder is lost for negative totals.\n\n"
        "The slow one is `tests/test_reports.py::test_year_of_due_dates` at 0.81 s; the next,"
        " `test_bulk_conversion`, takes 0.06 s and everything else under 5 ms."
    )
    log.respond([text(answer)], "end_turn")


def _debug_print(log: ClaudeLog) -> None:
    packages, source = case("sd_pip_list_verbose_table"), case("fc_read_rich_console_py")
    log.prompt(
        "`ledger report` prints garbled tables in CI. Add a temporary debug print to rich's"
        " Console.__init__ in the venv (rich/console.py, the class starts around line 580)"
        " showing the width, colour system and terminal detection it ends up with. I'll take it"
        " out after."
    )
    listing = log.use("Bash", {"command": command(packages), "description": "List the packages"})
    log.respond([text("First, which rich the venv has."), listing], "tool_use")
    log.result(listing, packages.output, bash_detail(packages.output))
    path, offset, limit = command(source), 581, 175
    read = log.use("Read", {"file_path": path, "offset": offset, "limit": limit})
    log.respond([text("rich 15.0.0. Reading `Console.__init__`."), read], "tool_use")
    lines = read_lines(source.output, offset, limit)
    log.result(read, lines, read_detail(path, source.output, offset, limit))
    old = "        self._live_stack: List[Live] = []\n        self._is_alt_screen = False\n"
    new = old + (
        "        print(  # DEBUG(ledger report): remove once the CI tables are fixed\n"
        '            f"rich console: width={self.width} color_system={self._color_system!r}"\n'
        '            f" is_terminal={self.is_terminal} dumb={self.is_dumb_terminal}",\n'
        "            file=sys.stderr,\n"
        "        )\n"
    )
    change = log.use("Edit", {"file_path": path, "old_string": old, "new_string": new})
    why = (
        "Width, colour system and the terminal checks are all settled by the end of `__init__`"
        " (line 751). I'll print them there, to stderr so the tables themselves stay clean."
    )
    log.respond([text(why), change], "tool_use")
    answer, detail = edit(path, source.output, old, new)
    log.result(change, answer, detail)
    done = (
        "Added at `rich/console.py:752`: every `Console()` now prints `rich console: width=…"
        " color_system=… is_terminal=… dumb=…` to stderr. The width comes from `COLUMNS` when"
        " it is set (line 685), so if CI shows `is_terminal=False` with a narrow width, setting"
        " `COLUMNS` in the CI job is the first thing to try."
    )
    log.respond([text(done)], "end_turn")


def _searches(log: ClaudeLog) -> None:
    files, hits = case("sr_rg_files_with_asyncio"), case("sr_grep_rn_csrf_django")
    log.prompt(
        "Two questions for the Python 3.12 move and the security review: which venv packages"
        " import asyncio directly, and where does Django handle CSRF?"
    )
    site = "/tmp/cw/venv/lib/python3.11/site-packages"
    users = log.use(
        "Grep", {"pattern": "import asyncio", "path": site, "output_mode": "files_with_matches"}
    )
    arguments = {"pattern": "csrf", "path": f"{site}/django", "glob": "*.{py,html}"}
    csrf = log.use("Grep", {**arguments, "output_mode": "content", "-n": True})
    log.respond([text("Searching for both at once."), users, csrf], "tool_use")
    log.result(users, files.output, grep_detail("files_with_matches", files.output))
    log.result(csrf, hits.output, grep_detail("content", hits.output))
    answer = (
        "asyncio: 42 files, in redis (17), sqlalchemy (10), asgiref (5), django (4), anyio (3),"
        " and one each in jinja2, httpx and typing_extensions.\n\n"
        "CSRF: the middleware in `django/middleware/csrf.py` (the token comparison is"
        " `_does_token_match`, line 143); a rejected request goes to `CSRF_FAILURE_VIEW`,"
        " `django.views.csrf.csrf_failure` by default (`django/conf/global_settings.py:567`)."
    )
    log.respond([text(answer)], "end_turn")


def _c_headers(log: ClaudeLog) -> None:
    header, slots = case("fc_cat_python_object_h"), case("sr_rg_tp_arrow_include")
    log.prompt(
        "For the C extension: in 3.11's headers, is Py_INCREF a macro or an inline function, and"
        " which headers reach into type slots (->tp_) directly? The filesystem MCP server can"
        " read /usr/include."
    )
    path = shlex.split(command(header))[-1]
    read = log.use("mcp__filesystem__read_text_file", {"path": path})
    include = shlex.split(command(slots))[-1]
    grep = log.use(
        "Grep", {"pattern": "->tp_", "path": include, "output_mode": "content", "-n": True}
    )
    log.respond([text("Reading object.h and searching the headers."), read, grep], "tool_use")
    blocks = [{"type": "text", "text": header.output}]
    log.result(read, blocks, blocks)
    log.result(grep, slots.output, grep_detail("content", slots.output))
    answer = (
        "Both: `Py_INCREF` is a `static inline` function in `object.h`, and unless the limited"
        " API of 3.11 or later is asked for, a macro of the same name wraps it to cast its"
        " argument (`_PyObject_CAST`). Type slots are read directly in"
        " `internal/pycore_object.h` (9 places), `cpython/objimpl.h` (3), and once each in"
        " `object.h`, `cpython/abstract.h`, `internal/pycore_abstract.h`,"
        " `internal/pycore_call.h` and `internal/pycore_typeobject.h`."
    )
    log.respond([text(answer)], "end_turn")


SHELL_SYSTEM = (
    "You are an agent working on a Debian 12 build machine through one tool, `bash`: it runs a"
    " command in a new shell and returns what it printed (stdout and stderr together). Say what"
    " you are checking and why, then call the tool; run one command per step. When you have"
    " everything the task asks for, answer with the report and call no tool."
)
SHELL_TASK = (
    "Before we upgrade this build machine, write a short status report: the Python packages in"
    " /tmp/cw/venv; which tests fail in the projects under /tmp/cw/proj and /tmp/cw/rs, and"
    " where; what clippy's pedantic lints flag in ringbuf; the PostgreSQL 15 packages, and any"
    " security fix in their changelog that needs a manual step; where Debian's Python 3.11 keeps"
    " its C extension modules; which venv packages use asyncio directly (we are moving to 3.12);"
    " and what git's release notes here say about safe.directory (CI checks out as another user)."
)
# (what the agent says before the call, the corpus case whose command it runs)
SHELL_STEPS = (
    ("First, the packages in the venv.", "sd_pip_freeze_venv"),
    (
        "57 packages, pytest 9.2.0 among them. Now the ledger project's tests, with the slowest"
        " ones listed.",
        "co_pytest_ledger_durations",
    ),
    (
        "Ledger: 4 failed, 893 passed (CSV quoting, rounding of half cents, a split that loses"
        " cents). textkit uses unittest; running it.",
        "co_unittest_textkit_cjk",
    ),
    (
        "textkit: two failures on fullwidth characters. Next the Rust crate ringbuf.",
        "co_cargo_test_ringbuf",
    ),
    (
        "ringbuf: 3 failed, 43 passed, 1 ignored; get() indexes out of bounds at src/lib.rs:58."
        " Now clippy with the pedantic lints.",
        "co_cargo_clippy_ringbuf",
    ),
    ("Now the PostgreSQL 15 packages the archive offers.", "sd_apt_cache_show_postgresql"),
    (
        "15.20-0+deb12u1 from the security pool. Reading the Debian changelog for fixes that need"
        " a manual step.",
        "fc_zcat_postgresql_changelog_debian",
    ),
    (
        "CVE-2024-4317 needs a script run in every database. Now where the stdlib's extension"
        " modules live.",
        "dl_dpkg_L_libpython_stdlib",
    ),
    (
        "In /usr/lib/python3.11/lib-dynload. Which venv packages import asyncio:",
        "sr_rg_files_with_asyncio",
    ),
    (
        "Last, safe.directory in git's release notes and changelog.",
        "sr_rg_safe_directory_git_relnotes",
    ),
)
SHELL_REPORT = """\
Status of the build machine before the upgrade:

- venv (/tmp/cw/venv): 57 packages, among them pytest 9.2.0, Django 5.2.19, Flask 3.1.3,
  SQLAlchemy 2.1.9, mypy 2.4.1, ruff 0.17.6.
- /tmp/cw/proj/ledger: 4 failed, 893 passed. test_load_quoted_comma (a quoted comma splits a
  field), test_round_cents_bankers for 0.125 and 1.005 (rounds half up, not to even),
  test_split_evenly_sums[total2-3] (-100.00 in 3 sums to -99.98). Slowest test:
  test_year_of_due_dates, 0.81 s.
- /tmp/cw/proj/textkit: 2 failures, test_fullwidth_latin and test_fullwidth (fullwidth letters
  counted as width 1); 1 skipped, 1 expected failure.
- /tmp/cw/rs/ringbuf: 3 failed (get_wraps, overwrite_oldest: get() indexes past the end at
  src/lib.rs:58; mean_of_empty_is_zero: NaN instead of 0.0 at src/lib.rs:104), 43 passed,
  1 ignored.
- clippy pedantic on ringbuf: no `# Panics` doc on with_capacity, `#[must_use]` suggested on
  six functions, a usize-to-f64 cast; in the tests, float equality and `1 * 2`.
- PostgreSQL 15: 15.20-0+deb12u1 (security) and 15.18-0+deb12u1; postgresql-common
  248+deb12u2 (security), which conflicts with pgdg-keyring. CVE-2024-4317 (fixed in
  15.7-0+deb12u1) only fixes new clusters: run /usr/share/postgresql/15/fix-CVE-2024-4317.sql as
  superuser in every database of existing clusters, template0 and template1 included.
- Python 3.11's C extension modules: /usr/lib/python3.11/lib-dynload.
- asyncio in the venv: 42 files, in redis, sqlalchemy, asgiref, django, anyio, jinja2, httpx and
  typing_extensions.
- git: safe.directory appears in the 2.30.4 and 2.36.0 release notes, with '*' as the value
  that opts out of the check; the changelog says it is ignored in the environment and read from
  protected config only (git_protected_config), so CI has to set it in its global config.
"""


def shell_agent_session() -> dict[str, Any]:
    """An OpenAI message list of a shell-only agent auditing a build machine."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SHELL_SYSTEM},
        {"role": "user", "content": SHELL_TASK},
    ]
    for number, (said, name) in enumerate(SHELL_STEPS, start=1):
        ran = case(name)
        call_id = f"call_{_token('call', number)}"
        arguments = json.dumps({"command": command(ran)}, ensure_ascii=False)
        function = {"name": "bash", "arguments": arguments}
        messages.append(
            {
                "role": "assistant",
                "content": said,
                "tool_calls": [{"id": call_id, "type": "function", "function": function}],
            }
        )
        messages.append({"role": "tool", "tool_call_id": call_id, "content": ran.output})
    messages.append({"role": "assistant", "content": SHELL_REPORT})
    return {"session_id": SHELL_SESSION, "model": SHELL_MODEL, "messages": messages}


def build(out: Path) -> list[Path]:
    """Write both sessions under ``out`` (``claude-code/`` and ``shell-agent/``); their paths."""
    claude = out / "claude-code" / f"{CLAUDE_SESSION}.jsonl"
    shell = out / "shell-agent" / f"{SHELL_SESSION}.messages.json"
    for path in (claude, shell):
        path.parent.mkdir(parents=True, exist_ok=True)
    lines = claude_code_session()
    compact = (json.dumps(line, ensure_ascii=False, separators=(",", ":")) for line in lines)
    claude.write_text("".join(line + "\n" for line in compact), encoding="utf-8")
    document = json.dumps(shell_agent_session(), ensure_ascii=False, indent=1)
    shell.write_text(document + "\n", encoding="utf-8")
    return [claude, shell]


def main() -> int:
    """Write the samples into this folder, or into ``--out``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=HERE, help="folder to write into")
    for path in build(parser.parse_args().out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
