"""The window on a team's shared PostgreSQL store: it shows the whole queue, work done by other
machines included, with the machine that ran each task."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from mediaassist.ui.task_model import COL
from tests.harness import wait_until
from tests.helpers import PG_URL, fresh_pg_database, sim_config_text, write_config, write_csv

from .test_window import start_app, stop_app, writer_tasks

pytestmark = pytest.mark.skipif(not PG_URL, reason="set MEDIAASSIST_TEST_PG to a postgresql:// server URL")


async def _run_elsewhere(tmp_path: Path, url: str, machine: str, rows: int) -> None:
    """``mediaassist run`` on "another machine": its own data dir and host identity, and an API
    provider only it has (else the window, which runs the whole queue, may take its tasks)."""
    own_provider = sim_config_text(api_s=(1, 1)).replace('"sim-api"', '"sim-api-b"')
    config = write_config(tmp_path / f"{machine}.toml", own_provider)
    batch = write_csv(tmp_path / f"{machine}.csv", [{"model": "writer", "prompt": f"from {machine} {i}"}
                                                    for i in range(rows)])
    other = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "mediaassist", "run", str(batch), "--config", str(config),
        "--data-dir", str(tmp_path / machine), "--store", url, "--speed", "20",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "MEDIAASSIST_HOST_ID": machine})
    _out, err = await asyncio.wait_for(other.communicate(), 120)
    assert other.returncode == 0, err.decode()


@pytest.mark.asyncio
@pytest.mark.timeout(180)
async def test_the_window_shows_the_team_queue_with_the_machine_of_each_task(
        tmp_path: Path, ui_settings: QSettings, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEDIAASSIST_HOST_ID", "desk-a")
    with fresh_pg_database(PG_URL) as url:  # type: ignore[arg-type]
        app = await start_app(tmp_path, ui_settings, store_url=url)
        try:
            window, model = app.window, app.window.model
            assert window.rt.store.shared and not window.table.isColumnHidden(COL["machine"])
            app.enqueue(writer_tasks(3, prefix="mine"))
            await _run_elsewhere(tmp_path, url, "desk-b", 4)

            def machines() -> dict[str, str]:
                model.feed.refresh_membership()
                model.feed.flush()
                cells = {}
                for row in range(model.rowCount()):
                    task_id = model.data(model.index(row, COL["task_id"]))
                    cells[task_id] = model.data(model.index(row, COL["machine"]))
                return cells

            await wait_until(lambda: len(machines()) == 7 and all(machines().values()), 60)
            shown = machines()
            assert {shown[f"mine{i:03d}"] for i in range(3)} == {"desk-a"}
            assert {m for task_id, m in shown.items() if not task_id.startswith("mine")} == {"desk-b"}
            # The counts behind the panels are the team's too.
            await wait_until(lambda: model.feed.queries.snapshot().totals()["success"] == 7, 60)
        finally:
            await stop_app(app)
