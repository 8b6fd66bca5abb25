"""Task-API profiles: a submit-then-poll HTTP service described as data, not code.

A provider of ``type = "task_api"`` names a profile: a shipped one (``openai-videos``,
``newapi-video``, in ``resources/task_api/``) or the path of an operator's own TOML file. The
profile says how to create a job, where its id, status, progress, results and errors are in the
answers, how status words map onto queued / running / success / failed / canceled, how to cancel,
and which answers mean "back off". Every problem is a ``ConfigError`` naming the key.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mediaassist.core.errors import ConfigError
from mediaassist.core.messages import msg
from mediaassist.core.paths import RESOURCES

SHIPPED_DIR = RESOURCES / "task_api"
STATE_NAMES = ("queued", "running", "success", "failed", "canceled")
BODY_KINDS = ("json", "multipart")
INPUT_MODES = ("multipart", "json_url")
METHODS = ("GET", "POST", "DELETE", "PUT")
# Placeholders a create field's value may be: replaced by the task's own values.
PLACEHOLDERS = ("{prompt}", "{remote_model}")

_TOP_KEYS = {"name", "description", "create", "status", "result", "cancel", "errors"}
_CREATE_KEYS = {"method", "path", "body", "fields", "params_into", "input_mode", "remote_id"}
_STATUS_KEYS = {"method", "path", "state", "progress", "error", "states"}
_RESULT_KEYS = {"urls", "content_path", "suffix"}
_CANCEL_KEYS = {"method", "path"}
_ERROR_KEYS = {"message", "code", "backoff_status", "backoff_codes", "backoff_s", "login_status",
               "quota_status", "quota_codes", "job_limit"}


@dataclass(frozen=True)
class Request:
    method: str
    path: str  # relative to base_url; "{id}" is the remote id


@dataclass(frozen=True)
class TaskApiProfile:
    name: str
    source: str  # the file it came from (for messages)
    create: Request
    create_body: str  # json | multipart
    create_fields: dict[str, Any]
    params_into: str  # "" = top-level fields, else the name of an object field ("metadata")
    input_mode: str  # how media inputs travel: multipart file parts or JSON URL fields
    remote_id: tuple[str, ...]  # dotted paths, first found wins
    status: Request
    state_path: tuple[str, ...]
    progress_path: tuple[str, ...]
    error_path: tuple[str, ...]
    states: dict[str, str]  # service word (lower case) → one of STATE_NAMES
    result_urls: tuple[str, ...]
    content_path: str | None
    result_suffix: str
    cancel: Request | None
    error_message: tuple[str, ...]
    error_code: tuple[str, ...]
    backoff_status: frozenset[int]
    backoff_codes: frozenset[str]
    backoff_s: float
    login_status: frozenset[int]
    quota_status: frozenset[int]
    quota_codes: frozenset[str]
    job_limit: int | None = None  # the service's documented jobs-at-once, for the max_polling_tasks warning


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
    urls, content = _paths(result, "urls", "result", ()), _opt_str(result, "content_path", "result")
    if not urls and content is None:
        raise ConfigError(msg("result: needs urls (where result URLs are) or content_path (a download route)"))
    return TaskApiProfile(
        name=_str(data, "name", where), source=source,
        create=_request(create, "create", "POST"),
        create_body=_choice(create, "body", BODY_KINDS, "create", "json"),
        create_fields=_fields(create, "create"),
        params_into=_opt_str(create, "params_into", "create") or "",
        input_mode=_choice(create, "input_mode", INPUT_MODES, "create", "json_url"),
        remote_id=_paths(create, "remote_id", "create", None),
        status=_request(status, "status", "GET"),
        state_path=_paths(status, "state", "status", None),
        progress_path=_paths(status, "progress", "status", ()),
        error_path=_paths(status, "error", "status", ()),
        states=_states(status, "status"),
        result_urls=urls, content_path=content,
        result_suffix=_opt_str(result, "suffix", "result") or "",
        cancel=_request(cancel, "cancel", "POST") if cancel else None,
        error_message=_paths(errors, "message", "errors", ("error.message", "message", "error")),
        error_code=_paths(errors, "code", "errors", ("error.code", "code")),
        backoff_status=_ints(errors, "backoff_status", "errors", (429,)),
        backoff_codes=_strs(errors, "backoff_codes", "errors"),
        backoff_s=_number(errors, "backoff_s", "errors", 10.0),
        login_status=_ints(errors, "login_status", "errors", (401, 403)),
        quota_status=_ints(errors, "quota_status", "errors", (402,)),
        quota_codes=_strs(errors, "quota_codes", "errors"),
        job_limit=_opt_int(errors, "job_limit", "errors"),
    )


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
        raise ConfigError(msg("{where}: required", where=_at(where, key)) if key not in item
                          else msg("{where}: must be a non-empty string", where=_at(where, key)))
    return value


def _opt_str(item: dict[str, Any], key: str, where: str) -> str | None:
    return _str(item, key, where) if key in item else None


def _choice(item: dict[str, Any], key: str, allowed: tuple[str, ...], where: str, default: str) -> str:
    value = item.get(key, default)
    if not isinstance(value, str) or value not in allowed:  # (allowed holds only strings)
        raise ConfigError(msg("{where}.{key}: {value} is not allowed (allowed: {items})",
                              where=where, key=key, value=repr(value), items=', '.join(allowed)))
    return value


def _request(item: dict[str, Any], where: str, default_method: str) -> Request:
    method = _choice(item, "method", METHODS, where, default_method)
    path = _str(item, "path", where)
    if not path.startswith("/"):
        raise ConfigError(msg("{where}.path: {path} must start with / (it is joined to base_url)",
                              where=where, path=repr(path)))
    if where.endswith(("status", "cancel")) and "{id}" not in path:
        raise ConfigError(msg("{where}.path: {path} must contain {{id}} (the remote id)",
                              where=where, path=repr(path)))
    return Request(method, path)


def _paths(item: dict[str, Any], key: str, where: str, default: tuple[str, ...] | None) -> tuple[str, ...]:
    """A dotted path ("error.message") or a list of them, tried in order."""
    if key not in item:
        if default is None:
            raise ConfigError(msg("{where}.{key}: required (a dotted path into the answer, e.g. \"data.id\")",
                                  where=where, key=key))
        return default
    value = item[key]
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list) or not values or not all(isinstance(v, str) and v.strip() for v in values):
        raise ConfigError(msg("{where}.{key}: must be a dotted path or a list of them", where=where, key=key))
    return tuple(values)


def _fields(item: dict[str, Any], where: str) -> dict[str, Any]:
    value = item.get("fields", {})
    if not isinstance(value, dict):
        raise ConfigError(msg("{where}.fields: must be a table of request field = value", where=where))
    for name, field_value in value.items():
        if isinstance(field_value, str) and field_value.startswith("{") and field_value not in PLACEHOLDERS:
            raise ConfigError(msg("{where}.fields.{name}: unknown placeholder {field_value} (allowed: {items})",
                                  where=where, name=name, field_value=repr(field_value),
                                  items=', '.join(PLACEHOLDERS)))
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
    for needed in ("success", "failed"):
        if needed not in table:
            raise ConfigError(msg("{where}.states.{needed}: required (the words that end a job)",
                                  where=where, needed=needed))
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


def _number(item: dict[str, Any], key: str, where: str, default: float) -> float:
    value = item.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.1 <= value <= 3600:
        raise ConfigError(msg("{where}.{key}: {value} is not allowed (allowed: number 0.1..3600)",
                              where=where, key=key, value=repr(value)))
    return float(value)


def _opt_int(item: dict[str, Any], key: str, where: str) -> int | None:
    if key not in item:
        return None
    value = item[key]
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(msg("{where}.{key}: {value} is not allowed (allowed: integer >= 1)",
                              where=where, key=key, value=repr(value)))
    return value
