"""Where the store lives and who this machine is.

The store is the embedded SQLite file in the data dir, or a shared PostgreSQL database for a
team: ``--store URL`` wins over ``MEDIAASSIST_STORE_URL``, which wins over ``[store] url`` in the
config. A PostgreSQL password comes from the URL, from ``PGPASSFILE``/``~/.pgpass`` (libpq reads
those itself), or from the OS keyring (service ``mediaassist``, user = the URL without password);
it is registered as a secret and every URL shown to anyone goes through ``redact_url``.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from urllib.parse import SplitResult, unquote, urlsplit, urlunsplit

from mediaassist.core.errors import ConfigError, StorageFault
from mediaassist.core.messages import Message, msg
from mediaassist.core.secrets import KEYRING_SERVICE, keyring_password, register_secret

STORE_URL_ENV = "MEDIAASSIST_STORE_URL"
HOST_ID_ENV = "MEDIAASSIST_HOST_ID"
PG_SCHEMES = ("postgresql", "postgres")


FAULT_UNREACHABLE = "unreachable"
FAULT_SCHEMA = "schema_newer"
FAULT_LOGIN = "login_refused"
FAULT_NO_DATABASE = "no_database"
FAULT_PERMISSION = "permission_denied"
FAULT_NO_CONNECTION_SLOT = "too_many_connections"

# What the server said (libpq's text: a refused connection carries no SQLSTATE) -> the fault and
# what the operator should do about it, tried in order ('too many connections for role "x"'
# is not a login refusal). Anything else is "cannot reach".
_SERVER_REFUSALS: tuple[tuple[tuple[str, ...], str, Message], ...] = (
    (("too many connections", "remaining connection slots are reserved", "too many clients"),
     FAULT_NO_CONNECTION_SLOT, msg("the server has no free connection; close other clients, or raise "
                                   "max_connections (or the user's CONNECTION LIMIT)")),
    (("password authentication failed", "role \"", "no pg_hba.conf entry", "authentication failed"),
     FAULT_LOGIN, msg("the server refused the login; check the user and password "
                      "(in the URL, ~/.pgpass or the keyring entry for service 'mediaassist')")),
    (("database \"",), FAULT_NO_DATABASE,
     msg("that database does not exist; create it (createdb NAME) or fix the URL's database name")),
    (("permission denied",), FAULT_PERMISSION,
     msg("the user may not create or use the tables; grant it CREATE and USAGE on schema public "
         "of that database (or connect as its owner)")),
)


class StoreUnavailable(StorageFault):
    """The store cannot be used at all (server out of reach, no driver, schema newer than this
    program): one line for the operator, exit code 2, like a damaged file."""

    def __init__(self, message: Message | str, where: str = "", kind: str = FAULT_UNREACHABLE) -> None:
        super().__init__(kind, where, message)


def server_refusal(where: str, reason: str) -> StoreUnavailable:
    """One line for a PostgreSQL error: naming the store (never its password), what the server
    said and what to do. ``reason`` is the driver's message, already redacted."""
    lowered = reason.lower()
    for needles, kind, advice in _SERVER_REFUSALS:
        if any(needle in lowered for needle in needles):
            return StoreUnavailable(msg("the shared store {where} refused: {reason}; {advice}",
                                        where=where, reason=reason, advice=advice), where, kind)
    return StoreUnavailable(msg("cannot reach the shared store {where}: {reason}", where=where, reason=reason), where)


def host_id() -> str:
    """This machine's name in owners and account bindings. ``MEDIAASSIST_HOST_ID`` overrides it,
    so several processes on one machine can stand in for several machines (tests, trials)."""
    return os.environ.get(HOST_ID_ENV) or socket.gethostname()


def is_pg_url(location: str | os.PathLike[str]) -> bool:
    return str(location).split("://", 1)[0].lower() in PG_SCHEMES and "://" in str(location)


def url_taken_as_path(location: str | os.PathLike[str]) -> bool:
    """A postgresql:// URL that went through ``Path`` (which folds '//' into '/'): opening it
    would quietly make an SQLite file in a folder named 'postgresql:'."""
    first = Path(location).parts[0] if Path(location).parts else ""
    return not is_pg_url(location) and first.rstrip(":").lower() in PG_SCHEMES and first.endswith(":")


def refuse_url_as_path(location: str | os.PathLike[str], where: str) -> None:
    """ConfigError naming ``where`` for a URL given where a file or folder path belongs."""
    if is_pg_url(location) or url_taken_as_path(location):
        scheme, rest = str(location).split(":", 1)
        url = f"{scheme}://{rest.lstrip('/')}"  # the '//' back, so that its password is found and hidden
        raise ConfigError(msg("{where}: {url} is a PostgreSQL URL, not a path; a shared store is named with "
                              "--store URL, MEDIAASSIST_STORE_URL or [store] url",
                              where=where, url=repr(redact_url(url))))


def check_store_url(url: str, where: str) -> str:
    """A config or flag value: a postgresql:// URL naming a database, or a ConfigError naming ``where``."""
    if not is_pg_url(url):
        raise ConfigError(msg("{where}: {url} is not a postgresql:// URL (allowed: "
                              "postgresql://USER@HOST[:PORT]/DATABASE; leave it out for the local SQLite file)",
                              where=where, url=repr(redact_url(url))))
    parts = urlsplit(url)
    if not parts.path.strip("/"):
        raise ConfigError(msg("{where}: {url} names no database (postgresql://USER@HOST/DATABASE)",
                              where=where, url=repr(redact_url(url))))
    try:
        parts.port  # noqa: B018 -- raises on a port that is not a number in range
    except ValueError:
        raise ConfigError(msg("{where}: {url} has an invalid port (allowed: 1..65535)",
                              where=where, url=repr(redact_url(url)))) from None
    return url


def choose_store_url(flag: str | None, config_url: str | None) -> str | None:
    """The shared store's URL, or None for the local SQLite file."""
    if flag:
        return check_store_url(flag, "--store")
    from_env = os.environ.get(STORE_URL_ENV)
    if from_env:
        return check_store_url(from_env, STORE_URL_ENV)
    return config_url


def redact_url(url: str) -> str:
    """The URL with any password replaced by ***, fit for messages and logs."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    return urlunsplit(parts._replace(netloc=_netloc(parts, password="***")))


def keyring_user(url: str) -> str:
    """The keyring entry's user name for a URL: the URL without its password."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(netloc=_netloc(parts, password=None)))


def connect_kwargs(url: str) -> dict[str, str]:
    """Extra connect arguments for a URL: the keyring's password when the URL has none (libpq
    then falls back to PGPASSFILE/.pgpass by itself when this is empty too)."""
    password = urlsplit(url).password
    if password is not None:
        register_secret(unquote(password))
        return {}
    stored = keyring_password(KEYRING_SERVICE, keyring_user(url))
    if stored:
        register_secret(stored)
        return {"password": stored}
    return {}


def describe(location: str | Path) -> str:
    """How a message names the store: the file path, or the URL without its password."""
    return redact_url(str(location)) if is_pg_url(location) else str(location)


def _netloc(parts: SplitResult, password: str | None) -> str:
    host = parts.hostname or ""
    if ":" in host:  # an IPv6 literal keeps its brackets
        host = f"[{host}]"
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    if parts.username is None:
        return host
    user = parts.username if password is None else f"{parts.username}:{password}"
    return f"{user}@{host}"
