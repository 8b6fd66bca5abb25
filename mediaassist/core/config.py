"""The TOML config: providers, models, accounts and app settings, validated on load.

Every error names the offending key (``providers[1].concurrency``) and what is allowed, and an
unknown key is an error rather than a silent typo.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import re
import stat
import tomllib
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from functools import partial
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from mediaassist.core.errors import ConfigError
from mediaassist.core.hours import Hours, parse_hours
from mediaassist.core.location import check_store_url
from mediaassist.core.messages import Message, msg, verbatim
from mediaassist.core.money import (
    BalanceRoute,
    BudgetConfig,
    Price,
    parse_amounts,
    parse_balance_route,
    parse_budget,
    parse_price,
)
from mediaassist.core.naming import Template, parse_template
from mediaassist.core.order import DEFAULT_ORDER, ORDERS
from mediaassist.core.secrets import register_secret
from mediaassist.core.task_profiles import TaskApiProfile, load_profile

API_CONCURRENCY_RANGE = (1, 5)
MAX_CONCURRENCY_RANGE = (1, 20)  # the ceiling of concurrency = "auto"
AUTO_CONCURRENCY = "auto"
POLLING_TASKS_RANGE = (1, 1000)
INTERVAL_RANGE = (0.1, 3600.0)
TIMEOUT_RANGE = (1.0, 86400.0)
RECYCLE_RANGE = (1, 10000)
UPLOAD_BYTES_RANGE = (1, 1 << 34)  # up to 16 GiB
PORT_RANGE = (1, 65535)

# The fixed task-file columns; a model's input names are columns too, so they may not clash.
TASK_COLUMNS = ("model", "prompt", "task_id", "account", "system_prompt", "params", "priority", "not_before",
                "models")
MEDIA_KINDS = ("image", "video", "audio")
_INPUT_FLAG_KEYS = {"media", "multiple", "required"}
# Input names are task-file column names, which the importer matches lowercased.
_INPUT_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")

PROVIDER_KINDS = {"api": {"openai", "simulated"}, "poll": {"runninghub", "task_api", "simulated"}}
LANGUAGES = ("auto", "en", "zh_CN")
UPLOAD_APIS = ("v2", "legacy")
OPENAI_ENDPOINTS = ("chat", "images", "images_edit")

_PROVIDER_KEYS = {
    "name", "kind", "type", "base_url", "api_key", "api_key_env", "concurrency", "max_concurrency",
    "max_polling_tasks", "poll_interval_s", "queue_check_interval_s", "timeout_s",
    # simulated providers (demo/benchmarks): service time range in seconds
    "min_duration_s", "max_duration_s",
    # poll providers: back-off for tasks that stay queued remotely, spacing between creates
    "queued_poll_max_s", "min_create_interval_s",
    # task_api providers: the profile (a shipped name or a TOML path), and the second secret of a
    # profile that signs its requests (jwt_hs256: the secret key; the access key is the api key)
    "profile", "secret_key_env",
    # runninghub providers: which upload route the key uses
    "upload_api",
    # the largest media input this provider accepts (default: per media kind, see core/media.py)
    "max_upload_bytes",
    # an HTTP(S) or SOCKS5 proxy for every request to this provider
    "proxy",
    # the local hours it may run in ("23:00-07:00", or a list of ranges)
    "hours",
    # the most tasks it starts in a day (the day turns at [budget] daily_reset)
    "daily_limit",
    # the order its queue is taken in: "fifo" (default), "longest" or "fair" (core/order.py)
    "order",
    # what its models cost (core/money.py; a model's own price table overrides it) and the most
    # it may spend in a budget day, per currency
    "price", "daily_budget",
    # openai providers: the gateway's route that tells what the key has left (core/money.py)
    "balance",
    # several keys of one provider, each a slot group of its own (``_KEY_KEYS``)
    "keys",
}
# One of a provider's ``keys``: where its secret comes from, the label that is all that is ever
# shown of it, and its own limit, proxy and hours (else the provider's).
_KEY_KEYS = {"label", "env", "keyring", "api_key", "concurrency", "max_concurrency", "max_polling_tasks",
             "proxy", "hours", "daily_limit"}
_KEY_LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")
_MODEL_COMMON_KEYS = {"name", "kind", "provider", "site", "need_empty_prompt", "inputs", "price"}
# Provider-specific model keys, by provider type (web models are keyed by "web").
MODEL_KEYS_BY_TYPE: dict[str, set[str]] = {
    "openai": {"remote_model", "endpoint", "system_prompt", "defaults"},
    "runninghub": {"workflow_id", "webapp_id", "node_info_list", "prompt_node_id",
                   "prompt_field_name", "instance_type", "defaults"},
    "task_api": {"remote_model", "defaults"},
    "simulated": {"defaults"},
    "web": {"defaults"},
}
_ACCOUNT_KEYS = {"name", "site", "enabled", "host", "proxy", "hours", "order", "daily_limit"}
DAILY_LIMIT_RANGE = (1, 1_000_000)
PROXY_SCHEMES = ("http", "https", "socks5", "socks5h")
_APP_KEYS = {"language", "chromium_path", "headless", "browser_recycle_after"}
_STORE_KEYS = {"url"}
_OUTPUTS_KEYS = {"folder", "naming", "models"}
_NOTIFY_KEYS = {"name", "url", "url_env", "format", "events"}
NOTIFY_FORMATS = ("json", "wecom", "feishu", "dingtalk")
NOTICE_KINDS = ("batch_finished", "needs_login", "lane_paused")
_TOP_KEYS = {"app", "store", "providers", "models", "accounts", "notify", "outputs", "budget"}

DEFAULT_TIMEOUT_S = {"api": 120.0, "poll": 1800.0}


@dataclass
class ProviderConfig:
    name: str
    kind: str
    type: str
    base_url: str = ""
    api_key: str | None = field(default=None, repr=False)
    api_key_env: str | None = None
    concurrency: int = 3
    adaptive: bool = False  # concurrency = "auto": the lane learns its limit, up to max_concurrency
    max_concurrency: int = 5
    max_polling_tasks: int = 100
    # No max_polling_tasks in the config file: the lane follows the limit the service reports
    # for the key, where it tells one (a config built in code sets its own limits).
    follows_service_limit: bool = False
    poll_interval_s: float = 5.0
    queue_check_interval_s: float = 5.0
    timeout_s: float = 120.0
    min_duration_s: float = 8.0
    max_duration_s: float = 20.0
    queued_poll_max_s: float = 0.0  # 0: tasks queued remotely are polled every poll_interval_s
    min_create_interval_s: float = 0.0
    profile: str | None = None
    upload_api: str = "v2"  # RunningHub: "v2" (/openapi/v2/media/upload/binary) or "legacy"
    task_profile: TaskApiProfile | None = field(default=None, repr=False)
    secret_key_env: str | None = None
    # Not a config key (secrets come from the environment or the keyring): set by the demo.
    secret_key: str | None = field(default=None, repr=False)
    max_upload_bytes: int | None = None
    proxy: str | None = field(default=None, repr=False)  # may carry a user and password
    hours: Hours = ()  # local hours it may run in; () = any time
    daily_limit: int | None = None  # the most tasks it starts in a budget day; None: no limit
    order: str = DEFAULT_ORDER["api"]  # how its lane takes its queue (core/order.py)
    price: Price | None = None
    daily_budget: dict[str, Decimal] = field(default_factory=dict)  # by currency
    balance: BalanceRoute | None = None  # openai: where the gateway tells what the key has left
    # A key of a provider with ``keys``: its label (the only thing shown of it) and the keyring
    # entry its secret may come from. The provider's own entry has neither; its keys are its
    # copies, one per key, each with its key's settings (``slots``).
    key_label: str | None = None
    keyring_user: str | None = None
    keys: list[ProviderConfig] = field(default_factory=list, repr=False)

    @property
    def route(self) -> str:
        """The queue of the provider's tasks, shared by its keys' lanes."""
        return f"{self.kind}:{self.name}"

    @property
    def lane(self) -> str:
        """``api:<provider>``, or ``api:<provider>/<label>`` for one of its keys."""
        return f"{self.route}/{self.key_label}" if self.key_label else self.route

    @property
    def keyring_name(self) -> str:
        """The OS keyring entry (user) its secret may come from."""
        return self.keyring_user or (f"{self.name}/{self.key_label}" if self.key_label else self.name)

    @property
    def shown_name(self) -> str:
        """How messages name it: ``openai``, or ``openai (team-a)`` for one of its keys."""
        return f"{self.name} ({self.key_label})" if self.key_label else self.name

    def slots(self) -> list[ProviderConfig]:
        """What runs its tasks: its keys, or the provider itself when it has one key."""
        return self.keys or [self]

    @property
    def limit(self) -> int:
        """The fixed limit; for ``concurrency = "auto"`` the most the learned one may reach."""
        if self.kind != "api":
            return self.max_polling_tasks
        return self.max_concurrency if self.adaptive else self.concurrency


@dataclass
class InputSpec:
    """One media input a model takes: a task-file column of that name holds its file(s)."""

    name: str
    media: tuple[str, ...] = ("image",)
    multiple: bool = False  # several files separated by "|"
    required: bool = True
    options: dict[str, Any] = field(default_factory=dict)  # provider-specific (nodeId, field, ...)


@dataclass
class ModelConfig:
    name: str
    kind: str
    provider: str | None = None
    site: str | None = None
    need_empty_prompt: bool = False
    options: dict[str, Any] = field(default_factory=dict)
    inputs: dict[str, InputSpec] = field(default_factory=dict)
    price: Price | None = None  # its own table over its provider's (inherited)

    @property
    def route(self) -> str:
        """Where the model's tasks queue: ``web:<site>`` or ``<kind>:<provider>``."""
        return f"web:{self.site}" if self.kind == "web" else f"{self.kind}:{self.provider}"


@dataclass
class AccountConfig:
    name: str
    site: str
    enabled: bool = True
    host: str | None = None  # the machine whose profile holds the login (None: set by login)
    proxy: str | None = field(default=None, repr=False)  # the browser's proxy; may carry a password
    hours: Hours = ()  # local hours it may run in; () = any time
    daily_limit: int | None = None  # the most tasks it starts in a budget day; None: no limit
    order: str = DEFAULT_ORDER["web"]  # how its lane takes its site's queue (core/order.py)

    @property
    def lane(self) -> str:
        return f"web:{self.name}"


@dataclass
class AppSettings:
    language: str = "auto"
    chromium_path: str | None = None
    headless: bool = True
    browser_recycle_after: int = 50


@dataclass
class OutputsConfig:
    """``[outputs]``: where output files go and what they are called (``core/naming.py``)."""

    folder: Path | None = None  # None: DATA_DIR/outputs
    naming: Template | None = None  # None: the provider's names, one folder per task
    model_naming: dict[str, Template] = field(default_factory=dict)  # [outputs.models] per-model overrides

    @property
    def columns(self) -> frozenset[str]:
        """The task-file columns the templates name ({col:NAME}): the importer keeps their cells."""
        templates = [t for t in (self.naming, *self.model_naming.values()) if t is not None]
        return frozenset(c for t in templates for c in t.columns)


@dataclass
class NotifyConfig:
    """One ``[[notify]]`` webhook: where notices go, in which message format, for which events."""

    name: str
    url: str | None = field(default=None, repr=False)  # a webhook URL carries its key: never shown
    url_env: str | None = None
    format: str = "json"
    events: tuple[str, ...] = NOTICE_KINDS

    def resolved_url(self) -> str | None:
        return self.url or (os.environ.get(self.url_env) if self.url_env else None)


@dataclass
class AppConfig:
    providers: list[ProviderConfig] = field(default_factory=list)
    models: list[ModelConfig] = field(default_factory=list)
    accounts: list[AccountConfig] = field(default_factory=list)
    app: AppSettings = field(default_factory=AppSettings)
    store_url: str | None = None  # [store] url: a shared PostgreSQL store; None = the local file
    notify: list[NotifyConfig] = field(default_factory=list)
    budget: BudgetConfig = field(default_factory=BudgetConfig)
    outputs: OutputsConfig = field(default_factory=OutputsConfig)
    source: Path | None = None

    def model(self, name: str) -> ModelConfig | None:
        return next((m for m in self.models if m.name == name), None)

    def provider(self, name: str) -> ProviderConfig | None:
        return next((p for p in self.providers if p.name == name), None)

    def account(self, name: str) -> AccountConfig | None:
        return next((a for a in self.accounts if a.name == name), None)


def load_config(path: Path) -> AppConfig:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError(msg("config file not found: {path}", path=path)) from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(msg("{path}: not valid TOML: {reason}", path=path, reason=exc)) from None
    try:
        config = parse_config(data, path.parent)
    except ConfigError as exc:
        raise ConfigError(*(msg("{path}: {reason}", path=path, reason=problem) for problem in exc.problems)) from None
    config.source = path
    if any(slot.api_key for p in config.providers for slot in p.slots()):
        _warn_if_readable_by_others(path)
    return config


def load_operator_settings(path: Path, config: AppConfig) -> None:
    """The operator's own settings of the config file at ``path`` -- ``[[notify]]`` webhooks,
    ``[outputs]`` and ``[budget]`` -- into ``config`` (``--demo`` with ``--config``: try them on the
    demo providers); never its providers, models or accounts, only the ``price`` of its models and
    the ``daily_budget`` of its providers named like ``config``'s. ``[outputs.models]`` names
    ``config``'s models."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(msg("config file not found: {path}", path=path)) from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(msg("{path}: not valid TOML: {reason}", path=path, reason=exc)) from None
    problems = _Problems()
    hooks = [problems.read(partial(_parse_notify, item, f"notify[{i}]", problems))
             for i, item in enumerate(problems.read(lambda: _array(data, "notify")) or [])]
    outputs = problems.read(lambda: parse_outputs(_table(data.get("outputs", {}), "outputs"), path.parent, config,
                                                  problems))
    budget = problems.read(lambda: parse_budget(data.get("budget", {})))
    prices = _named_settings(data, "models", "price", parse_price, config.model, problems)
    daily = _named_settings(data, "providers", "daily_budget", parse_amounts, config.provider, problems)
    if problems.found:
        raise ConfigError(*(f"{path}: {problem}" for problem in problems.found))
    config.budget = budget or BudgetConfig()
    for model in config.models:
        model.price = prices.get(model.name, model.price)
    for provider in config.providers:
        provider.daily_budget = daily.get(provider.name, provider.daily_budget)
    config.notify = [hook for hook in hooks if hook is not None]
    if outputs is not None:
        config.outputs = outputs


def _named_settings(data: dict[str, Any], array: str, key: str, parse: Callable[[Any, str], _T],
                    known: Callable[[str], object], problems: _Problems) -> dict[str, _T]:
    """``key`` of the ``[[array]]`` tables whose name ``known`` knows, parsed: {name: value}."""
    found: dict[str, _T] = {}
    for i, item in enumerate(problems.read(lambda: _array(data, array)) or []):
        if isinstance(item, dict) and key in item and isinstance(item.get("name"), str) and known(item["name"]):
            value = problems.read(partial(parse, item[key], f"{array}[{i}].{key}"))
            if value is not None:
                found[item["name"]] = value
    return found


def _warn_if_readable_by_others(path: Path) -> None:
    mode = path.stat().st_mode
    if os.name == "posix" and mode & (stat.S_IRWXG | stat.S_IRWXO):
        warnings.warn(MessageWarning(msg("{path} holds an api_key but is readable by other users; run: chmod 600 "
                                         "{path}", path=path)), stacklevel=3)


class MessageWarning(UserWarning):
    """A warning for the operator whose text is a message (the CLI shows it in its language)."""

    def __init__(self, message: Message) -> None:
        super().__init__(str(message))
        self.message = message


class _Problems:
    """Every problem of a config, gathered so one start reports them all: an unknown key is
    noted and its table still read; a bad value ends its own table, the other tables go on."""

    def __init__(self) -> None:
        self.found: list[Message] = []

    def unknown_keys(self, item: dict[str, Any], allowed: set[str], where: str) -> None:
        self.found.extend(unknown_key_problems(item, allowed, where))

    def read(self, parse: Callable[[], _T]) -> _T | None:
        """``parse()``, or None with its problems noted."""
        try:
            return parse()
        except ConfigError as exc:
            self.found.extend(exc.problems)
            return None


_T = TypeVar("_T")


def parse_config(data: dict[str, Any], base_dir: Path | None = None) -> AppConfig:
    """``base_dir``: the config file's folder (relative profile paths are found from there).

    Raises one ConfigError holding every problem found."""
    problems = _Problems()
    problems.unknown_keys(data, _TOP_KEYS, "")
    config = AppConfig(app=problems.read(lambda: _parse_app(_table(data.get("app", {}), "app"), problems))
                       or AppSettings(),
                       store_url=problems.read(lambda: _parse_store(_table(data.get("store", {}), "store"),
                                                                      problems)))
    providers = problems.read(lambda: _array(data, "providers")) or []
    for i, item in enumerate(providers):
        provider = problems.read(partial(_parse_provider, item, f"providers[{i}]", base_dir, problems))
        if provider is not None:
            config.providers.append(provider)
    for i, item in enumerate(problems.read(lambda: _array(data, "accounts")) or []):
        account = problems.read(partial(_parse_account, item, f"accounts[{i}]", problems))
        if account is not None:
            config.accounts.append(account)
    # A model naming a provider whose own table has a problem is not told again.
    declared = {item.get("name") for item in providers if isinstance(item, dict)}
    for i, item in enumerate(problems.read(lambda: _array(data, "models")) or []):
        model = problems.read(partial(_parse_model, item, f"models[{i}]", config, problems, declared))
        if model is not None:
            config.models.append(model)
    for i, item in enumerate(problems.read(lambda: _array(data, "notify")) or []):
        hook = problems.read(partial(_parse_notify, item, f"notify[{i}]", problems))
        if hook is not None:
            config.notify.append(hook)
    config.budget = problems.read(lambda: parse_budget(data.get("budget", {}))) or BudgetConfig()
    problems.read(lambda: _reject_duplicates(config))
    outputs = problems.read(lambda: parse_outputs(_table(data.get("outputs", {}), "outputs"), base_dir, config,
                                                  problems))
    if outputs is not None:
        config.outputs = outputs
    if problems.found:
        raise ConfigError(*problems.found)
    return config


def parse_outputs(item: dict[str, Any], base_dir: Path | None, config: AppConfig,
                  problems: _Problems) -> OutputsConfig:
    """``[outputs]`` with ``folder``, ``naming`` and ``[outputs.models]`` (model name = template)."""
    problems.unknown_keys(item, _OUTPUTS_KEYS, "outputs")
    outputs = OutputsConfig()
    if "folder" in item:
        folder = Path(os.path.expanduser(_str(item, "folder", "outputs")))
        outputs.folder = folder if folder.is_absolute() or base_dir is None else base_dir / folder
    if "naming" in item:
        outputs.naming = parse_template(item["naming"], "outputs.naming")
    for name, text in _table(item.get("models", {}), "outputs.models").items():
        if config.model(name) is None:
            raise ConfigError(msg("outputs.models.{name}: no model named {model} ({models})", name=name,
                                  model=repr(name), models=_model_names(config)))
        outputs.model_naming[name] = parse_template(text, f"outputs.models.{name}")
    return outputs


def _model_names(config: AppConfig) -> str:
    return "models: " + (", ".join(m.name for m in config.models) or "none defined")


def _parse_notify(item: dict[str, Any], where: str, problems: _Problems) -> NotifyConfig:
    item = _table(item, where)
    problems.unknown_keys(item, _NOTIFY_KEYS, where)
    if ("url" in item) == ("url_env" in item):
        raise ConfigError(msg("{where}: give the webhook as url = \"https://...\" or url_env = \"ENV_VAR\" (one of "
                              "them)",
                              where=where))
    hook = NotifyConfig(name=_str(item, "name", where) if "name" in item else where)
    if "url" in item:
        hook.url = _str(item, "url", where)
        if urlsplit(hook.url).scheme not in ("http", "https") or not urlsplit(hook.url).hostname:
            raise ConfigError(msg("{where}.url: not an http(s) URL (e.g. "
                                  "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=...)",
                                  where=where))
    else:
        hook.url_env = _str(item, "url_env", where)
    if "format" in item:
        hook.format = _choice(item, "format", NOTIFY_FORMATS, where)
    if "events" in item:
        events = item["events"]
        if not isinstance(events, list) or not events or not all(isinstance(e, str) for e in events):
            raise ConfigError(msg("{where}.events: a non-empty list of event names (allowed: {items})",
                                  where=where, items=', '.join(NOTICE_KINDS)))
        unknown = [e for e in events if e not in NOTICE_KINDS]
        if unknown:
            raise ConfigError(msg("{where}.events: {items} is not an event (allowed: {items2})",
                                  where=where, items=', '.join(map(repr, unknown)), items2=', '.join(NOTICE_KINDS)))
        hook.events = tuple(events)
    return hook


def _parse_app(item: dict[str, Any], problems: _Problems) -> AppSettings:
    problems.unknown_keys(item, _APP_KEYS, "app")
    settings = AppSettings()
    if "language" in item:
        settings.language = _choice(item, "language", LANGUAGES, "app")
    if "chromium_path" in item:
        settings.chromium_path = _str(item, "chromium_path", "app")
    if "headless" in item:
        settings.headless = _bool(item, "headless", "app")
    if "browser_recycle_after" in item:
        settings.browser_recycle_after = _int(item, "browser_recycle_after", RECYCLE_RANGE, "app")
    return settings


def _parse_store(item: dict[str, Any], problems: _Problems) -> str | None:
    problems.unknown_keys(item, _STORE_KEYS, "store")
    return check_store_url(_str(item, "url", "store"), "store.url") if "url" in item else None


def _parse_provider(item: dict[str, Any], where: str, base_dir: Path | None, problems: _Problems) -> ProviderConfig:
    item = _table(item, where)
    problems.unknown_keys(item, _PROVIDER_KEYS, where)
    kind = _choice(item, "kind", tuple(PROVIDER_KINDS), where)
    ptype = _choice(item, "type", tuple(sorted(PROVIDER_KINDS[kind])), where)
    provider = ProviderConfig(
        name=_str(item, "name", where), kind=kind, type=ptype, timeout_s=DEFAULT_TIMEOUT_S[kind]
    )
    if ptype == "task_api":
        provider.profile = _str(item, "profile", where)
        provider.task_profile = load_profile(provider.profile, f"{where}.profile", base_dir)
    if ptype != "simulated":
        default = provider.task_profile.base_url if provider.task_profile is not None else None
        provider.base_url = _base_url(item, where) if "base_url" in item or default is None else default
    _parse_lane_settings(item, provider, where)
    provider.order = _choice(item, "order", ORDERS, where) if "order" in item else DEFAULT_ORDER[kind]
    for key in ("api_key", "api_key_env"):
        if key in item:
            setattr(provider, key, _str(item, key, where))
    provider.follows_service_limit = kind == "poll"  # till a max_polling_tasks says otherwise
    _parse_limits(item, provider, where)
    for key in ("poll_interval_s", "queue_check_interval_s", "min_duration_s", "max_duration_s",
                "queued_poll_max_s", "min_create_interval_s"):
        if key in item:
            if key in ("queued_poll_max_s", "min_create_interval_s") and kind != "poll":
                raise ConfigError(msg("{where}.{key}: only for kind = \"poll\"", where=where, key=key))
            setattr(provider, key, _float(item, key, INTERVAL_RANGE, where))
    if ptype != "task_api":
        for key in ("profile", "secret_key_env"):
            if key in item:
                raise ConfigError(msg("{where}.{key}: only for type = \"task_api\"", where=where, key=key))
    elif "secret_key_env" in item:
        provider.secret_key_env = _str(item, "secret_key_env", where)
        assert provider.task_profile is not None
        if not provider.task_profile.auth.needs_secret:
            raise ConfigError(msg("{where}.secret_key_env: profile {profile} does not sign its requests "
                                  "(auth.scheme = \"{scheme}\"); leave it out",
                                  where=where, profile=provider.profile, scheme=provider.task_profile.auth.scheme))
    if "upload_api" in item:
        if ptype != "runninghub":
            raise ConfigError(msg("{where}.upload_api: only for type = \"runninghub\"", where=where))
        provider.upload_api = _choice(item, "upload_api", UPLOAD_APIS, where)
    if "timeout_s" in item:
        provider.timeout_s = _float(item, "timeout_s", TIMEOUT_RANGE, where)
    if provider.min_duration_s > provider.max_duration_s:
        raise ConfigError(msg("{where}.min_duration_s: {min_duration_s} is more than max_duration_s "
                              "{max_duration_s} (allowed: min_duration_s <= max_duration_s)",
                              where=where, min_duration_s=provider.min_duration_s,
                              max_duration_s=provider.max_duration_s))
    if "max_upload_bytes" in item:
        provider.max_upload_bytes = _int(item, "max_upload_bytes", UPLOAD_BYTES_RANGE, where)
    if "price" in item:
        provider.price = parse_price(item["price"], f"{where}.price")
    if "daily_budget" in item:
        provider.daily_budget = parse_amounts(item["daily_budget"], f"{where}.daily_budget")
    if "balance" in item:
        if ptype != "openai":
            raise ConfigError(msg("{where}.balance: only for type = \"openai\" (RunningHub reports its balance "
                                  "by itself)", where=where))
        provider.balance = parse_balance_route(item["balance"], f"{where}.balance")
    if "keys" in item:
        provider.keys = _parse_keys(item, provider, where, problems)
    return provider


def _parse_keys(item: dict[str, Any], provider: ProviderConfig, where: str,
                problems: _Problems) -> list[ProviderConfig]:
    """``keys = [{ env = "KEY_1", label = "team-a", concurrency = 2 }, ...]``: one copy of the
    provider per key, with the key's secret source and settings over the provider's."""
    for key in ("api_key", "api_key_env"):
        if key in item:
            raise ConfigError(msg("{where}.{key}: a provider with keys takes its secrets from them (give this key "
                                  "as one of keys, e.g. {{ env = \"NAME\", label = \"a\" }})", where=where, key=key))
    given = item["keys"]
    if not isinstance(given, list) or not given or not all(isinstance(k, dict) for k in given):
        raise ConfigError(msg("{where}.keys: must be a list of tables, e.g. [{{ env = \"OPENAI_KEY_1\", label = "
                              "\"team-a\" }}, {{ keyring = \"openai-2\" }}]", where=where))
    keys = [problems.read(partial(_parse_key, entry, provider, f"{where}.keys[{i}]", i, problems))
            for i, entry in enumerate(given)]
    parsed = [key for key in keys if key is not None]
    labels = [key.key_label for key in parsed]
    twice = sorted({label for label in labels if label is not None and labels.count(label) > 1})
    if twice:
        raise ConfigError(msg("{where}.keys: label {label} is used twice (each key needs a label of its own)",
                              where=where, label=repr(twice[0])))
    return parsed


def _parse_key(entry: dict[str, Any], provider: ProviderConfig, where: str, index: int,
               problems: _Problems) -> ProviderConfig:
    problems.unknown_keys(entry, _KEY_KEYS, where)
    sources = [name for name in ("env", "keyring", "api_key") if name in entry]
    if len(sources) != 1:
        raise ConfigError(msg("{where}: give exactly one of env (an environment variable), keyring (an OS keyring "
                              "entry) or api_key (found: {found})", where=where, found=", ".join(sources) or "none"))
    label = _str(entry, "label", where) if "label" in entry else (
        str(entry["env"] if "env" in entry else entry.get("keyring", f"key-{index + 1}")))
    if not _KEY_LABEL.fullmatch(label):
        raise ConfigError(msg("{where}.label: {label} is not allowed (allowed: letters, digits, '_', '.', '-', up to "
                              "40, e.g. \"team-a\")", where=where, label=repr(label)))
    key = dataclasses.replace(provider, key_label=label, keys=[], api_key=None, api_key_env=None)
    if "env" in entry:
        key.api_key_env = _str(entry, "env", where)
    if "keyring" in entry:
        key.keyring_user = _str(entry, "keyring", where)
    if "api_key" in entry:
        key.api_key = _str(entry, "api_key", where)
    _parse_limits(entry, key, where)
    _parse_lane_settings(entry, key, where)
    return key


def _parse_limits(item: dict[str, Any], target: ProviderConfig, where: str) -> None:
    """``concurrency`` (API) or ``max_polling_tasks`` (poll), of a provider or of one of its keys
    (a key without them keeps its provider's)."""
    if target.kind == "api":
        _parse_concurrency(item, target, where)
    elif "concurrency" in item or "max_concurrency" in item:
        raise ConfigError(msg("{where}.concurrency: only for kind = \"api\" (poll providers use max_polling_tasks)",
                              where=where))
    if "max_polling_tasks" in item:
        if target.kind != "poll":
            raise ConfigError(msg("{where}.max_polling_tasks: only for kind = \"poll\"", where=where))
        target.max_polling_tasks = _int(item, "max_polling_tasks", POLLING_TASKS_RANGE, where)
        target.follows_service_limit = False


def _parse_lane_settings(item: dict[str, Any], target: ProviderConfig | AccountConfig, where: str) -> None:
    """What a provider, one of its keys and a web account each may set for its lane: its proxy,
    its hours and its daily limit."""
    if "proxy" in item:
        target.proxy = _parse_proxy(item, where)
    if "hours" in item:
        target.hours = parse_hours(item["hours"], where)
    if "daily_limit" in item:
        target.daily_limit = _int(item, "daily_limit", DAILY_LIMIT_RANGE, where)


def _parse_concurrency(item: dict[str, Any], provider: ProviderConfig, where: str) -> None:
    """A number is a fixed gate; "auto" learns the limit, never above ``max_concurrency``."""
    if item.get("concurrency") == AUTO_CONCURRENCY:
        provider.adaptive = True
        if "max_concurrency" in item:
            provider.max_concurrency = _int(item, "max_concurrency", MAX_CONCURRENCY_RANGE, where)
        return
    if "max_concurrency" in item:
        raise ConfigError(msg("{where}.max_concurrency: only with concurrency = \"auto\"", where=where))
    if isinstance(item.get("concurrency"), str):
        raise ConfigError(msg("{where}.concurrency: {concurrency} is not an integer (allowed: {low}..{high} "
                              "written without quotes, or \"auto\")",
                              where=where, concurrency=repr(item['concurrency']), low=API_CONCURRENCY_RANGE[0],
                              high=API_CONCURRENCY_RANGE[1]))
    if "concurrency" in item:  # a fixed number (a key's, over an "auto" provider's)
        provider.concurrency = _int(item, "concurrency", API_CONCURRENCY_RANGE, where)
        provider.adaptive = False


def _base_url(item: dict[str, Any], where: str) -> str:
    """An http(s) URL with a host and, if given, a port in range -- checked here, not at the
    first request an hour into a batch."""
    url = _str(item, "base_url", where).strip().rstrip("/")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:  # urlsplit's own check of the port ("port out of range", "not a number")
        raise ConfigError(msg("{where}.base_url: {url} has an invalid port (allowed: {low}..{high})",
                              where=where, url=repr(url), low=PORT_RANGE[0], high=PORT_RANGE[1])) from None
    if parts.scheme not in ("http", "https") or not parts.hostname or any(c.isspace() for c in url):
        raise ConfigError(msg("{where}.base_url: {url} is not an http(s) URL with a host "
                              "(e.g. https://api.example.com/v1)", where=where, url=repr(url)))
    if port is not None and not PORT_RANGE[0] <= port <= PORT_RANGE[1]:
        raise ConfigError(msg("{where}.base_url: port {port} is out of range (allowed: {low}..{high})",
                              where=where, port=port, low=PORT_RANGE[0], high=PORT_RANGE[1]))
    return url


def _parse_account(item: dict[str, Any], where: str, problems: _Problems) -> AccountConfig:
    item = _table(item, where)
    problems.unknown_keys(item, _ACCOUNT_KEYS, where)
    account = AccountConfig(name=_str(item, "name", where), site=_str(item, "site", where))
    if "enabled" in item:
        account.enabled = _bool(item, "enabled", where)
    if "host" in item:
        account.host = _str(item, "host", where)
    _parse_lane_settings(item, account, where)
    if "order" in item:
        account.order = _choice(item, "order", ORDERS, where)
    return account


def _parse_proxy(item: dict[str, Any], where: str) -> str:
    """A proxy URL with scheme, host and port; its password is masked in every log from now on."""
    value = _str(item, "proxy", where)
    parts = urlsplit(value)
    try:
        port = parts.port
    except ValueError:
        port = None
    if parts.scheme not in PROXY_SCHEMES or not parts.hostname or port is None:
        raise ConfigError(msg("{where}.proxy: {value} is not a proxy URL (allowed: {items} with a host and a port, "
                              "e.g. http://127.0.0.1:7890 or socks5://user:password@10.0.0.2:1080)",
                              where=where, value=repr(proxy_label(value)),
                              items=', '.join(s + '://' for s in PROXY_SCHEMES)))
    if parts.password:
        register_secret(parts.password)
    return value


def proxy_label(url: str) -> str:
    """How messages name a proxy: scheme, host and port, never its user or password."""
    parts = urlsplit(url)
    host = parts.hostname or "?"
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        port = ""
    return f"{parts.scheme}://{host}{port}" if parts.scheme else host + port


def _parse_model(item: dict[str, Any], where: str, config: AppConfig, problems: _Problems,
                 declared: set[Any]) -> ModelConfig:
    item = _table(item, where)
    kind = _choice(item, "kind", ("web", "api", "poll"), where)
    model = ModelConfig(name=_str(item, "name", where), kind=kind)
    if kind == "web":
        model.site = _str(item, "site", where)
        ptype = "web"
    else:
        model.provider = _str(item, "provider", where)
        provider = config.provider(model.provider)
        if provider is None and model.provider in declared:
            raise ConfigError()  # its provider's own problems are told already
        if provider is None:
            names = ", ".join(p.name for p in config.providers) or "none defined"
            raise ConfigError(msg("{where}.provider: no provider named {provider} (have: {names})",
                                  where=where, provider=repr(model.provider), names=names))
        if provider.kind != kind:
            raise ConfigError(
                msg("{where}.provider: {provider} is a {kind} provider, model kind is {model_kind}",
                    where=where, provider=repr(model.provider), kind=provider.kind, model_kind=kind)
            )
        ptype = provider.type
        model.price = provider.price
    problems.unknown_keys(item, _MODEL_COMMON_KEYS | MODEL_KEYS_BY_TYPE[ptype], where)
    if kind == "web" and "provider" in item:
        raise ConfigError(msg("{where}.provider: web models name a site, not a provider", where=where))
    if kind != "web" and "site" in item:
        raise ConfigError(msg("{where}.site: only web models name a site", where=where))
    if "need_empty_prompt" in item:
        model.need_empty_prompt = _bool(item, "need_empty_prompt", where)
    if ptype == "openai" and "endpoint" in item:
        _choice(item, "endpoint", OPENAI_ENDPOINTS, where)
    if "defaults" in item:
        _table(item["defaults"], f"{where}.defaults")
    if "node_info_list" in item:
        _node_info_list(item["node_info_list"], f"{where}.node_info_list")
    if "inputs" in item:
        model.inputs = _parse_inputs(item["inputs"], f"{where}.inputs")
    if "price" in item:
        model.price = parse_price(item["price"], f"{where}.price", inherited=model.price)
    model.options = {k: v for k, v in item.items() if k not in _MODEL_COMMON_KEYS}
    return model


def _node_info_list(value: Any, where: str) -> None:
    if not isinstance(value, list) or not all(isinstance(entry, dict) for entry in value):
        raise ConfigError(msg("{where}: must be an array of tables ({{ nodeId = \"3\", fieldName = \"steps\", "
                              "fieldValue = 20 }})",
                              where=where))
    for i, entry in enumerate(value):
        for key in ("nodeId", "fieldName", "fieldValue"):
            _required(entry, key, f"{where}[{i}]")
        for key in ("nodeId", "fieldName"):
            if isinstance(entry[key], bool) or not isinstance(entry[key], (str, int)):
                raise ConfigError(msg("{where}[{i}].{key}: {entry} must be a string",
                                      where=where, i=i, key=key, entry=repr(entry[key])))


def _parse_inputs(value: Any, where: str) -> dict[str, InputSpec]:
    """``["image", "mask"]`` or ``{ first_frame = { nodeId = "39", ... }, ... }``, in order."""
    if isinstance(value, list):
        if not all(isinstance(name, str) for name in value):
            raise ConfigError(msg("{where}: must be a list of input names or a table of name = {{ options }}",
                                  where=where))
        tables: dict[str, Any] = {}
        for name in value:
            if name in tables:
                raise ConfigError(msg("{where}: {name} is listed twice", where=where, name=repr(name)))
            tables[name] = {}
    elif isinstance(value, dict):
        tables = value
    else:
        raise ConfigError(msg("{where}: must be a list of input names or a table of name = {{ options }}",
                              where=where))
    return {name: _parse_input(name, options, f"{where}.{name}") for name, options in tables.items()}


def _parse_input(name: str, options: Any, where: str) -> InputSpec:
    if not _INPUT_NAME.fullmatch(name):
        raise ConfigError(msg("{where}: input names are task-file column names: lowercase letters, digits and _, "
                              "starting with a letter",
                              where=where))
    if name in TASK_COLUMNS:
        raise ConfigError(msg("{where}: {name} is a task-file column already (reserved: {items})",
                              where=where, name=repr(name), items=', '.join(TASK_COLUMNS)))
    options = _table(options, where)
    spec = InputSpec(name=name, options={k: v for k, v in options.items() if k not in _INPUT_FLAG_KEYS})
    if "media" in options:
        media = options["media"]
        media = [media] if isinstance(media, str) else media
        if (not isinstance(media, list) or not media
                or not all(isinstance(kind, str) and kind in MEDIA_KINDS for kind in media)):
            raise ConfigError(msg("{where}.media: {media} is not allowed (allowed: a list among {items})",
                                  where=where, media=repr(options['media']), items=', '.join(MEDIA_KINDS)))
        spec.media = tuple(dict.fromkeys(media))
    if "multiple" in options:
        spec.multiple = _bool(options, "multiple", where)
    if "required" in options:
        spec.required = _bool(options, "required", where)
    return spec


def _reject_duplicates(config: AppConfig) -> None:
    sections: tuple[tuple[str, Sequence[ProviderConfig | ModelConfig | AccountConfig]], ...] = (
        ("providers", config.providers), ("models", config.models), ("accounts", config.accounts))
    for section, items in sections:
        seen: set[str] = set()
        for i, item in enumerate(items):
            if item.name in seen:
                raise ConfigError(msg("{section}[{i}].name: {name} is defined twice",
                                      section=section, i=i, name=repr(item.name)))
            seen.add(item.name)


# --- typed getters: each names the key and the allowed values -------------------------------

def did_you_mean(word: str, allowed: Sequence[str] | set[str]) -> Message:
    """'; did you mean "concurrency"?' for a likely typo, else nothing."""
    close = difflib.get_close_matches(word, sorted(allowed), n=1, cutoff=0.6)
    return msg('; did you mean "{word}"?', word=close[0]) if close else verbatim("")


def unknown_key_problems(item: dict[str, Any], allowed: set[str], where: str) -> list[Message]:
    prefix = f"{where}." if where else ""
    return [msg("{prefix}{key}: unknown key{typo} (allowed: {items})", prefix=prefix, key=key,
                typo=did_you_mean(key, allowed), items=", ".join(sorted(allowed)))
            for key in item if key not in allowed]


def _table(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError(msg("{where}: must be a table", where=where))
    return value


def _array(data: dict[str, Any], key: str) -> list[dict[str, Any]]:
    value = data.get(key, [])
    if not isinstance(value, list):
        raise ConfigError(msg("{key}: must be an array of tables ([[{key}]])", key=key))
    return value


def _required(item: dict[str, Any], key: str, where: str) -> Any:
    if key not in item:
        raise ConfigError(msg("{where}.{key}: required", where=where, key=key))
    return item[key]


def _str(item: dict[str, Any], key: str, where: str) -> str:
    value = _required(item, key, where)
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(msg("{where}.{key}: must be a non-empty string", where=where, key=key))
    return value


def _bool(item: dict[str, Any], key: str, where: str) -> bool:
    value = _required(item, key, where)
    if not isinstance(value, bool):
        raise ConfigError(msg("{where}.{key}: must be true or false", where=where, key=key))
    return value


def _choice(item: dict[str, Any], key: str, allowed: tuple[str, ...], where: str) -> str:
    value = _required(item, key, where)
    if not isinstance(value, str) or value not in allowed:  # (allowed holds only strings)
        typo = did_you_mean(value, allowed) if isinstance(value, str) else verbatim("")
        raise ConfigError(msg("{where}.{key}: {value} is not allowed{typo} (allowed: {items})",
                              where=where, key=key, value=repr(value), typo=typo, items=', '.join(allowed)))
    return value


def _int(item: dict[str, Any], key: str, bounds: tuple[int, int], where: str) -> int:
    value = _required(item, key, where)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(msg("{where}.{key}: {value} is not an integer (allowed: {low}..{high}, written without "
                              "quotes)",
                              where=where, key=key, value=repr(value), low=bounds[0], high=bounds[1]))
    if not bounds[0] <= value <= bounds[1]:
        raise ConfigError(msg("{where}.{key}: {value} is out of range (allowed: integer {low}..{high})",
                              where=where, key=key, value=repr(value), low=bounds[0], high=bounds[1]))
    return value


def _float(item: dict[str, Any], key: str, bounds: tuple[float, float], where: str) -> float:
    value = _required(item, key, where)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(msg("{where}.{key}: {value} is not a number (allowed: {low}..{high}, written without "
                              "quotes)",
                              where=where, key=key, value=repr(value), low=bounds[0], high=bounds[1]))
    if not bounds[0] <= value <= bounds[1]:
        raise ConfigError(msg("{where}.{key}: {value} is out of range (allowed: number {low}..{high})",
                              where=where, key=key, value=repr(value), low=bounds[0], high=bounds[1]))
    return float(value)


def check_setting(key: str, value: Any) -> None:
    """Validate one limit as the settings dialog edits it; raises ConfigError with the range."""
    checks: dict[str, Callable[[], object]] = {
        "concurrency": lambda: _int({key: value}, key, API_CONCURRENCY_RANGE, "providers"),
        "max_polling_tasks": lambda: _int({key: value}, key, POLLING_TASKS_RANGE, "providers"),
        "poll_interval_s": lambda: _float({key: value}, key, INTERVAL_RANGE, "providers"),
        "queue_check_interval_s": lambda: _float({key: value}, key, INTERVAL_RANGE, "providers"),
        "timeout_s": lambda: _float({key: value}, key, TIMEOUT_RANGE, "providers"),
        "browser_recycle_after": lambda: _int({key: value}, key, RECYCLE_RANGE, "app"),
    }
    if key not in checks:
        raise ConfigError(msg("{key}: not an editable setting", key=key))
    checks[key]()
