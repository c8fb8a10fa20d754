"""Raw queue entries for poison tests: a complete envelope as a producer writes it, and hypothesis
strategies for every way an entry can be incomplete, mistyped, garbled or too big."""

from __future__ import annotations

import base64
import json
import uuid
from typing import Any

from hypothesis import strategies as st

from tersify.store.wire import COMPACT_TASK, SUMMARIZE_TASK

TASKS = (SUMMARIZE_TASK, COMPACT_TASK)

# Every field of an envelope the worker relies on, as a path into the JSON object.
FIELDS: tuple[tuple[str, ...], ...] = (
    ("body",),
    ("content-type",),
    ("content-encoding",),
    ("headers",),
    ("headers", "task"),
    ("headers", "id"),
    ("properties",),
    ("properties", "delivery_tag"),
    ("properties", "delivery_info"),
    ("properties", "delivery_info", "exchange"),
    ("properties", "delivery_info", "routing_key"),
    ("properties", "body_encoding"),
)


def encode_body(args: Any, kwargs: Any = None, embed: Any = None, *, raw: Any = None) -> str:
    """A base64 body: Celery's ``[args, kwargs, embed]`` triple, or ``raw`` as JSON instead."""
    triple = raw if raw is not None else [args, kwargs if kwargs is not None else {}, embed or {}]
    return base64.b64encode(json.dumps(triple).encode()).decode()


def envelope(task: str = SUMMARIZE_TASK, body: str | None = None, **headers: Any) -> dict[str, Any]:
    """A complete envelope in kombu's format (what ``tersify.store.publisher.entry`` makes)."""
    job_id = uuid.uuid4().hex
    return {
        "body": body if body is not None else encode_body([{"schema_version": 1}]),
        "content-encoding": "utf-8",
        "content-type": "application/json",
        "headers": {"lang": "py", "task": task, "id": job_id, "eta": None, **headers},
        "properties": {
            "correlation_id": job_id,
            "delivery_mode": 2,
            "delivery_info": {"exchange": "", "routing_key": "interactive"},
            "priority": 0,
            "body_encoding": "base64",
            "delivery_tag": str(uuid.uuid4()),
        },
    }


def dumps(value: Any) -> bytes:
    """An entry as a producer would push it."""
    return json.dumps(value).encode()


_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
json_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
"""Any JSON value (objects included)."""


def _replace(document: dict[str, Any], path: tuple[str, ...], value: Any, *, delete: bool) -> None:
    holder = document
    for name in path[:-1]:
        holder = holder[name]
    if delete:
        del holder[path[-1]]
    else:
        holder[path[-1]] = value


@st.composite
def broken_envelopes(draw: st.DrawFn) -> bytes:
    """A complete envelope with one field missing, null, of another JSON type, or garbage."""
    document = envelope(draw(st.sampled_from(TASKS)))
    path = draw(st.sampled_from(FIELDS))
    how = draw(st.sampled_from(["missing", "null", "other type", "garbage"]))
    if how == "missing":
        _replace(document, path, None, delete=True)
    elif how == "null":
        _replace(document, path, None, delete=False)
    elif how == "other type":
        original = type(_get(document, path))
        value = draw(json_values.filter(lambda v: v is not None and type(v) is not original))
        _replace(document, path, value, delete=False)
    else:
        _replace(document, path, draw(st.text(min_size=1, max_size=40)), delete=False)
    return dumps(document)


def _get(document: dict[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = document
    for name in path:
        value = value[name]
    return value


_not_a_triple = json_values.filter(
    lambda v: not (isinstance(v, list) and len(v) == 3 and isinstance(v[0], list))
)
_bad_messages = json_values.filter(
    lambda v: not isinstance(v, dict) or v.get("schema_version") != 1
)


@st.composite
def wrong_arguments(draw: st.DrawFn) -> bytes:
    """A complete envelope for a tersify task whose body holds arguments of the wrong shape."""
    task = draw(st.sampled_from(TASKS))
    shape = draw(st.sampled_from(["not a triple", "arity", "kwargs", "message", "links", "eta"]))
    extra: dict[str, Any] = {}
    if shape == "not a triple":
        body = encode_body(None, raw=draw(_not_a_triple))
    elif shape == "arity":
        args = draw(st.lists(json_values, max_size=4).filter(lambda a: len(a) != 1))
        body = encode_body(args)
    elif shape == "kwargs":
        kwargs = draw(st.dictionaries(st.text(min_size=1, max_size=8), json_values, min_size=1))
        body = encode_body([{"schema_version": 1}], kwargs)
    elif shape == "message":
        body = encode_body([draw(_bad_messages | st.just({"schema_version": 1, "job": {}}))])
    elif shape == "links":
        link = {"task": task, "args": [], "kwargs": {}, "options": {}}
        body = encode_body([{}], {}, {draw(st.sampled_from(["callbacks", "errbacks"])): [link]})
    else:
        body = encode_body([{}])
        extra["eta"] = "2999-01-01T00:00:00+00:00"
    return dumps(envelope(task, body, **extra))


def oversized(limit: int) -> st.SearchStrategy[bytes]:
    """Entries just past ``limit`` bytes: padding in an otherwise complete envelope, or junk."""

    def padded(extra: int) -> bytes:
        document = envelope()
        document["headers"]["padding"] = "x" * (limit + extra)
        return dumps(document)

    sizes = st.integers(min_value=1, max_value=limit)
    return sizes.map(padded) | sizes.map(lambda extra: b"[" * (limit + extra))


def bad_entries(limit: int) -> st.SearchStrategy[bytes]:
    """Any entry a worker must dead-letter; ``limit`` is its entry-size ceiling."""
    return st.one_of(
        st.text().map(str.encode),
        st.binary(),
        _scalars.map(dumps),
        st.lists(json_values, max_size=5).map(dumps),
        broken_envelopes(),
        wrong_arguments(),
        oversized(limit),
    )
