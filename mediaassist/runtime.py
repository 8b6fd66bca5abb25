"""The running app without its face: config (or demo), store, providers and scheduler.

Shared by the headless CLI and the desktop window so both start, import and stop the same way.
"""

from __future__ import annotations

import logging
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from mediaassist.core.clock import Clock
from mediaassist.core.config import AppConfig, load_config
from mediaassist.core.import_process import ImportReading, ReadRequest
from mediaassist.core.importer import ImportReport, derive_missing_ids, new_batch_id
from mediaassist.core.location import choose_store_url
from mediaassist.core.paths import data_dir as resolve_data_dir
from mediaassist.core.paths import default_config_path
from mediaassist.core.scheduler import Scheduler
from mediaassist.core.store import Store
from mediaassist.providers.registry import build_providers

if TYPE_CHECKING:
    from mediaassist.demo import DemoEnvironment

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


def store_location(options: RuntimeOptions, config: AppConfig, data_dir: Path) -> Path | str:
    """The store this run uses: a shared PostgreSQL one if --store, the environment or the
    config names one, else the SQLite file in the data dir."""
    return choose_store_url(options.store_url, config.store_url) or data_dir / DB_NAME


def open_store(options: RuntimeOptions, config: AppConfig, data_dir: Path) -> Store:
    return Store(store_location(options, config, data_dir))


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

    def _demo_environment(self) -> DemoEnvironment:
        # Imported only when --demo asks: the demo servers are no part of a real run.
        from mediaassist.demo import DemoEnvironment

        given = load_config(self.options.config_path) if self.options.config_path is not None else None
        return DemoEnvironment(self.clock, self.data_dir, log_in=not self.options.read_only, given=given)

    async def __aenter__(self) -> Runtime:
        await self._stack.__aenter__()
        try:
            demo = self._demo_environment() if self.options.demo else None
            if demo is not None:
                self.config = await self._stack.enter_async_context(demo)
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
            providers = build_providers(self.config, self.clock, self.data_dir)
            self.scheduler = Scheduler(self.store, self.config, providers, self.data_dir, self.clock)
        except BaseException:
            await self._stack.aclose()
            raise
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self._stack.aclose()

    def start_import(self, path: Path, default_model: str | None) -> ImportReading:
        """A child process reading ``path`` for the window's preview, and then enqueuing it."""
        return ImportReading(ReadRequest(path, self.config, self.store_location, default_model))

    def enqueue_report(self, report: ImportReport) -> ImportOutcome:
        """Enqueue a read task file's good rows as one batch."""
        outcome = ImportOutcome(report=report, batch_id=new_batch_id(report.source))
        derive_missing_ids(report)
        if report.tasks:
            outcome.inserted, outcome.skipped = self.store.enqueue(outcome.batch_id, report.tasks)
            self.scheduler.wake()
        return outcome
