"""The window's reads (core.queries) and the progress arithmetic (core.progress) on a real store."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import pytest

from mediaassist.core.errors import ErrorKind
from mediaassist.core.progress import BatchEta, BatchProgress, EtaSmoother, ServiceTimes, estimate, work_left
from mediaassist.core.queries import Queries, TaskFilter, TaskOrder
from mediaassist.core.store import NewTask, Store, Task


@dataclass
class FakeLane:  # only what estimate() reads of a scheduler lane
    name: str
    route: str
    limit: int
    order: str = "fifo"


def api(n: int, prefix: str) -> list[NewTask]:
    return [NewTask(model="writer", model_kind="api", route="api:sim-api", prompt=f"prompt {i}",
                    task_id=f"{prefix}{i:03d}") for i in range(n)]


def web(n: int, prefix: str) -> list[NewTask]:
    return [NewTask(model="reasoner", model_kind="web", route="web:simulated", prompt=f"ask {i}",
                    task_id=f"{prefix}{i:03d}") for i in range(n)]


def test_batch_progress_counts_every_state_and_finishes_only_when_nothing_waits_or_runs(store: Store) -> None:
    store.enqueue("b", api(10, "t"))
    store.cancel([f"t{i:03d}" for i in range(6)])
    first, second, third, fourth = store.claim("api:sim-api", "me", 4)
    store.finish_success(first, "ok", [])
    store.finish_success(second, "ok", [])
    store.finish_failure(third, ErrorKind.PROVIDER, "no", retry_at=None)
    progress = BatchProgress.of("b", Queries(store).snapshot().by_batch["b"])
    assert (progress.done, progress.failed, progress.canceled, progress.running, progress.waiting) == (2, 1, 6, 1, 0)
    assert progress.total == 10 and progress.ended == 9 and not progress.finished
    store.finish_canceled(fourth)
    snap = Queries(store).snapshot()
    assert BatchProgress.of("b", snap.by_batch["b"]).finished
    assert snap.totals_by_kind()[("api", "canceled")] == 7  # what the tray shows per kind


def test_estimate_names_the_lane_that_blocks_a_batch(store: Store) -> None:
    store.enqueue("b", web(207, "w"))
    snap = Queries(store).snapshot()
    lanes = [FakeLane("web:demo-a", "web:simulated", 1)]
    found = estimate("b", snap, lanes, {"web:demo-a": "account needs login"}, ServiceTimes(), store.now())
    assert found.seconds is None and found.blocked is not None
    assert (found.blocked.route, found.blocked.waiting) == ("web:simulated", 207)
    assert found.blocked.reasons == (("web:demo-a", "account needs login"),)
    no_lane = estimate("b", snap, [], {}, ServiceTimes(), store.now())
    assert no_lane.blocked is not None and no_lane.blocked.reasons == ()


def test_estimate_measures_first_then_counts_older_batches_ahead(store: Store) -> None:
    store.enqueue("old", api(10, "o"), created_at=1.0)
    store.enqueue("new", api(10, "n"), created_at=2.0)
    snap = Queries(store).snapshot()
    lanes = [FakeLane("api:sim-api", "api:sim-api", 2)]
    service = ServiceTimes()
    assert estimate("new", snap, lanes, {}, service, store.now()).measuring == "api:sim-api"
    service.record("api:sim-api", 3.0)
    assert estimate("old", snap, lanes, {}, service, store.now()).seconds == pytest.approx(10 / 2 * 3.0)
    assert estimate("new", snap, lanes, {}, service, store.now()).seconds == pytest.approx(20 / 2 * 3.0)
    service.record("api:sim-api", 8.0)  # smoothed: one slow attempt moves the mean a fifth
    assert service.mean["api:sim-api"] == pytest.approx(4.0)


def test_a_running_task_counts_only_the_part_it_has_still_to_go(store: Store) -> None:
    """K = 1, four tasks of 60 s: at 75 % (three done, the last 45 s in) 15 s are left, not a
    whole service time; one that overruns is about to end (the floor), not done."""
    store.enqueue("b", api(4, "k"))
    lanes = [FakeLane("api:sim-api", "api:sim-api", 1)]
    service = ServiceTimes()
    service.record("api:sim-api", 60.0)
    for task in store.claim("api:sim-api", "me", 3):
        store.finish_success(task, "ok", [])
    assert len(store.claim("api:sim-api", "me", 1)) == 1  # the last one runs
    snap = Queries(store).snapshot()
    (_batch, started, _expected), = snap.running_started["api:sim-api"]
    assert estimate("b", snap, lanes, {}, service, started + 45.0).seconds == pytest.approx(15.0)
    assert estimate("b", snap, lanes, {}, service, started + 600.0).seconds == pytest.approx(6.0)  # the floor
    assert work_left(3, [started], 60.0, started + 30.0) == pytest.approx(2.5)
    assert work_left(3, [started], None, started + 30.0) == 3  # nothing measured: whole tasks


def test_a_batch_eta_follows_each_route_at_its_own_pace_and_counts_its_running_task_too(store: Store) -> None:
    """A mixed batch: its four quick API tasks are done in seconds, its two web tasks take a
    minute each on one account. The web route's pace decides, not the batch's overall one; and
    the task that runs counts only by what it has still to go."""
    store.enqueue("b", api(4, "a") + web(2, "w"))
    lanes = [FakeLane("api:sim-api", "api:sim-api", 4), FakeLane("web:acct", "web:simulated", 1)]
    etas = BatchEta()
    etas.service.record("api:sim-api", 2.0)
    etas.service.record("web:simulated", 60.0)
    etas.record("b", Queries(store).snapshot(), 0.0)
    for task in store.claim("api:sim-api", "me", 4):
        store.finish_success(task, "ok", [])
    [first] = store.claim("web:simulated", "me", 1)
    etas.record("b", Queries(store).snapshot(), 2.0)
    # it took a minute, as the store records it too: the last one is expected to take as long
    Task.update(started_at=store.now() - 60.0).where(Task.task_id == first.task_id).execute()
    store.finish_success(first, "ok", [])
    etas.record("b", Queries(store).snapshot(), 62.0)
    assert len(store.claim("web:simulated", "me", 1)) == 1  # the last one runs
    snap = Queries(store).snapshot()
    (_batch, started, _expected), = snap.running_started["web:simulated"]
    found, shown = etas.eta("b", snap, lanes, {}, now=107.0, wall=started + 45.0)
    # One web task a minute; a quarter of the last is left. The whole batch's pace (5 of 6 tasks
    # ended in 107 s) would have said 21 s; one web task a minute, counted whole, 60 s.
    assert found.seconds == pytest.approx(15.0, rel=0.05) and shown == pytest.approx(found.seconds)


def test_a_small_batch_alone_on_its_route_is_planned_task_by_task(store: Store) -> None:
    """Two web accounts; the model's record says 10 s plus 1 s per prompt character. The batch's
    work is 160 s (80 s per account), but its 100-character task alone takes 110 s: the ETA is
    the longest task's, started first on one account while the other runs the rest."""
    store.enqueue("record", [NewTask(model="reasoner", model_kind="web", route="web:simulated", prompt="x" * chars,
                                     task_id=f"r{chars}") for chars in (10, 50)])
    for task in store.claim("web:simulated", "me", 2):  # recorded: 20 s and 60 s
        Task.update(started_at=store.now() - 10 - len(task.prompt)).where(Task.seq == task.seq).execute()
        store.finish_success(task, "ok", [])
    store.enqueue("b", [NewTask(model="reasoner", model_kind="web", route="web:simulated", prompt="x" * chars,
                                task_id=f"b{i}-{chars}") for i, chars in enumerate((5, 100, 5, 10))])
    lanes = [FakeLane(f"web:acct-{i}", "web:simulated", 1, order="longest") for i in range(2)]
    found, _shown = BatchEta().eta("b", Queries(store).snapshot(), lanes, {}, now=0.0, wall=store.now())
    assert found.seconds == pytest.approx(110.0, abs=0.5)  # not measuring: the record is enough
    [longest] = store.claim("web:simulated", "me", 1, order="longest")
    assert longest.task_id == "b1-100"
    wall = longest.started_at + 100.0  # it has run 100 s of its 110; the other account is idle
    found, _shown = BatchEta().eta("b", Queries(store).snapshot(), lanes, {}, now=0.0, wall=wall)
    # the short ones longest first, each on the account free first: 20 s (other), 10 + 15 s (this
    # one, once its long task ends), 20 + 15 s (the other again)
    assert found.seconds == pytest.approx(35.0, abs=0.5)
    # Another batch on the route: no plan (the batch's pace will decide); until then the queue's
    # estimate, with the waiting tasks' mean expectation (50 s / 3) for the service time nothing
    # has measured yet, and the long task as about to end (a tenth of a task still to go).
    store.enqueue("other", web(1, "o"))
    found, _shown = BatchEta().eta("b", Queries(store).snapshot(), lanes, {}, now=0.0, wall=wall)
    assert found.seconds == pytest.approx((3 + 0.1) * (50 / 3) / 2, abs=0.5)


def test_shown_eta_counts_down_and_moves_steadily_when_estimates_jump() -> None:
    smoother = EtaSmoother()
    assert smoother.smooth("b", 1000.0, now=0.0) == 1000.0
    assert smoother.smooth("b", 990.0, now=10.0) == pytest.approx(990.0)  # on track: no change
    shown = [smoother.smooth("b", estimate_s, now=10.0 + i) for i, estimate_s in
             enumerate([1300.0, 900.0, 1300.0, 900.0], start=1)]
    steps = [abs(b - a) for a, b in itertools.pairwise([990.0, *shown])]
    assert max(steps) < 0.3 * 400  # a 400 s jump in the estimate moves the shown ETA far less
    smoother.forget("b")
    assert smoother.smooth("b", 50.0, now=100.0) == 50.0


def test_default_order_is_newest_batch_first_each_in_queue_order(store: Store) -> None:
    store.enqueue("old", api(3, "o"), created_at=1.0)
    store.enqueue("new", api(3, "n"), created_at=2.0)
    queries = Queries(store)
    assert queries.task_ids(TaskFilter(), TaskOrder()) == ["n000", "n001", "n002", "o000", "o001", "o002"]
    assert queries.task_ids(TaskFilter(batch="old"), TaskOrder("task_id", descending=True)) == ["o002", "o001", "o000"]


def test_rows_carry_result_preview_files_and_lane_filter(store: Store) -> None:
    store.enqueue("b", api(2, "t") + web(2, "w"))
    task = store.claim("api:sim-api", "me", 1)[0]
    store.finish_success(task, "line one\nline two", ["/out/a.png", "/out/b.mp4"])
    web_task = store.claim("web:simulated", "me", 1, account="acct-a")[0]
    queries = Queries(store)
    rows = {r.task_id: r for r in queries.rows(queries.seqs(TaskFilter(), TaskOrder()))}
    assert rows["t000"].result_text == "line one\nline two" and rows["t000"].files == ("/out/a.png", "/out/b.mp4")
    assert rows["t001"].result_text is None and rows["t001"].files == ()
    assert queries.task_ids(TaskFilter(lane="web:acct-a"), TaskOrder()) == [web_task.task_id]
    assert queries.task_ids(TaskFilter(lane="web:simulated"), TaskOrder()) == ["w001"]
    # sorting by duration needs no database-specific time function
    assert len(queries.seqs(TaskFilter(), TaskOrder("duration", descending=True))) == 4


def test_text_filter_treats_wildcards_as_text(store: Store) -> None:
    store.enqueue("b", api(3, "t") + api(2, "pct_"))
    queries = Queries(store)
    assert queries.task_ids(TaskFilter(text="pct_"), TaskOrder()) == ["pct_000", "pct_001"]
    assert queries.task_ids(TaskFilter(text="%"), TaskOrder()) == []
