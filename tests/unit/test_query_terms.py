"""Query terms as agents write them: punctuation, symbols and CJK make one whole term."""

from __future__ import annotations

import pytest

from tersify.worker.shrink.query import compound_terms, query_terms


@pytest.mark.parametrize(
    ("query", "term"),
    [
        ("Why does git refuse safe.directory?", "safe.directory"),
        ("what does --no-cache-dir do", "--no-cache-dir"),
        ("where is Foo->bar called", "foo->bar"),
        ("is requests 2.31.0 installed", "2.31.0"),
        ('find "connection reset by peer"', "connection reset by peer"),
        ("what is in src/worker/app.py", "src/worker/app.py"),
        ("what does kombu.transport.redis export", "kombu.transport.redis"),
        ("the std::vector<int> error", "std::vector"),
        ("which test prints 🚀", "🚀"),
        ("the 'max_retries' key", "max_retries"),
    ],
)
def test_a_term_written_with_punctuation_or_symbols_is_kept_whole(query: str, term: str) -> None:
    assert term in compound_terms(query)
    assert query_terms(query)[0] in compound_terms(query)


def test_the_words_of_a_compound_term_count_too() -> None:
    terms = query_terms("Why does git refuse safe.directory?")
    assert {"safe", "directory", "git", "refuse"} <= set(terms)


def test_cjk_words_are_terms() -> None:
    assert "エラー" in query_terms("エラーは何ですか")


def test_stopwords_short_words_and_sentence_punctuation_make_no_terms() -> None:
    assert query_terms("What is it? Is it on?") == ()
    assert compound_terms("Why? Because. Then, ok.") == ()
