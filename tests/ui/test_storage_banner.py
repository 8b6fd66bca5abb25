"""The window's storage banner: a full disk shows, work stops, and both clear when space returns."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from mediaassist.core.store import Store, faults_as_storage
from tests.harness import wait_until
from tests.ui.test_window import start_app, stop_app, writer_tasks


class DiskFull:
    """While ``on``, the store's writes fail as a full disk makes them fail (SQLite's
    SQLITE_FULL, classified by the store): an injected fault at the store layer, since filling
    a real disk is not possible here (tests/integration/test_storage_faults.py does it with a tmpfs where
    mounting is allowed, and with SQLite's own max_page_count)."""

    def __init__(self, store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
        self.on = False
        for name in ("finish_success", "finish_failure", "heartbeat", "log", "probe_write"):
            original = getattr(store, name)
            monkeypatch.setattr(store, name, self._guard(original, store))

    def _guard(self, original: Callable[..., object], store: Store) -> Callable[..., object]:
        def write(*args: object, **kwargs: object) -> object:
            if self.on:
                with faults_as_storage(store.path):
                    raise sqlite3.OperationalError("database or disk is full")
            return original(*args, **kwargs)
        return write


@pytest.mark.asyncio
async def test_a_full_database_shows_the_banner_and_work_resumes_when_space_returns(
        tmp_path: Path, ui_settings: QSettings, monkeypatch: pytest.MonkeyPatch) -> None:
    # 1 s a task (20 nominal ÷ 20): most of the 40 are still queued when the disk fills up.
    app = await start_app(tmp_path, ui_settings, duration=20.0, speed=20.0)
    window, store = app.window, app.window.rt.store
    try:
        assert window.storage_banner.isHidden()
        app.enqueue(writer_tasks(40))
        await wait_until(lambda: store.result("t002") is not None, timeout=30)
        disk = DiskFull(store, monkeypatch)
        disk.on = True
        await wait_until(lambda: not window.storage_banner.isHidden(), timeout=30)
        assert "disk full: the filesystem" in window.storage_banner.text()
        assert not any(t.state == "failed" for t in store.tasks())
        disk.on = False  # space is back
        await wait_until(lambda: window.storage_banner.isHidden(), timeout=30)
        await wait_until(lambda: all(t.state == "success" for t in store.tasks()), timeout=60)
    finally:
        await stop_app(app)
