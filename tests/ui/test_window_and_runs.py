"""The window and two ``mediaassist run`` processes on one data dir against the demo servers:
three processes, one set of limits (issue 9, tests)."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from mediaassist.core.options import RuntimeOptions
from mediaassist.core.store import NewTask
from mediaassist.demo_servers.openai_server import DemoOpenAIServer
from mediaassist.demo_servers.runninghub_server import DEMO_API_KEY, RunningHubDemoServer
from mediaassist.ui.app import run_window
from mediaassist.ui.main_window import MainWindow
from tests.harness import wait_until
from tests.integration.test_multi_process import API_LIMIT, API_TASKS, OPENAI_KEY, POLL_LIMIT, POLL_TASKS
from tests.process_helpers import write_demo_lanes_config, write_mixed_task_file

ROOT = Path(__file__).resolve().parents[2]


def _window_tasks() -> list[NewTask]:
    return ([NewTask(model="writer", model_kind="api", route="api:acme", prompt=f"window copy {n}")
             for n in range(API_TASKS)]
            + [NewTask(model="video", model_kind="poll", route="poll:rh", prompt=f"window video {n}")
               for n in range(POLL_TASKS)])


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.asyncio
async def test_the_window_and_two_runs_share_the_limits_and_never_double_work(
        tmp_path: Path, ui_settings: QSettings, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACME_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("RH_API_KEY", DEMO_API_KEY)
    with DemoOpenAIServer(api_key=OPENAI_KEY, latency_s=(0.3, 0.6), models=("writer",)) as openai, \
            RunningHubDemoServer({DEMO_API_KEY: 100}, queued_s=(0.1, 0.2), run_s=(0.6, 1.2), seed=5) as runninghub:
        config = write_demo_lanes_config(tmp_path, openai, runninghub, API_LIMIT, POLL_LIMIT)
        data = tmp_path / "data"
        shown: list[MainWindow] = []
        options = RuntimeOptions(config_path=config, data_dir=data, speed=20)
        window_run = asyncio.ensure_future(run_window([], options, ui_settings, use_tray=False,
                                                      on_window=shown.append))
        await wait_until(lambda: shown or window_run.done(), timeout=30)
        window = shown[0]
        window.rt.store.enqueue("window-batch", _window_tasks())
        window.rt.scheduler.wake()
        files = [write_mixed_task_file(tmp_path, f"batch-{i}", API_TASKS, POLL_TASKS) for i in range(2)]
        runs = [await asyncio.create_subprocess_exec(
            sys.executable, "-m", "mediaassist", "run", str(file), "--speed", "20",
            "--config", str(config), "--data-dir", str(data), stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)}) for file in files]
        try:
            errors = [(await asyncio.wait_for(run.communicate(), 240))[1].decode() for run in runs]
            assert [run.returncode for run in runs] == [0, 0], errors
            await wait_until(lambda: all(t.state == "success" for t in window.rt.store.tasks()), timeout=120)
        finally:
            window.quit_requested.set_result(False)
            await asyncio.wait_for(window_run, 30)
        assert openai.max_in_flight <= API_LIMIT and runninghub.fake.max_in_flight <= POLL_LIMIT
        assert set(runninghub.fake.creates.values()) == {1} and len(runninghub.fake.creates) == 3 * POLL_TASKS
        assert len([r for r in openai.requests if r.path.endswith("/chat/completions")]) == 3 * API_TASKS
    with sqlite3.connect(data / "mediaassist.sqlite3") as conn:
        assert conn.execute("SELECT DISTINCT state, attempt FROM task").fetchall() == [("success", 1)]
        started = conn.execute("SELECT COUNT(*) FROM task_log WHERE line LIKE 'attempt % started on %'").fetchone()[0]
        assert started == 3 * (API_TASKS + POLL_TASKS)
