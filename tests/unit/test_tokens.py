"""The one token estimate, used by rate limits, compaction sizes and reprocessing costs."""

from __future__ import annotations

from tersify.worker.model.providers.base import ModelRequest
from tersify.worker.model.tokens import answer_token_cap, estimate_tokens, request_tokens


def test_english_and_code_count_about_four_characters_a_token() -> None:
    assert estimate_tokens("x" * 4000) == 1000
    assert estimate_tokens("") == 0
    assert estimate_tokens("a") == 1


def test_cjk_text_counts_about_one_character_a_token() -> None:
    assert estimate_tokens("日本語のテキスト" * 100) == 800


def test_a_requests_budget_is_its_prompt_plus_its_answers_cap() -> None:
    request = ModelRequest(system="s" * 400, user="u" * 4000, max_tokens=300)
    assert request_tokens(request) == 100 + 1000 + 300


def test_the_answer_cap_errs_high_and_more_so_for_cjk() -> None:
    assert answer_token_cap(800, "plain text") == 800 // 3 + 64
    assert answer_token_cap(800, "中文文本" * 50) == 800 + 64
