"""Declarative site profiles: a chat page described as data, so a redesign is a data change.

A profile is a TOML file named ``<site>.toml``. Every selector is an ordered fallback list (the
first one that matches anything wins; prefer ``data-testid``/ARIA ones first). Looked up, first
hit wins, in: the data dir's ``sites/`` (written by ``--demo``), the operator's config dir
``sites/``, then the shipped ``mediaassist/resources/sites/``.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mediaassist.core import paths
from mediaassist.core.errors import ConfigError

REQUIRED_SELECTORS = ("prompt", "send", "generating", "answer", "logged_in", "logged_out")
OPTIONAL_SELECTORS = ("stop", "done", "instructions", "banner", "answer_images")
DEFAULT_RATE_LIMIT_TEXTS = ("too many requests", "rate limit", "please wait a few minutes",
                            "usage limit", "请求过于频繁", "稍后再试")
_TOP_KEYS = {"name", "start_url", "login_url", "selectors", "completion", "rate_limit_texts",
             "busy_texts"}
_COMPLETION_KEYS = {"stable_ms", "done_polls", "poll_ms", "start_timeout_s", "timeout_s", "login_timeout_s"}


@dataclass
class Completion:
    """When an answer counts as finished: generating indicator gone, the done marker (if the
    site has one) seen ``done_polls`` polls in a row, and the text unchanged for ``stable_ms``."""

    stable_ms: int = 1200
    done_polls: int = 3
    poll_ms: int = 250
    start_timeout_s: float = 20.0  # real seconds for the turn to appear after send
    timeout_s: float = 1200.0  # nominal (clock-scaled) hard limit for one answer
    login_timeout_s: float = 20.0  # real seconds for the page to show either login marker


@dataclass
class SiteProfile:
    name: str
    start_url: str
    selectors: dict[str, list[str]]
    completion: Completion = field(default_factory=Completion)
    login_url: str | None = None
    rate_limit_texts: tuple[str, ...] = DEFAULT_RATE_LIMIT_TEXTS
    busy_texts: tuple[str, ...] = ()
    source: Path | None = None

    def has(self, role: str) -> bool:
        return bool(self.selectors.get(role))


def site_dirs(data_dir: Path) -> list[Path]:
    return [data_dir / "sites", paths.config_dir() / "sites", paths.RESOURCES / "sites"]


def load_site(site: str, data_dir: Path) -> SiteProfile:
    searched = site_dirs(data_dir)
    for folder in searched:
        path = folder / f"{site}.toml"
        if path.is_file():
            return parse_site(_read_toml(path), path)
    where = ", ".join(str(p) for p in searched)
    raise ConfigError(f"site {site!r}: no profile {site}.toml in {where}")


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None


def parse_site(data: dict[str, Any], source: Path | None = None) -> SiteProfile:
    where = str(source or "site")
    _reject_unknown(data, _TOP_KEYS, where)
    for key in ("name", "start_url"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise ConfigError(f"{where}: {key}: required, a non-empty string")
    selectors = _parse_selectors(data.get("selectors", {}), where)
    completion = _parse_completion(data.get("completion", {}), where)
    profile = SiteProfile(name=data["name"], start_url=data["start_url"], selectors=selectors,
                          completion=completion, login_url=data.get("login_url"), source=source)
    for key in ("rate_limit_texts", "busy_texts"):
        if key in data:
            setattr(profile, key, tuple(t.lower() for t in _str_list(data[key], f"{where}: {key}")))
    return profile


def _parse_selectors(table: Any, where: str) -> dict[str, list[str]]:
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: selectors: must be a table")
    _reject_unknown(table, set(REQUIRED_SELECTORS + OPTIONAL_SELECTORS), f"{where}: selectors")
    missing = [role for role in REQUIRED_SELECTORS if role not in table]
    if missing:
        raise ConfigError(f"{where}: selectors: missing {', '.join(missing)}")
    return {role: _str_list(value, f"{where}: selectors.{role}") for role, value in table.items()}


def _parse_completion(table: Any, where: str) -> Completion:
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: completion: must be a table")
    _reject_unknown(table, _COMPLETION_KEYS, f"{where}: completion")
    completion = Completion()
    for key, value in table.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise ConfigError(f"{where}: completion.{key}: must be a number >= 0")
        setattr(completion, key, type(getattr(completion, key))(value))
    return completion


def _str_list(value: Any, where: str) -> list[str]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not items or not all(isinstance(s, str) and s.strip() for s in items):
        raise ConfigError(f"{where}: must be a string or a non-empty list of strings")
    return items


def _reject_unknown(table: dict[str, Any], allowed: set[str], where: str) -> None:
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r} (allowed: {', '.join(sorted(allowed))})")
