"""The compaction summary's text: handoff banner, section template, grounding, fallback.

Two hazards shape it. A weak model reads summarized turns as live instructions and redoes
finished work, so every summary opens with a banner saying it is reference only (and banners
never stack when a summary is folded into the next one). A model-written "Active Task" can
resurrect a finished request, so that section is never the model's: it quotes the latest real
user request verbatim from the messages.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from producer.text import elide, truncate
from worker.compaction.messages import Role, Turn

BANNER = (
    "[EARLIER TURNS SUMMARIZED · REFERENCE ONLY]\n"
    "The older part of this conversation was condensed into the summary below to free context. "
    "Read it as background, not as instructions: the requests it mentions were already handled, "
    "so do not answer them again or repeat their work. Reply only to the latest user message "
    "that comes after this summary. Your tools are still available; check files and other "
    "state with them rather than trusting this summary, since they may already reflect the work "
    'described here. Unfinished work, if any, is named under "## Active Task".'
)
# Every banner any tersify version has written, so older summaries are recognized and unwrapped.
BANNERS: tuple[str, ...] = (BANNER,)
END_MARKER = "[END OF SUMMARY · the conversation continues below]"

TEMPLATE = """## Goal
What the user is ultimately trying to achieve.
## Constraints & Preferences
Rules, conventions and preferences the user stated or the work revealed.
## Progress
### Done
Finished work, with the evidence (tests passing, files written).
### In Progress
Work started and not finished.
### Blocked
Open errors or questions, verbatim.
## Key Decisions
Choices made and why.
## Relevant Files
Paths read, changed or created, each with what happened to it.
## Tool Results
Tool outputs that still matter (numbers, errors, versions).
## Current State
Where things stand now.
## Next Steps
What was about to happen next.
## Critical Context
Anything else that must not be lost."""

_MAX_REQUEST_CHARS = 3000
_HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_PATH_TOKEN = re.compile(r"[\w~./-]+")
_FILE_SUFFIX = re.compile(r"[\w-]+\.(?:[a-z][a-z0-9]{0,5})$", re.IGNORECASE)
_ERROR_LINE = re.compile(r"\b(error|exception|traceback|failed|failure|fatal|panic)\b", re.I)


def strip_banner(text: str | None) -> str:
    """``text`` without any known banner at its start (however many, after any whitespace)."""
    body = (text or "").lstrip()
    while match := next((b for b in BANNERS if body.startswith(b)), None):
        body = body[len(match) :].lstrip()
    return body


def with_banner(body: str | None) -> str:
    """``body`` under exactly one banner (copies already inside it are removed)."""
    clean = strip_banner(body)
    for banner in BANNERS:
        clean = clean.replace(banner, "")
    clean = clean.strip()
    return f"{BANNER}\n\n{clean}" if clean else BANNER


def unwrap(text: str | None) -> str:
    """A previous summary's body: banner(s) and end marker(s) removed, ready to fold in."""
    body = strip_banner(text).rstrip()
    while body.endswith(END_MARKER):
        body = body[: -len(END_MARKER)].rstrip()
    return body


def is_summary(turn: Turn) -> bool:
    """True when ``turn`` is a compaction summary written earlier (it opens with a banner)."""
    text = turn.text.lstrip()
    return not (turn.calls or turn.results) and any(text.startswith(b) for b in BANNERS)


def latest_user_request(turns: Sequence[Turn]) -> str | None:
    """The text of the last user message that is neither a tool result nor a summary."""
    for turn in reversed(turns):
        if turn.role is Role.USER and turn.text.strip() and not is_summary(turn):
            return turn.text.strip()
    return None


def _drop_active_task(body: str) -> str:
    """``body`` without any "Active Task" section (heading and everything under it)."""
    out: list[str] = []
    skipping: int | None = None  # the level of the heading being skipped
    for line in body.split("\n"):
        heading = _HEADING.match(line)
        if heading:
            level = len(heading.group(1))
            if skipping is not None and level <= skipping:
                skipping = None
            if skipping is None and heading.group(2).strip("*_: ").lower() == "active task":
                skipping = level
        if skipping is None:
            out.append(line)
    return "\n".join(out)


def finish(body: str, request: str | None) -> str:
    """The final summary: banner, a grounded Active Task, the body, the end marker."""
    if request is None:
        task = "None: the conversation holds no user request."
    else:
        quoted = "\n".join(f"> {line}" for line in elide(request, _MAX_REQUEST_CHARS).split("\n"))
        task = f"The user's latest request, quoted verbatim from the conversation:\n{quoted}"
    rest = _drop_active_task(unwrap(body)).strip()
    return with_banner(f"## Active Task\n{task}\n\n{rest}\n\n{END_MARKER}")


def _demoted(body: str) -> str:
    """Markdown headings pushed one level down, to nest a folded summary under a section."""
    return re.sub(r"^( {0,3})(#{1,5})(?=\s)", r"\1#\2", body, flags=re.MULTILINE)


def _files(texts: Sequence[str], limit: int = 25) -> list[str]:
    found: dict[str, None] = {}
    for text in texts:
        for token in _PATH_TOKEN.findall(text):
            path = token.rstrip(".")
            rooted = path.startswith(("/", "./", "../", "~/")) and not path.startswith("//")
            named = _FILE_SUFFIX.search(path.rsplit("/", 1)[-1]) is not None
            if (rooted and len(path) > 1) or (named and not path.startswith("//")):
                found.setdefault(path, None)
    return list(found)[:limit]


def _errors(texts: Sequence[str], limit: int = 10) -> list[str]:
    found: dict[str, None] = {}
    for text in texts:
        for line in text.split("\n"):
            if _ERROR_LINE.search(line):
                found.setdefault(elide(line.strip(), 200), None)
    return list(found)[-limit:]


def fallback_summary(
    turns: Sequence[Turn], previous_summary: str | None, *, request: str | None
) -> str:
    """An extractive summary made without a model: counts, requests, files and errors seen."""
    tools = Counter(c.name or "?" for t in turns for c in t.calls)
    tool_list = ", ".join(f"{name} ×{n}" for name, n in tools.most_common(8)) or "none"
    texts = [t.text for t in turns] + [c.arguments for t in turns for c in t.calls]
    outputs = [r.content for t in turns for r in t.results]
    asks = [t.text.strip() for t in turns if t.role is Role.USER and t.text.strip()]
    replies = sum(1 for t in turns if t.role is Role.ASSISTANT)
    quoted = ["\n".join(f"> {ln}" for ln in elide(a, 500).split("\n")) for a in asks[-3:]]
    sections = [
        "Made without a model: facts extracted from the compacted turns. The full messages are "
        "in the session log.",
        f"## Progress\n- Compacted {len(turns)} messages: {len(asks)} user requests, {replies} "
        f"assistant turns, {sum(tools.values())} tool calls ({tool_list}), {len(outputs)} results.",
        "## Earlier User Requests\n" + ("\n".join(quoted) or "None."),
        "## Relevant Files\n" + "\n".join(f"- {p}" for p in _files(texts + outputs) or ["None."]),
        "## Errors Seen\n" + "\n".join(f"- {e}" for e in _errors(outputs + texts) or ["None."]),
    ]
    previous = unwrap(previous_summary)
    if previous:
        earlier = _demoted(truncate(_drop_active_task(previous), 8000, 200))
        sections.append(f"## Earlier Summary\n{earlier}")
    return finish("\n\n".join(sections), request)
