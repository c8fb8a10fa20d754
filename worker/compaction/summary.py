"""The compaction summary's text: handoff banner, section template, grounding, fallback.

Two hazards shape it. A weak model reads summarized turns as live instructions and redoes
finished work, so every summary opens with a banner saying it is reference only (and banners
never stack when a summary is folded into the next one). A model-written "Active Task" can
resurrect a finished request, so that section is never the model's: it quotes, verbatim, only
the user's requests the agent has not finished yet, or says "None".
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from tersify.chat.messages import Role, Turn
from tersify.text import elide, truncate
from tersify.worker.compaction.facts.actions import observations
from tersify.worker.compaction.facts.asks import is_request, relayed, unwrapped
from tersify.worker.compaction.facts.sections import HEADINGS, MIN_FACTS_CHARS, render, sections

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
## Current State
Where things stand now.
## Next Steps
What was about to happen next.
## Critical Context
Anything else that must not be lost."""

_MAX_REQUEST_CHARS = 3000
_MAX_BANNERS = 20
_MAX_OPEN_REQUESTS = 5
# A banner's opening tag, whoever wrote it: a bracketed, upper-case line naming a summary,
# compaction or handoff ("[CONTEXT COMPACTION — REFERENCE ONLY]"); "[summary] …" is a request.
_BANNER_TAG = re.compile(r"\[[^\[\]\na-z]{0,120}?(?:SUMMAR|COMPACT|HANDOFF)[^\[\]\na-z]{0,120}\]")
_PARAGRAPH_END = re.compile(r"\n[ \t]*\n|\n(?= {0,3}#)")
_END_TAG = re.compile(r"\n?[ \t]*\[END OF [^\[\]\n]{0,120}\][ \t]*$", re.I)
_HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
DEFAULT_MAX_CHARS = 6000


def _banner_end(text: str) -> int:
    """Where a banner at the start of ``text`` ends (0: there is none).

    Recognized by structure, whoever wrote it: a known tersify banner, or a bracketed tag that
    names a summary, compaction or handoff (``[CONTEXT COMPACTION — REFERENCE ONLY]``) together
    with the rest of its paragraph, up to a blank line or a markdown heading.
    """
    known = next((b for b in BANNERS if text.startswith(b)), None)
    if known is not None:
        return len(known)
    if not _BANNER_TAG.match(text):
        return 0
    for match in _PARAGRAPH_END.finditer(text):
        return match.start()
    return len(text)


def strip_banner(text: str | None) -> str:
    """``text`` without the banners at its start (any writer's, however many)."""
    body = (text or "").lstrip()
    for _ in range(_MAX_BANNERS):
        end = _banner_end(body)
        if end == 0:
            break
        tag = _BANNER_TAG.match(body)
        if end == len(body) and tag is not None and not body.startswith(BANNERS):
            return body[tag.end() :].strip()  # a tag over the only paragraph: that is the body
        body = body[end:].lstrip()
    return body


def with_banner(body: str | None) -> str:
    """``body`` under exactly one banner (copies already inside it are removed)."""
    clean = strip_banner(body)
    for banner in BANNERS:
        clean = clean.replace(banner, "")
    clean = clean.strip()
    return f"{BANNER}\n\n{clean}" if clean else BANNER


def unwrap(text: str | None) -> str:
    """A previous summary's body: banners and end markers removed, ready to fold in."""
    body = strip_banner(text).rstrip()
    for _ in range(_MAX_BANNERS):
        match = _END_TAG.search(body)
        if match is None:
            break
        body = body[: match.start()].rstrip()
    return body


def is_summary(turn: Turn) -> bool:
    """True when ``turn`` is a compaction summary written earlier (it opens with a banner)."""
    return not (turn.calls or turn.results) and _banner_end(turn.text.lstrip()) > 0


def open_requests(turns: Sequence[Turn]) -> list[str]:
    """The user's requests the agent has not finished: those after its last finished turn,
    each in its own words (its envelope's context blocks and tags set aside).

    An agent's turn is finished when it hands back with an assistant message that has text and
    no tool calls (nor, for an agent that acts in text, a shell block it ran), or when a tool
    result relays the user's reply (``<feedback>``, ``<answer>``: the agent handed back through
    a tool, and the reply is the newest request); user messages after it (not tool results,
    summaries or the output of a text action) are still open.
    """
    outputs = observations(turns)
    asks: list[str] = []
    for index in range(len(turns) - 1, -1, -1):
        turn = turns[index]
        acted = index + 1 in outputs
        if turn.role is Role.ASSISTANT and turn.text.strip() and not turn.calls and not acted:
            break
        if is_request(turn) and not is_summary(turn) and index not in outputs:
            asks.append(unwrapped(turn.text))
        replies = [words for r in turn.results if (words := relayed(r.content))]
        if replies:
            asks += [unwrapped(words) for words in reversed(replies)]
            break
    return [a for a in asks[::-1] if a]


def _drop_active_task(body: str) -> str:
    """``body`` without any "Active Task" section (heading and everything under it)."""
    return _drop_sections(body, frozenset({"active task"}))


def finish(body: str, requests: Sequence[str]) -> str:
    """The final summary: banner, the grounded Active Task, the body, the end marker."""
    if not requests:
        task = "None: every request in the conversation was answered."
    else:
        shown = requests[-_MAX_OPEN_REQUESTS:]
        quoted = [
            "\n".join(f"> {line}" for line in elide(r, _MAX_REQUEST_CHARS).split("\n"))
            for r in shown
        ]
        task = "Unfinished: the user's requests since the agent last finished a turn, verbatim:\n"
        task += "\n>\n".join(quoted)
    rest = _drop_active_task(unwrap(body)).strip()
    return with_banner(f"## Active Task\n{task}\n\n{rest}\n\n{END_MARKER}")


def _demoted(body: str) -> str:
    """Markdown headings pushed one level down, to nest a folded summary under a section."""
    return re.sub(r"^( {0,3})(#{1,5})(?=\s)", r"\1#\2", body, flags=re.MULTILINE)


def fallback_summary(
    turns: Sequence[Turn],
    previous_summary: str | None,
    *,
    requests: Sequence[str],
    max_chars: int = DEFAULT_MAX_CHARS,
) -> str:
    """An extractive summary made without a model: counts, then the facts the structure holds."""
    tools = Counter(c.name or "?" for t in turns for c in t.calls)
    tool_list = ", ".join(f"{name} ×{n}" for name, n in tools.most_common(8)) or "none"
    outputs = sum(len(t.results) for t in turns)
    asks = sum(1 for t in turns if is_request(t))
    replies = sum(1 for t in turns if t.role is Role.ASSISTANT)
    head = (
        "Made without a model: facts read from the compacted turns. The full messages are in "
        "the session log.\n\n"
        f"## Progress\n- Compacted {len(turns)} messages: {asks} user requests, {replies} "
        f"assistant turns, {sum(tools.values())} tool calls ({tool_list}), {outputs} results."
    )
    room = max_chars - len(finish(head, requests)) - 4
    previous = unwrap(previous_summary)
    earlier = ""
    if previous:
        nested = _demoted(_drop_active_task(previous)).strip()
        earlier = "## Earlier Summary\n" + truncate(nested, max(room // 3, 400), 200)
        room -= len(earlier) + 2
    facts = render(sections(turns), max(room, MIN_FACTS_CHARS))
    return finish("\n\n".join(p for p in (head, facts, earlier) if p), requests)


def narrative(body: str) -> str:
    """A model's own text of its summary: banners unwrapped, its copies of the facts sections
    (headings the facts use) removed."""
    return _drop_sections(unwrap(body), frozenset(h.lower() for h in HEADINGS)).strip()


def with_facts(body: str, facts: str, requests: Sequence[str]) -> str:
    """A model's summary body followed by the facts sections, verbatim, under the banner."""
    return finish("\n\n".join(p for p in (narrative(body), facts) if p), requests)


def _drop_sections(body: str, headings: frozenset[str]) -> str:
    """``body`` without the sections whose heading is one of ``headings`` (lower case)."""
    out: list[str] = []
    skipping: int | None = None
    for line in body.split("\n"):
        heading = _HEADING.match(line)
        if heading:
            level = len(heading.group(1))
            if skipping is not None and level <= skipping:
                skipping = None
            if skipping is None and heading.group(2).strip("*_: ").lower() in headings:
                skipping = level
        if skipping is None:
            out.append(line)
    return "\n".join(out)


def problems(summary: str, max_chars: int, requests: Sequence[str], facts: str = "") -> list[str]:
    """Why ``summary`` must not replace anything (empty when it may): structure and size."""
    found: list[str] = []
    if facts and facts not in summary:
        found.append("the facts sections are not in the summary verbatim")
    if not summary.startswith(BANNER) or summary.count(BANNER) != 1:
        found.append("the summary does not open with exactly one banner")
    if "\n## Active Task\n" not in summary:
        found.append("the summary has no Active Task section")
    if not summary.rstrip().endswith(END_MARKER):
        found.append("the summary does not end with the end marker")
    allowed = max_chars + len(finish("", requests)) - len(finish("", []))
    if len(summary) > allowed:
        found.append(f"the summary has {len(summary)} chars, more than {allowed}")
    return found
