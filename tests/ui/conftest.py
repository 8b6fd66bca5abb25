"""UI tests: offscreen Qt, every async test on a qasync loop (pytest-asyncio's loop-factory hook)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("QT_API", "pyside6")

import asyncio
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import qasync
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication

from mediaassist.core.outputs import video_tools_installed
from mediaassist.core.store import NewTask, Store
from mediaassist.ui.i18n import Translations
from tests.harness import sim_api_tasks

# Offscreen/Xvfb platform noise, not our bugs.
QT_NOISE = ("This plugin does not support", "QObject::connect: No such signal QPlatformNativeInterface",
            # Qt Multimedia on a box with no sound server and no GPU (the in-app player still plays)
            "PulseAudioService: pa_context_connect", "No RHI backend")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        item.add_marker(pytest.mark.qt_log_ignore(*QT_NOISE))


def _qasync_loop() -> asyncio.AbstractEventLoop:
    return qasync.QEventLoop(QApplication.instance() or QApplication([]))


def pytest_asyncio_loop_factories(config: pytest.Config,
                                   item: pytest.Item) -> dict[str, Callable[[], asyncio.AbstractEventLoop]]:
    return {"qasync": _qasync_loop}


@pytest.fixture(autouse=True)
def english_after_each_test() -> Iterator[None]:
    """A window started in Chinese leaves its translator in the one QApplication; the next test
    starts in English whatever this one did (or where it failed)."""
    yield
    if QApplication.instance() is not None:
        Translations().apply("en")


@pytest.fixture
def chinese(qtbot: object) -> Iterator[None]:
    """The test runs with the interface in Chinese (English again after it)."""
    translations = Translations()
    translations.apply("zh_CN")
    yield
    translations.apply("en")


@pytest.fixture
def without_pyav(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This process as an install without the ``video`` extra: ``av`` cannot be imported (a None
    in ``sys.modules`` is Python's own "no such module"), so the app's check finds no PyAV."""
    monkeypatch.setitem(sys.modules, "av", None)
    video_tools_installed.cache_clear()
    yield
    video_tools_installed.cache_clear()  # asked again once ``av`` is back


def api_tasks(n: int, prefix: str = "t", **params: object) -> list[NewTask]:
    """The window tests' tasks: ids ``t00000``.. (five digits sort as numbers up to the 300 of
    ``filled_store``), prompts ``prompt 0``.."""
    return sim_api_tasks(n, prefix, id_digits=5, prompt="prompt", **params)


@pytest.fixture
def ui_settings(tmp_path: Path) -> QSettings:
    return QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat)


@pytest.fixture
def filled_store(store: Store) -> Store:
    store.enqueue("b1", api_tasks(300))
    return store

