"""UI tests: offscreen Qt, every async test on a qasync loop (pytest-asyncio's loop-factory hook)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("QT_API", "pyside6")

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest
import qasync
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication

from mediaassist.core.config import AppConfig, parse_config
from mediaassist.core.store import NewTask, Store

# Offscreen/Xvfb platform noise, not our bugs (qt-app-notes §3).
QT_NOISE = ("This plugin does not support", "QObject::connect: No such signal QPlatformNativeInterface")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        item.add_marker(pytest.mark.qt_log_ignore(*QT_NOISE))


def _qasync_loop() -> asyncio.AbstractEventLoop:
    return qasync.QEventLoop(QApplication.instance() or QApplication([]))


def pytest_asyncio_loop_factories(config: pytest.Config,
                                   item: pytest.Item) -> dict[str, Callable[[], asyncio.AbstractEventLoop]]:
    return {"qasync": _qasync_loop}


async def wait_until(predicate: Callable[[], object], timeout: float = 10.0) -> None:
    """Poll on the running loop: qtbot.wait* would nest an event loop inside a coroutine."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        await asyncio.sleep(0.01)


def simulated_config(web_accounts: tuple[str, ...] = ("acct-a",), duration: float = 2.0) -> AppConfig:
    """Sleep-only providers on every lane kind; durations are nominal (scale with the clock)."""
    return parse_config({
        "providers": [
            {"name": "sim-api", "kind": "api", "type": "simulated", "concurrency": 2,
             "min_duration_s": duration, "max_duration_s": duration},
            {"name": "sim-poll", "kind": "poll", "type": "simulated", "max_polling_tasks": 3,
             "min_duration_s": duration, "max_duration_s": duration},
        ],
        "accounts": [{"name": a, "site": "simulated"} for a in web_accounts],
        "models": [
            {"name": "writer", "kind": "api", "provider": "sim-api"},
            {"name": "video", "kind": "poll", "provider": "sim-poll"},
            {"name": "reasoner", "kind": "web", "site": "simulated"},
        ],
    })


def api_tasks(n: int, prefix: str = "t", **params: object) -> list[NewTask]:
    return [NewTask(model="writer", model_kind="api", route="api:sim-api", prompt=f"prompt {i}",
                    task_id=f"{prefix}{i:05d}", params=dict(params)) for i in range(n)]


@pytest.fixture
def ui_settings(tmp_path: Path) -> QSettings:
    return QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat)


@pytest.fixture
def filled_store(store: Store) -> Store:
    store.enqueue("b1", api_tasks(300))
    return store
