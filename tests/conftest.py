"""Shared fixtures: every test gets its own data dir, config dir and SQLite file."""

from __future__ import annotations

from pathlib import Path

import pytest

from mediaassist.core.clock import Clock
from mediaassist.core.store import Store


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test may read or write the real user's data or config."""
    monkeypatch.setenv("MEDIAASSIST_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    path = tmp_path / "data"
    path.mkdir(mode=0o700)
    return path


@pytest.fixture
def store(data_dir: Path):
    db = Store(data_dir / "mediaassist.sqlite3")
    yield db
    db.close()


@pytest.fixture
def fast_clock() -> Clock:
    """Scaled time: 90 s of heartbeat limit pass in 0.9 s."""
    return Clock(speed=100)
