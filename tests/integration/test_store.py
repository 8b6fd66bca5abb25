"""The task store: atomic claims, conditional writes, idempotent enqueue, operator actions."""

from __future__ import annotations

import multiprocessing
from multiprocessing.synchronize import Barrier
from pathlib import Path

import peewee as pw
import pytest

from mediaassist.core.errors import ErrorKind
from mediaassist.core.store import AUTO_RETRIES, NewTask, Result, Store, Task

# Every test here runs on SQLite and, when MEDIAASSIST_TEST_PG is set, on PostgreSQL (conftest.py).


def _api(n: int, prefix: str = "t", **kw) -> list[NewTask]:
    return [NewTask(model="writer", model_kind="api", route="api:sim", prompt=f"p{i}",
                    task_id=f"{prefix}{i}", **kw) for i in range(n)]


def test_enqueue_skips_known_ids_instead_of_duplicating(store: Store) -> None:
    inserted, skipped = store.enqueue("b1", _api(5))
    assert (len(inserted), skipped) == (5, [])
    inserted, skipped = store.enqueue("b2", _api(7))
    assert inserted == ["t5", "t6"] and skipped == ["t0", "t1", "t2", "t3", "t4"]
    assert Task.select().count() == 7
    assert store.get("t0").batch_id == "b1"  # the first import keeps the task


def test_claim_takes_priority_first_then_fifo(store: Store) -> None:
    tasks = _api(4)
    tasks[2].priority = 5
    store.enqueue("b", tasks)
    order = [t.task_id for t in store.claim("api:sim", "me", limit=4)]
    assert order == ["t2", "t0", "t1", "t3"]
    assert all(t.state == "running" and t.owner == "me" for t in store.tasks())


def test_claim_skips_tasks_not_yet_due_and_other_accounts(store: Store) -> None:
    store.enqueue("b", [NewTask(model="r", model_kind="web", route="web:s", task_id="pinned",
                                account="bob"),
                        NewTask(model="r", model_kind="web", route="web:s", task_id="free")])
    store.enqueue("b", _api(1, prefix="later"))
    Task.update(not_before=store.now() + 60).where(Task.task_id == "later0").execute()
    assert store.claim("api:sim", "me") == []
    claimed = store.claim("web:s", "me", limit=5, account="alice")
    assert [t.task_id for t in claimed] == ["free"]
    assert claimed[0].account == "alice"


def _claim_worker(path: str, owner: str, queue: multiprocessing.Queue, start: Barrier, first_done: Barrier) -> None:
    store = Store(path)
    start.wait(60)  # every worker claims from the same moment: a claim is faster than a process start
    mine = [t.task_id for t in store.claim("api:sim", owner, limit=3)]  # these first claims race for the head
    # No worker goes on before every first claim is in: one fast worker cannot drain the queue
    # alone while the others are still being scheduled (2 cores, 4 processes).
    first_done.wait(60)
    while batch := store.claim("api:sim", owner, limit=3):
        mine += [t.task_id for t in batch]
    store.close()
    queue.put(mine)


def test_concurrent_claimers_in_separate_processes_never_share_a_row(store_location: str) -> None:
    path = store_location
    store = Store(path)
    store.enqueue("b", _api(600))
    store.close()
    queue: multiprocessing.Queue = multiprocessing.get_context("spawn").Queue()
    ctx = multiprocessing.get_context("spawn")
    start, first_done = ctx.Barrier(5), ctx.Barrier(5)
    workers = [ctx.Process(target=_claim_worker, args=(str(path), f"w{i}", queue, start, first_done))
               for i in range(4)]
    for worker in workers:
        worker.start()
    start.wait(60)
    first_done.wait(60)
    claimed = [queue.get(timeout=60) for _ in workers]
    for worker in workers:
        worker.join(timeout=30)
    every = [tid for chunk in claimed for tid in chunk]
    assert len(every) == 600 and len(set(every)) == 600
    assert all(claimed)  # every worker claimed: they raced for the same head, and then for the rest


def test_a_reaped_attempt_cannot_write_its_late_result(store: Store) -> None:
    store.enqueue("b", _api(1))
    (first,) = store.claim("api:sim", "old-owner")
    assert store.finish_failure(first, ErrorKind.STALLED, "no heartbeat", retry_at=store.now()) == "pending"
    (second,) = store.claim("api:sim", "new-owner")
    assert second.attempt == 2
    assert store.finish_success(first, "late", []) is False  # the old attempt lost the row
    assert store.finish_success(second, "fresh", ["a.png"]) is True
    assert store.finish_success(second, "again", []) is False  # never written twice
    assert Result.select().count() == 1
    assert store.result(first.task_id).text == "fresh"
    assert Task.select().count() == 1


def test_retries_update_the_same_row_until_attempts_run_out(store: Store) -> None:
    store.enqueue("b", _api(1))
    for attempt in range(1, AUTO_RETRIES + 2):
        (task,) = store.claim("api:sim", "me")
        assert task.attempt == attempt
        state = store.finish_failure(task, ErrorKind.NETWORK, "reset", retry_at=store.now())
    assert state == "failed"
    row = store.get("t0")
    assert (row.state, row.attempt, row.error_kind) == ("failed", 3, "network")
    assert Task.select().count() == 1


def test_cancel_pending_at_once_and_running_by_flag(store: Store) -> None:
    store.enqueue("b", _api(2))
    (running,) = store.claim("api:sim", "me")
    outcome = store.cancel(["t0", "t1"])
    assert outcome == {"canceled": 1, "cancel_requested": 1}
    assert store.get("t1").state == "canceled"
    assert store.get(running.task_id).state == "running"  # the lane writes its real end
    assert store.cancel_requested_among(["t0", "t1"]) == {"t0"}


def test_manual_retry_gives_fresh_attempts_on_the_same_row(store: Store) -> None:
    store.enqueue("b", _api(2))
    for task in store.claim("api:sim", "me", limit=2):
        store.finish_failure(task, ErrorKind.BAD_INPUT, "bad", retry_at=None)
    assert store.retry(all_failed=True) == 2
    row = store.get("t0")
    assert (row.state, row.attempt, row.retries_left) == ("pending", 2, AUTO_RETRIES)


def test_release_returns_a_task_to_the_queue_without_counting_an_attempt(store: Store) -> None:
    store.enqueue("b", _api(1))
    (task,) = store.claim("api:sim", "me")
    store.save_remote_id(task, "1904737800233889793")
    assert store.release(task)
    row = store.get("t0")
    assert (row.state, row.attempt, row.remote_id) == ("pending", 1, "1904737800233889793")


def test_database_file_is_private_and_in_wal_mode(data_dir: Path) -> None:
    store = Store(data_dir / "private.sqlite3")
    assert store.path.stat().st_mode & 0o077 == 0
    assert store.db.execute_sql("PRAGMA journal_mode").fetchone()[0] == "wal"
    store.close()


def test_operator_retry_resubmits_only_a_remote_task_that_ended(store: Store) -> None:
    store.enqueue("b", _api(2))
    failed, timed_out = store.claim("api:sim", "me", limit=2)
    for task, kind in ((failed, ErrorKind.PROVIDER), (timed_out, ErrorKind.TIMEOUT)):
        store.save_remote_id(task, f"19047378002338897{task.task_id[-1]}")
        store.finish_failure(task, kind, "remote said so", retry_at=None)
    assert store.retry(["t0", "t1"]) == 2
    assert store.get("t0").remote_id is None  # FAILED remotely: a new remote task is created
    assert store.get("t1").remote_id == "190473780023388971"  # may still run: resume polling it


def test_one_running_web_task_per_account_across_processes(store: Store) -> None:
    store.enqueue("b", [NewTask(model="r", model_kind="web", route="web:s", task_id=f"w{i}") for i in range(3)])
    assert len(store.claim("web:s", "process-1", account="alice")) == 1
    # A second process with its own lane for the same account gets nothing while one runs...
    assert store.claim("web:s", "process-2", account="alice") == []
    # ...and the database refuses a second running row for the account even if asked directly.
    with pytest.raises(pw.IntegrityError):
        Task.update(state="running", account="alice").where(Task.task_id == "w1").execute()
    assert len(store.claim("web:s", "process-2", account="bob")) == 1


def test_remote_id_is_kept_even_when_the_attempt_was_reaped_meanwhile(store: Store) -> None:
    store.enqueue("b", _api(1))
    (first,) = store.claim("api:sim", "frozen")
    store.finish_failure(first, ErrorKind.STALLED, "no heartbeat", retry_at=store.now())
    store.save_remote_id(first, "1904737800233889793")  # the create's reply arrives late
    (retry,) = store.claim("api:sim", "rescuer")
    assert retry.remote_id == "1904737800233889793"  # the retry polls it instead of re-creating


def test_delete_removes_only_finished_tasks_with_their_results_and_logs(store: Store) -> None:
    store.enqueue("b", _api(3))
    done, _running = store.claim("api:sim", "me", limit=2)
    store.finish_success(done, "text", [])
    store.log(done.task_id, "a line")
    assert store.delete(["t0", "t1", "t2"]) == 1  # t1 runs, t2 is queued (the view may be stale)
    assert [t.task_id for t in store.tasks()] == ["t1", "t2"]
    assert store.result("t0") is None and store.logs("t0") == []


def test_a_success_named_by_id_can_be_generated_again_but_a_batch_retry_leaves_it(store: Store) -> None:
    store.enqueue("b", _api(2))
    for task in store.claim("api:sim", "me", limit=2):
        store.save_remote_id(task, f"remote-{task.task_id}")
        store.finish_success(task, "first", [])
    assert store.retry(batch_id="b") == 0 and store.retry(all_failed=True) == 0
    assert store.retry(["t0"]) == 1
    row = store.get("t0")
    assert (row.state, row.attempt, row.remote_id, row.error_kind) == ("pending", 2, None, None)
    assert store.result("t0").text == "first"  # kept until the new result replaces it
    assert store.missing(["t0", "nope"]) == ["nope"]
