"""``TERSIFY_REDIS_URL``: plain URLs pass through; Sentinel URLs parse into sentinels and a name."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import SecretStr

from tersify.settings import Settings
from tersify.store.redis_url import (
    SentinelTarget,
    broker_sentinel_options,
    broker_url,
    sentinel_target,
)

ports = st.integers(min_value=1, max_value=65535)
hosts = st.sampled_from(["127.0.0.1", "redis-sentinel-0.redis", "10.0.0.7", "[::1]"])
names = st.from_regex(r"[a-z][a-z0-9-]{0,20}", fullmatch=True)


@given(st.lists(st.tuples(hosts, ports), min_size=1, max_size=5), names, st.integers(0, 15))
def test_a_sentinel_url_names_its_sentinels_primary_and_database(
    sentinels: list[tuple[str, int]], name: str, db: int
) -> None:
    url = "sentinel://" + ",".join(f"{h}:{p}" for h, p in sentinels) + f"/{name}/{db}"
    expected = tuple((h.strip("[]"), p) for h, p in sentinels)
    assert sentinel_target(url) == SentinelTarget(expected, name, db)


def test_the_port_and_database_have_defaults() -> None:
    assert sentinel_target("sentinel://a,b:26380/main") == SentinelTarget(
        (("a", 26379), ("b", 26380)), "main", 0
    )


@pytest.mark.parametrize(
    "url",
    [
        "sentinel://a:26379",
        "sentinel://a:26379/",
        "sentinel://a:x/main",
        "sentinel://a:26379/main/zero",
        "sentinel://a:26379/main/0/extra",
        "sentinel://:secret@a:26379/main",
    ],
)
def test_a_malformed_sentinel_url_is_refused_without_echoing_it(url: str) -> None:
    with pytest.raises(ValueError) as caught:
        sentinel_target(url)
    assert "secret" not in str(caught.value)


def test_plain_urls_are_left_to_redis_py_and_kombu() -> None:
    settings = Settings(redis_url="redis://:pw@127.0.0.1:6379/2")
    assert sentinel_target(settings.redis_url) is None
    assert broker_url(settings) == settings.redis_url
    assert broker_sentinel_options(settings) == {}


def test_kombu_gets_every_sentinel_with_the_primary_password_and_the_sentinel_options() -> None:
    settings = Settings(
        redis_url="sentinel://s1:1,s2:2/main/3",
        redis_password=SecretStr("p@ss/word"),
        redis_sentinel_password=SecretStr("sentinel-pw"),
    )
    assert broker_url(settings) == (
        "sentinel://:p%40ss%2Fword@s1:1/3;sentinel://:p%40ss%2Fword@s2:2/3"
    )
    options = broker_sentinel_options(settings)
    assert options["master_name"] == "main"
    assert options["sentinel_kwargs"]["password"] == "sentinel-pw"
    assert "sentinel-pw" not in repr(settings) and "p@ss" not in repr(settings)
