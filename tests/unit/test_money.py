"""Money: price tables as data (refusals name the key), exact sums per currency, estimates,
budget days and the locale's way of writing an amount."""

from __future__ import annotations

import time
from decimal import Decimal
from typing import Any

import pytest
from babel import Locale  # a test and build tool: the app itself formats without it
from babel.numbers import format_decimal

from mediaassist.core.budget import is_budget_pause, stop_reason
from mediaassist.core.config import parse_config
from mediaassist.core.errors import ConfigError
from mediaassist.core.messages import CHINESE, LANGUAGES, msg, render, verbatim
from mediaassist.core.money import (
    CURRENCY_SYMBOLS,
    FIAT_PLACES,
    SMALL_FIAT_PLACES,
    SOURCE_PROVIDER,
    SOURCE_TABLE,
    UNIT_PLACES,
    History,
    Money,
    Price,
    Produced,
    Totals,
    actual_cost,
    budget_day,
    estimate_cost,
    estimate_produced,
    format_money,
    format_number,
    format_totals,
    from_micros,
    parse_price,
    prompt_tokens,
    to_micros,
    with_usage,
)
from mediaassist.core.store import BudgetStop, Limit
from tests.translation_build import build_script

OPENAI = {"name": "oa", "kind": "api", "type": "openai", "base_url": "https://api.example.com/v1"}


def _config(provider_price: Any = None, model_price: Any = None, **top: Any):
    provider = {**OPENAI, **({"price": provider_price} if provider_price is not None else {})}
    model = {"name": "m", "kind": "api", "provider": "oa",
             **({"price": model_price} if model_price is not None else {})}
    return parse_config({"providers": [provider], "models": [model], **top})


def test_a_model_inherits_its_providers_price_and_overrides_single_rates() -> None:
    config = _config({"currency": "CNY", "per_1k_input_tokens": 0.002, "per_1k_output_tokens": "0.008"},
                     {"per_1k_output_tokens": 0.01})
    price = config.models[0].price
    assert price == Price("CNY", per_1k_input_tokens=Decimal("0.002"), per_1k_output_tokens=Decimal("0.01"))
    assert config.providers[0].price is not None


def test_a_model_in_another_currency_keeps_none_of_the_providers_rates() -> None:
    price = _config({"currency": "CNY", "per_task": 1}, {"currency": "USD", "per_image": 0.04}).models[0].price
    assert price == Price("USD", per_image=Decimal("0.04"))


@pytest.mark.parametrize(("table", "named"), [
    ({"currency": "CNY", "per_call": 1}, "price.per_call: unknown key"),
    ({"currency": "CNY", "per_image": -0.5}, "price.per_image: -0.5 is negative"),
    ({"currency": "CNY", "per_second": "abc"}, "price.per_second: 'abc' is not a number"),
    ({"currency": "CNY", "per_task": True}, "price.per_task: True is not a number"),
    ({"per_task": 1}, "price.currency: required"),
    ({"currency": "¥", "per_task": 1}, "price.currency: '¥' is not a currency code"),
    ({"currency": "CNY"}, "price: names no rate"),
])
def test_a_bad_price_is_refused_naming_the_key(table: dict[str, Any], named: str) -> None:
    with pytest.raises(ConfigError) as caught:
        _config(table)
    assert f"providers[0].{named}" in str(caught.value)


def test_budget_is_parsed_and_bad_entries_are_named() -> None:
    config = _config(budget={"per_batch": {"CNY": 50}, "daily": {"CNY": "200.50", "coins": 3000},
                             "daily_reset": "04:30"})
    assert config.budget.per_batch == {"CNY": Decimal(50)}
    assert config.budget.daily == {"CNY": Decimal("200.50"), "coins": Decimal(3000)}
    assert config.budget.daily_reset == (4, 30)
    for bad, named in (({"daily": {"CNY": -1}}, "budget.daily.CNY: -1 is negative"),
                       ({"daily_reset": "25:00"}, "budget.daily_reset: '25:00' is not a time of day"),
                       ({"weekly": {"CNY": 1}}, "budget.weekly: unknown key")):
        with pytest.raises(ConfigError, match=named):
            _config(budget=bad)
    with pytest.raises(ConfigError, match=r"providers\[0\].daily_budget.coins: 'x' is not a number"):
        parse_config({"providers": [{**OPENAI, "daily_budget": {"coins": "x"}}]})


def test_actual_cost_prefers_what_the_provider_reported() -> None:
    price = Price("coins", per_task=Decimal(20))
    reported = Produced(reported=Money(Decimal(17), "coins"))
    assert actual_cost(price, reported).source == SOURCE_PROVIDER  # type: ignore[union-attr]
    assert actual_cost(price, reported).money == Money(Decimal(17), "coins")  # type: ignore[union-attr]
    cost = actual_cost(price, Produced())
    assert cost is not None and cost.source == SOURCE_TABLE and cost.money.amount == 20
    assert actual_cost(None, Produced()) is None


def test_each_rate_multiplies_its_quantity_exactly() -> None:
    price = Price("CNY", per_task=Decimal("0.1"), per_1k_input_tokens=Decimal("0.002"),
                  per_1k_output_tokens=Decimal("0.008"), per_image=Decimal("0.3"),
                  per_second=Decimal("0.7"), per_megapixel=Decimal("0.05"))
    produced = Produced(input_tokens=1500, output_tokens=250, images=2, seconds=Decimal(5),
                        megapixels=Decimal("2.097152"))
    expected = (Decimal("0.1") + Decimal("0.003") + Decimal("0.002") + Decimal("0.6") + Decimal("3.5")
                + Decimal("0.1048576"))
    assert price.apply(produced) == Money(expected, "CNY")


def test_totals_sum_exactly_and_never_across_currencies() -> None:
    totals = Totals(Money(Decimal("0.1"), "CNY") for _ in range(1000))
    totals.add(Money(Decimal(17), "coins"))
    assert totals.by_currency == {"CNY": Decimal("100.0"), "coins": Decimal(17)}
    assert totals.to_json() == {"CNY": "100.0", "coins": "17"}
    assert format_totals(totals) == "¥100.00, 17 coins"


def test_micros_round_trip_exactly() -> None:
    for text in ("0", "0.000001", "48.2", "123456.789012"):
        assert from_micros(to_micros(Decimal(text))) == Decimal(text)


def test_estimates_use_params_then_history_then_defaults() -> None:
    assert prompt_tokens("a" * 400) == 100
    assert prompt_tokens("一只猫") == 3
    produced = estimate_produced("hi", {"seconds": "8", "n": 2, "size": "1024x1024"})
    assert (produced.seconds, produced.images) == (Decimal(8), 2)
    assert produced.megapixels == Decimal("2.097152")
    history = History(tasks=10, seconds=Decimal(6), output_tokens=Decimal(120), images=Decimal(1))
    from_history = estimate_produced("hi", {}, history)
    assert (from_history.seconds, from_history.output_tokens) == (Decimal(6), 120)
    assert estimate_produced("hi", {}).seconds == Decimal(5)


def test_estimate_cost_is_corrected_by_the_record_and_falls_back_to_the_average_charge() -> None:
    price = Price("coins", per_task=Decimal(20))
    assert estimate_cost(price, Produced()) == Money(Decimal(20), "coins")
    corrected = estimate_cost(price, Produced(), History(tasks=5, correction={"coins": Decimal("0.85")}))
    assert corrected == Money(Decimal("17.00"), "coins")
    assert estimate_cost(None, Produced(), History(tasks=3, actual_per_task={"coins": Decimal(17)})) == \
        Money(Decimal(17), "coins")
    assert estimate_cost(None, Produced()) is None


def test_the_budget_day_turns_at_daily_reset_in_local_time() -> None:
    noon = time.mktime((2026, 12, 2, 12, 0, 0, 0, 0, -1))
    early = time.mktime((2026, 12, 2, 3, 59, 0, 0, 0, -1))
    assert budget_day(noon) == "2026-12-02"
    assert budget_day(early, (4, 0)) == "2026-12-01"
    assert budget_day(early + 60, (4, 0)) == "2026-12-02"


@pytest.mark.parametrize(("money", "locale", "text"), [
    (Money(Decimal("48.2"), "CNY"), "en", "¥48.20"),
    (Money(Decimal("1234567.5"), "CNY"), "zh_CN", "¥1,234,567.50"),
    (Money(Decimal("3.2"), "USD"), "en", "$3.20"),
    (Money(Decimal("3.2"), "USD"), "zh_CN", "US$3.20"),
    (Money(Decimal("0.0012"), "USD"), "en", "$0.0012"),
    (Money(Decimal("12345"), "coins"), "en", "12,345 coins"),
    (Money(Decimal("12345"), "coins"), "zh_CN", "12,345 个币"),  # the window's Chinese said "coins"
    (Money(Decimal("2.5"), "credits"), "zh_CN", "2.5 credits"),  # an operator's own unit stays as written
    (Money(Decimal("-1234.5"), "EUR"), "zh_CN", "-€1,234.50"),
    (Money(Decimal("1234.5"), "EUR"), "de", "€1,234.50"),  # not a language of the app's: English
])
def test_amounts_are_written_as_the_locale_writes_them(money: Money, locale: str, text: str) -> None:
    assert format_money(money, locale) == text


AMOUNTS = ["0", "0.004", "0.005", "0.015", "0.00125", "0.0012345", "1", "12.345", "999.995", "1000", "-0.001",
           "-1234.565", "1234567.5", "98765432109876.125"]


@pytest.mark.parametrize("language", LANGUAGES)
def test_amounts_are_written_as_babel_writes_them_in_the_apps_languages(language: str) -> None:
    """The app formats without Babel (a build tool, 36 MB of locale data): its symbol table and
    its numbers must be CLDR's as Babel has them, for every currency and rounding edge."""
    for code, symbol in Locale.parse(language).currency_symbols.items():
        if len(code) == 3 and code.isalpha() and code.isupper() and code not in ("CNY",):
            assert format_money(Money(Decimal(1), code), language) == f"{symbol}1.00", code
    for text in AMOUNTS:
        for places, pattern in ((FIAT_PLACES, "#,##0.00"), (SMALL_FIAT_PLACES, "#,##0.00##"),
                                (UNIT_PLACES, "#,##0.##")):
            written = format_decimal(Decimal(text), format=pattern, locale=language)
            assert format_number(Decimal(text), places) == written, (text, pattern)


def test_the_committed_currency_symbols_are_babels() -> None:
    assert CURRENCY_SYMBOLS.read_text(encoding="utf-8") == build_script().currency_symbols_json(), (
        "run resources/translations/build_translations.py and commit currency_symbols.json")


def test_parse_price_directly_names_where() -> None:
    with pytest.raises(ConfigError, match=r"models\[2\].price.per_image"):
        parse_price({"currency": "CNY", "per_image": -1}, "models[2].price")


def test_usage_figures_complete_what_a_provider_produced() -> None:
    openai = with_usage(Produced(images=2), {"input_tokens": 12, "output_tokens": 544, "total_tokens": 556})
    assert (openai.input_tokens, openai.output_tokens, openai.images) == (12, 544, 2)
    assert with_usage(Produced(), {"seconds": 8}).seconds == Decimal(8)
    assert with_usage(Produced(), {"video_duration": 5, "video_count": 1}).seconds == Decimal(5)
    assert with_usage(Produced(), {"credits": 40}).reported == Money(Decimal(40), "credits")
    reported = Money(Decimal(17), "coins")
    assert with_usage(Produced(reported=reported), {"credits": 40}).reported == reported  # the provider's own wins


def test_a_budget_pause_is_known_by_its_message_id_not_its_words() -> None:
    """Every reason a budget stops with is marked as the budget's by its id, in any language;
    an operator's pause, a plain text (an older row) or another lane reason is not."""
    cny = Money(Decimal("1.00"), "CNY")
    stops = [BudgetStop(Limit(scope, "k", cny, label="b1"), cny, cny) for scope in ("batch", "day", "provider",
                                                                                     "balance")]
    reasons = [stop_reason(stop) for stop in stops]
    assert all(is_budget_pause(reason) for reason in reasons)
    assert [render(reason, CHINESE)[:2] for reason in reasons] == ["预算", "预算", "预算", "余额"]
    assert not is_budget_pause(msg("paused by operator"))
    assert not is_budget_pause(str(reasons[0]))  # the English alone is never parsed
    assert not is_budget_pause(verbatim("budget: ¥1.00 of ¥1.00 spent today"))
    assert not is_budget_pause(None)
