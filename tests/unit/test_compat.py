"""What an OpenAI-compatible server takes, learned from what it says: the formats step down
and never back up, a stated window is read, requests sized to a window fit it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tersify.contract import FallbackReason
from tersify.errors import ProviderError
from tersify.worker.model.providers.base import ModelRequest
from tersify.worker.model.providers.compat import (
    FORMATS,
    MARGIN_TOKENS,
    Traits,
    _models_window,
    _props_window,
    refuses_format,
    stated_window,
)

LLAMA_REFUSAL = (
    "HTTP 500 internal_server_error: 1 validation error: {'type': 'literal_error', 'loc': "
    "('body', 'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\""
)
WINDOW_REFUSAL = (
    "HTTP 400 invalid_request_error: This model's maximum context length is 2,048 tokens. "
    "However, you requested 3061 tokens (3031 in the messages, 30 in the completion)."
)


def test_a_refusal_naming_the_response_format_is_told_from_other_failures() -> None:
    assert refuses_format(ProviderError(FallbackReason.SERVER_ERROR, LLAMA_REFUSAL))
    assert refuses_format(ProviderError(FallbackReason.CLIENT_ERROR, "bad json_schema"))
    assert not refuses_format(ProviderError(FallbackReason.SERVER_ERROR, "HTTP 500 overloaded"))
    assert not refuses_format(ProviderError(FallbackReason.RATE_LIMITED, "response_format"))


def test_a_stated_window_and_the_tokens_asked_are_read_from_the_refusal() -> None:
    assert stated_window(ProviderError(FallbackReason.CLIENT_ERROR, WINDOW_REFUSAL)) == (2048, 3061)
    assert stated_window(ProviderError(FallbackReason.SERVER_ERROR, WINDOW_REFUSAL)) is None
    assert stated_window(ProviderError(FallbackReason.CLIENT_ERROR, "HTTP 404")) is None


@given(st.lists(st.sampled_from(FORMATS), max_size=8))
def test_formats_only_ever_step_down(refusals: list[str]) -> None:
    traits = Traits("json_schema")
    seen = [FORMATS.index(traits.response_format)]
    for refused in refusals:
        after = traits.step_down(refused)  # type: ignore[arg-type]
        assert after is None or FORMATS.index(after) > FORMATS.index(refused)
        seen.append(FORMATS.index(traits.response_format))
    assert seen == sorted(seen)


@given(
    window=st.integers(512, 200_000),
    answer=st.integers(1, 400),
    system=st.integers(0, 4000),
    ratio=st.floats(1.0, 6.0),
)
def test_a_user_message_of_the_fitting_size_fits_the_window(
    window: int, answer: int, system: int, ratio: float
) -> None:
    traits = Traits("text", window, ratio)
    request = ModelRequest(system="s" * system, user="", max_tokens=answer)
    room = traits.fitting_chars(request)
    assert room is not None and room >= 0
    used = room / ratio + system / ratio + answer + MARGIN_TOKENS
    assert used <= window or room == 0
    assert Traits("text").fitting_chars(request) is None  # no window known: no limit


def test_a_window_is_read_from_what_llama_cpp_and_vllm_say_of_themselves() -> None:
    assert _props_window({"default_generation_settings": {"n_ctx": 4096}}) == 4096
    assert _props_window({"n_ctx": 2048}) == 2048
    assert _props_window({"nothing": 1}) is None
    assert _models_window({"data": [{"id": "m", "meta": {"n_ctx_train": 8192}}]}) == 8192
    assert _models_window({"data": [{"id": "m", "max_model_len": 32768}]}) == 32768
    assert _models_window({"data": [{"id": "m"}]}) is None
    assert _models_window([]) is None
