"""The window's storage banner: a full disk shows, work stops, and both clear when space returns."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from tests.ui.test_window import start_app, stop_app, writer_tasks

from .conftest import wait_until


@pytest.mark.asyncio
async def test_a_full_database_shows_the_banner_and_work_resumes_when_space_returns(
        tmp_path: Path, ui_settings: QSettings) -> None:
    app = await start_app(tmp_path, ui_settings, duration=1.0, speed=20.0)
    window, store = app.window, app.window.store
    try:
        assert window.storage_banner.isHidden()
        app.enqueue(writer_tasks(40))
        await wait_until(lambda: store.result("t002") is not None, timeout=30)
        # SQLite's own SQLITE_FULL once the file would grow: what a full disk gives.
        pages = store.db.execute_sql("PRAGMA page_count").fetchone()[0]
        store.db.execute_sql(f"PRAGMA max_page_count = {pages}")
        await wait_until(lambda: not window.storage_banner.isHidden(), timeout=30)
        assert "disk full: free space on" in window.storage_banner.text()
        assert not any(t.state == "failed" for t in store.tasks())
        store.db.execute_sql("PRAGMA max_page_count = 1073741823")
        await wait_until(lambda: window.storage_banner.isHidden(), timeout=30)
        await wait_until(lambda: all(t.state == "success" for t in store.tasks()), timeout=60)
    finally:
        await stop_app(app)
