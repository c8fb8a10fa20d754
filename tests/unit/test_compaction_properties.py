"""Properties over generated input: nothing lost, tool pairs always whole, truncate in budget."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from tersify.chat.compaction import CompactionJob, CompactionMethod, CompactionResult
from tersify.chat.messages import parse
from tersify.chat.pairs import repair
from tersify.contract import FallbackReason
from tersify.errors import ProviderError
from tersify.settings import Settings
from tersify.text import line_count, truncate
from tersify.worker.compaction.compact import compact
from tersify.worker.compaction.summary import BANNER, BANNERS, unwrap, with_banner
from tersify.worker.model.calls import Route
from tersify.worker.model.guard import CallGuard
from tersify.worker.model.providers.base import Completion, ModelRequest

Msg = dict[str, Any]


class FixedProvider:
    """A stand-in for a model API: records each request, answers a fixed summary or fails."""

    name = "fixed"
    model = "fixed-1"

    def __init__(self, up: bool = True) -> None:
        self.up = up
        self.requests: list[ModelRequest] = []

    def complete(self, request: ModelRequest, timeout: float) -> Completion:
        self.requests.append(request)
        if not self.up:
            raise ProviderError(FallbackReason.SERVER_ERROR, "503")
        return Completion(text="## Active Task\nsomething stale\n## Goal\nkeep going", model="m")

    def close(self) -> None:
        pass


# --- an independent checker of what the APIs accept -----------------------------------------


def plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k.removeprefix(":"): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def strings(value: Any) -> str:
    if isinstance(value, dict):
        return "\n".join(strings(v) for v in value.values())
    if isinstance(value, list):
        return "\n".join(strings(v) for v in value)
    return value if isinstance(value, str) else ""


def call_ids(m: Msg) -> list[str]:
    ids = [c["id"] for c in m.get("tool_calls") or []]
    ids += [c["id"] for c in (m.get("metadata") or {}).get("tool_calls") or []]
    blocks = m["content"] if isinstance(m.get("content"), list) else []
    return ids + [b["id"] for b in blocks if b.get("type") == "tool_use"]


def result_ids(m: Msg) -> list[str]:
    if m["role"] == "tool":
        return [m["tool_call_id"]]
    blocks = m["content"] if isinstance(m.get("content"), list) else []
    return [b["tool_use_id"] for b in blocks if b.get("type") == "tool_result"]


def has_text(m: Msg) -> bool:
    content = m.get("content")
    if m["role"] == "tool":
        return False
    if isinstance(content, str):
        return bool(content.strip())
    blocks = content if isinstance(content, list) else []
    return any(b.get("type") == "text" and b["text"].strip() for b in blocks)


def pairing_errors(messages: list[Msg]) -> list[str]:
    """Every call answered right after it, exactly once; every result answering such a call."""
    return [f"{kind} {ident}" for kind, ident in unpaired(messages)]


def unpaired(messages: list[Msg]) -> list[tuple[str, str]]:
    """("orphan result" | "unanswered call", id) for every piece the APIs would refuse."""
    found: list[tuple[str, str]] = []
    waiting: set[str] | None = None  # ids the open run of results still owes
    for m in plain(messages):
        results, calls = result_ids(m), call_ids(m)
        for rid in results:
            if waiting is None or rid not in waiting:
                found.append(("orphan result", rid))
            else:
                waiting.discard(rid)
        if calls or not results or has_text(m):
            found += [("unanswered call", i) for i in sorted(waiting or ())]
            waiting = set(calls) if calls else None
    found += [("unanswered call", i) for i in sorted(waiting or ())]
    return found


def without(m: Msg, broken: set[str]) -> Msg | None:
    """``m`` (plain keys) without its calls and results in ``broken``; None if nothing is left."""
    out = copy.deepcopy(plain(m))
    if out["role"] == "tool":
        return None if out["tool_call_id"] in broken else out
    for holder in (out, out.get("metadata") or {}):
        if "tool_calls" in holder:
            holder["tool_calls"] = [c for c in holder["tool_calls"] if c["id"] not in broken]
            if not holder["tool_calls"]:
                del holder["tool_calls"]
    if isinstance(out.get("content"), list):
        out["content"] = [
            b for b in out["content"] if b.get("id", b.get("tool_use_id")) not in broken
        ]
    return out if call_ids(out) or result_ids(out) or has_text(out) else None


# --- conversations ---------------------------------------------------------------------------

words = st.text(alphabet="abc xyz/.é🙂\n", max_size=12)
step = st.one_of(
    st.tuples(st.just("user"), words),
    st.tuples(st.just("assistant"), words),
    st.tuples(st.just("summary"), words),
    st.tuples(st.just("orphan"), st.just("")),
    st.tuples(
        st.just("tools"),
        st.lists(st.booleans(), min_size=1, max_size=3),  # which calls get an answer
        words,
        st.booleans(),  # shuffle the answers' order
    ),
)


def render(steps: list[tuple[Any, ...]], anthropic: bool, colon: bool, meta: bool) -> list[Msg]:
    """Messages for ``steps``: Anthropic blocks, OpenAI ``tool_calls`` or the metadata form."""
    out: list[Msg] = []
    for number, (kind, *rest) in enumerate(steps):
        if kind in ("user", "assistant"):
            out.append({"role": kind, "content": f"{rest[0]} #{number}"})
        elif kind == "summary":
            out.append({"role": "user", "content": with_banner(f"older {rest[0]} #{number}")})
        elif kind == "orphan":
            out.append(
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"x{number}"}]}
                if anthropic
                else {"role": "tool", "tool_call_id": f"x{number}", "content": "lost"}
            )
        else:
            answered, text, reverse = rest
            text = f"{text} #{number}" if text else ""
            ids = [f"c{number}_{i}" for i in range(len(answered))]
            done = [i for i, ok in zip(ids, answered, strict=True) if ok]
            done = done[::-1] if reverse else done
            if anthropic:
                uses = [{"type": "tool_use", "id": i, "name": "read", "input": {}} for i in ids]
                text_block = [{"type": "text", "text": text}] if text else []
                out.append({"role": "assistant", "content": text_block + uses})
                if done:
                    blocks = [
                        {"type": "tool_result", "tool_use_id": i, "content": "r"} for i in done
                    ]
                    out.append({"role": "user", "content": blocks})
            elif meta:
                calls = [{"id": i, "name": "sh", "arguments": {"cmd": "ls"}} for i in ids]
                out.append(
                    {"role": "assistant", "content": text, "metadata": {"tool_calls": calls}}
                )
            else:
                fn = {"name": "sh", "arguments": "{}"}
                calls = [{"id": i, "type": "function", "function": fn} for i in ids]
                out.append({"role": "assistant", "content": text or None, "tool_calls": calls})
                out += [{"role": "tool", "tool_call_id": i, "content": "r"} for i in done]
    return [{f":{k}": v for k, v in m.items()} for m in out] if colon else out


@st.composite
def conversations(draw: st.DrawFn) -> list[Msg]:
    steps = draw(st.lists(step, max_size=16))
    anthropic = draw(st.booleans())
    messages = render(steps, anthropic, draw(st.booleans()), not anthropic and draw(st.booleans()))
    drop = draw(st.sets(st.integers(0, max(len(messages) - 1, 0)), max_size=3))
    return [m for i, m in enumerate(messages) if i not in drop]  # break pairs at random


def run(messages: list[Msg], first: int, last: int, up: bool) -> tuple[CompactionResult, str]:
    """Compact with no minimum and a recording model; the result and what the model was shown."""
    job = CompactionJob.build(
        deadline_seconds=30,
        session_id="s1",
        messages=messages,
        protect_first=first,
        protect_last=last,
    )
    provider = FixedProvider(up)
    config = Settings(compaction_min_messages=0, model_retry_base_seconds=0)
    result = compact(job, [Route(provider, CallGuard())], config)
    return result, provider.requests[0].user if provider.requests else ""


def content_text(m: Msg) -> str:
    content = plain(m).get("content")
    if isinstance(content, list):
        return "\n".join(b["text"] for b in content if b.get("type") == "text")
    return content if isinstance(content, str) else ""


def is_banner_message(m: Msg) -> bool:
    return not call_ids(plain(m)) and content_text(m).lstrip().startswith(BANNER)


def shown(m: Msg, prompt: str) -> bool:
    """True when the model's prompt holds every text, call and result id of ``m``."""
    p = plain(m)
    text = "" if p["role"] == "tool" else content_text(p)  # a result's body may be trimmed
    parts = [unwrap(text).strip() if is_banner_message(m) else text.strip()]
    parts += call_ids(p) + result_ids(p)
    return all(part in prompt for part in parts if part)


def lost_messages(messages: list[Msg], result: CompactionResult, prompt: str) -> list[str]:
    """Input messages neither kept (verbatim, or without pieces broken in the input) nor shown
    to the model in one contiguous middle that the summary message replaces."""
    compacted = result.method is not CompactionMethod.PASSTHROUGH
    live = [m for m in messages if not (compacted and is_banner_message(m))]
    broken = {ident for _, ident in unpaired(live)}
    out = plain(result.messages)
    lost: list[str] = []
    at, state = 0, "head"  # head → middle → tail
    for index, m in enumerate(live):
        fixed = without(m, broken)
        if at < len(out) and out[at] in (plain(m), fixed):
            at, state = at + 1, "tail" if state == "middle" else state
        elif fixed is None:
            continue
        elif compacted and state != "tail" and shown(m, prompt):
            if state == "head":
                if at >= len(out) or content_text(out[at]) != result.summary:
                    lost.append(f"message {index}: summarized, but no summary in its place")
                at, state = at + 1, "middle"
        else:
            lost.append(f"message {index} ({state}): neither kept nor summarized")
    if at != len(out):
        lost.append(f"{len(out) - at} output messages match no input message")
    if compacted:
        lost += [
            f"summary {m} not folded in"
            for m in messages
            if is_banner_message(m) and not shown(m, prompt)
        ]
    return lost


conversation_and_cuts = st.tuples(conversations(), st.integers(0, 4), st.integers(0, 8))


def adding_it() -> list[Msg]:
    """An interrupted turn at the end of the middle: "Adding it." with c3 answered, c4 not."""
    fn = {"name": "sh", "arguments": "{}"}
    calls = [{"id": i, "type": "function", "function": fn} for i in ("c3", "c4")]
    older = [
        m
        for i in range(3)
        for m in (
            {"role": "assistant", "content": None, "tool_calls": [dict(calls[0], id=f"o{i}")]},
            {"role": "tool", "tool_call_id": f"o{i}", "content": "log line\n" * 100},
        )
    ]
    return [
        {"role": "user", "content": "add a CHANGELOG entry"},
        *older,
        {"role": "assistant", "content": "Adding it.", "tool_calls": calls},
        {"role": "tool", "tool_call_id": "c3", "content": "CHANGELOG.md written"},
        {"role": "user", "content": "and bump the version"},
    ]


@settings(max_examples=400, deadline=None)
@given(conversation_and_cuts, st.booleans())
@example(case=(adding_it(), 1, 1), up=True)
@example(case=(adding_it(), 1, 1), up=False)
def test_compaction_never_loses_a_message(case: tuple[list[Msg], int, int], up: bool) -> None:
    messages, first, last = case
    result, prompt = run(messages, first, last, up)
    assert lost_messages(messages, result, prompt) == []


@settings(max_examples=300, deadline=None)
@given(conversation_and_cuts, st.booleans())
def test_compaction_never_leaves_an_orphan_call_or_result(
    case: tuple[list[Msg], int, int], up: bool
) -> None:
    messages, first, last = case
    result, _ = run(messages, first, last, up)
    assert pairing_errors(result.messages) == []
    assert parse(result.messages).shape in (None, parse(messages).shape)
    banners = sum(strings(m).count(b) for m in result.messages for b in BANNERS)
    if result.method is not CompactionMethod.PASSTHROUGH:
        assert banners == 1
        assert "something stale" not in result.summary
        assert result.tokens_after < result.tokens_before


@settings(max_examples=300, deadline=None)
@given(conversations())
def test_repair_always_yields_a_history_the_apis_accept(messages: list[Msg]) -> None:
    repaired = [dict(t.raw) for t in repair(parse(messages).turns)]
    assert pairing_errors(repaired) == []
    assert repair(parse(repaired).turns) == parse(repaired).turns  # a second pass changes nothing


# --- truncate ---------------------------------------------------------------------------------

tricky = st.sampled_from(
    ["\n", "\r", "é", "e\u0301", "\u200d", "👩‍💻", "👍🏽", "中", "\ud800", "\udfff"]
)
# Whole pieces (clusters, lone surrogates) as well as single characters of any category.
pieces = st.lists(st.one_of(st.characters(), tricky), max_size=200).map("".join)
# Repeating a chunk makes long texts common, so the head + marker + tail path gets exercised.
texts = st.one_of(pieces, st.builds(lambda chunk, n: chunk * n, pieces, st.integers(2, 60)))


@settings(max_examples=500, deadline=None)
@given(
    texts,
    st.integers(0, 3000),
    st.integers(0, 60),
    st.one_of(st.none(), st.text(max_size=60)),
)
def test_truncate_always_fits_its_budgets_and_yields_valid_utf8(
    text: str, max_bytes: int, max_lines: int, location: str | None
) -> None:
    out = truncate(text, max_bytes, max_lines, spill=lambda _: location)
    data = out.encode("utf-8")  # raises on a lone surrogate
    assert len(data) <= max_bytes
    assert line_count(out) <= max_lines
    assert data.decode("utf-8") == out
