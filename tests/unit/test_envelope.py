"""A queue entry is proven a complete message before kombu sees it, or refused with a reason."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tersify.contract import DeadLetterReason
from tersify.errors import RefusedEntryError
from tersify.worker.broker.envelope import check_entry
from tests.entries import FIELDS, bad_entries, dumps, encode_body, envelope

LIMIT = 64 * 1024


def refusal(raw: bytes) -> RefusedEntryError:
    with pytest.raises(RefusedEntryError) as caught:
        check_entry(raw, LIMIT)
    return caught.value


def without(path: tuple[str, ...], *, null: bool) -> dict[str, Any]:
    document = envelope()
    holder = document
    for name in path[:-1]:
        holder = holder[name]
    if null:
        holder[path[-1]] = None
    else:
        del holder[path[-1]]
    return document


def test_a_complete_envelope_is_returned_as_parsed() -> None:
    document = envelope()
    assert check_entry(dumps(document), LIMIT) == document


@pytest.mark.parametrize("path", [p for p in FIELDS if p != ("properties", "body_encoding")])
@pytest.mark.parametrize("null", [False, True])
def test_a_missing_or_null_field_is_refused_naming_the_field(
    path: tuple[str, ...], null: bool
) -> None:
    error = refusal(dumps(without(path, null=null)))
    assert error.reason is DeadLetterReason.BAD_ENVELOPE
    assert ".".join(path) in error.detail


def test_a_body_without_its_base64_encoding_named_is_read_raw_and_refused_when_not_json() -> None:
    error = refusal(dumps(without(("properties", "body_encoding"), null=False)))
    assert error.reason is DeadLetterReason.BAD_BODY


def test_a_raw_json_body_without_body_encoding_is_accepted() -> None:
    document = without(("properties", "body_encoding"), null=False)
    document["body"] = json.dumps([[{}], {}, {}])
    assert check_entry(dumps(document), LIMIT) == document


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("properties",), []),
        (("headers",), "task"),
        (("headers", "task"), 7),
        (("headers", "id"), ""),
        (("properties", "delivery_tag"), 1),
        (("properties", "delivery_info"), ["", "q"]),
        (("properties", "body_encoding"), "rot13"),
        (("content-type",), "application/x-python-serialize"),
    ],
)
def test_a_field_of_the_wrong_type_or_value_is_refused(path: tuple[str, ...], value: Any) -> None:
    document = envelope()
    holder = document
    for name in path[:-1]:
        holder = holder[name]
    holder[path[-1]] = value
    assert refusal(dumps(document)).reason is DeadLetterReason.BAD_ENVELOPE


@pytest.mark.parametrize("raw", [b"", b"not json", b"\xff\xfe", b"{", b"[" * 50_000])
def test_text_that_is_not_json_is_refused_even_when_absurdly_nested(raw: bytes) -> None:
    assert refusal(raw).reason is DeadLetterReason.NOT_JSON


@pytest.mark.parametrize("raw", [b"null", b"42", b'"x"', b"[]", b"[{}]"])
def test_json_that_is_not_an_object_is_refused(raw: bytes) -> None:
    assert refusal(raw).reason is DeadLetterReason.BAD_ENVELOPE


def test_an_entry_over_the_ceiling_is_refused_before_it_is_parsed() -> None:
    error = refusal(b"{" * (LIMIT + 1))  # parsing it would raise something else
    assert error.reason is DeadLetterReason.OVERSIZED
    assert str(LIMIT + 1) in error.detail


@pytest.mark.parametrize(
    "body",
    [
        encode_body(None, raw={"args": []}),
        encode_body(None, raw=[[], {}]),
        encode_body(None, raw=[{}, {}, {}]),
        encode_body(None, raw=[[], [], {}]),
        "bm90IGpzb24=",  # base64 of "not json"
        "%%% not base64 %%%",
    ],
)
def test_a_body_that_is_not_celerys_triple_is_refused(body: str) -> None:
    document = envelope()
    document["body"] = body
    assert refusal(dumps(document)).reason is DeadLetterReason.BAD_BODY


@pytest.mark.parametrize("link", ["callbacks", "errbacks", "chain", "chord"])
def test_a_body_that_links_other_tasks_is_refused(link: str) -> None:
    body = encode_body([{}], {}, {link: [{"task": "tersify.summarize", "args": []}]})
    error = refusal(dumps(envelope(body=body)))
    assert error.reason is DeadLetterReason.BAD_BODY
    assert link in error.detail


@pytest.mark.parametrize("header", ["eta", "countdown"])
def test_a_scheduled_message_is_refused(header: str) -> None:
    document = envelope(**{header: "2999-01-01T00:00:00+00:00"})
    assert refusal(dumps(document)).reason is DeadLetterReason.BAD_ENVELOPE


@given(st.binary() | bad_entries(LIMIT))
def test_no_entry_raises_anything_but_a_refusal(raw: bytes) -> None:
    try:
        check_entry(raw, LIMIT)
    except RefusedEntryError as exc:
        assert exc.reason in DeadLetterReason and exc.detail
