"""Lists, maps and prices in settings: written as users write them, validated into types."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import SecretStr, ValidationError

from tersify.settings import PriceTable, Settings, settings_problem
from tersify.settings.values import model_name

names = st.from_regex(r"[a-z][a-z0-9.-]{0,20}[a-z0-9]", fullmatch=True)
amounts = st.floats(0, 1000, allow_nan=False).map(lambda x: round(x, 3))


@given(st.lists(names, max_size=6), st.sampled_from([",", ", ", " ,"]))
def test_a_comma_list_is_its_items_in_order_whatever_the_spacing(
    items: list[str], sep: str
) -> None:
    written = sep.join(items) + ("," if items else "")
    assert Settings(job_models=written).job_models == tuple(items)
    assert Settings(job_models=f"[{', '.join(map(repr, items))}]".replace("'", '"')).job_models == (
        tuple(items)
    )


@given(st.dictionaries(names, st.tuples(amounts, amounts), max_size=5))
def test_a_price_table_prices_each_model_it_names_and_no_other(
    prices: dict[str, tuple[float, float]],
) -> None:
    written = ",".join(f"{m}={i}/{o}" for m, (i, o) in prices.items())
    table = PriceTable.model_validate(written)
    for model, (price_in, price_out) in prices.items():
        found = table.price(model)
        assert found is not None and (found.input, found.output) == (price_in, price_out)
        assert found.usd(1_000_000, 0) == price_in
    assert table.price("not-a-priced-model-x") is None
    assert table.price(None) is None


def test_a_model_is_looked_up_by_its_name_without_date_or_provider_prefix() -> None:
    table = PriceTable.model_validate("claude-sonnet-4-5=3/15,gpt-4.1=2/8")
    assert model_name("openai/GPT-4.1-2025-04-14") == "gpt-4.1"
    assert table.price("claude-sonnet-4-5-20250929") == table.price("claude-sonnet-4-5")
    assert table.price("openai/gpt-4.1-2025-04-14") == table.price("gpt-4.1")
    assert table.price("claude-sonnet-4") is None  # matched exactly, never by prefix


@pytest.mark.parametrize("written", ["a=1", "a=x/2", "a=1/-", "a"])
def test_a_bad_price_is_refused_naming_its_setting(written: str) -> None:
    with pytest.raises(ValidationError) as caught:
        Settings(model_prices=written)
    assert settings_problem(caught.value).startswith(f"TERSIFY_MODEL_PRICES {written[0]}")


def test_a_copy_validates_its_changes_as_the_environment_is_validated() -> None:
    copied = Settings().model_copy(update={"job_models": "a, b", "redact": "log,model"})
    assert copied.job_models == ("a", "b") and {str(s) for s in copied.redact} == {"log", "model"}
    with pytest.raises(ValidationError):
        Settings().model_copy(update={"redact": "nowhere"})


def test_values_no_field_claims_never_show_in_a_repr_or_a_dump() -> None:
    settings = Settings(openai_api_key="sk-live-0123456789", unknown_thing="s3cret")
    assert settings.extra_value("openai_api_key") == "sk-live-0123456789"
    shown = f"{settings!r} {settings} {settings.model_dump()}"
    assert "sk-live" not in shown and "s3cret" not in shown
    assert isinstance(settings.model_copy(update={"x_key": "k"}).model_extra["x_key"], SecretStr)
