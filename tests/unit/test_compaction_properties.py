"""Properties over generated input: tool pairs always whole, truncate always within budget."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from producer.compaction import CompactionJob, CompactionMethod
from producer.text import line_count, truncate
from worker.compaction.compact import compact
from worker.compaction.messages import parse
from worker.compaction.pairs import repair
from worker.compaction.summary import BANNERS, with_banner
from worker.model.providers.base import Completion, ModelRequest

Msg = dict[str, Any]


class FixedProvider:
    """A stand-in for a model API that always answers with the same summary."""

    name = "fixed"
    model = "fixed-1"

    def complete(self, request: ModelRequest, timeout: float) -> Completion:
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
    errors: list[str] = []
    waiting: set[str] | None = None  # ids the open run of results still owes
    for index, m in enumerate(plain(messages)):
        results, calls = result_ids(m), call_ids(m)
        for rid in results:
            if waiting is None or rid not in waiting:
                errors.append(f"message {index}: orphan result {rid}")
            else:
                waiting.discard(rid)
        if calls or not results or has_text(m):
            if waiting:
                errors.append(f"before message {index}: unanswered calls {sorted(waiting)}")
            waiting = set(calls) if calls else None
    if waiting:
        errors.append(f"at the end: unanswered calls {sorted(waiting)}")
    return errors


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


def render(steps: list[tuple[Any, ...]], anthropic: bool, colon: bool) -> list[Msg]:
    out: list[Msg] = []
    for number, (kind, *rest) in enumerate(steps):
        if kind in ("user", "assistant"):
            out.append({"role": kind, "content": rest[0]})
        elif kind == "summary":
            out.append({"role": "user", "content": with_banner(rest[0] or "older")})
        elif kind == "orphan":
            out.append(
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"x{number}"}]}
                if anthropic
                else {"role": "tool", "tool_call_id": f"x{number}", "content": "lost"}
            )
        else:
            answered, text, reverse = rest
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
            else:
                fn = {"name": "sh", "arguments": "{}"}
                calls = [{"id": i, "type": "function", "function": fn} for i in ids]
                out.append({"role": "assistant", "content": text or None, "tool_calls": calls})
                out += [{"role": "tool", "tool_call_id": i, "content": "r"} for i in done]
    return [{f":{k}": v for k, v in m.items()} for m in out] if colon else out


@st.composite
def conversations(draw: st.DrawFn) -> list[Msg]:
    steps = draw(st.lists(step, max_size=14))
    messages = render(steps, draw(st.booleans()), draw(st.booleans()))
    drop = draw(st.sets(st.integers(0, max(len(messages) - 1, 0)), max_size=3))
    return [m for i, m in enumerate(messages) if i not in drop]  # break pairs at random


@settings(max_examples=300, deadline=None)
@given(conversations(), st.integers(0, 4), st.integers(0, 8), st.booleans())
def test_compaction_never_leaves_an_orphan_call_or_result(
    messages: list[Msg], first: int, last: int, with_model: bool
) -> None:
    job = CompactionJob.build(
        deadline_seconds=30,
        session_id="s1",
        messages=messages,
        protect_first=first,
        protect_last=last,
    )
    result = compact(job, FixedProvider() if with_model else None, timeout=5)
    assert pairing_errors(result.messages) == []
    assert parse(result.messages).shape in (None, parse(messages).shape)
    banners = sum(strings(m).count(b) for m in result.messages for b in BANNERS)
    if result.method is not CompactionMethod.PASSTHROUGH:
        assert banners == 1
        assert "something stale" not in result.summary


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
