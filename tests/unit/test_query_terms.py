"""Query terms as agents write them: punctuation, symbols and CJK make one whole term."""

from __future__ import annotations

import pytest

from tersify.worker.shrink.terms import compound_terms, joined_terms, query_terms


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


@pytest.mark.parametrize(
    ("query", "identifier"),
    [
        ("what is the keep alive timeout", "keepalivetimeout"),
        ("what is the keep alive timeout", "keep_alive_timeout"),
        ("the max heap size it picked", "maxheapsize"),
        ("how many parallel GC threads", "parallelgcthreads"),
    ],
)
def test_a_run_of_words_is_also_matched_as_the_identifier_it_spells(
    query: str, identifier: str
) -> None:
    assert identifier in query_terms(query)
    assert identifier in joined_terms(query)


def test_a_word_is_found_inside_an_identifier_that_joins_it_to_others() -> None:
    text = "upload_max_filesize => 2M\nkeepAliveTimeout = 5000\n".lower()
    assert "upload" in query_terms("the limit for uploads")
    assert all(t in text for t in ("upload", "keepalivetimeout"))


def test_stopwords_and_written_identifiers_break_a_run_of_words() -> None:
    joined = joined_terms("the size of the heap for parse_value calls")
    assert "sizeheap" not in joined
    assert not any("parse" in term for term in joined)


def test_a_hyphenated_term_also_matches_without_its_hyphen() -> None:
    assert {"sha-256", "sha256", "x86_64"} <= set(compound_terms("the SHA-256 sum on x86-64"))


def test_the_short_words_of_a_query_survive_its_joined_identifiers() -> None:
    query = "what max heap size and initial heap size did the JVM pick and how many GC threads"
    assert "jvm" in query_terms(query)
