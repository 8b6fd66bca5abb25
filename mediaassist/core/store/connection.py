"""Opening the store and the transactions and locks its parts build on."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import peewee as pw

from mediaassist.core.errors import FAULT_CORRUPT, StorageFault
from mediaassist.core.location import StoreUnavailable, connect_kwargs, describe, is_pg_url, refuse_url_as_path
from mediaassist.core.messages import msg
from mediaassist.core.order import DurationFit
from mediaassist.core.schema import ensure_schema
from mediaassist.core.store.database import (
    BUSY_TIMEOUT_S,
    PgStoreDatabase,
    SqliteStoreDatabase,
    StoreDatabase,
    check_sqlite_file,
    classify_fault,
    fault_message,
    faults_as_storage,
    refuse_damaged,
    settle_short_file,
)
from mediaassist.core.store.tables import MODELS, SCHEMA_COLUMNS, SCHEMA_DROPPED_INDEXES, database_proxy
from mediaassist.core.store_clock import ServerClock

# peewee's translation of the driver's errors into its own (pw.IntegrityError, ...)
AS_PEEWEE_ERRORS = pw.__exception_wrapper__  # type: ignore[attr-defined]  # not in peewee-stubs
BUDGET_LOCK = "mediaassist-budget"  # the PostgreSQL advisory lock every budgeted claim takes


class StoreConnection:
    """The store's connection: opening the database (SQLite file or PostgreSQL URL), its
    clock, and the transactions and locks every other part builds on."""

    def __init__(self, location: Path | str, now: Any = None) -> None:
        """``location``: an SQLite file path, or a ``postgresql://`` URL (a ``str``: a URL passed
        as a ``Path`` has lost its '//' and is refused with a ``ConfigError``) for a shared queue.

        Raises ``StorageFault`` (one line naming the file and what to do) when the file cannot
        be used: read-only, not a database, damaged, disk full; ``StoreUnavailable`` (one of
        them) when a server cannot be reached or the schema is newer than this program knows."""
        if isinstance(location, os.PathLike):
            refuse_url_as_path(location, "store location")
        self.shared = is_pg_url(location)
        self.wal_pending = False  # part of the file is only in its -wal (no room to write it back yet)
        self.where = describe(location)  # for messages: never a password
        self.path = Path(location)
        # model -> (monotonic time read, its duration fit): an import in many steps reads it once
        self._fits: dict[str, tuple[float, DurationFit | None]] = {}
        with faults_as_storage(self.path):
            self.db: StoreDatabase = self._connect(str(location))
            database_proxy.initialize(self.db)
            # Times that every process judges (heartbeats, leases, back-offs) come from one
            # clock: a shared store's server's, or this machine's for the local file.
            self._now: Callable[[], float] = now or (
                ServerClock(self._server_time, self.where).now if self.shared else time.time)
            try:
                ensure_schema(self.db, MODELS, SCHEMA_COLUMNS, self.where, SCHEMA_DROPPED_INDEXES)
            except BaseException:
                self.db.close()
                raise

    # --- database specific ------------------------------------------------------------------
    def _connect(self, location: str) -> StoreDatabase:
        if self.shared:
            from playhouse.db_url import parse

            pg = PgStoreDatabase(self.where, **parse(location, unquote_password=True, unquote_user=True),
                                  **connect_kwargs(location))
            try:
                pg.connect(reuse_if_open=True)
            except pw.ImproperlyConfigured:
                raise StoreUnavailable(msg("a shared store needs the PostgreSQL driver: pip install "
                                           "'mediaassist[postgres]'"), self.where) from None
            except pw.OperationalError as exc:
                raise pg._unavailable(exc) from None
            return pg
        path = Path(location)
        path.parent.mkdir(parents=True, exist_ok=True)
        short = check_sqlite_file(path)
        db = SqliteStoreDatabase(
            path,
            pragmas={"journal_mode": "wal", "synchronous": "normal", "busy_timeout": BUSY_TIMEOUT_S * 1000,
                     "cache_size": -65536,  # 64 MiB: a 100k-task queue stays in memory
                     "foreign_keys": 1},
            timeout=BUSY_TIMEOUT_S,
        )
        try:
            db.connect(reuse_if_open=True)
            self.wal_pending = short and not settle_short_file(db, path)
        except BaseException as exc:
            db.close()
            fault = None if isinstance(exc, StorageFault) else classify_fault(exc, path)
            if short and fault is not None and fault.kind == FAULT_CORRUPT:  # cut short, and not even opened
                raise StorageFault(FAULT_CORRUPT, str(path), fault_message(
                    FAULT_CORRUPT, path, f"PRAGMA integrity_check could not run: {exc}")) from exc
            raise
        os.chmod(path, 0o600)
        db.remember_identity()
        return db

    def _server_time(self) -> float:
        return float(self.db.execute_sql("SELECT extract(epoch from clock_timestamp())").fetchone()[0])

    def verify(self) -> None:
        """Raise ``StorageFault`` when the file is damaged anywhere (``PRAGMA quick_check``), not
        only where the next statement reads: ``status`` must not print counts from a store that
        ``run`` would find broken. A shared store's server looks after its own pages."""
        if isinstance(self.db, SqliteStoreDatabase):
            refuse_damaged(self.db, self.path, "quick_check")

    def check_file(self) -> None:
        """Raise ``StorageFault`` if the database file was deleted or replaced since it was opened."""
        if isinstance(self.db, SqliteStoreDatabase):
            self.db.check_identity()

    def _run(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """A statement of the hot path (claim, an attempt's end, a log line). Inside a transaction
        on SQLite it goes straight to the driver, past peewee's per-statement work (as much CPU as
        SQLite's running of a small statement; the transaction's BEGIN checked the file); its
        errors are translated as peewee's (``IntegrityError``) and as storage faults all the same."""
        db = self.db
        if not (isinstance(db, SqliteStoreDatabase) and db.in_transaction()):
            return db.execute_sql(sql, params)
        try:
            return db.connection().execute(sql, params)  # type: ignore[no-untyped-call]  # unannotated in peewee-stubs
        except sqlite3.Error:
            with faults_as_storage(db.file), AS_PEEWEE_ERRORS:  # raised again, translated on the way out
                raise

    @contextlib.contextmanager
    def _lane_lock(self, route: str) -> Iterator[None]:
        """A transaction in which no other process claims on this route: the count of its
        running rows and the claim that follows are one decision."""
        if isinstance(self.db, pw.PostgresqlDatabase):
            with self.db.atomic():
                self.db.execute_sql("SELECT pg_advisory_xact_lock(hashtext(%s))", (route,))
                yield
            return
        # SQLite: the write lock up front, or two processes could both count the same free
        # slots before either writes.
        with self._write_transaction():
            yield

    def _write_transaction(self) -> Any:
        """A transaction holding SQLite's write lock from BEGIN on. One that reads first and writes
        later fails at once with "database is locked" (busy_timeout does not apply) when another
        process wrote in between; PostgreSQL needs nothing of the kind."""
        if isinstance(self.db, pw.SqliteDatabase):
            return self.db.atomic("IMMEDIATE")
        return self.db.atomic()

    def _statements_undone_alone(self) -> Any:
        """A write transaction whose failed statement is undone alone, the transaction going on:
        inside another transaction on SQLite, none more (SQLite undoes a failed statement by
        itself, and a savepoint made it copy every page the claim changed into a statement
        journal: a fifth of a claimed task's CPU); else ``_write_transaction``, nested as a savepoint
        (a failed statement aborts a whole PostgreSQL transaction)."""
        if isinstance(self.db, pw.SqliteDatabase) and self.db.in_transaction():
            return contextlib.nullcontext()
        return self._write_transaction()

    @contextlib.contextmanager
    def _budget_lock(self) -> Iterator[None]:
        if isinstance(self.db, pw.PostgresqlDatabase):
            with self.db.atomic():
                self.db.execute_sql("SELECT pg_advisory_xact_lock(hashtext(%s))", (BUDGET_LOCK,))
                yield
            return
        with self._write_transaction():  # SQLite: one writer at a time holds it already
            yield

    def close(self) -> None:
        if not self.db.is_closed():
            self.db.close()

    def now(self) -> float:
        return self._now()
