"""The running app without its face: config (or demo), store, providers and scheduler.

Shared by the headless CLI and the desktop window so both start, import and stop the same way.
"""

from __future__ import annotations

import hashlib
import logging
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from mediaassist.core.clock import Clock
from mediaassist.core.config import AppConfig, load_config
from mediaassist.core.importer import ImportReport, new_batch_id
from mediaassist.core.location import choose_store_url
from mediaassist.core.paths import data_dir as resolve_data_dir
from mediaassist.core.paths import default_config_path
from mediaassist.core.scheduler import Scheduler
from mediaassist.core.store import Store
from mediaassist.demo import DemoEnvironment
from mediaassist.providers.registry import build_providers

log = logging.getLogger("mediaassist")
DB_NAME = "mediaassist.sqlite3"


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
    content = report.source.read_bytes()
    stem = "".join(c for c in report.source.stem if c.isalnum() or c in "-_")[:24] or "task"
    for position, task in enumerate(report.tasks, start=1):
        if not task.task_id:
            digest = hashlib.sha1(content + b"\0" + task.model.encode()).hexdigest()[:10]
            task.task_id = f"{stem}-{digest}-{position:05d}"


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

    async def __aenter__(self) -> Runtime:
        await self._stack.__aenter__()
        try:
            demo = (DemoEnvironment(self.clock, self.data_dir, log_in=not self.options.read_only)
                    if self.options.demo else None)
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

    def count_stored(self, report: ImportReport) -> int:
        """How many of a read file's tasks the store already has (they would be skipped)."""
        _derive_missing_ids(report)
        ids = [task.task_id for task in report.tasks if task.task_id]
        return len(ids) - len(self.store.missing(ids))

    def enqueue_report(self, report: ImportReport) -> ImportOutcome:
        """Enqueue a read task file's good rows as one batch."""
        outcome = ImportOutcome(report=report, batch_id=new_batch_id(report.source))
        _derive_missing_ids(report)
        if report.tasks:
            outcome.inserted, outcome.skipped = self.store.enqueue(outcome.batch_id, report.tasks)
            self.scheduler.wake()
        return outcome
