"""Several ``mediaassist run`` processes on one data dir against the demo servers (issue 9).

The servers count what really reached them: in-flight maxima (the limits must hold across the
processes, not per process), creates per prompt (a RunningHub task is paid for once), and the
store says how many attempts each task took and that every result is its one attempt's.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from mediaassist.core.config import AccountConfig
from mediaassist.core.store import NewTask, Store
from mediaassist.demo import DEMO_ACCOUNTS
from mediaassist.demo_servers.openai_server import DemoOpenAIServer
from mediaassist.demo_servers.runninghub_server import DEMO_API_KEY, RunningHubDemoServer
from tests.helpers import cli, cli_popen, sim_config_text, write_config, write_csv
from tests.process_helpers import write_demo_lanes_config, write_mixed_task_file

OPENAI_KEY = "sk-multi-process-test-key-0001"
API_LIMIT, POLL_LIMIT = 3, 3
API_TASKS, POLL_TASKS = 12, 4  # per file (one file per process)


@pytest.fixture
def servers() -> Iterator[tuple[DemoOpenAIServer, RunningHubDemoServer]]:
    # Real seconds at the servers: long enough that the processes' work overlaps.
    with DemoOpenAIServer(api_key=OPENAI_KEY, latency_s=(0.3, 0.6), models=("writer",)) as openai, \
            RunningHubDemoServer({DEMO_API_KEY: 100}, queued_s=(0.1, 0.2), run_s=(0.6, 1.2), seed=3) as runninghub:
        yield openai, runninghub


def _rows(data: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(data / "mediaassist.sqlite3") as conn:
        return conn.execute(sql).fetchall()


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("processes", [2, 3])
def test_runs_on_one_data_dir_share_the_limits_and_never_double_work(
        tmp_path: Path, servers: tuple[DemoOpenAIServer, RunningHubDemoServer], processes: int) -> None:
    openai, runninghub = servers
    config = write_demo_lanes_config(tmp_path, openai, runninghub, API_LIMIT, POLL_LIMIT)
    data = tmp_path / "data"
    env = {"ACME_API_KEY": OPENAI_KEY, "RH_API_KEY": DEMO_API_KEY}
    files = [write_mixed_task_file(tmp_path, f"batch-{i}", API_TASKS, POLL_TASKS) for i in range(processes)]
    runs = [cli_popen("run", str(task_file), "--json", "--speed", "20", "--config", str(config),
                      "--data-dir", str(data), env=env) for task_file in files]
    outputs = [run.communicate(timeout=240) for run in runs]
    for run, (stdout, stderr) in zip(runs, outputs, strict=True):
        assert run.returncode == 0, stderr
        summary = json.loads(stdout)
        # Each run reports its own file's tasks, and all of them ended well.
        assert (summary["total"], summary["success"]) == (API_TASKS + POLL_TASKS,) * 2
        assert "died" not in stderr and "stalled" not in stderr

    # The servers never saw more than one limit's worth, whichever process sent it.
    assert openai.max_in_flight <= API_LIMIT
    assert runninghub.fake.max_in_flight <= POLL_LIMIT
    assert openai.max_in_flight == API_LIMIT  # the test really loaded the lane
    # Work done once: one chat request per API task, one remote create per video.
    chats = [r for r in openai.requests if r.path.endswith("/chat/completions")]
    assert len(chats) == processes * API_TASKS
    assert len(runninghub.fake.creates) == processes * POLL_TASKS
    assert set(runninghub.fake.creates.values()) == {1}
    # One attempt per task, and the result is that attempt's.
    assert _rows(data, "SELECT DISTINCT state, attempt FROM task") == [("success", 1)]
    started = _rows(data, "SELECT task_id, COUNT(*) FROM task_log WHERE line LIKE 'attempt % started on %' "
                          "GROUP BY task_id")
    assert len(started) == processes * (API_TASKS + POLL_TASKS) and {n for _id, n in started} == {1}
    assert _rows(data, "SELECT COUNT(*) FROM result")[0][0] == processes * (API_TASKS + POLL_TASKS)


def _sim_config(tmp_path: Path) -> Path:
    return write_config(tmp_path / "config.toml", sim_config_text(api_s=(2, 4)))


def test_run_file_takes_only_its_own_batches_and_run_all_takes_the_rest(tmp_path: Path) -> None:
    config, data = _sim_config(tmp_path), tmp_path / "data"
    store = Store(data / "mediaassist.sqlite3")
    store.enqueue("queued-by-the-window", [NewTask(model="writer", model_kind="api", route="api:sim-api",
                                                   prompt=f"other {i}", task_id=f"other{i}") for i in range(5)])
    store.close()
    mine = write_csv(tmp_path / "mine.csv", [{"model": "writer", "prompt": f"mine {i}"} for i in range(4)])
    proc = cli("run", str(mine), "--json", "--speed", "20", "--config", str(config), "--data-dir", str(data))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["success"] == 4
    assert _rows(data, "SELECT DISTINCT state FROM task WHERE batch_id = 'queued-by-the-window'") == [("pending",)]
    assert _rows(data, "SELECT COUNT(*) FROM task_log WHERE task_id LIKE 'other%'")[0][0] == 0  # never touched
    everything = cli("run", "--all", "--json", "--speed", "20", "--config", str(config), "--data-dir", str(data))
    assert everything.returncode == 0, everything.stderr
    assert json.loads(everything.stdout)["success"] == 5  # the open batches: the window's
    assert _rows(data, "SELECT DISTINCT state FROM task") == [("success",)]
    assert cli("run", "--config", str(config), "--data-dir", str(data)).returncode == 2  # nothing to run


def test_status_demo_logs_nobody_in_and_writes_no_login_state(tmp_path: Path) -> None:
    demo_db = tmp_path / "data" / "demo" / "mediaassist.sqlite3"
    store = Store(demo_db)
    store.sync_accounts([AccountConfig(name=name, site="demochat") for name in DEMO_ACCOUNTS])
    store.set_login_state(DEMO_ACCOUNTS[0], "needs_login", "seen logged out by the window")
    before = [(a.name, a.login_state, a.last_error, a.updated_at) for a in store.accounts()]
    store.close()
    proc = cli("status", "--demo", "--json", "--data-dir", str(tmp_path / "data"))
    assert proc.returncode == 0, proc.stderr
    store = Store(demo_db)
    assert [(a.name, a.login_state, a.last_error, a.updated_at) for a in store.accounts()] == before
    store.close()
    assert not list((tmp_path / "data" / "demo" / "profiles").glob("*/Default"))  # no browser was opened
