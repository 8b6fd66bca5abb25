"""Money: prices as data, what a task will cost and what it did cost, budgets, formatting.

Every amount is a ``Decimal`` with its currency (an ISO code such as ``CNY`` or a service's own
unit such as ``coins``), and amounts are only ever added within one currency: ``Totals`` keeps
one sum per currency, and nothing here adds two currencies together.

A task's cost has a ``source``: ``provider`` (the service said what it charged: RunningHub's
``consumeCoins``/``consumeMoney``), ``price table`` (the config's ``price`` applied to what was
produced: tokens, images, seconds, megapixels) or ``estimate`` (nothing better is known: the
reservation made before the attempt started stands as its cost).

The store keeps amounts as integer micro-units (``to_micros``): exact, and summable in SQL on
SQLite and PostgreSQL alike.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal, InvalidOperation
from functools import cache
from typing import Any

from mediaassist.core.errors import ConfigError
from mediaassist.core.messages import ENGLISH, LANGUAGES, Message, catalogue_dir, listed, msg, render, verbatim
from mediaassist.core.task_templates import JsonPath, parse_path

SOURCE_PROVIDER, SOURCE_TABLE, SOURCE_ESTIMATE = "provider", "price table", "estimate"
# A cost's source as a task's log line says it ("cost ¥1.20 (price table)").
SOURCE_TEXTS = {SOURCE_PROVIDER: msg("reported by the provider"), SOURCE_TABLE: msg("price table"),
                SOURCE_ESTIMATE: msg("estimate")}
RATE_KEYS = ("per_task", "per_1k_input_tokens", "per_1k_output_tokens", "per_image", "per_second", "per_megapixel")
PRICE_KEYS = ("currency", *RATE_KEYS)
BUDGET_KEYS = ("per_batch", "daily", "daily_reset")
_CURRENCY = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,15}")
_RESET = re.compile(r"([01]?\d|2[0-3]):([0-5]\d)")
_MICROS = Decimal(1_000_000)
# What an estimate assumes when neither the task's params nor the model's history say more.
DEFAULT_OUTPUT_TOKENS = 400
DEFAULT_SECONDS = Decimal(5)
DEFAULT_MEGAPIXELS = Decimal(1)  # per image
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff00-\uffef]")
# Where a task's params say how long a video is or how many images it makes (providers' names).
SECONDS_PARAMS = ("seconds", "duration")
COUNT_PARAMS = ("n", "batch_size")
# ISO currencies whose symbol the operators write the same in every language.
_SYMBOLS = {"CNY": "¥"}
# CLDR's currency symbols in the app's languages, written from Babel by
# resources/translations/build_translations.py: the app does not carry Babel's 36 MB of locale data.
CURRENCY_SYMBOLS = catalogue_dir() / "currency_symbols.json"
# How many decimal places an amount shows: (at least, at most).
FIAT_PLACES, SMALL_FIAT_PLACES, UNIT_PLACES = (2, 2), (2, 4), (0, 2)


@dataclass(frozen=True)
class Money:
    amount: Decimal
    currency: str


@dataclass
class Produced:
    """What one task used and made -- the quantities a price table multiplies -- and the charge
    the provider itself reported, when it reports one."""

    input_tokens: int = 0
    output_tokens: int = 0
    images: int = 0
    seconds: Decimal = Decimal(0)
    megapixels: Decimal = Decimal(0)
    reported: Money | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                                "images": self.images, "seconds": str(self.seconds),
                                "megapixels": str(self.megapixels)}
        if self.reported is not None:
            data["reported"] = {"amount": str(self.reported.amount), "currency": self.reported.currency}
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Produced:
        reported = data.get("reported")
        return cls(int(data.get("input_tokens", 0)), int(data.get("output_tokens", 0)), int(data.get("images", 0)),
                   Decimal(str(data.get("seconds", 0))), Decimal(str(data.get("megapixels", 0))),
                   Money(Decimal(reported["amount"]), reported["currency"]) if reported else None)


@dataclass(frozen=True)
class Price:
    currency: str
    per_task: Decimal | None = None
    per_1k_input_tokens: Decimal | None = None
    per_1k_output_tokens: Decimal | None = None
    per_image: Decimal | None = None
    per_second: Decimal | None = None
    per_megapixel: Decimal | None = None

    def apply(self, produced: Produced) -> Money:
        """The table applied to what a task produced (only the rates it has count)."""
        quantities = {"per_task": Decimal(1), "per_1k_input_tokens": Decimal(produced.input_tokens) / 1000,
                      "per_1k_output_tokens": Decimal(produced.output_tokens) / 1000,
                      "per_image": Decimal(produced.images), "per_second": produced.seconds,
                      "per_megapixel": produced.megapixels}
        total = sum((rate * quantities[key] for key in RATE_KEYS
                     if (rate := getattr(self, key)) is not None), Decimal(0))
        return Money(total, self.currency)


@dataclass(frozen=True)
class Cost:
    money: Money
    source: str


def actual_cost(price: Price | None, produced: Produced) -> Cost | None:
    """What the provider reported, else the price table applied to what was produced, else
    unknown (None)."""
    if produced.reported is not None:
        return Cost(produced.reported, SOURCE_PROVIDER)
    if price is None:
        return None
    return Cost(price.apply(produced), SOURCE_TABLE)


# The figures of a provider's ``usage`` (an OpenAI answer's, a task-API profile's [result.usage])
# that a price table multiplies, under the names services give them; and those that are a charge.
INPUT_TOKEN_FIGURES = ("prompt_tokens", "input_tokens")
OUTPUT_TOKEN_FIGURES = ("completion_tokens", "output_tokens")
SECONDS_FIGURES = ("seconds", "duration", "video_duration")
CHARGE_FIGURES = ("credits",)  # reported in the service's own unit of that name


def with_usage(produced: Produced, usage: Mapping[str, Any] | None) -> Produced:
    """``produced`` completed from the provider's usage figures, where it says nothing itself."""
    usage = usage or {}

    def figure(names: tuple[str, ...]) -> int | None:
        found = (usage.get(name) for name in names)
        return next((v for v in found if isinstance(v, int) and not isinstance(v, bool)), None)

    charge = next(((name, usage[name]) for name in CHARGE_FIGURES if figure((name,)) is not None), None)
    return replace(
        produced,
        input_tokens=produced.input_tokens or figure(INPUT_TOKEN_FIGURES) or 0,
        output_tokens=produced.output_tokens or figure(OUTPUT_TOKEN_FIGURES) or 0,
        seconds=produced.seconds or Decimal(figure(SECONDS_FIGURES) or 0),
        reported=produced.reported or (Money(Decimal(charge[1]), charge[0]) if charge else None))


# --- the config's tables -----------------------------------------------------------------

def _known_keys(table: dict[str, Any], allowed: tuple[str, ...], where: str) -> None:
    """A ConfigError naming the table's first key that is not ``allowed``."""
    for key in table:
        if key not in allowed:
            raise ConfigError(msg("{where}.{key}: unknown key (allowed: {allowed})", where=where, key=key,
                                  allowed=", ".join(allowed)))


def parse_price(value: Any, where: str, inherited: Price | None = None) -> Price:
    """A ``price`` table; ``inherited`` is the provider's, whose rates a model's table keeps
    unless it names another currency (rates in another unit would be nonsense)."""
    if not isinstance(value, dict):
        raise ConfigError(msg("{where}: must be a table such as {{ currency = \"CNY\", per_task = 0.5 }}", where=where))
    _known_keys(value, PRICE_KEYS, where)
    currency = value.get("currency", inherited.currency if inherited else None)
    if currency is None:
        raise ConfigError(msg("{where}.currency: required (e.g. \"CNY\", \"USD\" or a service unit such as \"coins\")",
                              where=where))
    if not isinstance(currency, str) or not _CURRENCY.fullmatch(currency):
        raise ConfigError(msg("{where}.currency: {currency} is not a currency code or unit name (letters, digits, - "
                              "and _, e.g. \"CNY\" or \"coins\")", where=where, currency=repr(currency)))
    keep = inherited if inherited is not None and inherited.currency == currency else None
    rates = {key: getattr(keep, key) if keep else None for key in RATE_KEYS}
    rates.update({key: amount(value[key], f"{where}.{key}") for key in RATE_KEYS if key in value})
    if all(rate is None for rate in rates.values()):
        raise ConfigError(msg("{where}: names no rate (allowed: {allowed})", where=where, allowed=", ".join(RATE_KEYS)))
    return Price(currency, **rates)


BALANCE_KEYS = ("url", "amount", "used", "currency", "currency_at")


@dataclass(frozen=True)
class BalanceRoute:
    """Where an OpenAI-compatible gateway tells what the key has left (no standard route exists):
    ``url`` (absolute, or a path after the provider's ``base_url``), the JSON paths of the amount
    and, for gateways that report credits bought and used (OpenRouter), of what was used; the
    currency as written, or the path where the reply names it."""

    url: str
    amount: JsonPath
    currency: str | None = None
    currency_at: JsonPath | None = None
    used: JsonPath | None = None


def parse_balance_route(value: Any, where: str) -> BalanceRoute:
    """A provider's ``balance`` table (docs/money.md has DeepSeek's, OpenRouter's and SiliconFlow's)."""
    if not isinstance(value, dict):
        raise ConfigError(msg("{where}: must be a table such as {{ url = \"/user/balance\", amount = "
                              "\"balance_infos[0].total_balance\", currency_at = \"balance_infos[0].currency\" }}",
                              where=where))
    for key in value:
        if key not in BALANCE_KEYS:
            raise ConfigError(msg("{where}.{key}: unknown key (allowed: {allowed})", where=where, key=key,
                                  allowed=", ".join(BALANCE_KEYS)))
    for key in ("url", "amount"):
        if not isinstance(value.get(key), str) or not value[key].strip():
            raise ConfigError(msg("{where}.{key}: required, a text (e.g. {example})", where=where, key=key,
                                  example='"/user/balance"' if key == "url" else '"data.balance"'))
    currency = value.get("currency")
    if ("currency" in value) == ("currency_at" in value):
        raise ConfigError(msg("{where}: name the currency (currency = \"CNY\") or where the reply names it "
                              "(currency_at = \"data.currency\"), one of the two", where=where))
    if currency is not None and (not isinstance(currency, str) or not _CURRENCY.fullmatch(currency)):
        raise ConfigError(msg("{where}.currency: {currency} is not a currency code or unit name (letters, digits, - "
                              "and _, e.g. \"CNY\" or \"coins\")", where=where, currency=repr(currency)))

    def path(key: str) -> JsonPath | None:
        if key not in value:
            return None
        if not isinstance(value[key], str):
            raise ConfigError(msg("{where}.{key}: must be a text such as \"data.balance\"", where=where, key=key))
        return parse_path(value[key], f"{where}.{key}")

    amount_at = path("amount")
    assert amount_at is not None  # checked above
    return BalanceRoute(value["url"].strip(), amount_at, currency, path("currency_at"), path("used"))


def amount(value: Any, where: str) -> Decimal:
    """A non-negative number written in the config (an int, a float or a decimal string), exact."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ConfigError(msg("{where}: {value} is not a number", where=where, value=repr(value)))
    try:
        number = Decimal(str(value).strip())
    except InvalidOperation:
        raise ConfigError(msg("{where}: {value} is not a number", where=where, value=repr(value))) from None
    if not number.is_finite():
        raise ConfigError(msg("{where}: {value} is not a finite number", where=where, value=repr(value)))
    if number < 0:
        raise ConfigError(msg("{where}: {value} is negative (allowed: 0 or more)", where=where, value=repr(value)))
    return number


def parse_amounts(value: Any, where: str) -> dict[str, Decimal]:
    """``{ CNY = 50, coins = 3000 }``: one limit per currency."""
    if not isinstance(value, dict) or not value:
        raise ConfigError(msg("{where}: must be a table of currency = amount, e.g. {{ CNY = 50 }}", where=where))
    for currency in value:
        if not _CURRENCY.fullmatch(currency):
            raise ConfigError(msg("{where}.{currency}: not a currency code or unit name", where=where,
                                  currency=currency))
    return {currency: amount(limit, f"{where}.{currency}") for currency, limit in value.items()}


@dataclass
class BudgetConfig:
    """``[budget]``: limits per batch and per day, each per currency."""

    per_batch: dict[str, Decimal] = field(default_factory=dict)
    daily: dict[str, Decimal] = field(default_factory=dict)
    daily_reset: tuple[int, int] = (0, 0)  # local hour and minute at which a budget day begins


def parse_budget(value: Any, where: str = "budget") -> BudgetConfig:
    if not isinstance(value, dict):
        raise ConfigError(msg("{where}: must be a table", where=where))
    _known_keys(value, BUDGET_KEYS, where)
    budget = BudgetConfig()
    if "per_batch" in value:
        budget.per_batch = parse_amounts(value["per_batch"], f"{where}.per_batch")
    if "daily" in value:
        budget.daily = parse_amounts(value["daily"], f"{where}.daily")
    if "daily_reset" in value:
        reset = value["daily_reset"]
        match = _RESET.fullmatch(reset) if isinstance(reset, str) else None
        if match is None:
            raise ConfigError(msg("{where}.daily_reset: {reset} is not a time of day (allowed: \"HH:MM\", e.g. "
                                  "\"04:00\")", where=where, reset=repr(reset)))
        budget.daily_reset = (int(match.group(1)), int(match.group(2)))
    return budget


def budget_day_start(now: float, reset: tuple[int, int] = (0, 0)) -> float:
    """When the budget day ``now`` falls in began (local time, the day turning at ``reset``)."""
    local = datetime.fromtimestamp(now)
    began = local.replace(hour=reset[0], minute=reset[1], second=0, microsecond=0)
    if began > local:
        began -= timedelta(days=1)
    return began.timestamp()


def budget_day(now: float, reset: tuple[int, int] = (0, 0)) -> str:
    """The budget day ``now`` falls in: the local date, the day turning at ``reset``."""
    local = time.localtime(now - (reset[0] * 3600 + reset[1] * 60))
    return f"{local.tm_year:04d}-{local.tm_mon:02d}-{local.tm_mday:02d}"


# --- estimates ---------------------------------------------------------------------------

@dataclass
class History:
    """What a model's recent tasks did: average quantities, and how far the cost the price table
    foretold was from what the provider then charged (the correction the next estimate uses)."""

    tasks: int = 0
    output_tokens: Decimal | None = None
    images: Decimal | None = None
    seconds: Decimal | None = None
    megapixels: Decimal | None = None
    actual_per_task: dict[str, Decimal] = field(default_factory=dict)  # by currency
    correction: dict[str, Decimal] = field(default_factory=dict)  # actual / table estimate, by currency


def prompt_tokens(text: str) -> int:
    """About how many tokens a text is: a CJK character is about one, other text about four
    characters to a token."""
    cjk = len(_CJK.findall(text))
    return max(1, cjk + (len(text) - cjk + 3) // 4)


def estimate_produced(prompt: str, params: Mapping[str, Any], history: History | None = None) -> Produced:
    """What a task will probably produce, from its prompt, its params (over the model's
    defaults) and the model's history."""
    history = history or History()
    images = _first_number(params, COUNT_PARAMS)
    count = int(images) if images is not None else int(_rounded(history.images) or 1)
    seconds = _first_number(params, SECONDS_PARAMS)
    megapixels = megapixels_of(params.get("size"))
    output = _first_number(params, ("max_tokens", "max_completion_tokens"))
    return Produced(
        input_tokens=prompt_tokens(prompt),
        output_tokens=int(history.output_tokens if history.output_tokens is not None
                          else min(output or DEFAULT_OUTPUT_TOKENS, DEFAULT_OUTPUT_TOKENS)),
        images=count,
        seconds=seconds if seconds is not None else (history.seconds or DEFAULT_SECONDS),
        megapixels=(megapixels * count if megapixels is not None
                    else history.megapixels or DEFAULT_MEGAPIXELS * count),
    )


def estimate_cost(price: Price | None, produced: Produced, history: History | None = None) -> Money | None:
    """The table applied to the expected production, corrected by the model's record of actual
    against estimate; with no table, the average the provider charged; else unknown."""
    history = history or History()
    if price is not None:
        money = price.apply(produced)
        factor = history.correction.get(price.currency)
        return Money(money.amount * factor, money.currency) if factor is not None else money
    if len(history.actual_per_task) == 1:
        (currency, average), = history.actual_per_task.items()
        return Money(average, currency)
    return None


def _first_number(params: Mapping[str, Any], names: Iterable[str]) -> Decimal | None:
    for name in names:
        value = params.get(name)
        if isinstance(value, bool):
            continue
        try:
            number = Decimal(str(value).strip().removesuffix("s")) if value is not None else None
        except InvalidOperation:
            continue
        if number is not None and number.is_finite() and number >= 0:
            return number
    return None


def megapixels_of(size: Any) -> Decimal | None:
    """``"1024x1024"`` → 1.048576; None when ``size`` is not WIDTHxHEIGHT."""
    match = re.fullmatch(r"\s*(\d{1,5})\s*[x*×]\s*(\d{1,5})\s*", str(size)) if size is not None else None
    return Decimal(int(match.group(1)) * int(match.group(2))) / _MICROS if match else None


def _rounded(value: Decimal | None) -> Decimal | None:
    return value.to_integral_value(ROUND_HALF_UP) if value is not None else None


# --- sums --------------------------------------------------------------------------------

class Totals:
    """One sum per currency; never one number across currencies."""

    def __init__(self, items: Iterable[Money] = ()) -> None:
        self.by_currency: dict[str, Decimal] = {}
        for money in items:
            self.add(money)

    def add(self, money: Money) -> None:
        self.by_currency[money.currency] = self.by_currency.get(money.currency, Decimal(0)) + money.amount

    def get(self, currency: str) -> Money:
        return Money(self.by_currency.get(currency, Decimal(0)), currency)

    def monies(self) -> list[Money]:
        return [Money(total, currency) for currency, total in sorted(self.by_currency.items())]

    def to_json(self) -> dict[str, str]:
        return {currency: str(total) for currency, total in sorted(self.by_currency.items())}

    def __bool__(self) -> bool:
        return bool(self.by_currency)


def to_micros(value: Decimal) -> int:
    return int((value * _MICROS).to_integral_value(ROUND_HALF_UP))


def from_micros(micros: int) -> Decimal:
    return (Decimal(micros) / _MICROS).normalize() if micros else Decimal(0)


# --- formatting --------------------------------------------------------------------------

def is_iso_currency(currency: str) -> bool:
    return len(currency) == 3 and currency.isupper() and currency.isalpha()


def format_money(money: Money, locale: str = ENGLISH) -> str:
    """``¥1,234.50``, ``US$3.20`` (zh_CN), ``1,234 coins``: the language's symbol (a language the
    app does not have writes it the English way); a fiat amount below a cent keeps four places (a
    token's price), a unit up to two."""
    language = locale if locale in LANGUAGES else ENGLISH
    if money.currency == "coins":  # RunningHub's unit, a word of ours: in the reader's language
        return render(money_message(money), language)
    if not is_iso_currency(money.currency):
        return f"{format_number(money.amount, UNIT_PLACES)} {money.currency}"
    small = money.amount and abs(money.amount) < Decimal("0.01")
    number = format_number(money.amount, SMALL_FIAT_PLACES if small else FIAT_PLACES)
    symbol = _SYMBOLS.get(money.currency) or currency_symbols()[language].get(money.currency, money.currency)
    return f"-{symbol}{number[1:]}" if number.startswith("-") else f"{symbol}{number}"


@cache
def currency_symbols() -> dict[str, dict[str, str]]:
    """Per language, the ISO currencies written with a symbol rather than their code."""
    symbols: dict[str, dict[str, str]] = json.loads(CURRENCY_SYMBOLS.read_text(encoding="utf-8"))
    return symbols


def format_number(value: Decimal, places: tuple[int, int]) -> str:
    """``1,234,567.5`` with (at least, at most) decimal places: English and Chinese both group
    thousands with "," and mark decimals with "." (CLDR), rounding half to even as CLDR does."""
    fewest, most = places
    rounded = value.quantize(Decimal(1).scaleb(-most), ROUND_HALF_EVEN)
    whole, _, decimals = f"{abs(rounded):f}".partition(".")
    decimals = decimals.rstrip("0").ljust(fewest, "0")
    return f"{'-' if rounded.is_signed() else ''}{int(whole):,}{'.' if decimals else ''}{decimals}"


def money_message(money: Money) -> Message:
    """An amount inside a message: as ``format_money`` writes it, a service's unit translated
    (RunningHub's "12 coins" reads "12 个币")."""
    if money.currency == "coins":
        return msg("{amount} coins", amount=format_number(money.amount, UNIT_PLACES))
    return verbatim(format_money(money))


def totals_message(totals: Totals | Iterable[Money]) -> Message:
    """``format_totals`` inside a message: each currency as ``money_message`` writes it."""
    monies = totals.monies() if isinstance(totals, Totals) else list(totals)
    return listed([money_message(m) for m in monies]) if monies else verbatim("-")


def format_totals(totals: Totals | Iterable[Money], locale: str = "en") -> str:
    monies = totals.monies() if isinstance(totals, Totals) else list(totals)
    return ", ".join(format_money(m, locale) for m in monies) if monies else "-"
