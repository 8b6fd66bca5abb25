"""The lane scheduler on simulated providers and scaled time."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path

import pytest

from mediaassist.core.clock import Clock
from mediaassist.core.errors import ErrorKind, TaskError
from mediaassist.core.events import TaskEvent, TaskEventKind
from mediaassist.core.messages import CHINESE, render
from mediaassist.core.policy import ACCOUNT_DISABLED
from mediaassist.core.scheduler import STALL_S, Scheduler
from mediaassist.core.store import NewTask, Store, Task
from mediaassist.providers.base import Provider, TaskContext, TaskResult
from mediaassist.providers.registry import build_providers
from mediaassist.providers.simulated import SimulatedProvider
from tests.harness import make_scheduler, numbered_tasks, run_to_end, sim_api_tasks, sim_web_tasks, wait_until
from tests.helpers import sim_config


def _scheduler(store: Store, data_dir: Path, clock: Clock, api: Provider | None = None,
               poll_sweep_s: float | None = None) -> Scheduler:
    """The simulated config's scheduler; ``api`` replaces the API lane's provider,
    ``poll_sweep_s`` the poll lane's ``queue_check_interval_s``."""
    config = sim_config()
    if poll_sweep_s is not None:
        next(p for p in config.providers if p.kind == "poll").queue_check_interval_s = poll_sweep_s
    providers = build_providers(config, clock, data_dir)
    if api is not None:
        providers["api:sim-api"] = api
    return make_scheduler(store, config, data_dir, clock, providers)


def _overlaps(tasks: list[Task]) -> bool:
    spans = sorted((t.started_at, t.finished_at) for t in tasks)
    return any(later[0] < earlier[1] for earlier, later in itertools.pairwise(spans))


@pytest.mark.asyncio
async def test_lanes_hold_their_limits_and_finish_everything(store: Store, data_dir: Path) -> None:
    clock = Clock(speed=200)
    store.enqueue("b", sim_api_tasks(20) + sim_web_tasks(8))
    sched = _scheduler(store, data_dir, clock)
    await run_to_end(sched, "b", 60)
    tasks = store.tasks(["b"])
    assert {t.state for t in tasks} == {"success"}
    assert sched.lanes["api:sim-api"].provider.max_in_flight == 3
    web = [t for t in tasks if t.model_kind == "web"]
    assert {t.account for t in web} == {"alice", "bob"}  # both accounts worked
    for account in ("alice", "bob"):
        assert not _overlaps([t for t in web if t.account == account])  # one at a time, each


@pytest.mark.asyncio
async def test_web_lane_limit_is_not_a_setting(store: Store, data_dir: Path) -> None:
    sched = _scheduler(store, data_dir, Clock(100))
    with pytest.raises(ValueError):
        sched.set_limit("web:alice", 2)
    sched.set_limit("api:sim-api", 5)
    assert sched.lanes["api:sim-api"].limit == 5


@pytest.mark.asyncio
async def test_retryable_failure_retries_on_the_same_row_with_growing_delay(
        store: Store, data_dir: Path) -> None:
    clock = Clock(speed=400)
    store.enqueue("b", sim_api_tasks(1, sim_fail="network", sim_duration_s=1))
    sched = _scheduler(store, data_dir, clock)
    await run_to_end(sched, "b", 60)
    (task,) = store.tasks(["b"])
    assert (task.state, task.attempt, task.error_kind) == ("failed", 3, "network")
    assert Task.select().count() == 1
    lines = [entry.line for entry in store.logs(task.task_id)]
    assert sum("failed (network)" in line for line in lines) == 3
    assert sum("will retry" in line for line in lines) == 2


@pytest.mark.asyncio
async def test_bad_input_is_not_retried(store: Store, data_dir: Path) -> None:
    store.enqueue("b", sim_api_tasks(1, sim_fail="bad_input", sim_duration_s=1))
    await run_to_end(_scheduler(store, data_dir, Clock(200)), "b", 60)
    (task,) = store.tasks(["b"])
    assert (task.state, task.attempt, task.error_kind) == ("failed", 1, "bad_input")


class _Recorder(SimulatedProvider):
    """Simulated provider that records how each attempt ended (its clean-up ran or not)."""

    def __init__(self, clock: Clock) -> None:
        super().__init__(clock, 1000, 1000)
        self.cleaned: dict[str, str | None] = {}
        self.started = asyncio.Event()

    async def run(self, ctx: TaskContext) -> TaskResult:
        self.started.set()
        try:
            return await super().run(ctx)
        except asyncio.CancelledError:
            self.cleaned[ctx.task.task_id] = ctx.stop_reason
            raise


@pytest.mark.asyncio
async def test_cancel_while_running_stops_the_work_and_ends_canceled(store: Store, data_dir: Path) -> None:
    clock = Clock(speed=100)
    recorder = _Recorder(clock)
    store.enqueue("b", sim_api_tasks(2))
    sched = _scheduler(store, data_dir, clock, api=recorder)
    await sched.start()
    await asyncio.wait_for(recorder.started.wait(), 10)
    assert store.cancel(["a000", "a001"]) == {"canceled": 0, "cancel_requested": 2}
    await asyncio.wait_for(sched.wait_for_batches(["b"]), 20)
    await sched.stop()
    assert {t.state for t in store.tasks(["b"])} == {"canceled"}
    assert recorder.cleaned == {"a000": "cancel", "a001": "cancel"}
    assert store.result("a000") is None  # no false success


@pytest.mark.asyncio
async def test_provider_pause_leaves_the_rest_of_the_lane_pending(store: Store, data_dir: Path) -> None:
    class QuotaGone(SimulatedProvider):
        async def run(self, ctx: TaskContext) -> TaskResult:
            raise TaskError(ErrorKind.QUOTA, "insufficient_quota", pause_lane="quota exhausted")

    clock = Clock(speed=100)
    store.enqueue("b", sim_api_tasks(10))
    sched = _scheduler(store, data_dir, clock, api=QuotaGone(clock, 1, 1))
    await run_to_end(sched, "b", 60)
    states = [t.state for t in store.tasks(["b"])]
    assert states.count("failed") <= 3  # only those already in flight when it paused
    assert states.count("pending") >= 7
    assert all(t.attempt == 1 for t in store.tasks(["b"]) if t.state == "pending")
    assert store.paused_lanes() == {"api:sim-api": "quota exhausted"}


@pytest.mark.asyncio
async def test_stalled_heartbeat_is_reaped_and_retried(store: Store, data_dir: Path) -> None:
    clock = Clock(speed=100)
    store.enqueue("b", sim_api_tasks(1, sim_duration_s=1))
    # A row left running by a process on another machine that stopped beating 2 minutes ago.
    Task.update(state="running", owner="elsewhere:4242:1:x", started_at=store.now() - 200,
                heartbeat_at=clock.ago(STALL_S + 30)).execute()
    await run_to_end(_scheduler(store, data_dir, clock), "b", 60)
    (task,) = store.tasks(["b"])
    assert (task.state, task.attempt) == ("success", 2)
    assert any("failed (stalled)" in entry.line for entry in store.logs(task.task_id))


@pytest.mark.asyncio
async def test_fresh_heartbeat_of_a_live_foreign_owner_is_left_alone(store: Store, data_dir: Path) -> None:
    clock = Clock(speed=100)
    store.enqueue("b", sim_api_tasks(1))
    Task.update(state="running", owner="elsewhere:4242:1:x", heartbeat_at=store.now()).execute()
    sched = _scheduler(store, data_dir, clock)
    await sched.start()
    await asyncio.sleep(clock.real(STALL_S) / 3)
    await sched.stop()
    assert store.get("a000").state == "running"


@pytest.mark.asyncio
async def test_tasks_of_a_dead_local_process_are_recovered_at_start(store: Store, data_dir: Path) -> None:
    import socket

    store.enqueue("b", sim_api_tasks(2, sim_duration_s=1))
    dead_owner = f"{socket.gethostname()}:999999:12345:abc"  # no such pid
    Task.update(state="running", owner=dead_owner, heartbeat_at=store.now()).execute()
    await run_to_end(_scheduler(store, data_dir, Clock(100)), "b", 60)
    assert [(t.state, t.attempt) for t in store.tasks(["b"])] == [("success", 2), ("success", 2)]


@pytest.mark.asyncio
async def test_disabled_account_takes_no_new_work(store: Store, data_dir: Path) -> None:
    clock = Clock(speed=200)
    sched = _scheduler(store, data_dir, clock)
    store.sync_accounts(sched.config.accounts)
    store.set_account_enabled("bob", False)
    pinned = NewTask(model="reasoner", model_kind="web", route="web:simulated", task_id="for-bob",
                     account="bob")
    store.enqueue("b", [*sim_web_tasks(3), pinned])
    await run_to_end(sched, "b", 60)
    tasks = {t.task_id: t for t in store.tasks(["b"])}
    assert {tasks[f"w{i:03d}"].account for i in range(3)} == {"alice"}
    assert tasks["for-bob"].state == "pending"  # waits for bob; the run ends as blocked
    assert sched.blocked_lanes() == {"web:bob": ACCOUNT_DISABLED}


@pytest.mark.asyncio
async def test_shutdown_hands_running_tasks_back_to_the_queue(store: Store, data_dir: Path) -> None:
    clock = Clock(speed=100)
    recorder = _Recorder(clock)
    store.enqueue("b", sim_api_tasks(3))
    sched = _scheduler(store, data_dir, clock, api=recorder)
    await sched.start()
    await asyncio.wait_for(recorder.started.wait(), 10)
    await asyncio.sleep(0.05)
    await sched.stop(cancel_running=False)
    assert [(t.state, t.attempt) for t in store.tasks(["b"])] == [("pending", 1)] * 3
    assert set(recorder.cleaned.values()) == {"shutdown"}


@pytest.mark.asyncio
async def test_poll_lane_refills_a_freed_slot_at_once(store: Store, data_dir: Path) -> None:
    clock = Clock(speed=10)
    tasks = numbered_tasks(12, "video", "poll", "poll:sim-poll", "v")
    for i, task in enumerate(tasks):
        task.params = {"sim_duration_s": 10 + i}
    store.enqueue("b", tasks)
    # The sweep is put far off (600 s nominal, 60 s real), so only a refill at once can start
    # a waiting task within 5 s nominal (0.5 s real) of a finish.
    sched = _scheduler(store, data_dir, clock, poll_sweep_s=600)
    await run_to_end(sched, "b", 60)
    done = sorted(store.tasks(["b"]), key=lambda t: t.started_at)
    assert sched.lanes["poll:sim-poll"].provider.max_in_flight == 4
    assert [t.task_id for t in done] == [f"v{i:03d}" for i in range(12)]  # FIFO
    finishes = sorted(t.finished_at for t in done)
    for task, freed in zip(done[4:], finishes, strict=False):  # the last four finishes free no one
        assert task.started_at - freed < clock.real(5.0)


@pytest.mark.asyncio
async def test_requeue_hands_the_task_back_without_using_an_attempt(store: Store, data_dir: Path) -> None:
    from mediaassist.core.errors import Requeue

    class Gate(SimulatedProvider):
        def __init__(self, clock: Clock) -> None:
            super().__init__(clock, 1, 1)
            self.seen: list[str] = []

        async def run(self, ctx: TaskContext) -> TaskResult:
            self.seen.append(ctx.task.task_id)
            if len(self.seen) <= 3:
                ctx.store.pause_lane("api:sim-api", "waiting for the operator")
                raise Requeue("lane paused")
            return await super().run(ctx)

    clock = Clock(speed=200)
    gate = Gate(clock)
    store.enqueue("b", sim_api_tasks(3))
    sched = _scheduler(store, data_dir, clock, api=gate)
    await sched.start()
    await asyncio.wait_for(sched.wait_for_batches(["b"]), 10)  # ends: lane paused, all pending
    assert [(t.state, t.attempt) for t in store.tasks(["b"])] == [("pending", 1)] * 3
    store.resume_lane("api:sim-api")
    sched.wake()
    await asyncio.wait_for(sched.wait_for_batches(["b"]), 10)
    await sched.stop()
    done = sorted(store.tasks(["b"]), key=lambda t: t.started_at)
    assert [(t.task_id, t.state, t.attempt) for t in done] == [
        ("a000", "success", 1), ("a001", "success", 1), ("a002", "success", 1)]


@pytest.mark.asyncio
async def test_a_cancel_whose_clean_up_raises_still_ends_canceled(store: Store, data_dir: Path) -> None:
    class MessyCleanup(_Recorder):
        async def run(self, ctx: TaskContext) -> TaskResult:
            try:
                return await super().run(ctx)
            except asyncio.CancelledError:
                raise TaskError(ErrorKind.NETWORK, "page closed under us") from None

    clock = Clock(speed=100)
    messy = MessyCleanup(clock)
    store.enqueue("b", sim_api_tasks(1))
    sched = _scheduler(store, data_dir, clock, api=messy)
    await sched.start()
    await asyncio.wait_for(messy.started.wait(), 10)
    store.cancel(["a000"])
    await asyncio.wait_for(sched.wait_for_batches(["b"]), 20)
    await sched.stop()
    (task,) = store.tasks(["b"])
    assert (task.state, task.attempt, task.error_kind) == ("canceled", 1, "canceled")


@pytest.mark.asyncio
async def test_stop_right_after_a_claim_does_not_wait_for_the_work(store: Store, data_dir: Path) -> None:
    clock = Clock(speed=1)  # real time: the simulated work would take 1000 s
    store.enqueue("b", sim_api_tasks(2))
    sched = _scheduler(store, data_dir, clock, api=_Recorder(clock))
    sched.assign()  # claimed; the attempts' first steps have not run yet
    await asyncio.wait_for(sched.stop(), 5)
    assert [(t.state, t.attempt) for t in store.tasks(["b"])] == [("pending", 1)] * 2


@pytest.mark.asyncio
async def test_a_lane_with_every_slot_taken_is_not_asked_to_claim_until_one_frees(
        store: Store, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Assign runs when something changed, not on every quarter-second check: with the poll
    lane full and nothing ending, the store sees no claim for it; work enqueued meanwhile without
    a wake (as another process would) is taken once a slot frees."""
    clock = Clock(speed=20)  # the check every 0.05 s real, the sweep (5 s nominal) every 0.25 s
    claims: list[str] = []
    real_claim = store.claim
    monkeypatch.setattr(store, "claim", lambda route, *a, **k: claims.append(route) or real_claim(route, *a, **k))
    store.enqueue("b", numbered_tasks(4, "video", "poll", "poll:sim-poll", "v", sim_duration_s=40))
    sched = _scheduler(store, data_dir, clock)
    await sched.start()
    try:
        await wait_until(lambda: len(sched.lanes["poll:sim-poll"].active) == 4)
        claimed_when_full = claims.count("poll:sim-poll")
        await asyncio.sleep(clock.real(20))  # 20 nominal s: ~80 checks, 4 sweeps, no finish
        assert claims.count("poll:sim-poll") == claimed_when_full
        store.enqueue("c", numbered_tasks(1, "video", "poll", "poll:sim-poll", "late", sim_duration_s=1))  # no wake
        await wait_until(lambda: store.get("late000").state != "pending", timeout=clock.real(60) + 5)
        assert store.get("late000").started_at >= min(t.finished_at or 0 for t in store.tasks(["b"])
                                                      if t.finished_at) - 0.01
    finally:
        await sched.stop()



@pytest.mark.asyncio
async def test_events_carry_kind_task_state_and_the_failures_message(store: Store, data_dir: Path) -> None:
    """A listener learns what happened without reading English: the kind, the row's state after
    it, and the failure's own message (rendered in the listener's language)."""
    store.enqueue("b", sim_api_tasks(1, sim_fail="bad_input", sim_duration_s=0.01))
    sched = _scheduler(store, data_dir, Clock(speed=200))
    events: list[TaskEvent] = []
    sched.add_event_listener(events.append)
    await run_to_end(sched, "b", 60)
    (task,) = store.tasks(["b"])
    assert [(e.kind, e.state) for e in events] == [(TaskEventKind.STARTED, "running"),
                                                    (TaskEventKind.FAILED, "failed")]
    failed = events[-1]
    assert (failed.seq, failed.task_id, failed.lane) == (task.seq, task.task_id, "api:sim-api")
    assert failed.message is not None and str(failed.message) == task.error
    assert render(failed.message, CHINESE) != task.error  # the same failure, in Chinese
