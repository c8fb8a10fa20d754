"""The shape of a queue entry, checked before kombu or Celery sees it.

A producer writes each job into a Redis list as one JSON envelope (kombu's format) whose body is
Celery's protocol-2 triple ``[args, kwargs, embed]``. Kombu and Celery read such an envelope
trusting it: a missing ``properties.delivery_tag`` or a ``null`` where an object belongs raises
out of the consumer loop and stops the worker. ``check_entry`` proves an entry complete, or says
in one reason why it is not, so the transport can dead-letter it instead.

It also refuses what tersify never sends and Celery would act on: an ``eta`` or ``countdown``
(Celery would hold the message in memory past the visibility timeout, and it would be delivered
twice) and linked tasks in the embed (``callbacks``, ``errbacks``, ``chain``, ``chord``: Celery
would publish them when the task returns, so one entry could spawn others).
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from tersify.contract import DeadLetterReason
from tersify.errors import RefusedEntryError

_STRING_FIELDS = ("content-type", "content-encoding")
_LINKS = ("callbacks", "errbacks", "chain", "chord")
_UNSCHEDULED = ("eta", "countdown")


def check_entry(raw: bytes, max_bytes: int) -> dict[str, Any]:
    """The entry's envelope when it is a complete message, else ``RefusedEntryError``.

    An entry over ``max_bytes`` is refused before it is parsed.
    """
    if len(raw) > max_bytes:
        raise RefusedEntryError(
            DeadLetterReason.OVERSIZED, f"{len(raw)} bytes, over the {max_bytes}-byte ceiling"
        )
    try:
        envelope = json.loads(raw)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        raise RefusedEntryError(DeadLetterReason.NOT_JSON, _short(exc)) from None
    if not isinstance(envelope, dict):
        raise _bad("entry", envelope, "an object")
    properties = _field(envelope, "properties", dict)
    for name in _STRING_FIELDS:
        _field(envelope, name, str)
    headers = _field(envelope, "headers", dict)
    _field(properties, "delivery_tag", str, "properties.")
    info = _field(properties, "delivery_info", dict, "properties.")
    _field(info, "exchange", str, "properties.delivery_info.")
    _field(info, "routing_key", str, "properties.delivery_info.")
    encoding = properties.get("body_encoding")
    if encoding not in (None, "base64"):
        raise _bad("properties.body_encoding", encoding, '"base64" or absent')
    _check_headers(headers)
    _check_body(_field(envelope, "body", str), encoding, envelope["content-type"])
    return envelope


def _check_headers(headers: dict[str, Any]) -> None:
    for name in ("task", "id"):
        value = _field(headers, name, str, "headers.")
        if not value:
            raise _bad(f"headers.{name}", value, "a non-empty string")
    for name in _UNSCHEDULED:
        if headers.get(name) is not None:
            raise RefusedEntryError(
                DeadLetterReason.BAD_ENVELOPE, f"headers.{name}: tersify runs jobs at once"
            )


def _check_body(body: str, encoding: str | None, content_type: str) -> None:
    if content_type != "application/json":
        raise _bad("content-type", content_type, '"application/json"')
    try:
        data = base64.b64decode(body, validate=True) if encoding == "base64" else body
        triple = json.loads(data)
    except (ValueError, RecursionError, binascii.Error) as exc:
        raise RefusedEntryError(DeadLetterReason.BAD_BODY, _short(exc)) from None
    if not (
        isinstance(triple, list)
        and len(triple) == 3
        and isinstance(triple[0], list)
        and isinstance(triple[1], dict)
        and isinstance(triple[2], dict)
    ):
        raise RefusedEntryError(
            DeadLetterReason.BAD_BODY, "body: expected [args list, kwargs object, embed object]"
        )
    linked = [name for name in _LINKS if triple[2].get(name) is not None]
    if linked:
        raise RefusedEntryError(
            DeadLetterReason.BAD_BODY, f"body: linked tasks are not accepted ({', '.join(linked)})"
        )


def _field(
    holder: dict[str, Any], name: str, kind: type[dict[str, Any]] | type[str], where: str = ""
) -> Any:
    value = holder.get(name)
    if not isinstance(value, kind):
        raise _bad(where + name, value, "an object" if kind is dict else "a string")
    return value


def _bad(where: str, value: object, expected: str) -> RefusedEntryError:
    got = "missing or null" if value is None else f"a JSON {_json_kind(value)}"
    return RefusedEntryError(DeadLetterReason.BAD_ENVELOPE, f"{where}: {got}, expected {expected}")


def _json_kind(value: object) -> str:
    kinds = {bool: "boolean", int: "number", float: "number", str: "string", list: "array"}
    return kinds.get(type(value), "object")


def _short(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc)[:200]}"
