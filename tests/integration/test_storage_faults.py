"""Storage faults as operator messages (issue 9, item 6): disk full, read-only, damaged, not a
database, deleted or replaced mid-run, and a write that fails while an attempt ends."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mediaassist.core.clock import Clock
from mediaassist.core.errors import FAULT_FULL, FAULT_LOCKED, StorageFault
from mediaassist.core.paths import RESOURCES
from mediaassist.core.store import BUSY_TIMEOUT_S, PROBE_BUSY_TIMEOUT_MS, NewTask, Store, Task, check_sqlite_file
from tests.harness import scheduler_running, sim_api_tasks, wait_until, wait_until_sync
from tests.helpers import cli, cli_popen, sim_config, sim_config_text, write_config, write_csv

DB = "mediaassist.sqlite3"


def _states(store: Store) -> dict[str, int]:
    found: dict[str, int] = {}
    for task in store.tasks():
        found[task.state] = found.get(task.state, 0) + 1
    return found


# --- disk full, injected at the store layer (SQLite's own SQLITE_FULL) ----------------------------

@pytest.mark.asyncio
@pytest.mark.sqlite_only  # SQLite's own fault; PostgreSQL's are test_shared_store.py's
async def test_sqlite_full_stops_claiming_hands_tasks_back_and_work_resumes_with_space(
        store: Store, data_dir: Path) -> None:
    """``PRAGMA max_page_count`` makes SQLite itself answer SQLITE_FULL once the file would grow:
    the same error a full disk gives, without needing one."""
    store.enqueue("b", sim_api_tasks(60, prompt="p"))
    heard: list[StorageFault | None] = []
    async with scheduler_running(store, sim_config(), data_dir, Clock(speed=100)) as sched:
        sched.add_fault_listener(heard.append)  # added before the store is limited: every fault is heard
        await wait_until(lambda: _states(store).get("success", 0) >= 3)
        pages = store.db.execute_sql("PRAGMA page_count").fetchone()[0]
        store.db.execute_sql(f"PRAGMA max_page_count = {pages}")
        await wait_until(lambda: sched.fault is not None)
        assert sched.fault.kind == FAULT_FULL and "disk full: the filesystem" in str(sched.fault)
        await wait_until(lambda: not any(lane.active for lane in sched.lanes.values()))
        states = _states(store)
        assert "failed" not in states  # nothing is the tasks' fault
        assert [f.kind for f in heard] == [FAULT_FULL]  # told once, not per failed write
        store.db.execute_sql("PRAGMA max_page_count = 1073741823")  # space is back
        await wait_until(lambda: sched.fault is None, timeout=30)
        assert heard[-1] is None
        await asyncio.wait_for(sched.wait_for_batches(["b"]), 60)
    assert _states(store) == {"success": 60}
    assert {t.attempt for t in store.tasks()} == {1}  # handed back, never counted as attempts


@pytest.mark.asyncio
@pytest.mark.sqlite_only  # SQLite's write lock and its busy timeout
async def test_the_fault_probe_under_a_held_lock_gives_up_at_once_and_work_resumes_when_it_is_free(
        store: Store, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A process stopped mid-write keeps SQLite's write lock. The scheduler probes the store every
    few seconds on the loop the window runs on: the probe's write waits PROBE_BUSY_TIMEOUT_MS for
    the lock, not BUSY_TIMEOUT_S, and the store's other writes keep their long wait."""
    store.enqueue("b", sim_api_tasks(30, prompt="p"))
    probe_waits: list[int] = []  # the busy timeout each probe's write ran with, in ms
    gate_write = store.set_gate_not_before

    def recorded(name: str, at: float) -> None:
        probe_waits.append(store.db.execute_sql("PRAGMA busy_timeout").fetchone()[0])
        gate_write(name, at)

    monkeypatch.setattr(store, "set_gate_not_before", recorded)
    async with scheduler_running(store, sim_config(), data_dir, Clock(speed=100)) as sched:
        await wait_until(lambda: _states(store).get("success", 0) >= 3)
        store.db.execute_sql("PRAGMA busy_timeout = 200")  # the write that meets the lock: not 10 s here
        holder = sqlite3.connect(store.path, isolation_level=None)
        try:
            holder.execute("BEGIN IMMEDIATE")  # as a process stopped mid-write holds it
            await wait_until(lambda: sched.fault is not None)
            assert sched.fault.kind == FAULT_LOCKED
            await wait_until(lambda: probe_waits, timeout=30)
            assert sched.fault is not None and sched.fault.kind == FAULT_LOCKED  # the probe gave up
            assert probe_waits == [PROBE_BUSY_TIMEOUT_MS]
            assert store.db.execute_sql("PRAGMA busy_timeout").fetchone()[0] == BUSY_TIMEOUT_S * 1000
            assert "failed" not in _states(store)
        finally:
            holder.rollback()
            holder.close()
        await wait_until(lambda: sched.fault is None, timeout=30)
        await asyncio.wait_for(sched.wait_for_batches(["b"]), 60)
    assert _states(store) == {"success": 30}


@pytest.mark.sqlite_only  # SQLite's own max_page_count stands in for the full disk
def test_an_enqueue_into_a_full_store_is_a_storage_fault_and_adds_nothing(store: Store) -> None:
    pages = store.db.execute_sql("PRAGMA page_count").fetchone()[0]
    store.db.execute_sql(f"PRAGMA max_page_count = {pages}")
    with pytest.raises(StorageFault) as full:
        store.enqueue("b", [NewTask(model="writer", model_kind="api", route="api:sim-api", prompt="p" * 1000,
                                    task_id=f"t{i}") for i in range(2000)])
    assert full.value.kind == FAULT_FULL and str(store.path) in str(full.value)
    assert store.tasks() == []


class _FinishRaises(Store):
    """A store whose success write breaks the way a bug in it would (not a storage fault)."""

    def finish_success(self, task: Task, *_result: object, **_more: object) -> bool:
        raise RuntimeError("result table is not what this version expects")


@pytest.mark.asyncio
async def test_an_exception_from_finish_success_ends_the_attempt_in_a_defined_state(
        data_dir: Path, caplog: pytest.LogCaptureFixture) -> None:
    store = _FinishRaises(data_dir / DB)
    store.enqueue("b", sim_api_tasks(2, prompt="p"))
    caplog.set_level(logging.ERROR)
    async with scheduler_running(store, sim_config(), data_dir, Clock(speed=100)):
        await wait_until(lambda: all(t.error_kind == "internal" for t in store.tasks()))
    for task in store.tasks():
        assert task.state in ("pending", "failed") and "ending the attempt failed: RuntimeError" in task.error
    assert not any("never retrieved" in r.getMessage() for r in caplog.records)
    store.close()


# --- files that cannot be used: one line naming the file, exit 2, for run and status --------------

def _valid_db(path: Path, tasks: int = 0) -> Path:
    store = Store(path)
    if tasks:
        store.enqueue("b", sim_api_tasks(tasks, prompt="p"))
    store.db.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    return path


def _not_a_database(path: Path) -> None:
    path.write_text("name,prompt\nthis is a CSV file\n", encoding="utf-8")


def _truncated(path: Path) -> None:
    _valid_db(path, tasks=2000)
    with path.open("r+b") as handle:
        handle.truncate(path.stat().st_size // 2)


def _damaged(path: Path) -> None:
    _valid_db(path, tasks=2000)
    with path.open("r+b") as handle:
        handle.seek(4096)
        handle.write(os.urandom(path.stat().st_size - 4096))


@pytest.mark.parametrize("spoil, says", [(_not_a_database, "is not a mediaassist database"),
                                         (_truncated, "is damaged (PRAGMA integrity_check"),
                                         # a statement's "malformed" is not proof: check, back up first
                                         (_damaged, "reports damage")])
def test_an_unusable_database_is_one_line_and_exit_2_for_run_and_status(tmp_path: Path, spoil, says: str) -> None:
    data = tmp_path / "data"
    data.mkdir()
    spoil(data / DB)
    config = write_config(tmp_path / "config.toml", sim_config_text(api_s=(1, 2)))
    task_file = write_csv(tmp_path / "t.csv", [{"model": "writer", "prompt": "hello"}])
    for args in (("status",), ("run", str(task_file))):
        proc = cli(*args, "--config", str(config), "--data-dir", str(data))
        assert proc.returncode == 2, proc.stderr
        assert "Traceback" not in proc.stderr
        lines = [line for line in proc.stderr.splitlines() if str(data / DB) in line]
        assert len(lines) == 1 and says in lines[0], proc.stderr


def test_a_cut_file_is_called_damaged_only_after_integrity_check_and_with_a_backup_offered_first(
        tmp_path: Path) -> None:
    path = tmp_path / DB
    _valid_db(path, tasks=2000)
    whole = path.read_bytes()
    path.write_bytes(whole[:len(whole) // 2])  # the header says more pages than the file has
    assert check_sqlite_file(path)  # short: looked at once open, not refused on sight
    with pytest.raises(StorageFault, match=r"is damaged \(PRAGMA integrity_check.*'mediaassist doctor' backs it up"):
        Store(path)
    # The doctor backs it up as it is and says why it is damaged.
    doctor = cli("doctor", "--data-dir", str(tmp_path))
    assert doctor.returncode == 1 and "Traceback" not in doctor.stderr, doctor.stderr
    (backup,) = (tmp_path / "backups").iterdir()
    assert (backup / DB).read_bytes() == whole[:len(whole) // 2]
    assert f"{path} is damaged: " in doctor.stdout
    path.write_bytes(whole)  # e.g. another process's checkpoint completed
    assert not check_sqlite_file(path)
    Store(path).close()
    healthy = cli("doctor", "--data-dir", str(tmp_path))
    assert healthy.returncode == 0 and "PRAGMA integrity_check ok" in healthy.stdout, healthy.stderr


def test_the_doctor_saves_the_rows_a_damaged_file_can_still_read(tmp_path: Path) -> None:
    path = tmp_path / DB
    _valid_db(path, tasks=2000)
    with sqlite3.connect(path) as conn:  # three of the task table's leaf pages, not its root
        leaves = [row[0] for row in conn.execute("SELECT pageno FROM dbstat WHERE name = 'task' "
                                                 "AND pagetype = 'leaf'")]
    spoiled = bytearray(path.read_bytes())
    for page in leaves[len(leaves) // 2:len(leaves) // 2 + 3]:
        spoiled[(page - 1) * 4096:page * 4096] = os.urandom(4096)
    path.write_bytes(spoiled)
    doctor = cli("doctor", "--data-dir", str(tmp_path))
    assert doctor.returncode == 1 and "Traceback" not in doctor.stderr, doctor.stderr
    assert f"{path} is damaged: " in doctor.stdout and "rows that could be read are saved in" in doctor.stdout
    assert path.read_bytes() == spoiled  # the damaged file itself is left as it was
    (recovered,) = tmp_path.glob("mediaassist-recovered-*.sqlite3")
    with sqlite3.connect(recovered) as conn:
        assert 1000 < conn.execute("SELECT COUNT(*) FROM task").fetchone()[0] < 2000


# --- real small file systems (need mount: root in CI) ---------------------------------------------

@contextlib.contextmanager
def _tmpfs(where: Path, size: str) -> Iterator[Path]:
    where.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(where)],
                             capture_output=True)
    if mounted.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root); the injected SQLITE_FULL test covers the logic")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def _run_until_successes(tmp_path: Path, data: Path, tasks: int, successes: int,
                         api_concurrency: int = 3) -> tuple[subprocess.Popen[str], Path, Path]:
    """A real ``run`` of ``tasks`` simulated API tasks, returned (still running) once
    ``successes`` of them are stored; with its task file and config."""
    config = write_config(tmp_path / "config.toml", sim_config_text(api_concurrency=api_concurrency, api_s=(4, 8)))
    task_file = write_csv(tmp_path / "t.csv", [{"model": "writer", "prompt": f"p {i}"} for i in range(tasks)])
    run = cli_popen("run", str(task_file), "--speed", "20", "--config", str(config), "--data-dir", str(data))

    def stored_enough() -> bool:
        assert run.poll() is None, run.communicate()[1]
        return _count(data, "success") >= successes
    wait_until_sync(stored_enough, 60, f"{successes} successes stored")
    return run, task_file, config


def _fill(folder: Path) -> Path:
    """Write a file until the file system is full; returns it (delete it to free the space)."""
    filler = folder / "filler.bin"
    with contextlib.suppress(OSError), filler.open("wb") as handle:
        while True:
            handle.write(b"\0" * 65536)
            handle.flush()
    return filler


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_a_full_disk_ends_run_with_exit_3_and_one_line_and_the_next_run_resumes(tmp_path: Path) -> None:
    with _tmpfs(tmp_path / "small", "8m") as small:
        data = small / "data"
        run, task_file, config = _run_until_successes(tmp_path, data, tasks=300, successes=5, api_concurrency=4)
        filler = _fill(small)
        filled_at = time.monotonic()
        _stdout, stderr = run.communicate(timeout=90)
        assert run.returncode == 3, stderr
        assert time.monotonic() - filled_at < 60
        assert "Traceback" not in stderr and "scheduler pass failed" not in stderr
        assert len([line for line in stderr.splitlines() if "disk full" in line]) == 1, stderr
        assert f"disk full: the filesystem {small} (tmpfs) holding {data / DB} has " in stderr
        filler.unlink()
        assert _count(data, "failed") == 0  # nothing marked failed
        again = cli("run", str(task_file), "--speed", "20", "--config", str(config), "--data-dir", str(data),
                    timeout=180)
        assert again.returncode == 0, again.stderr
        assert _count(data, "success") == 300


@pytest.mark.slow
def test_a_read_only_data_dir_is_one_line_and_exit_2(tmp_path: Path) -> None:
    with _tmpfs(tmp_path / "ro", "4m") as folder:
        _valid_db(folder / DB, tasks=3)
        subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)
        config = write_config(tmp_path / "config.toml", sim_config_text())
        task_file = write_csv(tmp_path / "t.csv", [{"model": "writer", "prompt": "hello"}])
        for args in (("status",), ("run", str(task_file))):
            proc = cli(*args, "--config", str(config), "--data-dir", str(folder))
            assert proc.returncode == 2, proc.stderr
            assert "Traceback" not in proc.stderr
            lines = [line for line in proc.stderr.splitlines() if str(folder) in line]
            assert len(lines) == 1 and "cannot write" in lines[0] and "read-only" in lines[0], proc.stderr


# --- the database deleted or replaced while a run uses it ----------------------------------------

def _count(data: Path, state: str) -> int:
    try:
        with contextlib.closing(sqlite3.connect(data / DB, timeout=10)) as conn:
            return conn.execute("SELECT COUNT(*) FROM task WHERE state = ?", (state,)).fetchone()[0]
    except sqlite3.Error:  # not created yet
        return -1


def _delete(path: Path) -> None:
    path.unlink()


def _replace(path: Path) -> None:
    fresh = path.with_name("fresh.sqlite3")
    _valid_db(fresh)
    fresh.replace(path)


@pytest.mark.slow
@pytest.mark.parametrize("swap, says", [(_delete, "was deleted while in use"), (_replace, "was replaced while in use")])
def test_the_database_deleted_or_replaced_mid_run_stops_the_run_with_an_error(tmp_path: Path, swap, says: str) -> None:
    data = tmp_path / "data"
    run, _task_file, _config = _run_until_successes(tmp_path, data, tasks=200, successes=3)
    swap(data / DB)
    _stdout, stderr = run.communicate(timeout=60)
    assert run.returncode == 2, stderr
    assert "Traceback" not in stderr and "200/200" not in stderr
    assert says in stderr and str(data / DB) in stderr


def test_the_window_on_an_unusable_database_is_one_line_and_exit_2(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    _not_a_database(data / DB)
    config = write_config(tmp_path / "config.toml", sim_config_text())
    proc = cli("--config", str(config), "--data-dir", str(data), env={"QT_QPA_PLATFORM": "offscreen"})
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert [line for line in proc.stderr.splitlines() if str(data / DB) in line] == [
        f"mediaassist: {data / DB} is not a mediaassist database (no SQLite header); move it aside, "
        "or choose another --data-dir"]


def _short_by(path: Path) -> int:
    """How many bytes the file is shorter than its header says (0: whole)."""
    header = path.read_bytes()[:100]
    page_size, pages = int.from_bytes(header[16:18], "big"), int.from_bytes(header[28:32], "big")
    return max(0, page_size * pages - path.stat().st_size)


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_a_store_whose_checkpoint_ran_out_of_room_is_intact_and_written_back_when_space_returns(
        tmp_path: Path) -> None:
    with _tmpfs(tmp_path / "small", "3m") as small:
        data = small / "data"
        data.mkdir()
        store = Store(data / DB)
        store.db.execute_sql("PRAGMA wal_autocheckpoint = 0")  # the queue's pages stay in the -wal
        store.enqueue("b", sim_api_tasks(3000, prompt="p"))
        filler = _fill(small)
        with pytest.raises(StorageFault, match="disk full"):  # the checkpoint cannot grow the file
            store.db.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)")
        store.close()
        assert _short_by(data / DB) > 0 and (data / f"{DB}-wal").stat().st_size > 0  # what a full disk leaves
        config = write_config(tmp_path / "config.toml", sim_config_text())
        still_full = cli("status", "--json", "--config", str(config), "--data-dir", str(data))
        # Intact: never "damaged" nor "move aside"; still full: exit 3, naming the filesystem to free.
        assert still_full.returncode == 3, still_full.stderr
        assert "damaged" not in still_full.stderr and "move it aside" not in still_full.stderr
        assert "intact, but part of it is still only in its -wal file" in still_full.stderr
        assert f"disk full: the filesystem {small} (tmpfs) holding {data / DB} has 0.0 MB free" in still_full.stderr
        filler.unlink()
        again = cli("status", "--json", "--config", str(config), "--data-dir", str(data))
        assert again.returncode == 0, again.stderr
        assert _short_by(data / DB) == 0  # written back by itself once there was room
        with sqlite3.connect(data / DB) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
            assert conn.execute("SELECT COUNT(*) FROM task WHERE state = 'pending'").fetchone() == (3000,)


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_the_demos_disk_full_line_names_the_filesystem_of_its_data_dir_not_the_working_directory(
        tmp_path: Path) -> None:
    with _tmpfs(tmp_path / "small", "2m") as small:
        data = small / "data"
        data.mkdir()
        _fill(small)
        example = RESOURCES / "examples" / "seed-batch.csv"
        proc = subprocess.run([sys.executable, "-m", "mediaassist", "run", str(example), "--demo", "--speed", "60",
                               "--data-dir", str(data)], capture_output=True, text=True, timeout=180,
                              cwd=tmp_path)  # the working directory is on another, roomy disk
    assert proc.returncode == 3, proc.stderr
    assert "Traceback" not in proc.stderr
    assert f"disk full: the filesystem {small} (tmpfs) holding {data}" in proc.stderr
