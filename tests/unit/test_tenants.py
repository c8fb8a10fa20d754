"""``TERSIFY_TENANTS`` parses into quotas; metric labels only ever name configured tenants."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from tersify.client.tenants import label
from tersify.settings import Quota, Settings, settings_problem

names = st.from_regex(r"[A-Za-z0-9._-]{1,20}", fullmatch=True)


def test_each_entry_gives_a_tenant_its_caps_and_zero_lifts_one() -> None:
    assert Settings(tenants="acme=600/5.5, beta=0/0.25,gamma").tenants == {
        "acme": Quota(jobs_per_minute=600, usd_per_day=5.5),
        "beta": Quota(jobs_per_minute=0, usd_per_day=0.25),
        "gamma": Quota(jobs_per_minute=0, usd_per_day=0.0),
    }
    assert Settings(tenants="").tenants == {}


@pytest.mark.parametrize("spec", ["=1/1", "a b=1/1", "a=x/1", "a=1/y", "a=-1/0", "a=1/-2"])
def test_a_malformed_entry_is_refused_naming_the_setting(spec: str) -> None:
    with pytest.raises(ValidationError) as caught:
        Settings(tenants=spec)
    assert settings_problem(caught.value).startswith("TERSIFY_TENANTS")


@given(st.dictionaries(names, st.integers(0, 10_000), max_size=5), st.text(max_size=30))
def test_a_label_is_a_configured_name_or_empty(configured: dict[str, int], tenant: str) -> None:
    spec = ",".join(f"{n}={jobs}/0" for n, jobs in configured.items())
    quotas = Settings(tenants=spec).tenants
    assert label(quotas, tenant) == (tenant if tenant in configured else "")
    assert label(quotas, None) == ""
