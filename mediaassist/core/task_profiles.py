"""Task-API profiles: a submit-then-poll HTTP service described as data, not code.

A provider of ``type = "task_api"`` names a profile: a shipped one (``openai-videos``,
``newapi-video``, in ``resources/task_api/``) or the path of an operator's own TOML file. The
profile says how to create a job, where its id, status, progress, results and errors are in the
answers, how status words map onto queued / running / success / failed / canceled, how to cancel,
and which answers mean "back off". Every problem is a ``ConfigError`` naming the key.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from mediaassist.core.errors import ConfigError
from mediaassist.core.messages import msg
from mediaassist.core.paths import RESOURCES
from mediaassist.core.task_templates import (
    INPUT_FORMS,
    PLACEHOLDER,
    JsonPath,
    check_placeholders,
    is_input_placeholder,
    parse_path,
)

SHIPPED_DIR = RESOURCES / "task_api"
STATE_NAMES = ("queued", "running", "success", "failed", "canceled")
BODY_KINDS = ("json", "multipart")
INPUT_MODES = ("multipart", "json_url")
METHODS = ("GET", "POST", "DELETE", "PUT")
# How the key travels: a static key in a header, or a token signed per request from two secrets.
AUTH_SCHEMES = ("bearer", "header", "jwt_hs256")
SIGNING_SCHEMES = ("jwt_hs256",)  # these sign with a second secret (the provider's secret_key_env)
# What an error code means to the lane: wait and try again, pause the lane (balance; key), fail
# the task without a retry (content refused; bad input), or sign a fresh token and send again.
ERROR_ACTIONS = ("backoff", "quota", "login", "refused", "bad_input", "renew")
_CREATE_PLACEHOLDERS = "{prompt}, {remote_model}, {input.NAME} or {input.NAME.FORM} (FORM: " + \
    ", ".join(INPUT_FORMS) + ")"

_TOP_KEYS = {"name", "description", "docs", "base_url", "auth", "headers", "create", "status", "result",
             "cancel", "remix", "errors"}
_AUTH_KEYS = {"scheme", "header", "prefix", "ttl_s", "not_before_s", "renew_before_s"}
_CREATE_KEYS = {"method", "path", "headers", "body", "fields", "params_into", "input_mode", "remote_id",
                "with_inputs"}
_VARIANT_KEYS = {"path", "fields"}
_STATUS_KEYS = {"method", "path", "headers", "state", "progress", "progress_scale", "error", "states", "present",
                "state_when_absent"}
_RESULT_KEYS = {"urls", "content_path", "suffix", "requests", "with_key", "key_hosts", "usage", "expires_at"}
_RESULT_REQUEST_KEYS = {"method", "path", "take"}
_CANCEL_KEYS = {"method", "path", "headers"}
_REMIX_KEYS = {"method", "path", "fields"}
_ERROR_KEYS = {"message", "code", "backoff_status", "backoff_codes", "backoff_s", "login_status",
               "quota_status", "quota_codes", "job_limit", "success_codes", "codes"}
_INPUT_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")

Paths = tuple[JsonPath, ...]  # tried in order, the first found wins


@dataclass(frozen=True)
class Request:
    method: str
    path: str  # relative to base_url; "{id}" is the remote id
    headers: dict[str, str] = field(default_factory=dict)  # fixed extra headers of this route


@dataclass(frozen=True)
class AuthSpec:
    scheme: str  # one of AUTH_SCHEMES
    header: str = "Authorization"
    prefix: str = "Bearer "
    ttl_s: float = 1800.0  # jwt: a token's life (exp)
    not_before_s: float = 5.0  # jwt: nbf this far back, for clocks a little apart
    renew_before_s: float = 300.0  # jwt: a new token once the cached one has less left than this

    @property
    def needs_secret(self) -> bool:
        return self.scheme in SIGNING_SCHEMES


@dataclass(frozen=True)
class InputVariant:
    """``create.with_inputs.NAME``: when a task has input NAME, the create goes to ``path`` and
    ``fields`` are laid over the create's fields (key by key)."""

    input: str
    path: str | None
    fields: dict[str, Any]


@dataclass(frozen=True)
class ResultRequest:
    """One more request once the job succeeded: ``{value}`` in its path is what ``take`` finds in
    the previous answer (MiniMax: the file id → the file's download URL)."""

    method: str
    path: str
    take: Paths


@dataclass(frozen=True)
class TaskApiProfile:
    name: str
    source: str  # the file it came from (for messages)
    create: Request
    create_body: str  # json | multipart
    create_fields: dict[str, Any]
    params_into: str  # "" = top-level fields, else the name of an object field ("metadata")
    input_mode: str  # how media inputs travel: multipart file parts or JSON URL fields
    remote_id: Paths
    status: Request
    state_path: Paths
    progress_path: Paths
    error_path: Paths
    states: dict[str, str]  # service word (lower case) → one of STATE_NAMES
    result_urls: Paths
    content_path: str | None
    result_suffix: str
    result_expires_at: Paths  # where the answer says until when the result can be fetched (epoch s)
    cancel: Request | None
    error_message: Paths
    error_code: Paths
    backoff_status: frozenset[int]
    backoff_s: float
    login_status: frozenset[int]
    quota_status: frozenset[int]
    codes: tuple[tuple[str, str], ...] = ()  # (code or glob pattern, one of ERROR_ACTIONS), first match wins
    job_limit: int | None = None  # the service's documented jobs-at-once, for the max_polling_tasks warning
    description: str = ""
    docs: str = ""  # the service's own documentation
    base_url: str | None = None  # the service's usual address (a provider may leave base_url out)
    auth: AuthSpec = AuthSpec("bearer")
    headers: dict[str, str] = field(default_factory=dict)  # on every request to the service
    variants: tuple[InputVariant, ...] = ()
    state_present: tuple[tuple[str, Paths], ...] = ()  # (state, paths): a state told by presence
    state_when_absent: str | None = None  # the state while the answer has no state field yet
    progress_scale: float = 100.0  # what the progress field says at 100 %
    result_requests: tuple[ResultRequest, ...] = ()
    result_with_key: bool = False  # result URLs need the key (sent only to key hosts)
    key_hosts: frozenset[str] = frozenset()  # hosts besides base_url's that may receive the key
    usage: dict[str, Paths] = field(default_factory=dict)  # figure name → where it is in the answer
    success_codes: frozenset[str] = frozenset()  # a 2xx body whose code is not one of these is an error
    # A new job made from a finished one ("{id}": the parent's remote id), answered like a create.
    remix: Request | None = None
    remix_fields: dict[str, Any] | None = None

    def action_for(self, code: str | None) -> str | None:
        if code is None:
            return None
        return next((action for pattern, action in self.codes if fnmatchcase(code, pattern)), None)


def path_text(paths: Paths) -> str:
    """Paths as the profile writes them, for messages."""
    return " / ".join(".".join(p if isinstance(p, str) else f"[{'*' if p is None else p}]"
                               for p in path).replace(".[", "[") for path in paths)


def shipped_profiles() -> list[str]:
    return sorted(p.stem for p in SHIPPED_DIR.glob("*.toml"))


def load_profile(ref: str, where: str, base_dir: Path | None = None) -> TaskApiProfile:
    """``ref`` is a shipped name or a TOML path (relative to ``base_dir``, the config's folder)."""
    path = _resolve(ref, where, base_dir)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(msg("{where}: profile {path} cannot be read: {reason}",
                              where=where, path=path, reason=exc)) from None
    try:
        return parse_profile(data, str(path))
    except ConfigError as exc:
        raise ConfigError(msg("{where} ({name}): {reason}", where=where, name=path.name, reason=exc.message)) from None


def _resolve(ref: str, where: str, base_dir: Path | None) -> Path:
    if "/" not in ref and "\\" not in ref and not ref.endswith(".toml"):
        path = SHIPPED_DIR / f"{ref}.toml"
        if not path.is_file():
            raise ConfigError(msg("{where}: no shipped profile {ref} (shipped: {items}; or give the path of a "
                                  ".toml file)",
                                  where=where, ref=repr(ref), items=', '.join(shipped_profiles())))
        return path
    path = Path(ref).expanduser()
    if not path.is_absolute() and base_dir is not None:
        path = base_dir / path
    if not path.is_file():
        raise ConfigError(msg("{where}: profile file {path} not found", where=where, path=path))
    return path


def parse_profile(data: dict[str, Any], source: str = "<inline>") -> TaskApiProfile:
    """Every problem is a ConfigError naming the profile's own key (``status.states.failed``)."""
    where = ""
    _known(data, _TOP_KEYS, where)
    create = _section(data, "create", where, _CREATE_KEYS)
    status = _section(data, "status", where, _STATUS_KEYS)
    result = _section(data, "result", where, _RESULT_KEYS)
    errors = _section(data, "errors", where, _ERROR_KEYS, required=False)
    cancel = _section(data, "cancel", where, _CANCEL_KEYS, required=False)
    remix = _section(data, "remix", where, _REMIX_KEYS, required=False)
    urls, content = _paths(result, "urls", "result", ()), _opt_str(result, "content_path", "result")
    if not urls and content is None:
        raise ConfigError(msg("result: needs urls (where result URLs are) or content_path (a download route)"))
    states, present = _states(status, "status"), _present(status, "status")
    for needed in ("success", "failed"):
        if needed not in states.values() and needed not in dict(present):
            raise ConfigError(msg("status.states.{needed}: required (the words that end a job; or "
                                  "status.present.{needed}, a field whose presence means it)",
                                  needed=needed))
    return TaskApiProfile(
        name=_str(data, "name", where), source=source,
        description=_opt_str(data, "description", where) or "", docs=_opt_str(data, "docs", where) or "",
        base_url=_opt_str(data, "base_url", where), auth=_auth(data), headers=_headers(data, where),
        create=_request(create, "create", "POST", ("remote_model",)),
        create_body=_choice(create, "body", BODY_KINDS, "create", "json"),
        create_fields=_fields(create, "create"),
        variants=_variants(create),
        params_into=_opt_str(create, "params_into", "create") or "",
        input_mode=_choice(create, "input_mode", INPUT_MODES, "create", "json_url"),
        remote_id=_paths(create, "remote_id", "create", None),
        status=_request(status, "status", "GET", ("id", "create_path")),
        state_path=_paths(status, "state", "status", None),
        progress_path=_paths(status, "progress", "status", ()),
        progress_scale=_number(status, "progress_scale", "status", 100.0, (0.001, 1e6)),
        error_path=_paths(status, "error", "status", ()),
        states=states, state_present=present,
        state_when_absent=_choice(status, "state_when_absent", STATE_NAMES, "status", "")
        if "state_when_absent" in status else None,
        result_urls=urls, content_path=content,
        result_suffix=_opt_str(result, "suffix", "result") or "",
        result_expires_at=_paths(result, "expires_at", "result", ()),
        result_requests=_result_requests(result),
        result_with_key=_bool(result, "with_key", "result"),
        key_hosts=_strs(result, "key_hosts", "result"),
        usage=_usage(result),
        cancel=_request(cancel, "cancel", "POST", ("id", "create_path")) if cancel else None,
        error_message=_paths(errors, "message", "errors", ("error.message", "message", "error")),
        error_code=_paths(errors, "code", "errors", ("error.code", "code")),
        backoff_status=_ints(errors, "backoff_status", "errors", (429,)),
        backoff_s=_number(errors, "backoff_s", "errors", 10.0, (0.1, 3600)),
        login_status=_ints(errors, "login_status", "errors", (401, 403)),
        quota_status=_ints(errors, "quota_status", "errors", (402,)),
        codes=_codes(errors),
        success_codes=_strs(errors, "success_codes", "errors"),
        job_limit=_opt_int(errors, "job_limit", "errors"),
        remix=_request(remix, "remix", "POST", ("id",)) if remix else None,
        remix_fields=(_fields(remix, "remix") or {"prompt": "{prompt}"}) if remix else None,
    )


def _auth(data: dict[str, Any]) -> AuthSpec:
    item = _section(data, "auth", "", _AUTH_KEYS, required=False)
    scheme = _choice(item, "scheme", AUTH_SCHEMES, "auth", "bearer")
    if scheme == "header" and "header" not in item:
        raise ConfigError(msg("auth.header: required for scheme = \"header\" (the header's name, e.g. "
                              "\"x-goog-api-key\"; with prefix = \"Token \" for \"Token <key>\")"))
    jwt = scheme == "jwt_hs256"
    for key in ("ttl_s", "not_before_s", "renew_before_s"):
        if key in item and not jwt:
            raise ConfigError(msg("auth.{key}: only for scheme = \"jwt_hs256\"", key=key))
    spec = AuthSpec(scheme, header=_opt_str(item, "header", "auth") or "Authorization",
                    prefix=_text(item, "prefix", "auth", "" if scheme == "header" else "Bearer "),
                    ttl_s=_number(item, "ttl_s", "auth", 1800.0, (10, 86400)),
                    not_before_s=_number(item, "not_before_s", "auth", 5.0, (0, 3600)),
                    renew_before_s=_number(item, "renew_before_s", "auth", 300.0, (0, 86400)))
    if spec.renew_before_s >= spec.ttl_s:
        raise ConfigError(msg("auth.renew_before_s: {renew_before_s} is not below ttl_s {ttl_s} (a token would be "
                              "renewed on every request)",
                              renew_before_s=format(spec.renew_before_s, "g"), ttl_s=format(spec.ttl_s, "g")))
    return spec


def _variants(create: dict[str, Any]) -> tuple[InputVariant, ...]:
    table = create.get("with_inputs", {})
    if not isinstance(table, dict):
        raise ConfigError(msg("create.with_inputs: must be a table: input name = {{ path, fields }}"))
    variants = []
    for name, item in table.items():
        where = f"create.with_inputs.{name}"
        if not _INPUT_NAME.fullmatch(name):
            raise ConfigError(msg("{where}: {name} is not an input name (lower case letters, digits, _)",
                                  where=where, name=repr(name)))
        if not isinstance(item, dict):
            raise ConfigError(msg("{where}: must be a table (path, fields)", where=where))
        _known(item, _VARIANT_KEYS, where)
        path = _request(item, where, "POST", ("remote_model",)).path if "path" in item else None
        variants.append(InputVariant(name, path, _fields(item, where)))
    return tuple(variants)


def _result_requests(result: dict[str, Any]) -> tuple[ResultRequest, ...]:
    items = result.get("requests", [])
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise ConfigError(msg("result.requests: must be an array of tables ([[result.requests]] method, path, take)"))
    steps = []
    for n, item in enumerate(items):
        where = f"result.requests[{n}]"
        _known(item, _RESULT_REQUEST_KEYS, where)
        request = _request(item, where, "GET", ("id", "value"))
        steps.append(ResultRequest(request.method, request.path, _paths(item, "take", where, None)))
    return tuple(steps)


def _usage(result: dict[str, Any]) -> dict[str, Paths]:
    table = result.get("usage", {})
    if not isinstance(table, dict):
        raise ConfigError(msg("result.usage: must be a table: figure name = path (e.g. credits = \"credits\")"))
    return {name: _paths(table, name, "result.usage", None) for name in table}


def _codes(errors: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """``codes`` (code or glob pattern → action), then the older ``backoff_codes``/``quota_codes``."""
    table = errors.get("codes", {})
    if not isinstance(table, dict):
        raise ConfigError(msg("errors.codes: must be a table: \"code\" = \"action\""))
    codes = []
    for code, action in table.items():
        if action not in ERROR_ACTIONS:
            raise ConfigError(msg("errors.codes.{code}: {action} is not allowed (allowed: {items})",
                                  code=code, action=repr(action), items=', '.join(ERROR_ACTIONS)))
        codes.append((str(code), str(action)))
    for key, action in (("backoff_codes", "backoff"), ("quota_codes", "quota")):
        codes += [(code, action) for code in sorted(_strs(errors, key, "errors"))]
    return tuple(codes)


def _present(status: dict[str, Any], where: str) -> tuple[tuple[str, Paths], ...]:
    table = status.get("present", {})
    if not isinstance(table, dict):
        raise ConfigError(msg("{where}.present: must be a table: state = path (e.g. failed = \"error\")",
                              where=where))
    for state in table:
        if state not in STATE_NAMES:
            raise ConfigError(msg("{where}.present.{state}: unknown state (allowed: {items})",
                                  where=where, state=state, items=', '.join(STATE_NAMES)))
    return tuple((state, _paths(table, state, f"{where}.present", None)) for state in table)


# --- typed pieces, each naming its key -------------------------------------------------------

def _at(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _known(item: dict[str, Any], allowed: set[str], where: str) -> None:
    for key in item:
        if key not in allowed:
            raise ConfigError(msg("{where}: unknown key (allowed: {items})",
                                  where=_at(where, key), items=', '.join(sorted(allowed))))


def _section(data: dict[str, Any], key: str, where: str, allowed: set[str], required: bool = True) -> dict[str, Any]:
    if key not in data:
        if required:
            raise ConfigError(msg("{where}: required (a [{key}] table)", where=_at(where, key), key=key))
        return {}
    value = data[key]
    if not isinstance(value, dict):
        raise ConfigError(msg("{where}: must be a table", where=_at(where, key)))
    _known(value, allowed, _at(where, key))
    return value


def _str(item: dict[str, Any], key: str, where: str) -> str:
    value = item.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(msg("{path}: {reason}",
                              path=_at(where, key),
                              reason='required' if key not in item else 'must be a non-empty string'))
    return value


def _opt_str(item: dict[str, Any], key: str, where: str) -> str | None:
    return _str(item, key, where) if key in item else None


def _choice(item: dict[str, Any], key: str, allowed: tuple[str, ...], where: str, default: str) -> str:
    value = item.get(key, default)
    if not isinstance(value, str) or value not in allowed:  # (allowed holds only strings)
        raise ConfigError(msg("{where}.{key}: {value} is not allowed (allowed: {items})",
                              where=where, key=key, value=repr(value), items=', '.join(allowed)))
    return value


def _request(item: dict[str, Any], where: str, default_method: str, allowed: tuple[str, ...]) -> Request:
    method = _choice(item, "method", METHODS, where, default_method)
    path = _str(item, "path", where)
    if not path.startswith("/") and not ("create_path" in allowed and path.startswith("{create_path}")):
        raise ConfigError(msg("{where}.path: {path} must start with / (it is joined to base_url)",
                              where=where, path=repr(path)))
    if where in ("status", "cancel", "remix") and "{id}" not in path:
        raise ConfigError(msg("{where}.path: {path} must contain {{id}} (the remote id)",
                              where=where, path=repr(path)))
    for name in PLACEHOLDER.findall(path):
        if name not in allowed:
            raise ConfigError(msg("{where}.path: unknown placeholder {{{name}}} (allowed: {items})",
                                  where=where, name=name, items=', '.join('{' + a + '}' for a in allowed)))
    return Request(method, path, _headers(item, where))


def _headers(item: dict[str, Any], where: str) -> dict[str, str]:
    value = item.get("headers", {})
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ConfigError(msg("{where}: must be a table of header = \"value\" (e.g. \"X-DashScope-Async\" = "
                              "\"enable\")",
                              where=_at(where, 'headers')))
    for name, text in value.items():
        if not re.fullmatch(r"[A-Za-z0-9-]+", name) or "\r" in text or "\n" in text:
            raise ConfigError(msg("{where}.{name}: not a usable header (letters, digits and -; one line)",
                                  where=_at(where, 'headers'), name=name))
        if name.lower() == "authorization":
            raise ConfigError(msg("{where}.{name}: the key travels by [auth], never as a fixed header in a profile",
                                  where=_at(where, 'headers'), name=name))
    return dict(value)


def _paths(item: dict[str, Any], key: str, where: str, default: tuple[str, ...] | None) -> Paths:
    """A path ("data.videos[0].url") or a list of them, tried in order."""
    if key not in item:
        if default is None:
            raise ConfigError(msg("{where}.{key}: required (a dotted path into the answer, e.g. \"data.id\")",
                                  where=where, key=key))
        return tuple(parse_path(text, f"{where}.{key}") for text in default)
    value = item[key]
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list) or not values or not all(isinstance(v, str) and v.strip() for v in values):
        raise ConfigError(msg("{where}.{key}: must be a dotted path or a list of them", where=where, key=key))
    return tuple(parse_path(text, f"{where}.{key}") for text in values)


def _fields(item: dict[str, Any], where: str) -> dict[str, Any]:
    value = item.get("fields", {})
    if not isinstance(value, dict):
        raise ConfigError(msg("{where}.fields: must be a table of request field = value", where=where))
    for name, field_value in value.items():
        check_placeholders(field_value, lambda p: p in ("prompt", "remote_model") or is_input_placeholder(p),
                           f"{where}.fields.{name}", _CREATE_PLACEHOLDERS)
    return dict(value)


def _states(item: dict[str, Any], where: str) -> dict[str, str]:
    table = item.get("states")
    if not isinstance(table, dict):
        raise ConfigError(msg("{where}.states: required (a table: {items} = [service words])",
                              where=where, items=' / '.join(STATE_NAMES)))
    mapping: dict[str, str] = {}
    for state, words in table.items():
        if state not in STATE_NAMES:
            raise ConfigError(msg("{where}.states.{state}: unknown state (allowed: {items})",
                                  where=where, state=state, items=', '.join(STATE_NAMES)))
        if not isinstance(words, list) or not all(isinstance(w, str) and w for w in words):
            raise ConfigError(msg("{where}.states.{state}: must be a list of the service's status words",
                                  where=where, state=state))
        for word in words:
            if word.lower() in mapping:
                raise ConfigError(msg("{where}.states.{state}: {word} is already mapped to {mapping}",
                                      where=where, state=state, word=repr(word), mapping=mapping[word.lower()]))
            mapping[word.lower()] = state
    return mapping


def _ints(item: dict[str, Any], key: str, where: str, default: tuple[int, ...]) -> frozenset[int]:
    value = item.get(key, list(default))
    if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool)
                                              and 100 <= v <= 599 for v in value):
        raise ConfigError(msg("{where}.{key}: must be a list of HTTP status codes (100..599)", where=where, key=key))
    return frozenset(value)


def _strs(item: dict[str, Any], key: str, where: str) -> frozenset[str]:
    value = item.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(msg("{where}.{key}: must be a list of strings", where=where, key=key))
    return frozenset(value)


def _number(item: dict[str, Any], key: str, where: str, default: float, bounds: tuple[float, float]) -> float:
    value = item.get(key, default)
    low, high = bounds
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise ConfigError(msg("{where}.{key}: {value} is not allowed (allowed: number {low}..{high})",
                              where=where, key=key, value=repr(value), low=format(low, "g"),
                              high=format(high, "g")))
    return float(value)


def _bool(item: dict[str, Any], key: str, where: str) -> bool:
    value = item.get(key, False)
    if not isinstance(value, bool):
        raise ConfigError(msg("{where}.{key}: {value} is not allowed (allowed: true, false)",
                              where=where, key=key, value=repr(value)))
    return value


def _text(item: dict[str, Any], key: str, where: str, default: str) -> str:
    """A string that may be empty (a header prefix)."""
    value = item.get(key, default)
    if not isinstance(value, str) or "\n" in value or "\r" in value:
        raise ConfigError(msg("{where}.{key}: must be a one-line string", where=where, key=key))
    return value


def _opt_int(item: dict[str, Any], key: str, where: str) -> int | None:
    if key not in item:
        return None
    value = item[key]
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(msg("{where}.{key}: {value} is not allowed (allowed: integer >= 1)",
                              where=where, key=key, value=repr(value)))
    return value
