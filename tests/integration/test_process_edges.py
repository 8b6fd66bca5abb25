"""Promises that hold at the edges (issue 22): other clocks, crashed owners, orphaned remote tasks,
shared back-offs. Real ``mediaassist run`` processes on a real SQLite file or PostgreSQL database,
against the demo servers, which count what really reached them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import tomllib
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from mediaassist.core.clock import Clock
from mediaassist.core.config import parse_config
from mediaassist.core.location import HOST_ID_ENV
from mediaassist.core.scheduler import STALL_S, Scheduler
from mediaassist.core.store import AUTO_RETRIES, CRASH_RETRIES, NewTask, Presence, Store
from mediaassist.demo_servers.openai_server import DemoOpenAIServer
from mediaassist.demo_servers.runninghub_server import DEMO_API_KEY, RunningHubDemoServer
from tests.harness import make_scheduler, wait_until_sync
from tests.helpers import PG_URL, cli_popen, fresh_pg_database, sim_config_text
from tests.process_helpers import write_demo_lanes_config, write_mixed_task_file

OPENAI_KEY = "sk-process-edges-test-key-0001"
API_LIMIT, POLL_LIMIT = 3, 3
SHIFT_S = 120.0
ENV = {"ACME_API_KEY": OPENAI_KEY, "RH_API_KEY": DEMO_API_KEY}


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.skipif(
    not PG_URL, reason="set MEDIAASSIST_TEST_PG to a postgresql:// server URL"))])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """Where the processes keep the queue: an SQLite file, or a fresh PostgreSQL database."""
    if request.param == "sqlite":
        yield str(tmp_path / "data" / "mediaassist.sqlite3")
        return
    with fresh_pg_database(PG_URL) as url:  # type: ignore[arg-type]
        yield url


def _store_args(location: str, data: Path) -> list[str]:
    return ["--data-dir", str(data)] + (["--store", location] if "://" in location else [])


def _config(tmp_path: Path, openai: DemoOpenAIServer, runninghub: RunningHubDemoServer) -> Path:
    return write_demo_lanes_config(tmp_path, openai, runninghub, API_LIMIT, POLL_LIMIT)


def _shifted_clock_env(folder: Path, shift_s: float) -> dict[str, str]:
    """The environment of a child whose wall clock (``time.time``) is ``shift_s`` off: a
    ``sitecustomize`` on its path only, as a machine with a wrong clock would be."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(textwrap.dedent(f"""
        import time
        _real_time = time.time
        time.time = lambda: _real_time() + {shift_s!r}
    """), encoding="utf-8")
    return {"PYTHONPATH": os.pathsep.join([str(folder), os.environ.get("PYTHONPATH", "")])}


# --- 1. one clock --------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_process_with_its_clock_two_minutes_ahead_reaps_no_live_task(tmp_path: Path, location: str) -> None:
    shared = "://" in location
    with DemoOpenAIServer(api_key=OPENAI_KEY, latency_s=(0.4, 0.8), models=("writer",)) as openai, \
            RunningHubDemoServer({DEMO_API_KEY: 100}, queued_s=(0.1, 0.2), run_s=(1.0, 2.0), seed=5) as runninghub:
        config, data = _config(tmp_path, openai, runninghub), tmp_path / "data"
        # On PostgreSQL they stand in for two machines (judged by heartbeats, not pids); on the
        # local file they are two processes of this machine.
        hosts = ({"MEDIAASSIST_HOST_ID": "machine-on-time"}, {"MEDIAASSIST_HOST_ID": "machine-ahead"}) \
            if shared else ({}, {})
        on_time = cli_popen("run", str(write_mixed_task_file(tmp_path, "on-time", 15, 4)), "--json", "--speed", "20",
                            "--config", str(config), *_store_args(location, data), env={**ENV, **hosts[0]})
        ahead = cli_popen("run", str(write_mixed_task_file(tmp_path, "ahead", 15, 4)), "--json", "--speed", "20",
                          "--config", str(config), *_store_args(location, data),
                          env={**ENV, **hosts[1], **_shifted_clock_env(tmp_path / "ahead-site", SHIFT_S)})
        outputs = [run.communicate(timeout=240) for run in (on_time, ahead)]
    for run, (stdout, stderr) in zip((on_time, ahead), outputs, strict=True):
        assert run.returncode == 0, stderr
        assert json.loads(stdout)["success"] == 19
        assert "stalled" not in stderr and "died" not in stderr
    if shared:  # told once that its clock is off; the store's clock is the one that counts
        assert outputs[1][1].count("s ahead of the clock of the shared store") == 1, outputs[1][1]
        assert "ahead of the clock" not in outputs[0][1]
    # Nothing reaped, nothing billed twice: one request per API task, one create per video.
    assert len(openai.api_requests()) == 30
    assert len(runninghub.fake.creates) == 8 and set(runninghub.fake.creates.values()) == {1}
    assert openai.max_in_flight <= API_LIMIT and runninghub.fake.max_in_flight <= POLL_LIMIT
    store = Store(location)
    try:
        assert {(t.state, t.attempt) for t in store.tasks()} == {("success", 1)}
    finally:
        store.close()


# --- 2. a remote task holds its slot until it ends -------------------------------------------------

def _rows(location: str, sql: str, params: tuple[object, ...] = ()) -> list[tuple]:
    """``sql``'s rows; ``?`` marks its parameters on either back-end."""
    store = Store(location)
    try:
        return list(store.db.execute_sql(sql.replace("?", store.db.param), params).fetchall())
    finally:
        store.close()


def _run_file(task_file: Path, config: Path, location: str, data: Path) -> subprocess.Popen[str]:
    return cli_popen("run", str(task_file), "--json", "--speed", "20", "--config", str(config),
                     *_store_args(location, data), env=ENV)


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_kill_9_and_restart_of_three_runs_never_exceeds_the_polling_limit(tmp_path: Path, location: str) -> None:
    # The service would take 100 at once: only our limit of 3 holds the line, and it counts.
    with RunningHubDemoServer({DEMO_API_KEY: 100}, queued_s=(0.2, 0.4), run_s=(3.0, 5.0), seed=11) as runninghub, \
            DemoOpenAIServer(api_key=OPENAI_KEY, models=("writer",)) as openai:
        config, data = _config(tmp_path, openai, runninghub), tmp_path / "data"
        files = [write_mixed_task_file(tmp_path, f"file{i}", 0, 6) for i in range(3)]
        runs = [_run_file(f, config, location, data) for f in files]
        for round_ in range(4):
            victim = round_ % 3
            others = [run for n, run in enumerate(runs) if n != victim]
            if _kill_while_it_polls(runs[victim], location, _batch_of(location, files[victim]), others):
                runs[victim] = _run_file(files[victim], config, location, data)
        # A kill while a create is on the wire leaves it unresolved: the service made the task,
        # but nobody read which one. That task fails saying where to look (its run exits 1).
        unresolved = "%may have created the task%"
        for run in runs:
            _stdout, stderr = run.communicate(timeout=240)
            assert run.returncode == 0 or (run.returncode == 1 and _rows(
                location, "SELECT COUNT(*) FROM task WHERE state = 'failed' AND error LIKE ?", (unresolved,))[0][0]), \
                stderr
    assert runninghub.fake.max_in_flight <= POLL_LIMIT, runninghub.fake.max_in_flight
    ended = dict(_rows(location, "SELECT state, COUNT(*) FROM task WHERE state = 'success' OR error LIKE ? "
                                 "GROUP BY state", (unresolved,)))
    assert sum(ended.values()) == 18 and ended.get("failed", 0) <= 4, ended
    # None twice; an unresolved create may not have reached the service before the kill.
    creates = runninghub.fake.creates
    assert set(creates.values()) == {1} and 18 - ended.get("failed", 0) <= len(creates) <= 18


def _kill_while_it_polls(run: subprocess.Popen[str], location: str, batch: str,
                         others: list[subprocess.Popen[str]]) -> bool:
    """kill -9 the run while it polls a remote task of its batch (that task runs on at the service),
    and wait until the others found it dead (when one is still at work); False when its file was
    done before that."""
    def polling() -> bool:
        return bool(_rows(location, "SELECT COUNT(*) FROM task WHERE batch_id = ? AND state = 'running' "
                                    "AND remote_id IS NOT NULL", (batch,))[0][0])

    wait_until_sync(lambda: polling() or run.poll() is not None, 120, f"a remote task of {batch} polled")
    if run.poll() is not None:
        return False
    run.send_signal(signal.SIGKILL)
    run.communicate(timeout=30)
    owned = f"%:{run.pid}:%"
    wait_until_sync(lambda: all(other.poll() is not None for other in others) or not _rows(
        location, "SELECT COUNT(*) FROM task WHERE state = 'running' AND owner LIKE ?", (owned,))[0][0],
        60, "its rows recovered")
    return True


def _batch_of(location: str, task_file: Path) -> str:
    """The batch ``run FILE`` made of a file (wait until it is enqueued)."""
    found: list[str] = []

    def enqueued() -> bool:
        rows = _rows(location, "SELECT DISTINCT batch_id FROM task WHERE prompt LIKE ?", (f"%{task_file.stem}-%",))
        found[:] = [r[0] for r in rows]
        return bool(found)

    wait_until_sync(enqueued, 60, f"{task_file.name} enqueued")
    return found[0]


# --- 3. dead is dead -----------------------------------------------------------------------------

# Claims the one task as a scheduler of this process would, then waits (until it is killed).
CLAIM_AND_WAIT = """
    import sys
    from mediaassist.core.owners import new_owner
    from mediaassist.core.store import Store
    store = Store(sys.argv[1])
    print(len(store.claim("api:sim-api", str(new_owner()), limit=1, lane_limit=3)), flush=True)
    sys.stdin.readline()
"""


def _one_api_task(store: Store) -> None:
    store.enqueue("b", [NewTask(model="writer", model_kind="api", route="api:sim-api", prompt="p", task_id="t1")])


def _scheduler(store: Store, data_dir: Path) -> Scheduler:
    return make_scheduler(store, parse_config(tomllib.loads(sim_config_text())), data_dir, Clock(speed=100))


def test_a_killed_owner_its_parent_has_not_reaped_yet_is_dead_at_once(
        store: Store, store_location: str, data_dir: Path) -> None:
    _one_api_task(store)
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(CLAIM_AND_WAIT), store_location],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "1"
        sched = _scheduler(store, data_dir)
        assert sched.recover_dead_owners() == 0  # alive: left alone
        os.kill(child.pid, signal.SIGKILL)  # and not waited for: a zombie until this process reaps it
        wait_until_sync(lambda: psutil.Process(child.pid).status() == psutil.STATUS_ZOMBIE, 10, "a zombie")
        assert sched.recover_dead_owners() == 1
    finally:
        child.kill()
        child.communicate(timeout=10)
    row = store.get("t1")
    # Lost to a crash: the crash budget pays, the task's own retries are untouched.
    assert (row.state, row.attempt, row.retries_left, row.crash_retries_left) == (
        "pending", 2, AUTO_RETRIES, CRASH_RETRIES - 1)
    assert f"process {child.pid} on" in row.error and "died" in row.error


def test_an_owner_whose_presence_went_silent_by_the_store_clock_is_dead_at_once(
        store: Store, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(HOST_ID_ENV, "machine-a")
    _one_api_task(store)
    elsewhere = "machine-b:4242:12345:abc"  # its pid means nothing here
    store.announce(elsewhere)
    store.claim("api:sim-api", elsewhere, limit=1)
    sched = _scheduler(store, data_dir)
    assert sched.recover_dead_owners() == 0  # present: alive
    # Its presence row stopped being renewed (the task's own heartbeat is still fresh).
    Presence.update(beat_at=store.now() - STALL_S - 1).where(Presence.owner == elsewhere).execute()
    assert sched.recover_dead_owners() == 1
    row = store.get("t1")
    assert (row.state, row.retries_left, row.crash_retries_left) == ("pending", AUTO_RETRIES, CRASH_RETRIES - 1)
    assert "stopped renewing its presence" in row.error


# --- 4. shared back-offs -------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_retry_after_told_to_one_process_holds_for_all_three(tmp_path: Path, location: str) -> None:
    # 4 requests per 3-second window for the key all three share; past it, 429 with Retry-After
    # (and no x-ratelimit-* headers, as many gateways): only a refused request learns the wait.
    # Answers take a while, so a process may have had none refused when another is told to wait.
    with DemoOpenAIServer(api_key=OPENAI_KEY, latency_s=(0.6, 1.0), models=("writer",), rpm=(4, 3.0),
                          ratelimit_headers=False) as openai, \
            RunningHubDemoServer({DEMO_API_KEY: 100}) as runninghub:
        config, data = _config(tmp_path, openai, runninghub), tmp_path / "data"
        runs = [_run_file(write_mixed_task_file(tmp_path, f"file{i}", 6, 0), config, location, data) for i in range(3)]
        for run in runs:
            _stdout, stderr = run.communicate(timeout=240)
            assert run.returncode == 0, stderr
    served = [r for r in openai.api_requests() if r.status == 200]
    assert len(served) == 18  # every task, once
    assert any(r.status == 429 for r in openai.api_requests())  # the window really closed
    # Once one process was told when the window reopens, no process came back before it.
    assert openai.early == 0
