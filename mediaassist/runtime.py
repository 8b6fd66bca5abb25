"""The running app without its face: config (or demo), store, providers and scheduler.

Shared by the headless CLI and the desktop window so both start, import and stop the same way.
"""

from __future__ import annotations

import asyncio
import gc
import hashlib
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import AsyncExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, TypeVar

from mediaassist.core.clock import Clock
from mediaassist.core.config import AppConfig, load_config
from mediaassist.core.importer import ImportReport, new_batch_id, read_task_file
from mediaassist.core.location import choose_store_url
from mediaassist.core.paths import data_dir as resolve_data_dir
from mediaassist.core.paths import default_config_path
from mediaassist.core.queries import OffLoopReader
from mediaassist.core.scheduler import Scheduler
from mediaassist.core.store import NewTask, Store
from mediaassist.providers.registry import build_providers

if TYPE_CHECKING:
    from mediaassist.demo import DemoEnvironment

log = logging.getLogger("mediaassist")
DB_NAME = "mediaassist.sqlite3"
# The window imports in steps sized to a CPU budget, in a worker thread: a fixed 500 rows cost
# ~15 ms on a 100k-task store and ~10x that once the store's pages are cold or the box is loaded,
# and each step holds the write lock the loop's own writes (the scheduler's) wait for.
IMPORT_STEP_BUDGET_S = 0.005  # CPU of one step
IMPORT_STEP_ROWS = (50, 100, 2000)  # fewest, first and most rows per step
T = TypeVar("T")


@dataclass
class RuntimeOptions:
    config_path: Path | None = None
    data_dir: Path | None = None
    demo: bool = False
    speed: float = 1.0
    store_url: str | None = None  # --store: wins over MEDIAASSIST_STORE_URL and [store] url
    # status and other commands that only look: demo accounts are not logged in, nothing about
    # logins is written (another process may be using those accounts right now).
    read_only: bool = False


@dataclass
class ImportOutcome:
    report: ImportReport
    batch_id: str
    inserted: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def load_app_config(options: RuntimeOptions) -> AppConfig:
    """The operator's config; a missing default file is an empty config, not an error."""
    path = options.config_path or default_config_path()
    if options.config_path is None and not path.exists():
        return AppConfig()
    return load_config(path)


def open_store(options: RuntimeOptions, config: AppConfig, data_dir: Path) -> Store:
    """The store this run uses: a shared PostgreSQL one if --store, the environment or the
    config names one, else the SQLite file in the data dir."""
    url = choose_store_url(options.store_url, config.store_url)
    return Store(url if url else data_dir / DB_NAME)


def _derive_missing_ids(report: ImportReport) -> None:
    """Rows without a task_id get one derived from the file's bytes, their model and their
    position, so running the same file again (say, after a crash) resumes it instead of
    duplicating it -- while the same prompts sent to another model are new tasks."""
    if all(task.task_id for task in report.tasks):
        return
    content = report.source.read_bytes()
    stem = "".join(c for c in report.source.stem if c.isalnum() or c in "-_")[:24] or "task"
    digests: dict[str, str] = {}  # per model: hashing the whole file per row is quadratic
    for position, task in enumerate(report.tasks, start=1):
        if not task.task_id:
            if task.model not in digests:
                digests[task.model] = hashlib.sha1(content + b"\0" + task.model.encode()).hexdigest()[:10]
            task.task_id = f"{stem}-{digests[task.model]}-{position:05d}"


_collector_lock = threading.Lock()
_collector_pauses = 0


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic garbage collection while a big file is read, then freeze what survived.

    Reading 100,000 rows allocates ~10^6 tracked objects, and every full collection over them
    holds the GIL -- the loop's thread too -- for 50-180 ms (measured under load). The rows are
    acyclic (freed by reference counting), so freezing them out of later collections is safe."""
    global _collector_pauses
    with _collector_lock:
        _collector_pauses += 1
        gc.disable()
    try:
        yield
    finally:
        with _collector_lock:
            _collector_pauses -= 1
            if _collector_pauses == 0:
                gc.freeze()
                gc.enable()


StepRunner = Callable[..., Awaitable[float]]  # OffLoopReader.run: a call in another thread, awaited


async def in_budgeted_steps(items: Sequence[T], step: Callable[[Sequence[T]], object],
                            run: StepRunner | None = None) -> None:
    """``step`` over slices of ``items``, yielding to the loop after each; every slice is sized
    from the CPU the last one took per item (thread time: waiting for a core on a loaded machine
    is no cost of ours) so that one step stays near IMPORT_STEP_BUDGET_S.

    ``run``: the steps run through it in a worker thread with its own store connection (the
    loop runs *during* each step too, not only between them); the budget then bounds how long
    one step holds the store's write lock, which the loop's own writes wait for."""
    fewest, size, most = IMPORT_STEP_ROWS
    start = 0
    while start < len(items):
        chunk = items[start:start + size]
        spent = _cpu_of(step, chunk) if run is None else await run(_cpu_of, step, chunk)
        start += len(chunk)
        per_item = spent / len(chunk)
        size = most if per_item <= 0 else max(fewest, min(most, int(IMPORT_STEP_BUDGET_S / per_item)))
        await asyncio.sleep(0)


def _cpu_of(step: Callable[[Sequence[T]], object], chunk: Sequence[T]) -> float:
    """The CPU seconds ``step(chunk)`` takes of the thread it runs in."""
    began = time.thread_time()
    step(chunk)
    return time.thread_time() - began


class Runtime:
    """``async with Runtime(options) as rt:`` -- rt.config, rt.store, rt.scheduler (not started)."""

    def __init__(self, options: RuntimeOptions) -> None:
        self.options = options
        self.clock = Clock(options.speed)
        self.data_dir = resolve_data_dir(options.data_dir)
        self._stack = AsyncExitStack()
        self.config: AppConfig
        self.store: Store
        self.scheduler: Scheduler

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
            else:
                self.config = load_app_config(self.options)
            self.store = open_store(self.options, self.config, self.data_dir)
            self._stack.callback(self.store.close)
            if demo is not None:
                self.store.sync_accounts(self.config.accounts)
                # Only a login seen to work is news. One that did not happen (another process
                # holds the profile, a slow start) says nothing: a window running those accounts
                # must not find them flipped to "needs login" by a second demo process.
                for name in (name for name, ok in demo.logins.items() if ok):
                    self.store.set_login_state(name, "ok")
            providers = build_providers(self.config, self.clock, self.data_dir)
            self.scheduler = Scheduler(self.store, self.config, providers, self.data_dir, self.clock)
        except BaseException:
            await self._stack.aclose()
            raise
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self._stack.aclose()

    def read_import(self, path: Path, default_model: str | None) -> ImportReport:
        """Read a task file and give every row its task id. Touches no store and no loop, so the
        window runs it in a worker thread (a 100,000-row file takes seconds to parse)."""
        with collector_paused():
            report = read_task_file(path, self.config, default_model)
            _derive_missing_ids(report)
        return report

    async def count_stored(self, report: ImportReport) -> int:
        """How many of a read file's tasks the store already has (they would be skipped), asked
        a chunk at a time so the loop (scheduler, window) keeps running."""
        _derive_missing_ids(report)
        ids = [task.task_id for task in report.tasks if task.task_id]
        missing: list[str] = []
        with self._store_worker() as worker:
            await in_budgeted_steps(ids, lambda chunk: missing.extend(self.store.missing(list(chunk))), worker.run)
        return len(ids) - len(missing)

    @contextmanager
    def _store_worker(self) -> Iterator[OffLoopReader]:
        """A worker thread with its own store connection, for one import's steps."""
        worker = OffLoopReader(self.store)
        try:
            yield worker
        finally:
            worker.close()  # waits for a step still under way (a cancelled preview): one budget

    async def enqueue_report_in_steps(self, report: ImportReport) -> ImportOutcome:
        """``enqueue_report`` for the window: one transaction per budgeted step, so the loop
        runs between them; the batch keeps one creation time."""
        outcome = ImportOutcome(report=report, batch_id=new_batch_id(report.source))
        _derive_missing_ids(report)
        created_at = self.store.now()
        loop = asyncio.get_running_loop()

        def step(chunk: Sequence[NewTask]) -> None:  # in the worker thread
            inserted, skipped = self.store.enqueue(outcome.batch_id, list(chunk), created_at=created_at)
            if not outcome.inserted and not outcome.skipped:
                loop.call_soon_threadsafe(self.scheduler.wake)  # the first tasks may run while the rest arrive
            outcome.inserted += inserted
            outcome.skipped += skipped

        with self._store_worker() as worker:
            await in_budgeted_steps(report.tasks, step, worker.run)
        return outcome

    def enqueue_report(self, report: ImportReport) -> ImportOutcome:
        """Enqueue a read task file's good rows as one batch."""
        outcome = ImportOutcome(report=report, batch_id=new_batch_id(report.source))
        _derive_missing_ids(report)
        if report.tasks:
            outcome.inserted, outcome.skipped = self.store.enqueue(outcome.batch_id, report.tasks)
            self.scheduler.wake()
        return outcome
