"""Rebuild the compaction corpus's conversations from the public snapshots they came from.

Each case's ``NAME.json`` (committed) names its source: repository, commit, path, format and
window. This script reads that file from a local snapshot (``--mirror DIR``: one git directory
per repository, ``owner+name/repo``), converts it with the converter of its format
(``formats/``: one module per agent's session format) to the message list a ``CompactionJob``
takes, and writes ``NAME.messages.json`` beside it (and ``NAME.reference.md`` when the window
ends where the agent's own compaction summary begins). The conversion only regroups: no text is
changed.

    python tests/compaction-corpus/build.py --mirror /work/.mirror [NAME ...]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from formats import FORMATS  # noqa: E402 (the converters sit next to this script)
from formats.openai import SESSION, SUMMARY  # noqa: E402


def git_show(mirror: Path, repo: str, commit: str, path: str) -> bytes:
    """The bytes of ``path`` at ``commit`` in the snapshot of ``repo``."""
    gitdir = mirror / repo.replace("/", "+") / "repo"
    done = subprocess.run(
        ["git", "--git-dir", str(gitdir), "show", f"{commit}:{path}"],
        capture_output=True,
        check=True,
    )
    return done.stdout


def window(messages: list[dict[str, Any]], which: str) -> tuple[list[dict[str, Any]], str | None]:
    """The case's messages: the whole conversation, the part before its first summary, or one
    session of a file that holds several (``session NAME``)."""
    if which.startswith("session "):
        name = which.removeprefix("session ")
        starts = [i for i, m in enumerate(messages) if m["role"] == SESSION]
        at = next((i for i in starts if messages[i]["content"] == name), None)
        if at is None:
            raise ValueError(f"no session {name!r} here")
        end = next((i for i in starts if i > at), len(messages))
        messages = messages[at + 1 : end]
        which = "whole"
    if any(m["role"] == SESSION for m in messages):
        raise ValueError("this file holds several sessions: name one (window 'session NAME')")
    marks = [i for i, m in enumerate(messages) if m["role"] == SUMMARY]
    if which == "whole":
        if marks:
            raise ValueError("a whole conversation cannot hold a compact summary")
        return messages, None
    if which != "before-first-summary" or not marks:
        raise ValueError(f"no window {which!r} here")
    return messages[: marks[0]], str(messages[marks[0]]["content"])


def build(meta_path: Path, mirror: Path) -> None:
    """Write the messages (and the reference summary) of the case described by ``meta_path``."""
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    source = meta["source"]
    raw = git_show(mirror, source["repository"], source["commit"], source["path"])
    if meta["format"] not in FORMATS:
        raise ValueError(f"{meta_path}: unknown format {meta['format']!r}")
    kept, reference = window(FORMATS[meta["format"]](raw), meta["window"])
    out = meta_path.with_name(meta_path.stem + ".messages.json")
    out.write_text(json.dumps(kept, ensure_ascii=False, indent=0), encoding="utf-8")
    if reference:  # a summary the agent wrote in the clear (Codex's are encrypted)
        meta_path.with_name(meta_path.stem + ".reference.md").write_text(reference, "utf-8")


def main() -> int:
    """Build every case under ``tune/`` and ``check/`` (or only the ones named)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirror", type=Path, required=True)
    parser.add_argument("names", nargs="*", help="case names (default: all)")
    args = parser.parse_args()
    metas = sorted(p for p in HERE.glob("*/*.json") if p.name.count(".") == 1)
    metas = [p for p in metas if not args.names or p.stem in args.names]
    for meta_path in metas:
        build(meta_path, args.mirror)
        print(f"built {meta_path.parent.name}/{meta_path.stem}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
