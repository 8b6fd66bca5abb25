"""The running app without its face: config (or demo), store, providers and scheduler.

Shared by the headless CLI and the desktop window so both start, import and stop the same way.
``Runtime`` is also the application's façade: the window asks it (commands and queries, lane
views as plain dataclasses, events) and never reaches into the store or the scheduler itself.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from mediaassist.core.budget import is_budget_pause
from mediaassist.core.clock import Clock
from mediaassist.core.config import AppConfig, check_setting, load_operator_settings
from mediaassist.core.delivery import Delivery, deliver, rebuild_manifest, rerun
from mediaassist.core.errors import StorageFault
from mediaassist.core.events import TaskEvent
from mediaassist.core.import_process import ImportedBatch, ImportReading, ReadRequest, enqueue_in_steps
from mediaassist.core.importer import ImportReport, derive_missing_ids
from mediaassist.core.lane_api import BalanceReported
from mediaassist.core.messages import Message
from mediaassist.core.money import Money
from mediaassist.core.notices import Notifier
from mediaassist.core.options import RuntimeOptions, load_app_config, store_location
from mediaassist.core.outputs import outputs_root, task_folder
from mediaassist.core.paths import data_dir as resolve_data_dir
from mediaassist.core.policy import ACCOUNT_DISABLED as ACCOUNT_DISABLED  # for the window (it sees no policy)
from mediaassist.core.policy import ACCOUNT_NEEDS_LOGIN as ACCOUNT_NEEDS_LOGIN
from mediaassist.core.queries import OffLoopReader, Queries, TaskMoney
from mediaassist.core.scheduler import Scheduler
from mediaassist.core.store import Account, Result, Store, Task, TaskLog

if TYPE_CHECKING:
    from mediaassist.demo import DemoEnvironment

log = logging.getLogger("mediaassist")
Changed = TypeVar("Changed")


class Login(Protocol):
    """How a login ended (the web lane's ``LoginResult``)."""

    @property
    def ok(self) -> bool: ...
    @property
    def message(self) -> Message: ...


@dataclass(frozen=True)
class LaneView:
    """One lane as the window shows it, at the moment it was asked."""

    name: str  # web:<account> | api:<provider> | poll:<provider>
    kind: str  # web | api | poll
    route: str  # the queue it takes from (a web site's is shared by its accounts)
    account: str | None
    limit: int  # the configured gate (for concurrency = "auto" its ceiling)
    current_limit: int  # what it may run now (the learned limit for "auto")
    running: int  # this process's attempts on it
    notes: tuple[Message, ...] = ()  # the provider's account check (a poll lane's pre-flight)
    balance: Money | None = None  # what the account had left when last read, where the service tells
    order: str = "fifo"  # how it takes its queue: fifo | longest | fair (core/order.py)
    key: str | None = None  # the label of the provider's key it runs on


class Runtime:
    """``async with Runtime(options) as rt:`` -- rt.config, rt.store, rt.scheduler (not started)."""

    def __init__(self, options: RuntimeOptions) -> None:
        self.options = options
        self.clock = Clock(options.speed)
        self.data_dir = resolve_data_dir(options.data_dir)
        self._stack = AsyncExitStack()
        self.config: AppConfig
        self.store_location: Path | str
        self.store: Store
        self.scheduler: Scheduler
        self.notifier: Notifier

    def _demo_environment(self) -> DemoEnvironment:
        # Imported only when --demo asks: the demo servers are no part of a real run.
        from mediaassist.demo import DemoEnvironment

        return DemoEnvironment(self.clock, self.data_dir, log_in=not self.options.read_only)

    async def __aenter__(self) -> Runtime:
        await self._stack.__aenter__()
        try:
            demo = self._demo_environment() if self.options.demo else None
            if demo is not None:
                self.config = await self._stack.enter_async_context(demo)
                if self.options.config_path is not None:
                    load_operator_settings(self.options.config_path, self.config)
            else:
                self.config = load_app_config(self.options)
            self.store_location = store_location(self.options, self.config, self.data_dir)
            self.store = Store(self.store_location)
            self._stack.callback(self.store.close)
            if demo is not None:
                self.store.sync_accounts(self.config.accounts)
                # Only a login seen to work is news. One that did not happen (another process
                # holds the profile, a slow start) says nothing: a window running those accounts
                # must not find them flipped to "needs login" by a second demo process.
                for name in (name for name, ok in demo.logins.items() if ok):
                    self.store.set_login_state(name, "ok")
            if self.options.leave_held_accounts:
                self._leave_held_accounts()
            # Imported here: a headless command that only reads the store never loads a provider.
            from mediaassist.providers.registry import build_providers

            providers = build_providers(self.config, self.clock, self.data_dir)
            self.scheduler = Scheduler(self.store, self.config, providers, self.data_dir, self.clock)
            self.notifier = Notifier(self.store, self.config.notify, self.scheduler.owner)
            self.scheduler.add_listener(self.notifier.on_task_event)
            self._stack.push_async_callback(self.notifier.aclose)
        except BaseException:
            await self._stack.aclose()
            raise
        return self

    def _leave_held_accounts(self) -> None:
        """A `run` beside the window: the accounts whose browser it holds get no lane here (their
        tasks are the window's). Nothing is wrong, so it is said once, at info level."""
        try:
            from mediaassist.providers.web import profile_holder
        except ImportError:  # no web lane installed: no browser to share
            return
        held = {acct.name: holder for acct in self.config.accounts
                if (holder := profile_holder(self.data_dir, acct.name)) is not None}
        if not held:
            return
        self.config.accounts = [acct for acct in self.config.accounts if acct.name not in held]
        holders = ", ".join(sorted({str(holder.get("pid", "?")) for holder in held.values()}))
        if self.config.accounts:  # some are free: this run takes those too
            log.info("web accounts %s are run by the window (process %s); this run takes the other accounts, "
                     "API and poll work", ", ".join(sorted(held)), holders)
        else:
            log.info("web accounts are run by the window (process %s); this run takes API and poll work", holders)

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self._stack.aclose()

    # --- lifecycle -------------------------------------------------------------------------
    async def start(self) -> None:
        await self.scheduler.start()

    async def stop(self, cancel_running: bool = False) -> None:
        """Running tasks end canceled (``cancel_running``) or go back to the queue; rows written."""
        await self.scheduler.stop(cancel_running=cancel_running)

    # --- events ------------------------------------------------------------------------------
    def add_listener(self, callback: Callable[[str, Task], None]) -> None:
        """``callback(event, task)`` on started/success/failed/retry/canceled/released/paused."""
        self.scheduler.add_listener(callback)

    def add_event_listener(self, callback: Callable[[TaskEvent], None]) -> None:
        """``callback(TaskEvent)`` on the same events, as data (the window's feed)."""
        self.scheduler.add_event_listener(callback)

    def add_fault_listener(self, callback: Callable[[StorageFault | None], None]) -> None:
        """``callback(fault)`` when the store becomes unusable, ``callback(None)`` when it is back."""
        self.scheduler.add_fault_listener(callback)

    @property
    def storage_fault(self) -> StorageFault | None:
        return self.scheduler.fault

    # --- enqueue: one path, one result -------------------------------------------------------
    def enqueue(self, report: ImportReport, on_progress: Callable[[int], object] = lambda _n: None) -> ImportedBatch:
        """Enqueue a read task file's good rows as one batch, here (``run``): the same steps the
        window's import child takes (``enqueue_reading``)."""
        derive_missing_ids(report)  # as the child does before its preview: a file run twice resumes
        batch = enqueue_in_steps(self.store, report, on_progress, lambda _took: None)
        self.scheduler.wake()
        return batch

    def start_import(self, path: Path, default_model: str | None) -> ImportReading:
        """A child process reading ``path`` for the window's preview, and then enqueuing it."""
        return ImportReading(ReadRequest(path, self.config, self.store_location, default_model))

    async def enqueue_reading(self, reading: ImportReading, on_progress: Callable[[int], object]) -> ImportedBatch:
        """The child's file enqueued in steps; the lanes look after each, so the first tasks run
        while the rest arrive."""
        def progressed(inserted: int) -> None:
            self.scheduler.wake()
            on_progress(inserted)

        return await reading.enqueue(progressed)

    # --- task commands and queries -----------------------------------------------------------
    def cancel(self, task_ids: Iterable[str]) -> dict[str, int]:
        return self._changed(self.store.cancel(list(task_ids)))

    def retry(self, task_ids: Iterable[str]) -> int:
        return self._changed(self.store.retry(list(task_ids)))

    def delete(self, task_ids: Iterable[str]) -> int:
        return self._changed(self.store.delete(list(task_ids)))

    def task(self, task_id: str) -> Task | None:
        return self.store.get(task_id)

    def result(self, task_id: str) -> Result | None:
        return self.store.result(task_id)

    def task_money(self, task_id: str) -> TaskMoney | None:
        """What the task cost and was estimated at (None: nothing was estimated or spent)."""
        spend = self.store.task_spend([task_id]).get(task_id)
        return TaskMoney.of(spend) if spend else None

    def logs(self, task_id: str) -> list[TaskLog]:
        return self.store.logs(task_id)

    def now(self) -> float:
        """The store's clock (timestamps of rows are in it)."""
        return self.store.now()

    @property
    def shared_store(self) -> bool:
        """A PostgreSQL store other machines use too."""
        return self.store.shared

    def queries(self) -> Queries:
        """The read side for tables and counts (core/queries.py), on this loop."""
        return Queries(self.store)

    def off_loop_reader(self) -> OffLoopReader:
        """A worker thread with its own store connection, for reads too long for the loop."""
        return self.queries().off_loop()

    # --- lanes -------------------------------------------------------------------------------
    def lane_views(self) -> list[LaneView]:
        return [LaneView(name=lane.name, kind=lane.kind, route=lane.route, account=lane.account, limit=lane.limit,
                         current_limit=lane.current_limit(), running=len(lane.active),
                         notes=tuple(lane.account_notes()),
                         balance=lane.provider.balance if isinstance(lane.provider, BalanceReported) else None,
                         order=lane.order, key=lane.key)
                for lane in self.scheduler.lanes.values()]

    def lane_names(self) -> list[str]:
        return list(self.scheduler.lanes)

    def running_count(self) -> int:
        """Attempts this process runs now."""
        return sum(len(lane.active) for lane in self.scheduler.lanes.values())

    def paused_lanes(self) -> dict[str, str]:
        return self.store.paused_lanes()

    def paused_lane_reasons(self) -> dict[str, Message]:
        """{lane: why it is paused}, to be shown in the reader's language."""
        return self.store.paused_lane_reasons()

    def blocked_lanes(self) -> dict[str, Message]:
        """Lanes that cannot take work now, with the reason (paused, an account's state)."""
        return self.scheduler.blocked_lanes()

    def all_paused(self, paused: Mapping[str, object] | None = None) -> bool:
        paused = self.store.paused_lanes() if paused is None else paused
        return bool(self.scheduler.lanes) and all(name in paused for name in self.scheduler.lanes)

    def pause_lane(self, name: str, reason: Message | str) -> None:
        self.store.pause_lane(name, reason)
        self.scheduler.wake()

    def resume_lane(self, name: str) -> None:
        self.store.resume_lane(name)
        self.scheduler.wake()

    def pause_all(self, reason: Message | str) -> None:
        paused = self.store.paused_lane_reasons()
        for name in self.scheduler.lanes:
            # A budget's pause lifts by itself when the budget allows: the operator's must not.
            if name not in paused or is_budget_pause(paused[name]):
                self.store.pause_lane(name, reason)
        self.scheduler.wake()

    def resume_all(self) -> None:
        for name in self.store.paused_lanes():
            self.store.resume_lane(name)
        self.scheduler.wake()

    def set_limit(self, provider_name: str, key: str, value: Any) -> None:
        """A provider's limit or interval, validated, into the live config and its lane -- each
        of its keys' lanes, for a provider with keys (no restart). Raises ConfigError naming the
        allowed range."""
        check_setting(key, value)
        provider = self.config.provider(provider_name)
        if provider is None:
            raise KeyError(provider_name)
        setattr(provider, key, value)
        for slot in provider.keys:
            setattr(slot, key, value)
        for slot in provider.slots():
            lane = self.scheduler.lanes.get(slot.lane)
            if lane is None:
                continue
            if key in ("concurrency", "max_polling_tasks"):
                self.scheduler.set_limit(slot.lane, value)
            elif key == "queue_check_interval_s":
                lane.sweep_s = value
        self.scheduler.wake()

    def set_chromium_path(self, path: str | None) -> None:
        self.config.app.chromium_path = path

    # --- accounts ----------------------------------------------------------------------------
    def accounts(self) -> list[Account]:
        return self.store.accounts()

    def set_account_enabled(self, name: str, enabled: bool) -> None:
        self.store.set_account_enabled(name, enabled)
        self.scheduler.wake()

    def log_in(self, name: str, keep_login: bool = False) -> Awaitable[Login] | None:
        """Open the account's browser profile headed so the operator can log in; None when the
        account needs no login (a simulated site's: it is marked logged in). ``keep_login``: what
        is typed into the login form goes to the OS keyring (re-entered by a new browser). Raises
        KeyError for an unknown account and ImportError when the web lane is not installed."""
        from mediaassist.providers.registry import SIMULATED_SITE

        acct = self.store.account(name)
        if acct is None:
            raise KeyError(name)
        if acct.site == SIMULATED_SITE:
            self.store.set_login_state(name, "ok")
            self.scheduler.wake()
            return None
        from mediaassist.providers.web import WebProvider, login_account

        configured = self.config.account(name)
        lane = self.scheduler.lanes.get(configured.lane) if configured is not None else None
        # The running lane's browser holds the profile: the login happens in it (and its page
        # stays open for the account's tasks, so a login kept in the page session lasts).
        if lane is not None and isinstance(lane.provider, WebProvider):
            return lane.provider.log_in(name, self.store, keep_login=keep_login)
        return login_account(name, self.config, self.data_dir, self.store, keep_login=keep_login)

    def wake(self) -> None:
        """Something changed outside the runtime's own commands: the lanes look at once."""
        self.scheduler.wake()

    def _changed(self, outcome: Changed) -> Changed:
        """A command's store change is done: the lanes look at once."""
        self.scheduler.wake()
        return outcome

    # --- outputs: the same operations for the window and the headless commands -----------------
    @property
    def outputs_root(self) -> Path:
        return outputs_root(self.config, self.data_dir)

    def output_folder(self, task_id: str) -> Path | None:
        """The folder of the task's first output file (where the template put it), else its own."""
        task = self.store.get(task_id)
        if task is None:
            return None
        placed = self.store.outputs_of([task_id]).get(task_id)
        if placed:
            return Path(placed[0].path).parent
        result = self.store.result(task_id)
        files = result.file_list if result is not None else []
        return Path(files[0]).parent if files else task_folder(self.outputs_root, task.batch_id, task_id)

    def set_picked(self, marks: Iterable[tuple[str, int | None]], picked: bool) -> int:
        """Pick (or unpick) outputs, each ``(task_id, n)`` (``n`` None: all of the task's); each
        batch's manifest is written again once. How many outputs changed."""
        changed, batches = 0, set()
        for task_id, n in marks:
            count = self.store.set_picked(task_id, n, picked)
            task = self.store.get(task_id) if count else None
            if task is not None:
                changed += count
                batches.add(task.batch_id)
        for batch_id in sorted(batches):
            rebuild_manifest(self.store, self.config, self.outputs_root, batch_id)
        return changed

    def tasks_with_picks(self, task_ids: Iterable[str]) -> set[str]:
        """Those of ``task_ids`` with a picked output."""
        outputs = self.store.outputs_of(task_ids)
        return {task_id for task_id, placed in outputs.items() if any(o.picked for o in placed)}

    def rebuild_manifest(self, batch_id: str) -> tuple[Path, int]:
        return rebuild_manifest(self.store, self.config, self.outputs_root, batch_id)

    def deliver(self, batch_id: str, to: Path, picked_only: bool, task_ids: list[str] | None = None) -> Delivery:
        return deliver(self.store, self.config, self.outputs_root, batch_id, to, picked_only, task_ids)

    def rerun(self, task_id: str, *, prompt: str | None = None, model: str | None = None,
              params: dict[str, object] | None = None, remix: bool = False) -> str:
        """Queue an edited copy of ``task_id`` as its child; the new task's id."""
        new_id = rerun(self.store, self.config, task_id, prompt=prompt, model=model, params=params, remix=remix)
        self.scheduler.wake()
        return new_id
