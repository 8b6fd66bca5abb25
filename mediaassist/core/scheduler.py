"""The lane scheduler: concurrency set by what each provider can bear, not by a thread count.

One loop on the app's event loop (no threads). It does, in order:

1. **reap** -- running rows whose heartbeat is older than 90 s fail as ``stalled`` (and retry);
2. **cancel** -- running tasks the operator flagged get their work cancelled;
3. **assign** -- one small synchronous step (after httpcore's pool): every lane with free
   slots atomically claims due tasks from the head of its queue (the row is ``running`` before
   the work starts) and starts one attempt per task.

Reap and cancel are one cheap query every quarter second while work runs (the flags may come
from another process); the full steps run only when it finds something. Assign runs when
something changed: a finished attempt or an operator's action wakes the loop at once (so a
freed slot is refilled at once), and a timer covers what no event announces -- the sweep
(``queue_check_interval_s``, the safety net: work enqueued by another process), the next
retry coming due and a lane's rest ending. A lane whose slots are all taken costs only the check.

Several processes may share one store (the window and a ``run``, or two ``run`` processes): a lane's
limit is held by the claim itself (it counts the running rows of every process), and tasks left running
by a process that died are found within seconds and retried on the crash budget.

A storage fault (disk full, the file deleted or replaced) stops all claiming with a visible
reason; running tasks are handed back; fault listeners (the window's banner, ``run``) hear it.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import random
import time
from collections.abc import Callable, Iterable, MutableMapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from mediaassist.core.budget import Budgeter, Claimed, batch_pause_name, is_budget_pause, paused_batches
from mediaassist.core.clock import Clock
from mediaassist.core.config import AppConfig
from mediaassist.core.errors import ErrorKind, Requeue, StorageFault, TaskError
from mediaassist.core.events import STATE_AFTER, TaskEvent, TaskEventKind
from mediaassist.core.hours import DAY_S, Hours, next_opening
from mediaassist.core.lane_api import (
    AccountChecked,
    BalanceReported,
    LimitReported,
    Provider,
    StopReason,
    TaskContext,
    TaskResult,
)
from mediaassist.core.lanes import (
    DEFAULT_SWEEP_S,
    AccountView,
    LaneConditions,
    LaneSpec,
    holder,
    lane_specs,
    site_route,
)
from mediaassist.core.location import host_id
from mediaassist.core.manifest import batch_entries, write_manifest
from mediaassist.core.messages import Message, msg
from mediaassist.core.money import SOURCE_TEXTS, budget_day_start, format_money
from mediaassist.core.outputs import (
    NamingValues,
    OutputFile,
    batch_folder,
    naming_for,
    outputs_root,
    place_outputs,
    task_folder,
)
from mediaassist.core.owners import describe_owner, new_owner, owner_is_dead, owner_is_running_here
from mediaassist.core.policy import (
    End,
    LaneSlots,
    Outcome,
    QueueCount,
    Retry,
    batches_settled,
    blocked_lanes,
    closed_lanes,
    current_limit,
    decide_end,
    decide_retry,
    plan_claims,
    waiting_for_hours,
)
from mediaassist.core.store import CANCELED_BY_OPERATOR, CRASH_RETRIES, Store, Task

log = logging.getLogger("mediaassist.scheduler")

HEARTBEAT_S = 15.0
STALL_S = 90.0
CHECK_EVERY_S = 0.25  # real seconds between looks for cancel flags and stalled rows (less at high --speed)
DEAD_OWNER_CHECK_S = 2.0  # real seconds between looks for rows of processes that died
FAULT_PROBE_S = 5.0  # real seconds between checks whether a storage fault has cleared
MANIFEST_EVERY_S = 2.0  # real seconds between rewrites of a running batch's manifest


def retry_delay_s(attempt: int) -> float:
    """Growing delay before attempt ``attempt + 1``: ~10 s, ~30 s, with ±20 % jitter."""
    return min(300.0, 10.0 * 3.0 ** (attempt - 1)) * random.uniform(0.8, 1.2)


class LaneLogger(logging.LoggerAdapter[logging.Logger]):
    def process(self, msg: object, kwargs: MutableMapping[str, Any]) -> tuple[str, MutableMapping[str, Any]]:
        assert self.extra is not None  # always built with extra={"lane": ...}
        return f"[{self.extra['lane']}] {msg}", kwargs


@dataclass
class Attempt:
    task: Task
    ctx: TaskContext
    work: asyncio.Task[TaskResult] | None = None


@dataclass
class Lane:
    name: str  # web:<account> | api:<provider> | poll:<provider>
    kind: str
    route: str  # the queue it takes from
    limit: int  # the fixed gate; with ``adaptive`` the most the learned limit may reach
    provider: Provider
    account: str | None = None
    key: str | None = None  # the label of the provider's key it runs on
    sweep_s: float = DEFAULT_SWEEP_S
    adaptive: bool = False  # concurrency = "auto"
    learned: int | None = None  # the adaptive limit as the store last said (shared by processes)
    active: dict[str, Attempt] = field(default_factory=dict)
    logger: LaneLogger = field(init=False)
    # Real (monotonic) time until which the lane takes no work: its resource is busy elsewhere.
    resting_until: float = 0.0
    hours: Hours = ()  # the local hours it may take work in; () = any time
    order: str = "fifo"  # how it takes its queue (core/order.py)
    daily_limit: int | None = None  # the most tasks it starts in a budget day

    def __post_init__(self) -> None:
        self.logger = LaneLogger(logging.getLogger("mediaassist.lane"), {"lane": self.name})

    @classmethod
    def of(cls, spec: LaneSpec, provider: Provider) -> Lane:
        return cls(name=spec.name, kind=spec.kind, route=spec.route, limit=spec.limit, provider=provider,
                   account=spec.account, key=spec.key, sweep_s=spec.sweep_s, adaptive=spec.adaptive, hours=spec.hours,
                   order=spec.order, daily_limit=spec.daily_limit)

    def current_limit(self) -> int:
        """How many tasks the lane may run at once, across every process on the store: for
        ``concurrency = "auto"`` the learned limit as the store last said (the same number for
        every process)."""
        return current_limit(self.kind, self.limit, self.adaptive, self.learned)

    def slots(self) -> LaneSlots:
        """The lane as the policy sees it: its gate and this process's running attempts."""
        return LaneSlots(name=self.name, kind=self.kind, route=self.route, limit=self.limit,
                         running=len(self.active), account=self.account, key=self.key, adaptive=self.adaptive,
                         resting=self.resting, order=self.order)

    @property
    def free(self) -> int:
        return self.current_limit() - len(self.active)

    @property
    def resting(self) -> bool:
        return time.monotonic() < self.resting_until

    def account_notes(self) -> list[Message]:
        """What the lane's provider found about its account when it started (a poll lane's
        pre-flight: balance, tasks running, the concurrent limit, warnings); none for others."""
        return list(self.provider.preflight_lines) if isinstance(self.provider, AccountChecked) else []


class Scheduler:
    def __init__(
        self,
        store: Store,
        config: AppConfig,
        providers: dict[str, Provider],
        data_dir: Path,
        clock: Clock | None = None,
    ) -> None:
        self.store = store
        self.config = config
        self.providers = providers
        self.data_dir = data_dir
        self.clock = clock or Clock()
        self.owner = str(new_owner())
        self.budget = Budgeter(store, config)
        self.lanes = self._build_lanes()
        self._wake = asyncio.Event()
        self._loop_task: asyncio.Task[None] | None = None
        self._beat_task: asyncio.Task[None] | None = None
        self._attempts: set[asyncio.Task[None]] = set()
        self._listeners: list[Callable[[str, Task], None]] = []
        self._event_listeners: list[Callable[[TaskEvent], None]] = []
        self._fault_listeners: list[Callable[[StorageFault | None], None]] = []
        self._stopping = False
        self.only_batches: list[str] | None = None  # None: every batch queued on our lanes
        self._draining = False  # no new claims: the running attempts are finishing (run --all)
        self._unreleased: list[Task] = []  # attempts whose end the store refused (a fault)
        self._went_idle: set[str] = set()  # lanes of a balance-reporting provider that just ran dry
        self.fault: StorageFault | None = None
        self.outputs_root = outputs_root(config, data_dir)
        self._stale_manifests: set[str] = set()  # batches with outputs their manifest lacks
        self._manifests_written_at = 0.0

    # --- wiring ----------------------------------------------------------------------------
    def _build_lanes(self) -> dict[str, Lane]:
        """The config's lanes whose provider exists (an account of a site with no provider is left out)."""
        return {spec.name: Lane.of(spec, provider) for spec in lane_specs(self.config)
                if (provider := self.providers.get(spec.name, self.providers.get(spec.route))) is not None}

    def _follow_reported_limits(self) -> None:
        """A poll lane whose config gives no ``max_polling_tasks`` takes the limit its service
        reports for the key (RunningHub's ``concurrentLimit``): no create is sent only to be told
        421 "queue maxed". A limit written in the config is the operator's, and stays."""
        follows = {slot.lane for prov in self.config.providers for slot in prov.slots() if slot.follows_service_limit}
        for lane in self.lanes.values():
            reported = lane.provider.reported_limit if isinstance(lane.provider, LimitReported) else None
            if reported and lane.name in follows and reported != lane.limit:
                lane.limit = reported
                lane.logger.info("polls %d at once: the limit the service reports for the key", reported)

    def add_listener(self, callback: Callable[[str, Task], None]) -> None:
        """``callback(event, task)`` on started/success/failed/retry/canceled/released."""
        self._listeners.append(callback)

    def add_event_listener(self, callback: Callable[[TaskEvent], None]) -> None:
        """``callback(TaskEvent)`` on the same events, with the text that goes with them."""
        self._event_listeners.append(callback)

    def _emit(self, kind: TaskEventKind, task: Task, message: Message | None = None) -> None:
        for callback in self._listeners:
            callback(kind.value, task)
        if self._event_listeners:
            state = STATE_AFTER.get(kind, task.state)
            event = TaskEvent(kind, task.seq, task.task_id, task.lane, state, message, route=task.route,
                              error_kind=task.error_kind, started_at=task.started_at)
            for listener in self._event_listeners:
                listener(event)

    def add_fault_listener(self, callback: Callable[[StorageFault | None], None]) -> None:
        """``callback(fault)`` when the store becomes unusable, ``callback(None)`` when it is back."""
        self._fault_listeners.append(callback)

    def limit_to_batches(self, batch_ids: Iterable[str]) -> None:
        """Claim only tasks of these batches (``run FILE``); other work on the lanes is left to
        whoever runs it."""
        self.only_batches = sorted(set(batch_ids))

    def wake(self) -> None:
        self._wake.set()

    def set_limit(self, lane_name: str, limit: int) -> None:
        lane = self.lanes[lane_name]
        if lane.kind == "web":
            raise ValueError("a web lane runs exactly one task; its limit is not a setting")
        lane.limit = limit
        self.wake()

    # --- lifecycle -------------------------------------------------------------------------
    async def start(self) -> None:
        self.store.sync_accounts(self.config.accounts)
        for provider in _unique(self.providers.values()):
            await provider.start()
        self._follow_reported_limits()
        self.budget.take_balances(self.providers.items())
        self.store.forget_long_absent()
        self.store.announce(self.owner, self.only_batches)
        self.recover_dead_owners()
        self._loop_task = asyncio.ensure_future(self._run_loop())
        self._beat_task = asyncio.ensure_future(self._beat_loop())

    async def stop(self, cancel_running: bool = False) -> None:
        """Stop taking work. Running tasks are cancelled (``cancel_running``) or handed back to
        pending to resume on the next start. Providers (browsers, clients) are closed."""
        self._stopping = True
        for task in (self._loop_task, self._beat_task):
            if task is not None:
                task.cancel()
        reason = StopReason.CANCEL if cancel_running else StopReason.SHUTDOWN
        for lane in self.lanes.values():
            for attempt in list(lane.active.values()):
                self._stop_attempt(attempt, reason)
        if self._attempts:
            await asyncio.gather(*self._attempts, return_exceptions=True)
        for task in (self._loop_task, self._beat_task):
            if task is not None:
                await asyncio.gather(task, return_exceptions=True)
        self.write_manifests()
        try:
            self._release_unreleased()
        except StorageFault:  # still refused: the next start finds this process gone and retries them
            log.info("%d running task(s) could not be handed back; the next start retries them",
                     len(self._unreleased))
        with contextlib.suppress(StorageFault):  # its heartbeat ages out instead
            self.store.withdraw(self.owner)
        for provider in _unique(self.providers.values()):
            try:
                await provider.close()
            except Exception:  # closing must not stop the others from closing
                log.exception("closing a provider failed")

    def recover_dead_owners(self) -> int:
        """Tasks left running by a process that is gone: retry them now, on the crash budget
        (the task did nothing wrong). Gone is a process on this host the OS says has exited
        (a zombie too), or one anywhere whose presence row has not been renewed for ``STALL_S``
        by the store's clock; another host's rows without a presence row are left to the
        heartbeat reaper."""
        recovered = 0
        owners = self.store.running_owners() - {self.owner}
        silent = self.store.silent_owners(owners, self._stall_cutoff())
        for owner in owners:
            if owner_is_dead(owner):
                why = msg("died")
            elif owner in silent and not owner_is_running_here(owner):
                why = msg("stopped renewing its presence for over {seconds} s",
                          seconds=format(self.clock.real(STALL_S), ".0f"))
            else:
                continue
            for task in self.store.running_of_owner(owner):
                message = msg("the process running it ({owner}) {why}; attempt {attempt} lost",
                              owner=describe_owner(owner), why=why, attempt=task.attempt)
                self._fail(task, ErrorKind.STALLED, message, retry=True, immediate=True, crashed=True)
                recovered += 1
        return recovered

    # --- the loop --------------------------------------------------------------------------
    async def _run_loop(self) -> None:
        next_check = next_dead_check = next_probe = next_assign = 0.0
        while not self._stopping:
            changed = self._wake.is_set()
            self._wake.clear()
            now = time.monotonic()
            try:
                if self.fault is not None and now >= next_probe:
                    next_probe = now + FAULT_PROBE_S
                    self._probe_fault()
                    changed = True  # usable again: take work at once
                if self.fault is not None:
                    timeout = max(0.0, next_probe - now)
                else:
                    # Cancel flags and stalls are looked for on a timer, not every wake: a busy
                    # lane wakes the loop once per finished task.
                    if now >= next_check:
                        next_check = now + self._check_every()
                        changed = self._check_running() or changed
                    if now >= next_dead_check:
                        next_dead_check = now + DEAD_OWNER_CHECK_S
                        changed = self.recover_dead_owners() > 0 or changed
                    if changed or now >= next_assign:
                        self.assign()
                        next_assign = now + self._assign_timeout()
                    self._refresh_idle_balances()
                    timeout = self._idle_timeout(next_assign - now)
                    if self._stale_manifests:
                        timeout = min(timeout, self._write_manifests_when_due(now))
            except StorageFault as fault:
                self._on_fault(fault)
                timeout = FAULT_PROBE_S
            except Exception:
                log.exception("scheduler pass failed; retrying at the next sweep")
                timeout = self.clock.real(DEFAULT_SWEEP_S)
                next_assign = 0.0
            try:
                async with asyncio.timeout(timeout):
                    await self._wake.wait()
            except TimeoutError:
                pass

    def _write_manifests_when_due(self, now: float) -> float:
        """Rewrite the stale manifests at most every ``MANIFEST_EVERY_S`` (a 10,000-task batch
        would otherwise be written 10,000 times); the seconds until the next may be due."""
        due = self._manifests_written_at + MANIFEST_EVERY_S
        if now < due:
            return due - now
        self.write_manifests()
        return MANIFEST_EVERY_S

    def write_manifests(self) -> None:
        """Write the manifest of every batch that finished a task since its last one."""
        self._manifests_written_at = time.monotonic()
        while self._stale_manifests:
            batch_id = self._stale_manifests.pop()
            folder = batch_folder(self.outputs_root, batch_id)
            try:
                write_manifest(folder, (entry for _t, _o, entry in batch_entries(self.store, self.config,
                                                                                    batch_id, folder)))
            except OSError as exc:  # the files are in place; the next success or `outputs manifest` writes it
                log.warning("manifest of batch %s not written: %s", batch_id, exc)

    def _check_every(self) -> float:
        return min(CHECK_EVERY_S, self.clock.real(1.0))

    def _check_running(self) -> bool:
        """Reap and honour cancels, each only when the one cheap query says there is work for
        it. True when it found some (a reaped row's retry changes what assign may take)."""
        flagged, any_stalled = self.store.running_needing_attention(self._stall_cutoff())
        if any_stalled:
            self.reap_stalled()
        if flagged:
            self.honour_cancels()
        return any_stalled or bool(flagged)

    # --- storage faults --------------------------------------------------------------------
    def _release_unreleased(self) -> None:
        """Hand back the rows whose attempts ended while the store refused writes."""
        while self._unreleased:
            task = self._unreleased[0]
            if self.store.release(task):
                self.budget.released(task)
                self.store.log(task.task_id, msg("handed back to the queue after a storage fault"))
            self._unreleased.pop(0)

    def _on_fault(self, fault: StorageFault) -> None:
        """Stop claiming, hand running tasks back (they resume when the store is usable) and
        tell the listeners once."""
        first = self.fault is None
        if first:
            log.info("storage fault: %s", fault)  # the operator sees it once: banner or run's last line
        self.fault = fault
        for lane in self.lanes.values():
            for attempt in list(lane.active.values()):
                if attempt.ctx.stop_reason is None:
                    self._stop_attempt(attempt, StopReason.SHUTDOWN)
        if first:
            for callback in self._fault_listeners:
                callback(fault)

    def _probe_fault(self) -> None:
        """Clear the fault once the store takes a write again (space came back). A file that
        was deleted or replaced stays a fault: its writes would go nowhere."""
        assert self.fault is not None
        self.store.check_file()
        self.store.probe_write()
        self._release_unreleased()
        log.warning("storage usable again; taking work")
        self.fault = None
        for callback in self._fault_listeners:
            callback(None)

    def _idle_timeout(self, until_assign: float) -> float:
        if self._any_active():  # a second (nominal) at most keeps reaping and cancels timely
            return max(0.0, min(until_assign, self._check_every()))
        return max(0.0, until_assign)

    def _assign_timeout(self) -> float:
        """Real seconds until assign must look again though nothing woke the loop: the sweep, or
        sooner the next retry coming due or a lane's rest ending -- when a lane could take it."""
        timeout = self.clock.real(min((lane.sweep_s for lane in self.lanes.values()), default=DEFAULT_SWEEP_S))
        open_lanes = [lane for lane in self.lanes.values() if lane.free > 0]
        if not open_lanes:
            return timeout  # all slots taken: a finish wakes the loop
        now = time.monotonic()
        for lane in open_lanes:
            if lane.resting_until > now:
                timeout = min(timeout, lane.resting_until - now + 0.001)
        due = self.store.next_due()
        if due is not None:
            timeout = min(timeout, max(0.0, due - self.store.now()) + 0.001)
        local = self._local_now()
        for lane in open_lanes:
            if lane.hours:  # outside its hours: look again the moment they begin
                opens = (next_opening(lane.hours, local) - local).total_seconds()
                timeout = min(timeout, opens + 0.001) if opens > 0 else timeout
        if any(lane.daily_limit for lane in open_lanes):  # a lane at its daily limit: look when the day turns
            now_at_store = self.store.now()
            turns = budget_day_start(now_at_store, self.config.budget.daily_reset) + DAY_S
            timeout = min(timeout, turns - now_at_store + 0.001)
        return timeout

    def _any_active(self) -> bool:
        return any(lane.active for lane in self.lanes.values())

    async def _beat_loop(self) -> None:
        while not self._stopping:
            await self.clock.sleep(HEARTBEAT_S)
            if self.fault is not None:
                # Nothing runs, and a store locked by a stopped process would hold this beat's
                # write -- and the loop -- for BUSY_TIMEOUT_S; the fault probe alone asks it.
                continue
            ids = [tid for lane in self.lanes.values() for tid in lane.active]
            try:
                self.store.announce(self.owner, self.only_batches)
                if ids:
                    self.store.heartbeat(ids, self.owner)
            except StorageFault as fault:
                self._on_fault(fault)
            except Exception:  # the next beat tries again; the reaper allows 6 missed beats
                log.exception("heartbeat failed")

    def _stall_cutoff(self) -> float:
        """A heartbeat older than this, on the store's clock, is stalled."""
        return self.store.now() - self.clock.real(STALL_S)

    def _beats_for_itself(self, task: Task) -> bool:
        """The row is an attempt this scheduler runs, or its owner is a process on this machine
        that the OS says runs: its heartbeat's age proves nothing (a wall-clock step -- NTP, a
        laptop waking -- moves it), and a live process beats for its own rows."""
        if task.owner == self.owner:
            return self._find_attempt(task.task_id) is not None
        return owner_is_running_here(task.owner or "")

    def reap_stalled(self) -> None:
        for task in self.store.stalled(self._stall_cutoff()):
            if self._beats_for_itself(task):
                continue
            attempt = self._find_attempt(task.task_id)
            if attempt is not None and attempt.task.attempt == task.attempt:
                attempt.ctx.log(msg("heartbeat stalled; abandoning this attempt"))
                self._stop_attempt(attempt, StopReason.STALLED)
            age = self.store.now() - (task.heartbeat_at or 0.0)
            # Another host's process that stopped beating is a crash there, not the task's fault.
            crashed = task.owner != self.owner and owner_is_dead(
                task.owner or "", task.heartbeat_at, self.store.now(), self.clock.real(STALL_S))
            self._fail(task, ErrorKind.STALLED,
                       msg("no heartbeat for {seconds} s (limit {limit} s)", seconds=format(age, ".0f"),
                           limit=format(self.clock.real(STALL_S), ".0f")), retry=True,
                       crashed=crashed)

    def honour_cancels(self) -> None:
        active = {tid: a for lane in self.lanes.values() for tid, a in lane.active.items()}
        for task_id in self.store.cancel_requested_among(active):
            attempt = active[task_id]
            if attempt.ctx.stop_reason is None:
                attempt.ctx.log(msg("cancel requested; stopping at the next checkpoint"))
                self._stop_attempt(attempt, StopReason.CANCEL)

    def assign(self) -> None:
        """Fill free slots from the head of each lane's queue. Synchronous on purpose: one read
        of the store, the pure plan (core/policy.py), then the claims -- each reserving its
        estimate against the budgets (core/budget.py) -- and the attempts' starts.

        A lane the budget paused is still planned: its claim resumes it once its head fits."""
        conditions = self.lane_conditions()
        for lane in self.lanes.values():
            lane.learned = conditions.learned.get(lane.name)
        if self._stopping or self._draining or self.fault is not None:
            return
        paused = dict(conditions.paused)
        planned = dataclasses.replace(conditions, paused={name: why for name, why in paused.items()
                                                          if not is_budget_pause(why)})
        came_short: set[str] = set()  # lanes whose claim got less than it asked: nothing more this round
        for claim in plan_claims([lane.slots() for lane in self.lanes.values()], planned, host_id()):
            if claim.lane in came_short:
                continue
            lane = self.lanes[claim.lane]
            claimed = self.budget.claim(claim, self.owner, self.only_batches)
            if len(claimed.tasks) < claim.count:
                came_short.add(claim.lane)
            self._note_budget_stops(lane, claimed, paused)
            for task in claimed.tasks:
                self._start_attempt(lane, task)

    def _note_budget_stops(self, lane: Lane, claimed: Claimed, paused: dict[str, Message]) -> None:
        """Pause what the budget stopped (the lane, or batches), with the reason; resume what it
        paused before and now lets through."""
        stops = {lane.name: claimed.lane_stop} if claimed.lane_stop else {}
        stops.update({batch_pause_name(batch): why for batch, why in claimed.batch_stops.items()})
        for name, why in stops.items():
            if paused.get(name) != why:
                self.store.pause_lane(name, why)
                paused[name] = why
                lane.logger.warning("paused %s: %s", name, why)
        cleared = {lane.name} if claimed.lane_stop is None else set()
        cleared |= {batch_pause_name(task.batch_id) for task in claimed.tasks}
        for name in cleared:
            if is_budget_pause(paused.get(name)) and name not in stops:
                self.store.resume_lane(name)
                del paused[name]
                lane.logger.info("budget allows %s again; resumed", name)

    async def refresh_balances(self) -> None:
        """Read each reporting provider's balance again (after a batch), for the next claims."""
        for provider in _unique(self.providers.values()):
            if isinstance(provider, BalanceReported):
                await provider.read_balance()
        self.budget.take_balances(self.providers.items())

    def _refresh_idle_balances(self) -> None:
        """Read the balance of a reporting provider whose lane has nothing left to run (its batch
        is through): the window and the next claims see what the account has left, not what
        it had at start. Not after every task: a lane refilled at once is still busy."""
        idle = [self.lanes[name] for name in self._went_idle if not self.lanes[name].active]
        self._went_idle.clear()
        for provider in _unique(lane.provider for lane in idle):
            if isinstance(provider, BalanceReported):
                reading = asyncio.ensure_future(self._refresh_balance(provider))
                self._attempts.add(reading)  # awaited by stop() like an attempt
                reading.add_done_callback(self._attempts.discard)

    async def _refresh_balance(self, provider: BalanceReported) -> None:
        try:
            await provider.read_balance()
        except Exception:  # a balance is a nicety: never let it stop the loop or the quit
            log.exception("reading a balance failed")
            return
        self.budget.take_balances(self.providers.items())

    # --- one attempt -----------------------------------------------------------------------
    def _start_attempt(self, lane: Lane, task: Task) -> None:
        model = self.config.model(task.model)
        ctx = TaskContext(task=task, model=model, clock=self.clock, store=self.store,  # type: ignore[arg-type]
                          output_dir=task_folder(self.outputs_root, task.batch_id, task.task_id),
                          logger=lane.logger)
        attempt = Attempt(task=task, ctx=ctx)
        lane.active[task.task_id] = attempt
        runner = asyncio.ensure_future(self._run_attempt(lane, attempt))
        self._attempts.add(runner)
        runner.add_done_callback(self._attempts.discard)

    async def _run_attempt(self, lane: Lane, attempt: Attempt) -> None:
        """One attempt from start to a written end. Nothing escapes: a write that fails while
        ending it is a storage fault (the row is handed back when the store allows it) or any
        other error, which ends the attempt as an internal failure (retried) -- never an
        unretrieved task exception with its row left running."""
        task = attempt.task
        try:
            await self._attempt_to_its_end(lane, attempt)
        except StorageFault as fault:
            self._unreleased.append(task)  # handed back once the store takes writes again
            self._on_fault(fault)
        except Exception as exc:
            lane.logger.error("%s: ending the attempt failed", task.task_id, exc_info=exc)
            self._fail_quietly(task, msg("ending the attempt failed: {error}: {detail}",
                                         error=type(exc).__name__, detail=exc))
        finally:
            # A reaped attempt may still be winding down when its retry starts in the same
            # lane: only remove the entry if it is still this attempt's.
            if lane.active.get(task.task_id) is attempt:
                del lane.active[task.task_id]
            if not lane.active and isinstance(lane.provider, BalanceReported):
                self._went_idle.add(lane.name)
            self.wake()

    async def _attempt_to_its_end(self, lane: Lane, attempt: Attempt) -> None:
        task, ctx = attempt.task, attempt.ctx
        result: TaskResult | None = None
        error: Exception | None = None
        try:
            # the store wrote it to the task's log with the claim
            lane.logger.info("%s: %s", task.task_id, msg("attempt {attempt} started on {lane}", attempt=task.attempt,
                                                         lane=lane.name))
            self._emit(TaskEventKind.STARTED, task)
            if ctx.stop_reason is not None:  # stopped between the claim and this first step
                raise asyncio.CancelledError
            if ctx.model is None:
                raise TaskError(ErrorKind.BAD_INPUT, msg("model {model} is not in the config", model=repr(task.model)),
                                retry=False)
            attempt.work = asyncio.ensure_future(lane.provider.run(ctx))
            result = await attempt.work
            outcome = Outcome.RESULT
        except asyncio.CancelledError:
            outcome = Outcome.STOPPED
        except StorageFault:
            raise
        except Exception as exc:
            outcome, error = _outcome_of(exc), exc
        end = decide_end(outcome, ctx.stop_reason)
        outputs: list[OutputFile] = []
        if end is End.SUCCESS and result is not None:
            outputs = await self._place(lane, task, result.files)
        self._write_end(lane, attempt, end, result, error, outputs)

    def _write_end(self, lane: Lane, attempt: Attempt, end: End, result: TaskResult | None,
                   error: Exception | None, outputs: list[OutputFile]) -> None:
        """The I/O of ``decide_end``'s answer. ``error`` is what the work raised; a stop the
        scheduler asked for (``ctx.stop_reason``) wins over it; ``outputs``: a success's files
        as they were placed."""
        task, ctx = attempt.task, attempt.ctx
        stopped = ctx.stop_reason is not None
        if end is End.SUCCESS:
            assert result is not None
            if self.store.finish_success(task, result.text, [o.path for o in outputs], result.usage, outputs):
                lane.logger.info("%s: success", task.task_id)  # the store wrote it to the task's log
                self._stale_manifests.add(task.batch_id)
                cost = self.budget.settle(task, result)
                if cost is not None:
                    ctx.log(msg("cost {cost} ({source})", cost=format_money(cost.money),
                                source=SOURCE_TEXTS.get(cost.source, cost.source)))
                self._emit(TaskEventKind.SUCCESS, task)
            else:
                ctx.log(msg("finished, but the row was no longer this attempt's; result not written"))
        elif end is End.DROP_RESULT:
            ctx.log(msg("finished after being reaped; result dropped (the retry owns the row)"))
        elif end is End.CANCELED and stopped:
            note = ctx.cancel_note or CANCELED_BY_OPERATOR  # e.g. "remote cancel failed"
            if self.store.finish_canceled(task, note):
                self.budget.ended_unfinished(task)
                ctx.log(msg("canceled"))
                self._emit(TaskEventKind.CANCELED, task, note)
        elif end is End.CANCELED:  # canceled elsewhere (e.g. on the service's website): an end, not a failure
            assert isinstance(error, TaskError)
            if self.store.finish_canceled(task, error.message):
                self.budget.ended_unfinished(task)
                self.store.log(task.task_id, msg("canceled: {reason}", reason=error.message))
                self._emit(TaskEventKind.CANCELED, task, error.message)
        elif end is End.RELEASE and stopped:
            if self.store.release(task):
                self.budget.released(task)
                ctx.log(msg("app stopped; task goes back to the queue to resume on the next start"))
                self._emit(TaskEventKind.RELEASED, task)
        elif end is End.RELEASE:
            assert isinstance(error, Requeue)
            self._requeue(lane, attempt, error)
        elif end is End.FAIL and isinstance(error, TaskError):
            self._end_error(lane, attempt, error)
        elif end is End.FAIL:  # a provider bug must not take the lane down
            lane.logger.error("%s: provider raised", task.task_id, exc_info=error)
            self._fail(task, ErrorKind.INTERNAL, msg("{error}: {detail}", error=type(error).__name__, detail=error),
                       retry=True)

    async def _place(self, lane: Lane, task: Task, files: list[str]) -> list[OutputFile]:
        """The result's files moved to their templated names and described (hashing a video
        takes a while: off the loop)."""
        if not files:
            return []
        model = self.config.model(task.model)
        provider = (model.site or model.provider or "") if model is not None else lane.name.partition(":")[2]
        values = NamingValues(batch_id=task.batch_id, task_id=task.task_id, row=task.source_row, model=task.model,
                              provider=provider, account=task.account or provider, finished=self.store.now(),
                              cells=task.cells_dict)
        return await asyncio.to_thread(place_outputs, files, batch_folder(self.outputs_root, task.batch_id),
                                       naming_for(self.config, task.model), values)

    def _requeue(self, lane: Lane, attempt: Attempt, exc: Requeue) -> None:
        task = attempt.task
        if exc.pause_lane:
            self._pause(lane, task, exc.pause_lane)
        if exc.wait_s is not None:
            lane.resting_until = time.monotonic() + self.clock.real(exc.wait_s)
        if self.store.release(task):
            self.budget.released(task)
            attempt.ctx.log(msg("back in the queue: {reason}", reason=exc.message))
            self._emit(TaskEventKind.RELEASED, task, exc.message)

    def _stop_attempt(self, attempt: Attempt, reason: StopReason) -> None:
        attempt.ctx.stop_reason = reason
        if attempt.work is not None:
            attempt.work.cancel()

    def _end_error(self, lane: Lane, attempt: Attempt, exc: TaskError) -> None:
        task = attempt.task
        if exc.pause_lane and self._other_keys(lane):
            # The key is at fault (rejected, out of quota), not the task: the key is benched
            # and the task goes back to the queue, unspent, for the provider's other keys.
            benched = msg("key {key} benched: {reason}", key=lane.key, reason=exc.message)
            self._requeue(lane, attempt, Requeue(benched, pause_lane=exc.pause_lane))
            return
        if exc.pause_lane:
            self._pause(lane, task, exc.pause_lane)
        if exc.kind is ErrorKind.LOGIN and lane.account is not None:
            self.store.set_login_state(lane.account, "needs_login", exc.message)
        self._fail(task, exc.kind, exc.message, retry=exc.retry)

    def _other_keys(self, lane: Lane) -> list[Lane]:
        """The lanes of the other keys of ``lane``'s provider (none for a lane not of a key)."""
        if lane.key is None:
            return []
        return [other for other in self.lanes.values() if other.route == lane.route and other is not lane]

    def _pause(self, lane: Lane, task: Task, reason: Message) -> None:
        self.store.pause_lane(lane.name, reason)
        lane.logger.warning("paused: %s", reason)
        self._emit(TaskEventKind.PAUSED, task, reason)

    def _fail(self, task: Task, kind: ErrorKind, message: Message, retry: bool, immediate: bool = False,
              crashed: bool = False) -> None:
        """End the attempt as failed (retried while its budget lasts). ``crashed``: lost with the
        process that ran it, so the crash budget pays, and an empty one says why it failed."""
        decision = decide_retry(retry, task.retries_left, task.crash_retries_left, crashed, immediate)
        retry_at = None
        if decision is Retry.NOW:
            retry_at = self.store.now()
        elif decision is Retry.LATER:
            retry_at = self.store.now() + self.clock.real(retry_delay_s(task.attempt))
        elif decision is Retry.NO_CRASH_BUDGET:
            message = msg("{reason}; the process running this task died {times} times, so the task itself may be what "
                          "kills it: failed without another try (retry it once the cause is fixed)",
                          reason=message, times=CRASH_RETRIES + 1)
        state = self.store.finish_failure(task, kind, message, retry_at, crashed=crashed)
        if state is None:
            return
        self.budget.ended_unfinished(task)
        logging.getLogger("mediaassist.lane").log(
            logging.WARNING, "[%s] %s: %s: %s", task.lane, task.task_id, kind.value, message)
        self._emit(TaskEventKind.RETRY if state == "pending" else TaskEventKind.FAILED, task, message)

    def _fail_quietly(self, task: Task, message: Message) -> None:
        """Last resort after a failed write: an internal failure if the store takes it, else
        the reaper ends the row once its heartbeat stops."""
        try:
            self._fail(task, ErrorKind.INTERNAL, message, retry=True)
        except StorageFault as fault:
            self._unreleased.append(task)
            self._on_fault(fault)
        except Exception:
            log.exception("%s: could not record the failure; the reaper will retry it", task.task_id)

    def _find_attempt(self, task_id: str) -> Attempt | None:
        for lane in self.lanes.values():
            if task_id in lane.active:
                return lane.active[task_id]
        return None

    # --- waiting for batches ---------------------------------------------------------------
    def lane_conditions(self) -> LaneConditions:
        """The store's word on the lanes, which are outside their hours by this machine's clock,
        and what the lanes with a daily limit may still start today."""
        conditions = self.store.lane_conditions()
        hours = {lane.name: lane.hours for lane in self.lanes.values() if lane.hours}
        closed = closed_lanes(hours, self._local_now()) if hours else {}
        daily_left = self._daily_left()
        for name, left in daily_left.items():
            if left <= 0 and name not in closed:
                closed[name] = msg("daily limit of {limit} tasks reached; starts again at {time}",
                                   limit=self.lanes[name].daily_limit, time=self._next_day_text())
        if not closed and not daily_left:
            return conditions
        return dataclasses.replace(conditions, closed=closed, daily_left=daily_left)

    def _daily_left(self) -> dict[str, int]:
        """{lane: tasks it may still start in this budget day} for the lanes with a daily limit,
        counted from the store's rows (every process's)."""
        capped = [lane for lane in self.lanes.values() if lane.daily_limit]
        if not capped:
            return {}
        since = budget_day_start(self.store.now(), self.config.budget.daily_reset)
        rows_of = {lane.name: (lane.route, holder(lane.account, lane.key)) for lane in capped}
        started = self.store.started_since(since, list(rows_of.values()))
        return {lane.name: max(0, (lane.daily_limit or 0) - started[rows_of[lane.name]]) for lane in capped}

    def _next_day_text(self) -> str:
        hour, minute = self.config.budget.daily_reset
        return f"{hour:02d}:{minute:02d}"

    def _local_now(self) -> datetime:
        return datetime.fromtimestamp(self.clock.now())

    def blocked_lanes(self, conditions: LaneConditions | None = None) -> dict[str, Message]:
        """Lanes that cannot take work right now, with the reason (paused, disabled, login).
        ``conditions``: the store's, when the caller has just read them."""
        conditions = self.lane_conditions() if conditions is None else conditions
        return blocked_lanes([lane.slots() for lane in self.lanes.values()], conditions, host_id())

    async def drain(self) -> None:
        """Take no new work and wait until every running attempt of this process has ended."""
        self._draining = True
        while self._any_active():
            await asyncio.sleep(min(0.25, self.clock.real(1.0)))

    async def wait_for_batches(self, batch_ids: Iterable[str], on_tick: Callable[[], None] | None = None) -> None:
        """Until every task of the batches is final, or only tasks no lane can take remain."""
        ids = list(batch_ids)
        while True:
            if on_tick is not None:
                on_tick()
            if self._only_unrunnable_left(ids):
                return
            await asyncio.sleep(min(0.25, self.clock.real(1.0)))

    def _only_unrunnable_left(self, batch_ids: list[str]) -> bool:
        """No task of the batches runs, and none pending can be taken here or by an account
        that lives on another machine at work on the store now (nor is in a batch its budget
        stopped)."""
        conditions = self.lane_conditions()  # one read for both questions, every tick of a wait
        blocked = self.blocked_lanes(conditions)
        opening = waiting_for_hours(blocked, conditions)  # they open by themselves: worth the wait
        stopped_by_budget = {name for name in blocked if is_budget_pause(conditions.paused.get(name))}
        if stopped_by_budget:
            # The pause was written when a head did not fit; an attempt that settled since (for
            # less than it reserved) may have made room. Only a claim tells: try the heads again
            # before saying the budget is spent (a look at the pauses alone raced the settling).
            self.assign()
            if self._any_active():
                return False
        if stopped_by_budget and self.store.has_reservations():
            # Another process's attempts hold part of the budget: once they settle (for less,
            # or fail) the next claim may fit again -- the pause lifts by itself then.
            opening |= stopped_by_budget
        open_lanes = [lane for lane in self.lanes.values() if lane.name not in blocked or lane.name in opening]
        routes = {lane.route for lane in open_lanes}
        accounts_ok = {lane.account for lane in open_lanes}
        for acct in self._accounts_on_other_hosts_present(conditions, batch_ids):
            routes.add(site_route(acct.site))
            accounts_ok.add(acct.name)
        counts = self.store.batch_counts(batch_ids)
        stopped = paused_batches(conditions.paused)
        live = [batch for batch in batch_ids if batch not in stopped]
        if live != batch_ids:  # a stopped batch's pending tasks wait for its budget, not for a lane
            counts = {key: n for key, n in counts.items() if key[3] == "running"}
            counts.update({key: n for key, n in self.store.batch_counts(live).items() if key[3] == "pending"})
        return batches_settled([QueueCount(route, account, pinned, state, n)
                                for (route, account, pinned, state), n in counts.items()], routes, accounts_ok)

    def _accounts_on_other_hosts_present(self, conditions: LaneConditions, batch_ids: list[str]) -> list[AccountView]:
        """Usable accounts bound to another machine that has a process at work on the batches."""
        elsewhere = [a for a in conditions.accounts.values() if a.host not in (None, host_id())
                     and a.enabled and a.login_state != "needs_login"]
        if not elsewhere:
            return []
        present = self.store.hosts_present(self._stall_cutoff(), batch_ids)
        return [a for a in elsewhere if a.host in present]

def _outcome_of(exc: Exception) -> Outcome:
    if isinstance(exc, Requeue):
        return Outcome.REQUEUE
    if isinstance(exc, TaskError):
        return Outcome.CANCELED_ELSEWHERE if exc.kind is ErrorKind.CANCELED else Outcome.ERROR
    return Outcome.BUG


def _unique(providers: Iterable[Provider]) -> list[Provider]:
    seen: dict[int, Provider] = {}
    for provider in providers:
        seen.setdefault(id(provider), provider)
    return list(seen.values())
