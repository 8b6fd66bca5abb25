"""Declarative site profiles: a chat page described as data, so a redesign is a data change.

A profile is a TOML file named ``<site>.toml``. Every selector is an ordered fallback list (the
first one that matches anything wins; prefer ``data-testid``/ARIA ones first). Looked up, first
hit wins, in: the data dir's ``sites/`` (written by ``--demo``), the operator's config dir
``sites/``, then the shipped ``resources/sites/``.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mediaassist.core import paths
from mediaassist.core.errors import ConfigError
from mediaassist.core.messages import Message, msg

# What every profile needs: where to type, how to send, what the answer is, how a login shows.
REQUIRED_SELECTORS = ("prompt", "send", "answer", "logged_in")
OPTIONAL_SELECTORS = ("logged_out", "generating", "stop", "done", "error", "dismiss", "new_chat", "copy",
                      "instructions", "banner", "answer_images", "file_input", "attachment_ready")
# The completion rule needs at least one signal besides the text settling.
COMPLETION_SIGNALS = ("generating", "stop", "done")
NAVIGATIONS = ("reload", "new_chat", "stay")
ANSWER_FORMATS = ("text", "markdown")
DEFAULT_RATE_LIMIT_TEXTS = ("too many requests", "rate limit", "please wait a few minutes",
                            "usage limit", "请求过于频繁", "稍后再试")
# A key chord (Playwright's spelling, e.g. "Enter", "Control+Enter", "Meta+Enter") instead of a
# send button: recognised in the ``send`` list by shape, since no CSS selector looks like one.
_CHORD = re.compile(r"^((Control|Shift|Alt|Meta|ControlOrMeta)\+)*Enter$", re.IGNORECASE)
PROMPT_ENTRIES = ("type", "paste", "fill")
_TOP_KEYS = {"name", "start_url", "login_url", "selectors", "completion", "rate_limit_texts", "busy_texts",
             "error_texts", "error_texts_in_answer", "navigation", "answer_text", "answer_format", "line_break",
             "prompt_entry", "generic_errors"}
_COMPLETION_KEYS = {"stable_ms", "done_polls", "poll_ms", "start_timeout_s", "timeout_s", "login_timeout_s"}
STABLE_MS_WITH_END_SIGNAL = 300  # a done marker in the new turn or a stop button going away
STABLE_MS_WITHOUT = 1200  # with neither, only a longer settled text guards against a preamble


@dataclass
class Completion:
    """When an answer counts as finished: generating indicator gone, the done marker (if the
    site has one) seen ``done_polls`` polls in a row in the new turn, and the turn's text
    unchanged for ``stable_ms`` (default 300 with a done marker or stop button, 1200 without),
    measured in the page from the last change inside an answer where the selectors are CSS."""

    stable_ms: int = STABLE_MS_WITHOUT
    done_polls: int = 2
    poll_ms: int = 100
    start_timeout_s: float = 20.0  # real seconds for the turn to appear after send
    timeout_s: float = 1200.0  # nominal (clock-scaled) hard limit for one answer
    login_timeout_s: float = 20.0  # real seconds for the page to show a login marker


@dataclass
class SiteProfile:
    name: str
    start_url: str
    selectors: dict[str, list[str]]
    completion: Completion = field(default_factory=Completion)
    login_url: str | None = None
    navigation: str = "reload"  # before each task: reload the chat page | click New chat | stay
    answer_text: str = "text"  # text | copy_button | attribute:NAME
    answer_format: str = "text"  # text | markdown (the turn's HTML converted)
    line_break: str = "Shift+Enter"  # the chord for a line break in a rich-text composer
    rate_limit_texts: tuple[str, ...] = DEFAULT_RATE_LIMIT_TEXTS
    busy_texts: tuple[str, ...] = ()
    error_texts: tuple[str, ...] = ()
    # an answer bubble whose text (or last line) starts with one of these is the page's error
    error_texts_in_answer: tuple[str, ...] = ()
    # how the prompt goes in: type | paste | fill; None tries them in turn until one reads back exact
    prompt_entry: str | None = None
    # the driver's generic error rule beside an ``error`` role (None: only without one). A role
    # learned from one failing turn adds to it; one written by hand replaces it.
    generic_errors: bool | None = None
    source: Path | None = None

    def has(self, role: str) -> bool:
        return bool(self.selectors.get(role))

    @property
    def uses_generic_errors(self) -> bool:
        """Whether a new alert or toast, or error-like words, fail a turn (see the driver)."""
        return not self.has("error") if self.generic_errors is None else self.generic_errors

    @property
    def send_buttons(self) -> list[str]:
        return [s for s in self.selectors["send"] if not _CHORD.match(s)]

    @property
    def send_chord(self) -> str | None:
        """The key chord that sends, if the profile names one (tried when no button matches)."""
        return next((s for s in self.selectors["send"] if _CHORD.match(s)), None)

    @property
    def generating_selectors(self) -> list[str]:
        """What shows while an answer is written; the stop control when nothing else is named."""
        return self.selectors.get("generating") or self.selectors.get("stop", [])

    @property
    def answer_attribute(self) -> str | None:
        return self.answer_text.split(":", 1)[1] if self.answer_text.startswith("attribute:") else None


def site_dirs(data_dir: Path) -> list[Path]:
    return [data_dir / "sites", paths.config_dir() / "sites", paths.RESOURCES / "sites"]


def load_site(site: str, data_dir: Path) -> SiteProfile:
    searched = site_dirs(data_dir)
    for folder in searched:
        path = folder / f"{site}.toml"
        if path.is_file():
            return parse_site(_read_toml(path), path)
    where = ", ".join(str(p) for p in searched)
    raise ConfigError(msg("site {site}: no profile {name}.toml in {where}",
                          site=repr(site), name=site, where=where))


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(msg("{path}: not valid TOML: {reason}", path=path, reason=exc)) from None


def parse_site(data: dict[str, Any], source: Path | None = None) -> SiteProfile:
    where = str(source or "site")
    _reject_unknown(data, _TOP_KEYS, where)
    for key in ("name", "start_url"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise ConfigError(msg("{where}: {key}: required, a non-empty string", where=where, key=key))
    selectors = _parse_selectors(data.get("selectors", {}), where)
    profile = SiteProfile(name=data["name"], start_url=data["start_url"], selectors=selectors,
                          completion=_parse_completion(data.get("completion", {}), _has_end_signal(selectors), where),
                          login_url=data.get("login_url"), source=source)
    profile.navigation = _choice(data, "navigation", NAVIGATIONS, profile.navigation, where)
    profile.answer_format = _choice(data, "answer_format", ANSWER_FORMATS, profile.answer_format, where)
    profile.answer_text = _answer_text(data.get("answer_text", profile.answer_text), where)
    if "prompt_entry" in data:
        profile.prompt_entry = _choice(data, "prompt_entry", PROMPT_ENTRIES, "", where)
    if "generic_errors" in data:
        profile.generic_errors = _flag(data, "generic_errors", where)
    if "line_break" in data:
        profile.line_break = _str_list(data["line_break"], f"{where}: line_break")[0]
    for key in ("rate_limit_texts", "busy_texts", "error_texts", "error_texts_in_answer"):
        if key in data:
            setattr(profile, key, tuple(t.lower() for t in _str_list(data[key], f"{where}: {key}")))
    for problem in feature_problems(profile):
        raise ConfigError(msg("{path}: {reason}", path=where, reason=problem))
    return profile


def feature_problems(profile: SiteProfile, inputs: bool = False) -> list[Message]:
    """Roles a chosen feature needs but the profile lacks, each named with the feature."""
    needs = [("new_chat", profile.navigation == "new_chat", 'navigation = "new_chat"'),
             ("copy", profile.answer_text == "copy_button", 'answer_text = "copy_button"'),
             ("file_input", inputs, "a web model with inputs (attachments)")]
    problems = [msg("selectors.{role}: required by {feature}", role=role, feature=feature)
                for role, wanted, feature in needs if wanted and not profile.has(role)]
    if not any(profile.has(role) for role in COMPLETION_SIGNALS):
        problems.append(msg("selectors: the completion rule needs one of generating, stop or done"))
    if not profile.send_buttons and profile.send_chord is None:
        problems.append(msg("selectors.send: a button selector or a key chord such as \"Enter\""))
    return problems


def _parse_selectors(table: Any, where: str) -> dict[str, list[str]]:
    if not isinstance(table, dict):
        raise ConfigError(msg("{where}: selectors: must be a table", where=where))
    _reject_unknown(table, set(REQUIRED_SELECTORS + OPTIONAL_SELECTORS), f"{where}: selectors")
    missing = [role for role in REQUIRED_SELECTORS if role not in table]
    if missing:
        raise ConfigError(msg("{where}: selectors: missing {items}", where=where, items=', '.join(missing)))
    return {role: _str_list(value, f"{where}: selectors.{role}") for role, value in table.items()}


def _parse_completion(table: Any, has_end_signal: bool, where: str) -> Completion:
    if not isinstance(table, dict):
        raise ConfigError(msg("{where}: completion: must be a table", where=where))
    _reject_unknown(table, _COMPLETION_KEYS, f"{where}: completion")
    completion = Completion(stable_ms=STABLE_MS_WITH_END_SIGNAL if has_end_signal else STABLE_MS_WITHOUT)
    for key, value in table.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise ConfigError(msg("{where}: completion.{key}: must be a number >= 0", where=where, key=key))
        setattr(completion, key, type(getattr(completion, key))(value))
    return completion


def _has_end_signal(selectors: dict[str, list[str]]) -> bool:
    """A done marker or a stop button says when the answer ended: a short settle is enough."""
    return bool(selectors.get("done") or selectors.get("stop"))


def _choice(data: dict[str, Any], key: str, allowed: tuple[str, ...], default: str, where: str) -> str:
    value = data.get(key, default)
    if value not in allowed:
        raise ConfigError(msg("{where}: {key}: {value} is not one of {items}",
                              where=where, key=key, value=repr(value), items=', '.join(allowed)))
    return str(value)


def _flag(data: dict[str, Any], key: str, where: str) -> bool:
    value = data[key]
    if not isinstance(value, bool):
        raise ConfigError(msg("{where}: {key}: {value} is not true or false", where=where, key=key, value=repr(value)))
    return value


def _answer_text(value: Any, where: str) -> str:
    if isinstance(value, str) and (value in ("text", "copy_button") or re.fullmatch(r"attribute:[\w:.-]+", value)):
        return value
    raise ConfigError(msg("{where}: answer_text: {value} is not one of text, copy_button, attribute:NAME",
                          where=where, value=repr(value)))


def _str_list(value: Any, where: str) -> list[str]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not items or not all(isinstance(s, str) and s.strip() for s in items):
        raise ConfigError(msg("{where}: must be a string or a non-empty list of strings", where=where))
    return items


def _reject_unknown(table: dict[str, Any], allowed: set[str], where: str) -> None:
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise ConfigError(msg("{where}: unknown key {unknown} (allowed: {items})",
                              where=where, unknown=repr(unknown[0]), items=', '.join(sorted(allowed))))
