"""Translated labels for values that come from the core (states, error kinds, lane kinds).

Cached per language: ``data()`` runs for every visible cell, a translator lookup each time would
show up in the profile. ``Translations.apply`` clears the cache.
"""

from __future__ import annotations

from functools import lru_cache

from mediaassist.ui.i18n import tr


@lru_cache(maxsize=1)
def state_labels() -> dict[str, str]:
    return {"pending": tr("pending"), "running": tr("running"), "success": tr("success"),
            "failed": tr("failed"), "canceled": tr("canceled")}


@lru_cache(maxsize=1)
def error_kind_labels() -> dict[str, str]:
    return {"login": tr("login"), "account_disabled": tr("account disabled"), "quota": tr("quota"),
            "timeout": tr("timeout"), "stalled": tr("stalled"), "provider": tr("provider"),
            "network": tr("network"), "bad_input": tr("bad input"), "canceled": tr("canceled"),
            "internal": tr("internal")}


def lane_kind_label(kind: str) -> str:
    """A lane kind as a heading: Web, API, Polling."""
    return {"web": tr("Web"), "api": tr("API"), "poll": tr("Polling")}.get(kind, kind)


def clear_label_cache() -> None:
    state_labels.cache_clear()
    error_kind_labels.cache_clear()


def format_seconds(seconds: float | None) -> str:
    if seconds is None:
        return ""
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"
