"""Translated labels for values that come from the core (states, error kinds, lane kinds).

Cached per language: ``data()`` runs for every visible cell, a translator lookup each time would
show up in the profile. A language switch clears the caches.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from mediaassist.core.money import Money, format_totals
from mediaassist.ui.i18n import clear_on_language_change, current_language, tr

NO_BREAK_SPACE = "\u00a0"


@lru_cache(maxsize=1)
def state_labels() -> dict[str, str]:
    return {"pending": tr("pending"), "running": tr("running"), "success": tr("success"),
            "failed": tr("failed"), "canceled": tr("canceled")}


@lru_cache(maxsize=1)
def error_kind_labels() -> dict[str, str]:
    return {"login": tr("login"), "account_disabled": tr("account disabled"), "quota": tr("quota"),
            "timeout": tr("timeout"), "stalled": tr("stalled"), "provider": tr("provider"),
            "network": tr("network"), "bad_input": tr("bad input"), "canceled": tr("canceled"),
            "internal": tr("internal"), "download": tr("download")}


def money_text(monies: Iterable[Money]) -> str:
    """Amounts per currency, as the window's locale writes them ("¥1,234.50, 17 coins")."""
    monies = list(monies)
    return format_totals(monies, current_language()) if monies else ""


def cost_source_label(source: str) -> str:
    return {"provider": tr("reported by the provider"), "price table": tr("price table"),
            "estimate": tr("estimate")}.get(source, source)


def lane_kind_label(kind: str) -> str:
    """A lane kind as a heading: Web, API, Polling."""
    return {"web": tr("Web"), "api": tr("API"), "poll": tr("Polling")}.get(kind, kind)


def clear_label_cache() -> None:
    state_labels.cache_clear()
    error_kind_labels.cache_clear()
    _duration_formats.cache_clear()


clear_on_language_change(clear_label_cache)


@lru_cache(maxsize=1)
def _duration_formats() -> tuple[str, str, str]:
    """No-break spaces: a narrow label wraps around "ETA 9 s", never between the 9 and the s."""
    formats = tr("{s} s"), tr("{m} min {s:02d} s"), tr("{h} h {m:02d} min")
    short, medium, long = (f.replace(" ", NO_BREAK_SPACE) for f in formats)
    return short, medium, long


def format_seconds(seconds: float | None) -> str:
    """A duration with its units in the window's language ("22 min 22 s", "22 分 22 秒")."""
    if seconds is None:
        return ""
    seconds = max(0, int(seconds))
    short, medium, long = _duration_formats()
    if seconds < 60:
        return short.format(s=seconds)
    if seconds < 3600:
        return medium.format(m=seconds // 60, s=seconds % 60)
    return long.format(h=seconds // 3600, m=seconds % 3600 // 60)
