"""The database itself: peewee's SQLite and PostgreSQL databases as the store uses them, and the
faults of an SQLite file (disk full, read-only, damaged, replaced) as one ``StorageFault``
naming the file and what to do, never a bare sqlite3 error.

The database-specific code of the store is here, in ``connection.py`` (``_connect``, the locks)
and in the claim's ``_take`` (``lifecycle.py``).
"""

from __future__ import annotations

import errno
import logging
import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any, Literal, TypeAlias

import peewee as pw
import psutil

from mediaassist.core.errors import (
    FAULT_CORRUPT,
    FAULT_FULL,
    FAULT_IO,
    FAULT_LOCKED,
    FAULT_NOT_DATABASE,
    FAULT_READ_ONLY,
    FAULT_REPLACED,
    StorageFault,
)
from mediaassist.core.location import StoreUnavailable, server_refusal
from mediaassist.core.messages import Message, msg
from mediaassist.core.secrets import redact

log = logging.getLogger("mediaassist.store")

CHUNK = 500  # rows per insert statement (SQLite's variable limit)


# --- SQLite faults as operator messages (database specific) ------------------------------------

_SQLITE_HEADER = b"SQLite format 3\x00"
BUSY_TIMEOUT_S = 10  # how long a statement waits for another process's write lock
PROBE_BUSY_TIMEOUT_MS = 50  # how long the fault probe waits for it: the next probe comes in seconds
_FAULT_WORDS = (("database or disk is full", FAULT_FULL), ("readonly database", FAULT_READ_ONLY),
                ("unable to open database file", FAULT_READ_ONLY), ("file is not a database", FAULT_NOT_DATABASE),
                ("malformed", FAULT_CORRUPT), ("disk i/o error", FAULT_IO), ("database is locked", FAULT_LOCKED))
_ERRNO_FAULTS = {errno.ENOSPC: FAULT_FULL, errno.EDQUOT: FAULT_FULL, errno.EROFS: FAULT_READ_ONLY,
                 errno.EACCES: FAULT_READ_ONLY, errno.EPERM: FAULT_READ_ONLY}


def free_space_text(path: Path) -> str:
    try:
        free = shutil.disk_usage(path if path.is_dir() else path.parent).free
    except OSError:
        return "unknown"
    return f"{free / 1e6:.1f} MB"


def filesystem_of(path: Path) -> str:
    """The mount point (and type) of the filesystem holding ``path``: what an operator frees."""
    folder = (path if path.is_dir() else path.parent).resolve()
    try:
        device = folder.stat().st_dev
        mount = folder
        while mount.parent != mount and mount.parent.stat().st_dev == device:
            mount = mount.parent
    except OSError:
        return str(folder)
    kinds = {Path(p.mountpoint): p.fstype for p in psutil.disk_partitions(all=True)}
    return f"{mount} ({kinds[mount]})" if mount in kinds else str(mount)


def fault_message(kind: str, path: Path, reason: Message | str) -> Message:
    """The one line an operator reads: which file, what is wrong, what to do."""
    if kind == FAULT_FULL:
        return msg("disk full: the filesystem {filesystem} holding {path} has {free} free ({reason}); free some "
                   "space -- queued and running tasks stay queued and resume when there is room",
                   filesystem=filesystem_of(path), path=path.resolve(), free=free_space_text(path), reason=reason)
    if kind == FAULT_READ_ONLY:
        return msg("cannot write {path} ({reason}): the file or its folder is read-only or not yours; make both "
                   "writable by you (e.g. chmod u+w), or choose another --data-dir", path=path, reason=reason)
    if kind == FAULT_CORRUPT:
        return msg("{path} is damaged ({reason}); first keep what it holds: 'mediaassist doctor' backs it up and "
                   "saves the rows it can still read; then move it aside together with its -wal and -shm files "
                   "to start with an empty queue, or restore a backup", path=path, reason=reason)
    if kind == FAULT_NOT_DATABASE:
        return msg("{path} is not a mediaassist database ({reason}); move it aside, or choose another --data-dir",
                   path=path, reason=reason)
    if kind == FAULT_LOCKED:
        return msg("{path} stays locked by another process ({reason} for {seconds} s): a mediaassist process that "
                   "is stopped (Ctrl-Z, a debugger) or hung holds its write lock; resume or end it -- queued and "
                   "running tasks stay queued and go on once the lock is free",
                   path=path, reason=reason, seconds=BUSY_TIMEOUT_S)
    if kind == FAULT_REPLACED:
        return msg("{path} was {reason} while in use; nothing more was written to it. Put the file back (or move "
                   "the new one aside), then start again", path=path, reason=reason)
    return msg("cannot read or write {path} ({reason}); check the disk and the file, then start again",
               path=path, reason=reason)


def suspected_damage_message(path: Path, reason: str) -> Message:
    """A statement said "malformed": damage is not proven until ``PRAGMA integrity_check`` fails."""
    return msg("{path} reports damage ({reason}); nothing is lost yet: run 'mediaassist doctor' -- it backs the "
               "file up first, then checks it -- before moving anything", path=path, reason=reason)


def classify_fault(exc: BaseException, path: Path) -> StorageFault | None:
    """The storage fault an exception means, or None when it is not one (a bug, a constraint)."""
    if isinstance(exc, StorageFault):
        return exc
    if isinstance(exc, (pw.IntegrityError, sqlite3.IntegrityError)):
        return None
    if isinstance(exc, OSError) and exc.errno in _ERRNO_FAULTS:
        return StorageFault(_ERRNO_FAULTS[exc.errno], str(path),
                            fault_message(_ERRNO_FAULTS[exc.errno], path, exc.strerror or str(exc)))
    if not isinstance(exc, (pw.DatabaseError, sqlite3.DatabaseError)):
        return None
    text = str(exc).lower()
    for words, kind in _FAULT_WORDS:
        if words in text:
            if kind == FAULT_IO and free_space_text(path) == "0.0 MB":
                kind = FAULT_FULL  # a write that ran out of room can surface as an I/O error
            if kind == FAULT_CORRUPT:
                return StorageFault(kind, str(path), suspected_damage_message(path, str(exc)))
            return StorageFault(kind, str(path), fault_message(kind, path, str(exc)))
    return None


class faults_as_storage:
    """``with faults_as_storage(path):`` -- sqlite3/OS errors that are file faults leave as
    ``StorageFault``; anything else leaves unchanged."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object) -> Literal[False]:
        if exc is None:
            return False
        fault = classify_fault(exc, self.path)
        if fault is not None and fault is not exc:
            raise fault from exc
        return False


def check_sqlite_file(path: Path) -> bool:
    """Refuse, before SQLite sees it, a file that is not an SQLite database. True when the file
    is shorter than its header says: a checkpoint that ran out of room (the pages it could not
    write are still in the -wal), one another process is running now (page 1 is written before
    the pages that extend the file), or real damage -- ``PRAGMA integrity_check`` decides, once
    the file is open (``settle_short_file``)."""
    try:
        _check_sqlite_header(path)
    except StorageFault as fault:
        if fault.kind != FAULT_CORRUPT:
            raise
        return True
    return False


def settle_short_file(db: SqliteStoreDatabase, path: Path) -> bool:
    """A file shorter than its header: damaged only when ``PRAGMA integrity_check`` says so (then
    ``StorageFault`` with the back-up-first advice). Else it is whole through its -wal: write the
    -wal back now; False when there is no room for that yet (it is written back once there is)."""
    refuse_damaged(db, path, "integrity_check")
    return checkpoint(db, path)


def refuse_damaged(db: SqliteStoreDatabase, path: Path, check: str) -> None:
    """``StorageFault`` (damaged, with the back-up-first advice) when ``PRAGMA <check>``
    (integrity_check, or the faster quick_check) finds damage."""
    try:
        with faults_as_storage(path):  # the rows come while they are fetched, past execute_sql's watch
            problems = [row[0] for row in db.execute_sql(f"PRAGMA {check}(5)").fetchall()]
    except StorageFault as fault:
        if fault.kind != FAULT_CORRUPT:
            raise
        problems = [f"it could not run ({fault.__cause__})"]
    if problems != ["ok"]:
        raise StorageFault(FAULT_CORRUPT, str(path), fault_message(
            FAULT_CORRUPT, path, f"PRAGMA {check}: " + "; ".join(problems)))


def checkpoint(db: SqliteStoreDatabase, path: Path) -> bool:
    """Write the -wal back into the main file; False when the disk has no room for it.

    PASSIVE: what other processes' readers and writers leave free now, without waiting for them.
    A file looks short while another process is checkpointing it too, and a TRUNCATE there
    waited (holding the write lock) for every reader to go: a second process starting beside a
    busy one gave up after ``BUSY_TIMEOUT_S`` as "locked". SQLite's own checkpoints write the
    rest back later."""
    try:
        db.execute_sql("PRAGMA wal_checkpoint(PASSIVE)")
    except StorageFault as fault:
        if fault.kind != FAULT_FULL:
            raise
        log.warning("%s: intact, but part of it is still only in its -wal file (no room on %s to write it "
                    "back); written back once there is space", path, filesystem_of(path))
        return False
    return True


def _check_sqlite_header(path: Path) -> None:
    if path.is_dir():
        raise StorageFault(FAULT_NOT_DATABASE, str(path),
                           fault_message(FAULT_NOT_DATABASE, path, "a folder, not a file"))
    try:
        size = path.stat().st_size
        if size == 0:
            return  # SQLite's own new, empty database
        with path.open("rb") as handle:
            header = handle.read(100)
    except FileNotFoundError:
        return
    if not header.startswith(_SQLITE_HEADER):
        raise StorageFault(FAULT_NOT_DATABASE, str(path),
                           fault_message(FAULT_NOT_DATABASE, path, msg("no SQLite header")))
    if len(header) < 100:
        raise StorageFault(FAULT_CORRUPT, str(path),
                           fault_message(FAULT_CORRUPT, path, msg("truncated to {size} bytes", size=size)))
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    change_counter, pages, valid_for = (int.from_bytes(header[i:i + 4], "big") for i in (24, 28, 92))
    if size % page_size or (valid_for == change_counter and pages * page_size > size):
        raise StorageFault(FAULT_CORRUPT, str(path), fault_message(
            FAULT_CORRUPT, path,
            msg("truncated: {size} bytes of {total}", size=size, total=max(pages * page_size, size))))


class SqliteStoreDatabase(pw.SqliteDatabase):
    """SQLite that checks, at every transaction's start and every statement outside one, that
    the file is still the one it opened (a file deleted or replaced under a running app would
    otherwise swallow every write unseen), and turns the file's faults into ``StorageFault``."""

    def __init__(self, path: Path, **kwargs: Any) -> None:
        super().__init__(str(path), **kwargs)
        self.file = path
        self.identity: tuple[int, int] | None = None

    def remember_identity(self) -> None:
        info = os.stat(self.file)
        self.identity = (info.st_dev, info.st_ino)

    def check_identity(self) -> None:
        if self.identity is None:
            return
        try:
            info = os.stat(self.file)
        except FileNotFoundError:
            raise StorageFault(FAULT_REPLACED, str(self.file),
                               fault_message(FAULT_REPLACED, self.file, msg("deleted"))) from None
        if (info.st_dev, info.st_ino) != self.identity:
            raise StorageFault(FAULT_REPLACED, str(self.file),
                               fault_message(FAULT_REPLACED, self.file, msg("replaced")))

    def execute_sql(self, sql: str, params: Any = None) -> Any:
        # Once per transaction (its BEGIN is a statement outside one): a stat per statement was
        # a tenth of a claimed task's CPU.
        if not self.in_transaction():
            self.check_identity()
        with faults_as_storage(self.file):
            # peewee-stubs leave Database.execute_sql (and connection/cursor below) unannotated
            return super().execute_sql(sql, params)  # type: ignore[no-untyped-call]

    def commit(self) -> Any:
        with faults_as_storage(self.file):
            return super().commit()

    def rollback(self) -> Any:
        # After SQLITE_FULL or an I/O error SQLite may have rolled the transaction back itself;
        # a second rollback must not replace the fault that caused it.
        if self.in_transaction_at_sqlite_level():
            return super().rollback()
        return None

    def in_transaction_at_sqlite_level(self) -> bool:
        return not self.is_closed() and bool(self.connection().in_transaction)  # type: ignore[no-untyped-call]


class PgStoreDatabase(pw.PostgresqlDatabase):
    """PostgreSQL that survives a connection dropped between statements (a server restart, an
    idle connection cut by a firewall) by connecting again, and reports a server out of reach as
    ``StoreUnavailable`` -- a storage fault, so lanes stop taking work with a visible reason and
    resume when the server is back, instead of failing every statement with a traceback."""

    def __init__(self, where: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.where = where

    def _connection_lost(self) -> bool:
        conn = self._state.conn  # type: ignore[attr-defined]  # peewee's per-thread state: not in peewee-stubs
        return conn is None or bool(conn.closed)

    def _unavailable(self, exc: Exception) -> StoreUnavailable:
        return server_refusal(self.where, _first_line(exc))

    def execute_sql(self, sql: str, params: Any = None) -> Any:
        return self._reconnecting(super().execute_sql, sql, params)

    def begin(self, *args: Any, **kwargs: Any) -> None:
        self._reconnecting(super().begin, *args, **kwargs)

    def _reconnecting(self, call: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return call(*args, **kwargs)
        except pw.ProgrammingError as exc:
            if _sqlstate(exc) == _INSUFFICIENT_PRIVILEGE:  # the operator's to fix, not a bug
                raise self._unavailable(exc) from None
            raise
        except (pw.OperationalError, pw.InterfaceError) as exc:
            if not self._connection_lost():
                raise  # the server answered: a real error of the statement
            if self.in_transaction():  # what the transaction wrote is gone: never redo half of it
                raise self._unavailable(exc) from None
            try:
                self.close()
                self.connect()
                return call(*args, **kwargs)
            except (pw.OperationalError, pw.InterfaceError) as again:
                raise self._unavailable(again) from None

    def insert_values(self, sql: str, values: list[tuple[Any, ...]]) -> None:
        """Many rows, ``CHUNK`` per statement: psycopg2's executemany is one round trip per
        row (100,000 tasks over a LAN would take minutes)."""
        from psycopg2 import Error as DriverError
        from psycopg2.extras import execute_values

        try:
            execute_values(self.cursor(), sql, values, page_size=CHUNK)  # type: ignore[no-untyped-call]  # unannotated in peewee-stubs
        except DriverError as exc:
            if self._connection_lost():
                raise self._unavailable(exc) from None
            raise

    def rollback(self) -> None:
        if self._connection_lost():
            return  # the server dropped the transaction with the connection
        super().rollback()

    def commit(self) -> None:
        try:
            super().commit()
        except (pw.OperationalError, pw.InterfaceError) as exc:
            if not self._connection_lost():
                raise
            raise self._unavailable(exc) from None


_INSUFFICIENT_PRIVILEGE = "42501"


def _sqlstate(exc: Exception) -> str | None:
    """The SQLSTATE of the driver's error that peewee wrapped (kept as ``orig``)."""
    return getattr(getattr(exc, "orig", None), "pgcode", None)


def _first_line(exc: Exception) -> str:
    """The driver's first line (a statement's error goes on with the SQL and a caret), secrets
    redacted."""
    lines = [line for line in str(exc).splitlines() if line.strip()]
    return redact(" ".join(lines[0].split()) if lines else type(exc).__name__)


StoreDatabase: TypeAlias = SqliteStoreDatabase | PgStoreDatabase


def sql_marks(mark: str, count: int) -> str:
    return ", ".join([mark] * count)
