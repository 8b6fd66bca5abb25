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
import logging
import random
import time
from collections.abc import Callable, Iterable, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mediaassist.core.clock import Clock
from mediaassist.core.config import AppConfig
from mediaassist.core.errors import KIND_TEXTS, ErrorKind, Requeue, StorageFault, TaskError
from mediaassist.core.events import STATE_AFTER, TaskEvent, TaskEventKind
from mediaassist.core.lane_api import AccountChecked, Provider, StopReason, TaskContext, TaskResult
from mediaassist.core.limiter import AUTO_START
from mediaassist.core.location import host_id
from mediaassist.core.messages import Message, msg
from mediaassist.core.owners import describe_owner, new_owner, owner_is_dead
from mediaassist.core.paths import output_dir
from mediaassist.core.store import CANCELED_BY_OPERATOR, CRASH_RETRIES, Account, Store, Task

log = logging.getLogger("mediaassist.scheduler")

HEARTBEAT_S = 15.0
STALL_S = 90.0
DEFAULT_SWEEP_S = 5.0
CHECK_EVERY_S = 0.25  # real seconds between looks for cancel flags and stalled rows (less at high --speed)
DEAD_OWNER_CHECK_S = 2.0  # real seconds between looks for rows of processes that died
FAULT_PROBE_S = 5.0  # real seconds between checks whether a storage fault has cleared
# A web account is one logged-in browser session: the site errors (or silently mixes up the
# conversation) if a second generation starts before the first has ended. So a web lane runs
# exactly one task, always. This is a property of the resource, not a tunable -- never a setting.
WEB_LANE_LIMIT = 1


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
    sweep_s: float = DEFAULT_SWEEP_S
    adaptive: bool = False  # concurrency = "auto"
    learned: int | None = None  # the adaptive limit as the store last said (shared by processes)
    active: dict[str, Attempt] = field(default_factory=dict)
    logger: LaneLogger = field(init=False)
    # Real (monotonic) time until which the lane takes no work: its resource is busy elsewhere.
    resting_until: float = 0.0

    def __post_init__(self) -> None:
        self.logger = LaneLogger(logging.getLogger("mediaassist.lane"), {"lane": self.name})

    def current_limit(self) -> int:
        """How many tasks the lane may run at once, across every process on the store. The one
        place a limit is read: for ``concurrency = "auto"`` the learned limit as the store holds
        it (so every process claims against the same number)."""
        if self.kind == "web":
            return WEB_LANE_LIMIT
        if self.adaptive:
            return max(1, min(self.limit, self.learned or AUTO_START))
        return self.limit

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
        self.fault: StorageFault | None = None

    # --- wiring ----------------------------------------------------------------------------
    def _build_lanes(self) -> dict[str, Lane]:
        lanes: dict[str, Lane] = {}
        for prov in self.config.providers:
            lanes[prov.lane] = Lane(
                name=prov.lane, kind=prov.kind, route=prov.lane, limit=prov.limit,
                provider=self.providers[prov.lane],
                sweep_s=prov.queue_check_interval_s if prov.kind == "poll" else DEFAULT_SWEEP_S,
                adaptive=prov.adaptive,
            )
        for acct in self.config.accounts:
            route = f"web:{acct.site}"
            if route not in self.providers:
                continue
            lanes[acct.lane] = Lane(name=acct.lane, kind="web", route=route, limit=WEB_LANE_LIMIT,
                                    provider=self.providers[route], account=acct.name)
        return lanes

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
            event = TaskEvent(kind, task.seq, task.task_id, task.lane, state, message)
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
        """Tasks left running by a process on this host that no longer exists: retry them now,
        on the crash budget (the task did nothing wrong). Another host's rows are left to the
        heartbeat reaper."""
        recovered = 0
        for owner in self.store.running_owners():
            if owner == self.owner or not owner_is_dead(owner):
                continue
            for task in self.store.running_of_owner(owner):
                message = msg("the process running it ({owner}) died; attempt {attempt} lost",
                              owner=describe_owner(owner), attempt=task.attempt)
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
                    timeout = self._idle_timeout(next_assign - now)
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

    def _check_every(self) -> float:
        return min(CHECK_EVERY_S, self.clock.real(1.0))

    def _check_running(self) -> bool:
        """Reap and honour cancels, each only when the one cheap query says there is work for
        it. True when it found some (a reaped row's retry changes what assign may take)."""
        flagged, any_stalled = self.store.running_needing_attention(self.clock.ago(STALL_S))
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

    def reap_stalled(self) -> None:
        for task in self.store.stalled(self.clock.ago(STALL_S)):
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
        """Fill free slots from the head of each lane's queue. Synchronous on purpose."""
        paused = self.store.paused_lanes()
        accounts = {a.name: a for a in self.store.accounts()}
        self.refresh_learned_limits()
        for lane in self.lanes.values():
            if (self._stopping or self._draining or self.fault is not None or lane.free <= 0
                    or lane.name in paused or lane.resting):
                continue
            if lane.account is not None and _account_blocked(accounts.get(lane.account)):
                continue
            # A web lane is one account: the claim's own guard holds its one running task.
            lane_limit = None if lane.kind == "web" else lane.current_limit()
            for task in self.store.claim(lane.route, self.owner, lane.free, lane.account,
                                         batch_ids=self.only_batches, lane_limit=lane_limit):
                self._start_attempt(lane, task)

    def refresh_learned_limits(self) -> None:
        if any(lane.adaptive for lane in self.lanes.values()):
            learned = self.store.lane_limits()
            for lane in self.lanes.values():
                lane.learned = learned.get(lane.name)

    # --- one attempt -----------------------------------------------------------------------
    def _start_attempt(self, lane: Lane, task: Task) -> None:
        model = self.config.model(task.model)
        ctx = TaskContext(task=task, model=model, clock=self.clock, store=self.store,  # type: ignore[arg-type]
                          output_dir=output_dir(self.data_dir, task.batch_id, task.task_id),
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
            self.wake()

    async def _attempt_to_its_end(self, lane: Lane, attempt: Attempt) -> None:
        task, ctx = attempt.task, attempt.ctx
        try:
            ctx.log(msg("attempt {attempt} started on {lane}", attempt=task.attempt, lane=lane.name))
            self._emit(TaskEventKind.STARTED, task)
            if ctx.stop_reason is not None:  # stopped between the claim and this first step
                raise asyncio.CancelledError
            if ctx.model is None:
                raise TaskError(ErrorKind.BAD_INPUT, msg("model {model} is not in the config", model=repr(task.model)),
                                retry=False)
            attempt.work = asyncio.ensure_future(lane.provider.run(ctx))
            result = await attempt.work
        except asyncio.CancelledError:
            self._end_stopped(attempt)
        except StorageFault:
            raise
        except Exception as exc:
            self._end_raised(lane, attempt, exc)
        else:
            if ctx.stop_reason == StopReason.STALLED:
                ctx.log(msg("finished after being reaped; result dropped (the retry owns the row)"))
            elif self.store.finish_success(task, result.text, result.files, result.usage):
                ctx.log(msg("success"))
                self._emit(TaskEventKind.SUCCESS, task)
            else:
                ctx.log(msg("finished, but the row was no longer this attempt's; result not written"))

    def _end_raised(self, lane: Lane, attempt: Attempt, exc: Exception) -> None:
        task = attempt.task
        if attempt.ctx.stop_reason is not None:
            # Stopped on purpose and its clean-up raised on the way out: the stop decides the
            # end (a canceled task is never retried because its page closed with an error).
            self._end_stopped(attempt)
        elif isinstance(exc, Requeue):
            if exc.pause_lane:
                self._pause(lane, task, exc.pause_lane)
            if exc.wait_s is not None:
                lane.resting_until = time.monotonic() + self.clock.real(exc.wait_s)
            if self.store.release(task):
                attempt.ctx.log(msg("back in the queue: {reason}", reason=exc.message))
                self._emit(TaskEventKind.RELEASED, task, exc.message)
        elif isinstance(exc, TaskError):
            self._end_error(lane, task, exc)
        else:  # a provider bug must not take the lane down
            lane.logger.error("%s: provider raised", task.task_id, exc_info=exc)
            self._fail(task, ErrorKind.INTERNAL, msg("{error}: {detail}", error=type(exc).__name__, detail=exc),
                       retry=True)

    def _stop_attempt(self, attempt: Attempt, reason: StopReason) -> None:
        attempt.ctx.stop_reason = reason
        if attempt.work is not None:
            attempt.work.cancel()

    def _end_stopped(self, attempt: Attempt) -> None:
        task, reason = attempt.task, attempt.ctx.stop_reason
        note = attempt.ctx.cancel_note or CANCELED_BY_OPERATOR  # e.g. "remote cancel failed"
        if reason == StopReason.CANCEL and self.store.finish_canceled(task, note):
            attempt.ctx.log(msg("canceled"))
            self._emit(TaskEventKind.CANCELED, task, note)
        elif reason == StopReason.SHUTDOWN and self.store.release(task):
            attempt.ctx.log(msg("app stopped; task goes back to the queue to resume on the next start"))
            self._emit(TaskEventKind.RELEASED, task)

    def _end_error(self, lane: Lane, task: Task, exc: TaskError) -> None:
        if exc.kind is ErrorKind.CANCELED:
            # Canceled elsewhere (e.g. on the service's website): an end, not a failure.
            if self.store.finish_canceled(task, exc.message):
                self.store.log(task.task_id, msg("canceled: {reason}", reason=exc.message))
                self._emit(TaskEventKind.CANCELED, task, exc.message)
            return
        if exc.pause_lane:
            self._pause(lane, task, exc.pause_lane)
        if exc.kind is ErrorKind.LOGIN and lane.account is not None:
            self.store.set_login_state(lane.account, "needs_login", exc.message)
        self._fail(task, exc.kind, exc.message, retry=exc.retry)

    def _pause(self, lane: Lane, task: Task, reason: Message) -> None:
        self.store.pause_lane(lane.name, reason)
        lane.logger.warning("paused: %s", reason)
        self._emit(TaskEventKind.PAUSED, task, reason)

    def _fail(self, task: Task, kind: ErrorKind, message: Message, retry: bool, immediate: bool = False,
              crashed: bool = False) -> None:
        """End the attempt as failed (retried while its budget lasts). ``crashed``: lost with the
        process that ran it, so the crash budget pays, and an empty one says why it failed."""
        budget = task.crash_retries_left if crashed else task.retries_left
        retry_at = None
        if retry and budget > 0:
            retry_at = self.store.now() if immediate else self.clock.after(retry_delay_s(task.attempt))
        elif crashed:
            message = msg("{reason}; the process running this task died {times} times, so the task itself may be what "
                          "kills it: failed without another try (retry it once the cause is fixed)",
                          reason=message, times=CRASH_RETRIES + 1)
        state = self.store.finish_failure(task, kind, message, retry_at, crashed=crashed)
        if state is None:
            return
        said = {"attempt": task.attempt, "kind": KIND_TEXTS[kind], "message": message}
        self.store.log(task.task_id, msg("attempt {attempt} failed ({kind}): {message}; will retry", **said)
                       if state == "pending" else msg("attempt {attempt} failed ({kind}): {message}", **said))
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
    def blocked_lanes(self, accounts: list[Account] | None = None) -> dict[str, Message]:
        """Lanes that cannot take work right now, with the reason (paused, disabled, login).
        ``accounts``: the store's, when the caller has just read them."""
        blocked = dict(self.store.paused_lane_reasons())
        by_name = {a.name: a for a in (self.store.accounts() if accounts is None else accounts)}
        for lane in self.lanes.values():
            why = _account_blocked(by_name.get(lane.account or ""))
            if lane.account is not None and why:
                blocked.setdefault(lane.name, why)
        return {name: why for name, why in blocked.items() if name in self.lanes}

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
        that lives on another machine at work on the store now."""
        accounts = self.store.accounts()  # one read for both questions, every tick of a wait
        blocked = self.blocked_lanes(accounts)
        open_lanes = [lane for lane in self.lanes.values() if lane.name not in blocked]
        routes = {lane.route for lane in open_lanes}
        accounts_ok = {lane.account for lane in open_lanes}
        for acct in self._accounts_on_other_hosts_present(accounts, batch_ids):
            routes.add(f"web:{acct.site}")
            accounts_ok.add(acct.name)
        for (route, account, pinned, state), _n in self.store.batch_counts(batch_ids).items():
            if state == "running":
                return False
            if state == "pending" and route in routes and (not pinned or account in accounts_ok):
                return False
        return True

    def _accounts_on_other_hosts_present(self, accounts: list[Account], batch_ids: list[str]) -> list[Account]:
        """Usable accounts bound to another machine that has a process at work on the batches."""
        elsewhere = [a for a in accounts if a.host not in (None, host_id())
                     and a.enabled and a.login_state != "needs_login"]
        if not elsewhere:
            return []
        present = self.store.hosts_present(self.clock.ago(STALL_S), batch_ids)
        return [a for a in elsewhere if a.host in present]


ACCOUNT_DISABLED = msg("account disabled")
ACCOUNT_NEEDS_LOGIN = msg("account needs login")


def _account_blocked(acct: Account | None) -> Message | None:
    """Why this machine's lane for a web account takes no work, or None if it may."""
    if acct is None:
        return msg("account not in the store")
    if not acct.enabled:
        return ACCOUNT_DISABLED
    if acct.login_state == "needs_login":
        return ACCOUNT_NEEDS_LOGIN
    if acct.host is not None and acct.host != host_id():
        # Its browser profile (the logged-in session) is on that machine, not this one.
        return msg("account lives on {host}", host=acct.host)
    return None


def _unique(providers: Iterable[Provider]) -> list[Provider]:
    seen: dict[int, Provider] = {}
    for provider in providers:
        seen.setdefault(id(provider), provider)
    return list(seen.values())
