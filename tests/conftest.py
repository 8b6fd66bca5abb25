"""Shared fixtures: every test gets its own data dir, config dir and store.

A test using ``store`` (or ``store_location``) in one of ``PG_MODULES`` runs twice: on an SQLite
file, and on a fresh PostgreSQL database when MEDIAASSIST_TEST_PG names a server (CI starts one).
Elsewhere, and with ``pytestmark = pytest.mark.sqlite_only``, it runs on SQLite.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest
from keyrings.alt.file import PlaintextKeyring

from mediaassist.core.clock import Clock
from mediaassist.core.store import Store
from tests.helpers import PG_URL, end_leftover_processes, fresh_pg_database
from tests.webui_helpers import ChatApp, chat_app

BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.skipif(
    not PG_URL, reason="set MEDIAASSIST_TEST_PG to a postgresql:// server URL to run these on PostgreSQL too"))]


# The tests that are about the store -- claims, limits, owners, schema, the window's read side,
# uploads and learned limits kept in it -- run on both back-ends; the lanes' own tests (HTTP,
# browsers) use the store only as a place to keep rows and stay on SQLite, which keeps CI short.
PG_MODULES = frozenset({
    *(f"tests.integration.test_{name}" for name in (
        "store", "store_procs", "shared_store", "scheduler", "scheduler_procs", "storage_faults",
        "queries_progress", "media", "api_adaptive", "import_process", "process_edges", "order", "api_keys")),
    "tests.ui.test_task_model", "tests.ui.test_table", "tests.integration.test_money",
})


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "store_location" in metafunc.fixturenames:
        only_sqlite = (metafunc.definition.get_closest_marker("sqlite_only") is not None
                       or metafunc.module.__name__ not in PG_MODULES)
        metafunc.parametrize("backend", ["sqlite"] if only_sqlite else BACKENDS)


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test may read or write the real user's data or config."""
    monkeypatch.setenv("MEDIAASSIST_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))


@pytest.fixture(autouse=True)
def _no_leftover_processes() -> Iterator[None]:
    yield
    end_leftover_processes()


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    path = tmp_path / "data"
    path.mkdir(mode=0o700)
    return path


@pytest.fixture
def store_location(backend: str, data_dir: Path) -> Iterator[str]:
    """An SQLite file path, or the URL of a fresh PostgreSQL database of this test's own."""
    if backend == "sqlite":
        yield str(data_dir / "mediaassist.sqlite3")
        return
    with fresh_pg_database(PG_URL) as url:  # type: ignore[arg-type]
        yield url


@pytest.fixture
def store(store_location: str) -> Iterator[Store]:
    db = Store(store_location)
    yield db
    db.close()


@pytest.fixture
def fast_clock() -> Clock:
    """Scaled time: 90 s of heartbeat limit pass in 0.9 s."""
    return Clock(speed=100)


# One real chat-UI server per test module that asks for it (each takes seconds to start).
@pytest.fixture(scope="module")
def gradio_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChatApp]:
    with chat_app("gradio", tmp_path_factory.mktemp("gradio")) as app:
        yield app


@pytest.fixture
def os_keyring() -> Iterator[PlaintextKeyring]:
    """A real OS-keyring backend that works headless: keyrings.alt's file, under this test's own
    XDG data home (``_isolated_home``), for the code of this process."""
    previous = keyring.get_keyring()
    backend = PlaintextKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


@pytest.fixture(scope="module")
def streamlit_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChatApp]:
    with chat_app("streamlit", tmp_path_factory.mktemp("streamlit")) as app:
        yield app


@pytest.fixture(scope="module")
def tiptap_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChatApp]:
    with chat_app("tiptap", tmp_path_factory.mktemp("tiptap")) as app:
        yield app
