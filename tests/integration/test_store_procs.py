"""Owners, lane limits and gates held by the store across real processes (issue 9, items 1-2, 6)."""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

from mediaassist.core.errors import ErrorKind
from mediaassist.core.owners import Owner, new_owner, owner_is_dead
from mediaassist.core.store import CRASH_RETRIES, SCHEMA_COLUMNS, NewTask, Store, Task

ROOT = Path(__file__).resolve().parents[2]


def _python(code: str) -> subprocess.Popen[str]:
    """A real Python process running ``code``; it talks over its stdin/stdout lines."""
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})


def _end(proc: subprocess.Popen[str]) -> None:
    """Kill (if still running) and collect it, closing its pipes."""
    proc.kill()
    proc.communicate(timeout=10)


def _ask(proc: subprocess.Popen[str], line: str) -> str:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(line + "\n")
    proc.stdin.flush()
    return proc.stdout.readline().strip()


# Prints its owner, then answers "is this owner dead?" for each line it reads.
JUDGE = """
    import sys
    from mediaassist.core.owners import new_owner, owner_is_dead
    print(new_owner(), flush=True)
    for line in sys.stdin:
        print(owner_is_dead(line.strip()), flush=True)
"""


def _api(n: int, route: str = "api:sim") -> list[NewTask]:
    return [NewTask(model="writer", model_kind="api", route=route, task_id=f"t{i}") for i in range(n)]


def test_owner_format_round_trips_and_a_foreign_format_is_never_dead() -> None:
    owner = new_owner()
    assert Owner.parse(str(owner)) == Owner(owner.host, owner.pid, float(f"{owner.start:.0f}"), owner.token)
    assert not owner_is_dead(str(owner))  # this very process
    for foreign in ("me", "host:123", f"{socket.gethostname()}:notapid:1:x", ""):
        assert Owner.parse(foreign) is None and not owner_is_dead(foreign)


def test_two_live_processes_never_judge_each_other_dead_and_a_killed_one_is_found_at_once() -> None:
    first, second = _python(JUDGE), _python(JUDGE)
    try:
        owners = [first.stdout.readline().strip(), second.stdout.readline().strip()]  # type: ignore[union-attr]
        for judge in (first, second):
            assert [_ask(judge, owner) for owner in owners] == ["False", "False"]  # self and the other
        assert not any(owner_is_dead(owner) for owner in owners)
        _end(second)  # SIGKILL
        assert owner_is_dead(owners[1])
        assert _ask(first, owners[1]) == "True"
        assert _ask(first, owners[0]) == "False"
    finally:
        for proc in (first, second):
            _end(proc)


def test_a_reused_pid_with_another_start_time_is_dead() -> None:
    me = new_owner()
    assert owner_is_dead(str(Owner(me.host, me.pid, me.start - 3600, me.token)))


def test_another_host_is_judged_by_heartbeat_age_only_never_by_pid() -> None:
    me = new_owner()
    elsewhere = str(Owner("some-other-host", 999999999, me.start, "t"))  # no such pid here
    assert not owner_is_dead(elsewhere)
    assert not owner_is_dead(elsewhere, heartbeat_at=100.0, now=150.0, stale_after_s=90.0)
    assert owner_is_dead(elsewhere, heartbeat_at=100.0, now=200.0, stale_after_s=90.0)


# --- limits held by the claim ---------------------------------------------------------------------

def test_the_claim_counts_running_rows_of_every_owner_against_the_lane_limit(store: Store) -> None:
    store.enqueue("b", _api(10))
    assert len(store.claim("api:sim", "process-1", limit=5, lane_limit=3)) == 3
    assert store.claim("api:sim", "process-2", limit=5, lane_limit=3) == []
    (done, *_rest) = [t for t in store.tasks() if t.state == "running"]
    store.finish_success(done, "x", [])
    assert len(store.claim("api:sim", "process-2", limit=5, lane_limit=3)) == 1


def test_the_claim_can_be_restricted_to_some_batches(store: Store) -> None:
    store.enqueue("other", _api(3))
    store.enqueue("mine", [NewTask(model="writer", model_kind="api", route="api:sim", task_id=f"m{i}")
                           for i in range(2)])
    claimed = store.claim("api:sim", "me", limit=5, batch_ids=["mine"])
    assert sorted(t.task_id for t in claimed) == ["m0", "m1"]
    assert {t.state for t in store.tasks(["other"])} == {"pending"}


def test_a_create_whose_reply_nobody_read_holds_its_slot_until_its_time_is_up(store: Store) -> None:
    store.enqueue("b", _api(10, route="poll:rh"))
    sent, *_others = store.claim("poll:rh", "process-1", limit=3, lane_limit=3)
    store.hold_create(sent, 3600.0)
    # Its process dies with the create on the wire; the task fails saying so, its slot stays taken.
    store.finish_failure(sent, ErrorKind.NETWORK, "unresolved", retry_at=None)
    assert store.get(sent.task_id).create_unresolved
    for task in _others:
        store.finish_success(task, "x", [])
    assert len(store.claim("poll:rh", "process-2", limit=5, lane_limit=3)) == 2
    # A saved remote id resolves it (the row then holds its slot as a remote task, if pending).
    store.save_remote_id(sent, "r-1")
    assert not store.get(sent.task_id).create_unresolved


def test_a_create_released_or_retried_or_timed_out_holds_nothing(store: Store) -> None:
    store.enqueue("b", _api(6, route="poll:rh"))
    first, second, third = store.claim("poll:rh", "process-1", limit=3, lane_limit=3)
    store.hold_create(first, 3600.0)
    store.release_create(first)  # "full, nothing created"
    store.hold_create(second, -1.0)  # held for as long as such a task could run, and that is over
    store.hold_create(third, 3600.0)
    for task in (first, second, third):
        store.finish_failure(task, ErrorKind.NETWORK, "x", retry_at=None)
    assert len(store.claim("poll:rh", "process-2", limit=5, lane_limit=3)) == 2
    assert store.get(third.task_id).create_unresolved and store.retry([third.task_id]) == 1
    assert not store.get(third.task_id).create_unresolved  # the operator checked and asks again


CLAIMER = """
    import sys, time
    from mediaassist.core.store import Store, Task
    store = Store(sys.argv[1])
    owner, most = sys.argv[2], 0
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for task in store.claim("api:sim", owner, limit=4, lane_limit=3):
            store.finish_success(task, "ok", [])
        running = Task.select().where(Task.state == "running").count()
        most = max(most, running)
        if not Task.select().where(Task.state != "success").count():
            break
    print(most, flush=True)
"""


def test_three_processes_claiming_hold_one_lane_limit(data_dir: Path) -> None:
    """Each process would take 4 at once; the store lets the three of them hold 3 in all. The
    running rows are also sampled from the database by a fourth reader."""
    path = data_dir / "shared.sqlite3"
    store = Store(path)
    store.enqueue("b", _api(300))
    store.close()
    code = textwrap.dedent(CLAIMER)
    procs = [subprocess.Popen([sys.executable, "-c", code, str(path), f"p{i}"], stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(ROOT)}) for i in range(3)]
    reader = sqlite3.connect(path, timeout=30)
    most = 0
    while any(p.poll() is None for p in procs):
        most = max(most, reader.execute("SELECT COUNT(*) FROM task WHERE state = 'running'").fetchone()[0])
    reader.close()
    seen = [int(p.communicate(timeout=60)[0]) for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert max([*seen, most]) <= 3
    store = Store(path)
    assert {t.state for t in store.tasks()} == {"success"}
    assert {t.attempt for t in store.tasks()} == {1}
    store.close()


# --- gates ------------------------------------------------------------------------------------------

def test_a_gate_has_one_holder_and_a_lease(store: Store) -> None:
    now = [1000.0]
    store._now = lambda: now[0]
    assert store.try_gate("create:poll:rh", "a", ttl_s=30)
    assert not store.try_gate("create:poll:rh", "b", ttl_s=30)
    assert store.gate_holder("create:poll:rh") == "a"
    assert store.try_gate("create:poll:rh", "a", ttl_s=30)  # the holder may take it again
    now[0] += 20
    assert store.renew_gate("create:poll:rh", "a", ttl_s=30)
    now[0] += 25
    assert not store.try_gate("create:poll:rh", "b", ttl_s=30)  # renewed: still a's
    now[0] += 10
    assert store.try_gate("create:poll:rh", "b", ttl_s=30)  # a's lease ran out
    assert not store.renew_gate("create:poll:rh", "a", ttl_s=30)
    assert not store.release_gate("create:poll:rh", "a")  # only the holder releases
    assert store.release_gate("create:poll:rh", "b")
    assert store.try_gate("create:poll:rh", "a", ttl_s=30)


def test_a_gate_back_off_set_by_one_store_is_seen_by_another(data_dir: Path) -> None:
    first, second = Store(data_dir / "q.sqlite3"), Store(data_dir / "q.sqlite3")
    assert second.gate_not_before("create:poll:rh") == 0.0
    first.set_gate_not_before("create:poll:rh", 12345.0)
    assert second.gate_not_before("create:poll:rh") == 12345.0
    first.close()
    second.close()


GATE_HOLDER = """
    import sys
    from mediaassist.core.owners import new_owner
    from mediaassist.core.store import Store
    store = Store(sys.argv[1])
    owner = str(new_owner())
    print(owner, store.try_gate("create:poll:rh", owner, ttl_s=3600), flush=True)
    sys.stdin.readline()
"""


def test_a_dead_processes_gate_is_free_at_once_but_a_live_ones_is_not(data_dir: Path) -> None:
    path = data_dir / "q.sqlite3"
    Store(path).close()
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(GATE_HOLDER), str(path)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        _owner, took = holder.stdout.readline().split()  # type: ignore[union-attr]
        assert took == "True"
        store = Store(path)
        me = str(new_owner())
        assert not store.try_gate("create:poll:rh", me, ttl_s=30)  # alive, lease of an hour
        _end(holder)
        assert store.try_gate("create:poll:rh", me, ttl_s=30)  # dead: free without waiting
        assert store.gate_holder("create:poll:rh") == me
        store.close()
    finally:
        _end(holder)


# --- the crash budget column --------------------------------------------------------------------------

def test_a_crash_draws_on_its_own_budget_not_on_the_retries(store: Store) -> None:
    store.enqueue("b", _api(1))
    for lost in range(1, CRASH_RETRIES + 2):
        (task,) = store.claim("api:sim", f"dead-{lost}")
        state = store.finish_failure(task, ErrorKind.STALLED, "process died", retry_at=store.now(), crashed=True)
    assert state == "failed"
    row = store.get("t0")
    assert (row.crash_retries_left, row.retries_left, row.attempt) == (0, 2, CRASH_RETRIES + 1)
    assert store.retry(["t0"]) == 1
    assert store.get("t0").crash_retries_left == CRASH_RETRIES


def test_an_old_database_gets_the_crash_budget_column_on_open(data_dir: Path) -> None:
    path = data_dir / "old.sqlite3"
    Store(path).close()
    raw = sqlite3.connect(path)
    raw.execute('DROP INDEX IF EXISTS "task_one_running_per_account"')
    # as a database from before schema versions: none of the columns of version 2 and later
    for version in sorted(v for v in SCHEMA_COLUMNS if v >= 2):
        for table, column, _sql in SCHEMA_COLUMNS[version]:
            for (index,) in raw.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? "
                                        "AND sql LIKE ?", (table, f"%{column}%")).fetchall():
                raw.execute(f'DROP INDEX "{index}"')  # an index of a later version goes with its column
            raw.execute(f'ALTER TABLE "{table}" DROP COLUMN "{column}"')
    raw.execute("DROP TABLE schema_version")
    raw.execute("INSERT INTO task (task_id, batch_id, model, model_kind, route, prompt, params, priority, state, "
                "attempt, retries_left, created_at, not_before, cancel_requested, updated_at, account_pinned) "
                "VALUES ('old', 'b', 'writer', 'api', 'api:sim', 'p', '{}', 0, 'pending', 1, 2, 0, 0, 0, 0, 0)")
    raw.commit()
    raw.close()
    store = Store(path)
    assert store.get("old").crash_retries_left == CRASH_RETRIES
    assert Task.select().count() == 1
    store.close()


ENQUEUER = """
    import sys
    from mediaassist.core.store import NewTask, Store
    store = Store(sys.argv[1])
    for batch in range(60):
        store.enqueue(f"b{batch}", [NewTask(model="writer", model_kind="api", route="api:sim", prompt="p",
                                            task_id=f"b{batch}-{n}") for n in range(20)])
"""

WRITER = """
    import sys, time
    from mediaassist.core.store import Store
    store = Store(sys.argv[1])
    deadline = time.monotonic() + 60
    done = 0
    while done < 600 and time.monotonic() < deadline:
        for task in store.claim("api:sim", "w", limit=2, lane_limit=3):
            store.finish_success(task, "ok", [])
            done += 1
"""


def test_enqueue_never_meets_database_is_locked_while_another_process_writes(data_dir: Path) -> None:
    """An enqueue reads (which ids exist) before it writes; without the write lock taken at BEGIN
    a commit by another process in between fails it at once, whatever busy_timeout says."""
    path = data_dir / "shared.sqlite3"
    Store(path).close()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    codes = (WRITER, ENQUEUER, ENQUEUER.replace('f"b{batch}', 'f"c{batch}'))
    procs = [subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), str(path)], stderr=subprocess.PIPE,
                              text=True, env=env) for code in codes]
    errors = [proc.communicate(timeout=120)[1] for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0, 0], errors
