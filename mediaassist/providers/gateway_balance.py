"""What an OpenAI-compatible gateway says the key has left, read from the route its ``balance``
table names (core/money.py ``BalanceRoute``). There is no standard route: DeepSeek answers
``/user/balance``, OpenRouter ``/credits`` (bought and used), SiliconFlow ``/user/info``.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

import httpx

from mediaassist.core.money import BalanceRoute, Money
from mediaassist.core.task_profiles import path_text
from mediaassist.core.task_templates import MISSING, JsonPath, dig

BALANCE_TIMEOUT_S = 10.0


class BalanceUnreadable(Exception):
    """The route did not answer with a balance (down, refused, another shape); the English says why."""


def balance_url(route: BalanceRoute, base_url: str) -> str:
    if route.url.startswith(("http://", "https://")):
        return route.url
    return base_url.rstrip("/") + "/" + route.url.lstrip("/")


async def read_gateway_balance(client: httpx.AsyncClient, route: BalanceRoute, base_url: str,
                               auth: dict[str, str]) -> Money:
    try:
        reply = await client.get(balance_url(route, base_url), headers=auth, timeout=BALANCE_TIMEOUT_S)
    except httpx.HTTPError as exc:
        raise BalanceUnreadable(f"{type(exc).__name__}: {exc}") from None
    if reply.status_code != 200:
        raise BalanceUnreadable(f"HTTP {reply.status_code}")
    try:
        body = reply.json()
    except ValueError:
        raise BalanceUnreadable("the reply is not JSON") from None
    left = _amount(body, route.amount)
    if route.used is not None:
        left -= _amount(body, route.used)
    return Money(left, _currency(body, route))


def _amount(body: Any, path: JsonPath) -> Decimal:
    value = dig(body, [path])
    if value is MISSING or isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise BalanceUnreadable(f"no amount at {path_text((path,))}")
    try:
        return Decimal(str(value).strip())
    except InvalidOperation:
        raise BalanceUnreadable(f"{value!r} at {path_text((path,))} is not a number") from None


def _currency(body: Any, route: BalanceRoute) -> str:
    if route.currency is not None:
        return route.currency
    assert route.currency_at is not None  # the config requires one of the two
    value = dig(body, [route.currency_at])
    if not isinstance(value, str) or not value.strip():
        raise BalanceUnreadable(f"no currency at {path_text((route.currency_at,))}")
    return value.strip()
