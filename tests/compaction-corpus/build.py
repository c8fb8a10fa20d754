"""Rebuild the compaction corpus's conversations from the public snapshots they came from.

Each case's ``NAME.json`` (committed) names its source: repository, commit, path and window.
This script reads that file from a local snapshot (``--mirror DIR``: one git directory per
repository, ``owner+name/repo``), converts it to the message list a ``CompactionJob`` takes,
and writes ``NAME.messages.json`` beside it (and ``NAME.reference.md`` when the window ends
where the agent's own compaction summary begins). The conversion only regroups: no text is
changed. Claude Code's JSONL lines of one API message are merged back into that message (its
content blocks in order); mini-swe-agent's messages keep their role and content.

    python tests/compaction-corpus/build.py --mirror /work/.mirror
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def git_show(mirror: Path, repo: str, commit: str, path: str) -> bytes:
    """The bytes of ``path`` at ``commit`` in the snapshot of ``repo``."""
    gitdir = mirror / repo.replace("/", "+") / "repo"
    done = subprocess.run(
        ["git", "--git-dir", str(gitdir), "show", f"{commit}:{path}"],
        capture_output=True,
        check=True,
    )
    return done.stdout


def claude_code(raw: bytes) -> tuple[list[dict[str, Any]], list[str]]:
    """Claude Code session JSONL → Anthropic messages, and the /compact summaries in order.

    Only the main thread's user and assistant lines count (no sidechains, no meta lines); the
    lines of one assistant API message (same ``message.id``) are merged; a compact summary
    line is not a message but a marker: the window it closes is what it summarizes.
    """
    messages: list[dict[str, Any]] = []
    summaries: list[str] = []
    last_id: str | None = None
    last_at = 0
    for line in raw.decode("utf-8").splitlines():
        entry = json.loads(line)
        if entry.get("type") not in ("user", "assistant") or entry.get("isSidechain"):
            continue
        if entry.get("isMeta"):
            continue
        message = entry.get("message") or {}
        if entry.get("isCompactSummary"):
            content = message.get("content")
            text = content if isinstance(content, str) else json.dumps(content)
            summaries.append(text)
            messages.append({"role": "compact-summary", "content": text})
            last_id = None
            continue
        role, content = message.get("role"), message.get("content")
        if role == "assistant" and message.get("id") and message.get("id") == last_id:
            # A later block of the same API message, logged after the results of the earlier
            # ones: it joins that message, so its results follow it as the APIs require.
            messages[last_at]["content"].extend(content if isinstance(content, list) else [])
            continue
        if role == "assistant":
            content = list(content) if isinstance(content, list) else content
            last_id, last_at = message.get("id"), len(messages)
        elif not _results_only(content):
            last_id = None
        messages.append({"role": role, "content": content})
    return messages, summaries


def _results_only(content: Any) -> bool:
    """True for a user message that only carries tool results."""
    return isinstance(content, list) and all(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


def mini_swe_agent(raw: bytes) -> list[dict[str, Any]]:
    """mini-swe-agent ``.traj.json`` → OpenAI-style messages (role and content, as written)."""
    data = json.loads(raw)
    return [{"role": m["role"], "content": m["content"]} for m in data["messages"]]


def window(messages: list[dict[str, Any]], which: str) -> tuple[list[dict[str, Any]], str | None]:
    """The case's messages: the whole conversation or the part before its first summary."""
    marks = [i for i, m in enumerate(messages) if m["role"] == "compact-summary"]
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
    if meta["format"] == "claude-code-jsonl":
        messages, _ = claude_code(raw)
    elif meta["format"] == "mini-swe-agent-traj":
        messages = mini_swe_agent(raw)
    else:
        raise ValueError(f"{meta_path}: unknown format {meta['format']!r}")
    kept, reference = window(messages, meta["window"])
    out = meta_path.with_name(meta_path.stem + ".messages.json")
    out.write_text(json.dumps(kept, ensure_ascii=False, indent=0), encoding="utf-8")
    if reference is not None:
        meta_path.with_name(meta_path.stem + ".reference.md").write_text(reference, "utf-8")


def main() -> int:
    """Build every case under ``tune/`` and ``check/``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirror", type=Path, required=True)
    args = parser.parse_args()
    metas = sorted(p for p in HERE.glob("*/*.json") if p.name.count(".") == 1)
    for meta_path in metas:
        build(meta_path, args.mirror)
        print(f"built {meta_path.parent.name}/{meta_path.stem}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
