"""A store that cannot be opened as given: a URL passed where a path belongs, and a PostgreSQL
server that answers but refuses (login, database, permission, connection slots). Each is one
line for the operator naming the store, never its password, with exit code 2."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from mediaassist.core.errors import ConfigError
from mediaassist.core.location import (
    FAULT_LOGIN,
    FAULT_NO_CONNECTION_SLOT,
    FAULT_NO_DATABASE,
    FAULT_PERMISSION,
    StoreUnavailable,
)
from mediaassist.core.store import Store
from tests.helpers import PG_URL, cli, fresh_pg_database

needs_pg = pytest.mark.skipif(not PG_URL, reason="set MEDIAASSIST_TEST_PG (packaging/pg_test_cluster.sh)")


def test_a_url_passed_as_a_path_is_refused_and_makes_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match="is a PostgreSQL URL, not a path") as refused:
        Store(Path("postgresql://team:hunter2-pw@db.example/queue"))
    assert "hunter2-pw" not in str(refused.value) and "team:***@" in str(refused.value)
    assert list(tmp_path.iterdir()) == []  # no folder 'postgresql:' with an SQLite file in it


def test_a_file_under_a_folder_that_only_looks_like_a_scheme_is_still_a_store(tmp_path: Path) -> None:
    store = Store(tmp_path / "postgresql:" / "queue.sqlite3")  # not the first part: a real path
    store.close()
    assert (tmp_path / "postgresql:" / "queue.sqlite3").is_file()


def test_a_url_as_data_dir_is_exit_2_naming_the_flag(tmp_path: Path) -> None:
    done = cli("status", "--data-dir", "postgresql://team:hunter2-pw@127.0.0.1/queue", env={"HOME": str(tmp_path)})
    assert done.returncode == 2, done.stderr
    assert "--data-dir" in done.stderr and "is a PostgreSQL URL, not a path" in done.stderr
    assert "hunter2-pw" not in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "postgresql:").exists()


def _as(url: str, user: str, database: str | None = None, password: str | None = None) -> str:
    parts = urlsplit(url)
    login = f"{user}:{password}" if password else user
    return urlunsplit(parts._replace(netloc=f"{login}@{parts.hostname}:{parts.port}",
                                     path=f"/{database}" if database else parts.path))


@pytest.fixture
def pg_admin() -> Iterator[tuple[str, list[str]]]:
    """A fresh database and a list of roles this test creates (dropped afterwards)."""
    import psycopg2

    assert PG_URL
    roles: list[str] = []
    with fresh_pg_database(PG_URL) as url:
        yield url, roles
        admin = psycopg2.connect(PG_URL)
        admin.autocommit = True
        for role in roles:
            admin.cursor().execute(f'DROP OWNED BY "{role}"; DROP ROLE IF EXISTS "{role}"')
        admin.close()


def _role(url: str, roles: list[str], options: str = "") -> str:
    import psycopg2

    name = f"r_{uuid.uuid4().hex[:10]}"
    admin = psycopg2.connect(url)
    admin.autocommit = True
    admin.cursor().execute(f'CREATE ROLE "{name}" LOGIN {options}')
    admin.close()
    roles.append(name)
    return name


def _refusal(tmp_path: Path, url: str) -> str:
    """The CLI's one line for a store at ``url``, after checking the exit code and the secret."""
    done = cli("status", "--store", url, "--data-dir", str(tmp_path / "data"))
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert "hunter2-pw" not in done.stderr + done.stdout
    return lines[0]


@needs_pg
def test_a_login_the_server_refuses_is_one_line_with_what_to_check(
        tmp_path: Path, pg_admin: tuple[str, list[str]]) -> None:
    url, _roles = pg_admin
    bad = _as(url, "no_such_user", password="hunter2-pw")
    line = _refusal(tmp_path, bad)
    assert line.startswith(f"mediaassist: the shared store {_as(url, 'no_such_user', password='***')} refused:")
    assert 'role "no_such_user" does not exist' in line and "check the user and password" in line
    with pytest.raises(StoreUnavailable) as refused:
        Store(bad)
    assert refused.value.kind == FAULT_LOGIN


@needs_pg
def test_a_database_that_does_not_exist_says_so_and_how_to_create_it(
        tmp_path: Path, pg_admin: tuple[str, list[str]]) -> None:
    url, _roles = pg_admin
    missing = _as(url, urlsplit(url).username or "", "no_such_queue", password="hunter2-pw")
    line = _refusal(tmp_path, missing)
    assert 'database "no_such_queue" does not exist' in line and "createdb" in line
    with pytest.raises(StoreUnavailable) as refused:
        Store(missing)
    assert refused.value.kind == FAULT_NO_DATABASE


@needs_pg
def test_a_user_without_create_on_the_schema_is_told_what_to_grant(
        tmp_path: Path, pg_admin: tuple[str, list[str]]) -> None:
    url, roles = pg_admin
    reader = _role(url, roles)  # PostgreSQL 15+: only the owner may create in schema public
    line = _refusal(tmp_path, _as(url, reader, password="hunter2-pw"))
    assert "permission denied for schema public" in line and "grant it CREATE and USAGE" in line
    assert "LINE 1" not in line and "CREATE TABLE" not in line  # the SQL is not the operator's business
    with pytest.raises(StoreUnavailable) as refused:
        Store(_as(url, reader))
    assert refused.value.kind == FAULT_PERMISSION


@needs_pg
def test_no_free_connection_slot_is_not_taken_for_a_bad_login(
        tmp_path: Path, pg_admin: tuple[str, list[str]]) -> None:
    url, roles = pg_admin
    capped = _role(url, roles, "CONNECTION LIMIT 0")  # as a server at max_connections answers
    line = _refusal(tmp_path, _as(url, capped, password="hunter2-pw"))
    assert "too many connections" in line and "no free connection" in line
    assert "check the user and password" not in line
    with pytest.raises(StoreUnavailable) as refused:
        Store(_as(url, capped))
    assert refused.value.kind == FAULT_NO_CONNECTION_SLOT
