"""The durable task store: one row per task, peewee over SQLite (WAL) or PostgreSQL.

Every state change is a *conditional* UPDATE (``WHERE state = 'running' AND owner = ? AND
attempt = ?``), so a late writer -- a reaped attempt, a cancelled one, a second process -- can
never overwrite a newer truth, and a result is never written twice (it is upserted by task_id
inside the same transaction that ends the attempt).

Limits are held here, not in any process's memory: a claim counts the lane's running rows and
its remote tasks still at the service, and takes at most ``lane_limit`` minus those in the same
transaction, so every process sharing the store stays inside one API concurrency, one polling
cap and one running task per web account. Gates (``try_gate``) serialise one kind of step (a
poll provider's creates) across processes.

Faults of the file itself (disk full, read-only, corrupt, replaced) come out of every statement
as one ``StorageFault`` naming the file and what to do, never as a bare sqlite3 error.

The only database-specific code is ``_lane_lock``, ``_take``, ``_connect`` and the
SQLite fault translation, all marked below. Where the store lives is ``core.location``; its
schema version and migrations (``SCHEMA_COLUMNS`` below) are applied by ``core.schema``.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import shutil
import sqlite3
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal, TypeAlias, cast

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
    ErrorKind,
    StorageFault,
)
from mediaassist.core.lanes import AccountView, ClaimRequest, LaneConditions, lane_of
from mediaassist.core.location import (
    StoreUnavailable,
    connect_kwargs,
    describe,
    host_id,
    is_pg_url,
    refuse_url_as_path,
    server_refusal,
)
from mediaassist.core.messages import Message, msg, verbatim
from mediaassist.core.money import (
    SOURCE_ESTIMATE,
    SOURCE_PROVIDER,
    History,
    Money,
    Produced,
    Totals,
    from_micros,
    to_micros,
)
from mediaassist.core.order import HISTORY_SAMPLES, BatchQueue, DurationFit, fair_shares, fit_durations, order_key
from mediaassist.core.outputs import OutputFile
from mediaassist.core.owners import owner_host, owner_is_dead
from mediaassist.core.schema import ensure_schema
from mediaassist.core.secrets import redact, redacted
from mediaassist.core.store_clock import ServerClock

log = logging.getLogger("mediaassist.store")

PENDING, RUNNING, SUCCESS, FAILED, CANCELED = "pending", "running", "success", "failed", "canceled"
FINAL_STATES = (SUCCESS, FAILED, CANCELED)
STATES = (PENDING, RUNNING, *FINAL_STATES)
AUTO_RETRIES = 2  # 3 attempts in all
# Attempts lost because the process running them died are not the task's fault: they draw on
# their own, larger budget, so a crash loop elsewhere does not fail tasks that never failed.
CRASH_RETRIES = 5
REMOTE_FINAL_KINDS = ("provider", "bad_input", "canceled")
HISTORY_TASKS = 50  # the latest settled tasks of a model that its next estimate learns from
_CHUNK = 500  # rows per insert statement (SQLite's variable limit)
FIT_TTL_S = 60.0  # how long enqueue trusts a model's duration fit it read (core/order.py)
PROBE_GATE = "storage-probe"  # the row probe_write touches; no process ever takes this gate
PROBE_HEADROOM_PAGES = 64  # the room probe_write wants: a few results' worth, not an update in place

database_proxy = pw.DatabaseProxy()


# Why a lane stopped taking work when the operator paused it (the window, ``lanes pause``).
PAUSED_BY_OPERATOR = msg("paused by operator")
CANCELED_BY_OPERATOR = msg("canceled by operator")
CANCELED_BEFORE_IT_RAN = msg("canceled before it ran")

def _stored_json(text: Message | str | None) -> str | None:
    """A message as stored beside its English (keys masked); None for a plain text (an answer)."""
    return redacted(text).to_json() if isinstance(text, Message) else None


def stored_message(english: str | None, stored: str | None) -> Message | None:
    """A stored text as a message: the one kept beside it, else (a row written before messages
    were kept, or a plain text) the English itself, shown as it is."""
    if english is None and stored is None:
        return None
    return Message.from_json(stored) or verbatim(english or "")


class _Base(pw.Model):
    class Meta:
        database = database_proxy


class Task(_Base):
    seq = pw.AutoField()  # FIFO order within a priority
    task_id = pw.CharField(unique=True)
    batch_id = pw.CharField()
    model = pw.CharField()
    model_kind = pw.CharField()
    route = pw.CharField()  # web:<site> | api:<provider> | poll:<provider>
    account = pw.CharField(null=True)  # web only: the account that runs (or must run) it
    account_pinned = pw.BooleanField(default=False)  # the task file named the account
    prompt = pw.TextField(default="")
    system_prompt = pw.TextField(null=True)
    params = pw.TextField(default="{}")
    priority = pw.IntegerField(default=0)
    state = pw.CharField(default=PENDING)
    attempt = pw.IntegerField(default=1)
    retries_left = pw.IntegerField(default=AUTO_RETRIES)
    crash_retries_left = pw.IntegerField(default=CRASH_RETRIES)
    created_at = pw.DoubleField()
    not_before = pw.DoubleField(default=0.0)
    started_at = pw.DoubleField(null=True)
    heartbeat_at = pw.DoubleField(null=True)
    finished_at = pw.DoubleField(null=True)
    cancel_requested = pw.BooleanField(default=False)
    remote_id = pw.CharField(null=True)
    # A create was sent and its reply not yet read (store clock: hold its slot until then).
    # Whoever died or lost the reply cannot know whether the service created the task.
    create_hold_until = pw.DoubleField(null=True)
    error_kind = pw.CharField(null=True)
    error = pw.TextField(null=True)  # in English, for every reader (logs, exports, older versions)
    error_message = pw.TextField(null=True)  # the same as a Message (JSON): shown in the reader's language
    owner = pw.CharField(null=True)  # core.owners.Owner of the scheduler running it
    host = pw.CharField(null=True)  # the machine that ran it last (kept after the attempt ends)
    updated_at = pw.DoubleField(default=0.0)
    # Media inputs as checked at import: {input name: [{"path", "size", "sha256", ...} | {"url", ...}]}
    inputs = pw.TextField(default="{}")
    # Files already uploaded: {"<provider>:<sha256>": {"name": remote name, "at": epoch s}}
    uploads = pw.TextField(default="{}")
    source_row = pw.IntegerField(null=True)  # the task file's row number as the spreadsheet shows it
    group_key = pw.CharField(null=True)  # the tasks made from one row (fan-out) and their reruns
    parent_id = pw.CharField(null=True)  # the task this one was edited and run again from
    remix_of = pw.CharField(null=True)  # a remix: the parent's remote video, remade instead of created anew
    # The task-file cells the naming templates name ({col:NAME}): {column: text}
    cells = pw.TextField(default="{}")
    # Seconds it is expected to take, from its model's recorded durations and its prompt's length
    # (core/order.py); 0: not known. A ``longest`` lane takes the longest first.
    expected_s = pw.DoubleField(default=0.0)

    class Meta:
        table_name = "task"
        indexes = ((("state", "heartbeat_at"), False), (("state", "not_before"), False),
                   # covering indexes for the window's counts and its change sweep
                   (("route", "account", "state"), False), (("batch_id", "route", "account", "state"), False),
                   (("updated_at",), False),
                   # the claim's count of a lane's slots held by remote tasks and unread creates (schema 5)
                   (("route", "state", "remote_id"), False), (("create_hold_until",), False))

    @property
    def create_unresolved(self) -> bool:
        """A create of this task was sent and nobody read its reply: the service may have made it."""
        return self.remote_id is None and self.create_hold_until is not None

    @property
    def params_dict(self) -> dict[str, Any]:
        params: dict[str, Any] = json.loads(self.params or "{}")
        return params

    @property
    def inputs_dict(self) -> dict[str, list[dict[str, Any]]]:
        inputs: dict[str, list[dict[str, Any]]] = json.loads(self.inputs or "{}")
        return inputs

    @property
    def uploads_dict(self) -> dict[str, dict[str, Any]]:
        uploads: dict[str, dict[str, Any]] = json.loads(self.uploads or "{}")
        return uploads

    @property
    def error_text(self) -> Message | None:
        return stored_message(self.error, self.error_message)

    @property
    def cells_dict(self) -> dict[str, str]:
        cells: dict[str, str] = json.loads(self.cells or "{}")
        return cells

    @property
    def lane(self) -> str:
        """The lane that runs (or ran) it: its web account's, its provider key's, or its route's."""
        return lane_of(self.route, self.account)


# The claim's ORDER BY priority DESC, seq ASC must walk this index, not sort the whole queue.
Task.add_index(Task.route, Task.state, Task.priority.desc(), Task.seq, name="task_claim_order")
# The same order inside one batch, for ``run FILE``: walking task_claim_order past the pending
# rows of other batches cost ~9x per claim with the file's batch behind 90,000 others.
Task.add_index(Task.batch_id, Task.route, Task.state, Task.priority.desc(), Task.seq, name="task_batch_claim_order")
# ``longest``'s order (core/order.py), walked like task_claim_order: sorting the due rows instead
# cost ~25x FIFO's claim on a queue of 100,000 (schema 7).
Task.add_index(Task.route, Task.state, Task.priority.desc(), Task.expected_s.desc(), Task.seq,
               name="task_longest_order")
# ``fair`` finds the batches waiting on a route by skipping from one to the next on this index,
# instead of grouping every due row (schema 7).
Task.add_index(Task.route, Task.state, Task.batch_id, name="task_route_batches")
# One logged-in session runs one generation: at most one running web task per account, held by
# the database itself, so it holds across every process that shares the store.
Task.add_index(pw.SQL('CREATE UNIQUE INDEX IF NOT EXISTS "task_one_running_per_account" ON "task" '
                      "(account) WHERE state = 'running' AND model_kind = 'web'"))


# Every column of a task, in the model's order: what a claim reads back.
_TASK_FIELDS = tuple(Task._meta.sorted_fields)
_TASK_COLUMNS = ", ".join(f'"{f.column_name}"' for f in _TASK_FIELDS)


def _task_of(row: Sequence[Any]) -> Task:
    """A task from a row of ``_TASK_COLUMNS``, its values converted as peewee's reader does."""
    task = Task(__no_default__=1, **{f.name: f.python_value(value) for f, value in zip(_TASK_FIELDS, row, strict=True)})
    task._dirty.clear()  # type: ignore[attr-defined]  # as read: nothing to save (peewee-stubs lack _dirty)
    return task


class Result(_Base):
    task_id = pw.CharField(primary_key=True)
    text = pw.TextField(null=True)
    text_message = pw.TextField(null=True)  # a provider's summary as a Message (JSON); None for an answer
    files = pw.TextField(default="[]")
    usage = pw.TextField(null=True)  # JSON: the provider's token counts, e.g. {"total_tokens": 42}
    written_at = pw.DoubleField()

    class Meta:
        table_name = "result"

    @property
    def file_list(self) -> list[str]:
        files: list[str] = json.loads(self.files or "[]")
        return files

    @property
    def text_shown(self) -> Message | None:
        """The provider's summary as a message, or the answer (the model's own words) as it is."""
        return stored_message(self.text, self.text_message)

    @property
    def usage_dict(self) -> dict[str, int]:
        usage: dict[str, int] = json.loads(self.usage or "{}")
        return usage


class Output(_Base):
    """One output file of a task's result (``core/outputs.py``): what the manifest lists, and the
    operator's pick mark. Replaced with the result when the task succeeds again."""
    id = pw.AutoField()
    task_id = pw.CharField(index=True)
    n = pw.IntegerField()  # 1-based, in the provider's order
    path = pw.TextField()  # absolute
    bytes = pw.BigIntegerField()
    sha256 = pw.CharField()
    media = pw.CharField()  # image | video | audio | text | other
    width = pw.IntegerField(null=True)
    height = pw.IntegerField(null=True)
    duration_s = pw.DoubleField(null=True)
    picked = pw.BooleanField(default=False)

    class Meta:
        table_name = "output"
        indexes = ((("task_id", "n"), True),)


class TaskLog(_Base):
    id = pw.AutoField()  # peewee's implicit primary key, declared so that it is typed
    task_id = pw.CharField(index=True)
    at = pw.DoubleField()
    line = pw.TextField()  # in English
    message = pw.TextField(null=True)  # the same as a Message (JSON); None in rows of older versions

    class Meta:
        table_name = "task_log"

    @property
    def text(self) -> Message:
        return stored_message(self.line, self.message) or verbatim("")


class LaneState(_Base):
    name = pw.CharField(primary_key=True)
    paused = pw.BooleanField(default=False)
    reason = pw.TextField(null=True)
    reason_message = pw.TextField(null=True)
    learned_limit = pw.IntegerField(null=True)  # concurrency = "auto": the limit learnt so far
    updated_at = pw.DoubleField(default=0.0)

    class Meta:
        table_name = "lane_state"


class Account(_Base):
    name = pw.CharField(primary_key=True)
    site = pw.CharField()
    enabled = pw.BooleanField(default=True)
    login_state = pw.CharField(default="unknown")  # unknown | ok | needs_login
    # The machine whose browser profile holds the login: only its processes run the account's
    # tasks. Set by `host = ...` in [[accounts]] or by a login on that machine; None = any.
    host = pw.CharField(null=True)
    last_error = pw.TextField(null=True)
    last_error_message = pw.TextField(null=True)
    updated_at = pw.DoubleField(default=0.0)

    class Meta:
        table_name = "account"

    @property
    def last_error_text(self) -> Message | None:
        return stored_message(self.last_error, self.last_error_message)


class Gate(_Base):
    """A named mutex held in the store (e.g. one poll provider's create step), with a lease:
    the holder renews it; a dead holder's gate is free at once (same host) or when the lease
    ends. ``not_before`` is a shared back-off: one process's "come back later" holds for all."""
    name = pw.CharField(primary_key=True)
    owner = pw.CharField(null=True)
    expires_at = pw.DoubleField(default=0.0)
    not_before = pw.DoubleField(default=0.0)

    class Meta:
        table_name = "gate"


class Upload(_Base):
    """A file uploaded to a provider, for every task that names the same content: a second task
    with that file reuses the remote name while it is fresh (``core.media.UPLOAD_FRESH_S``)."""
    key = pw.CharField(primary_key=True)  # "<provider>:<sha256>" (core.media.upload_key)
    name = pw.TextField()  # the provider's name for it
    uploaded_at = pw.DoubleField()  # the store's clock

    class Meta:
        table_name = "upload"


FORGET_ABSENT_S = 86400.0


class Presence(_Base):
    """One row per running scheduler, renewed with its heartbeat: which machines are at work on
    the queue now. A ``run`` waits for tasks that only another machine's accounts can take only
    while that machine is here."""
    owner = pw.CharField(primary_key=True)
    host = pw.CharField()
    beat_at = pw.DoubleField()
    batches = pw.TextField(null=True)  # JSON list of the batches it takes; None: all

    class Meta:
        table_name = "presence"


class Notice(_Base):
    """One notice (a batch finished, an account needs login, a lane paused). Its key names the
    event, so every process that sees the event records the same row once; the process that
    claims the row sends it (``core/notices.py``)."""
    key = pw.CharField(primary_key=True)
    kind = pw.CharField()
    created_at = pw.DoubleField()
    payload = pw.TextField()  # JSON: title, text and the event's data
    owner = pw.CharField(null=True)  # the process sending it
    claimed_at = pw.DoubleField(default=0.0)
    sent_at = pw.DoubleField(null=True)

    class Meta:
        table_name = "notice"




SPEND_RESERVED, SPEND_SETTLED = "reserved", "settled"
BUDGET_LOCK = "mediaassist-budget"  # the PostgreSQL advisory lock every budgeted claim takes


class Spend(_Base):
    """One attempt's money in one currency (core.money): its estimate is *reserved* when the
    attempt is claimed, and *settled* with the actual cost when it ends (a reservation of an
    attempt that spent nothing is deleted). Budgets sum these rows, so every process and machine
    on the store sees the same spend. Amounts are integer micro-units (``money.to_micros``)."""
    id = pw.AutoField()
    task_id = pw.CharField()
    attempt = pw.IntegerField()
    batch_id = pw.CharField()
    route = pw.CharField()
    model = pw.CharField()
    day = pw.CharField()  # the budget day it counts in (local date, turning at daily_reset)
    currency = pw.CharField()
    amount = pw.BigIntegerField()  # the reservation, then the actual cost
    estimate = pw.BigIntegerField(null=True)  # what was reserved (kept beside the actual)
    table_estimate = pw.BigIntegerField(null=True)  # the price table's estimate before correction
    state = pw.CharField(default=SPEND_RESERVED)
    source = pw.CharField(default=SOURCE_ESTIMATE)  # provider | price table | estimate
    produced = pw.TextField(null=True)  # JSON: money.Produced of the attempt
    created_at = pw.DoubleField()
    settled_at = pw.DoubleField(null=True)

    class Meta:
        table_name = "spend"
        indexes = ((("day", "currency"), False), (("batch_id", "currency"), False),
                   (("task_id", "attempt"), False), (("model", "state"), False),
                   (("state",), False))  # has_reservations (schema 5)

    @property
    def money(self) -> Money:
        return Money(from_micros(self.amount), self.currency)

    @property
    def total_names(self) -> tuple[str, str, str]:
        """The running totals this row counts in: its batch's, its day's, its provider's day."""
        return (total_name("batch", self.batch_id, self.currency), total_name("day", self.day, self.currency),
                total_name("provider", f"{self.route}|{self.day}", self.currency))


def settled_cost(rows: Iterable[Spend]) -> Totals:
    """What a task's spend rows charged, every attempt's, per currency (reservations not)."""
    return Totals(row.money for row in rows if row.state == SPEND_SETTLED)


class SpendTotal(_Base):
    """Running sums of the spend rows (micro-units) per budget scope and currency, kept in the
    same transaction as the rows: a budget check reads one row, not every spend of the day."""
    name = pw.CharField(primary_key=True)  # total_name(scope, key, currency)
    amount = pw.BigIntegerField(default=0)

    class Meta:
        table_name = "spend_total"


def total_name(scope: str, key: str, currency: str) -> str:
    return f"{scope}|{key}|{currency}"


@dataclass(frozen=True)
class Limit:
    """One budget a reservation must fit: ``scope`` "batch" (key: batch id), "day" (key: budget
    day), "provider" (key: route; its budget day in ``day``) or "balance" (key: route; what the
    account had left when it was read at ``since``)."""
    scope: str
    key: str
    cap: Money
    day: str = ""
    since: float = 0.0
    label: str = ""  # how the reason names it (a provider, a batch)


@dataclass(frozen=True)
class Reservation:
    estimate: Money
    table_estimate: Money | None
    limits: tuple[Limit, ...] = ()


@dataclass(frozen=True)
class BudgetStop:
    """A task that did not fit: the budget it would have broken and what it needed."""
    limit: Limit
    spent: Money
    needed: Money


MODELS = (Task, Result, Output, TaskLog, LaneState, Account, Gate, Presence, Notice, Spend, SpendTotal, Upload)
# The schema's versions after the first (1: the tables from before schema_version existed):
# version -> the columns it adds to older stores, as (table, column, SQL type). New tables need
# no entry (created when missing); a new index on an existing table needs a new version (an empty
# list will do: core.schema runs create_tables only when the version changes or a table is
# missing). Only defaulted or nullable columns, so rows
# written by an older version stay valid. The highest key is the version this program writes.
SCHEMA_COLUMNS: dict[int, list[tuple[str, str, str]]] = {
    2: [("task", "crash_retries_left", f"INTEGER NOT NULL DEFAULT {CRASH_RETRIES}"),
        ("task", "host", "VARCHAR(255)"), ("account", "host", "VARCHAR(255)"),
        # media inputs as checked at import, and the files already uploaded (core.media)
        ("task", "inputs", "TEXT NOT NULL DEFAULT '{}'"), ("task", "uploads", "TEXT NOT NULL DEFAULT '{}'"),
        # token usage per result, and an adaptive API lane's learned limit (core.limiter)
        ("result", "usage", "TEXT"), ("lane_state", "learned_limit", "INTEGER")],
    # outputs by template, fan-out and reruns (core/outputs.py; the output table is new)
    3: [("task", "source_row", "INTEGER"), ("task", "group_key", "VARCHAR(255)"), ("task", "parent_id", "VARCHAR(255)"),
        ("task", "remix_of", "VARCHAR(255)"), ("task", "cells", "TEXT NOT NULL DEFAULT '{}'")],
    # user-facing texts kept as messages beside their English (core.messages)
    4: [("task", "error_message", "TEXT"), ("task_log", "message", "TEXT"), ("result", "text_message", "TEXT"),
        ("lane_state", "reason_message", "TEXT"), ("account", "last_error_message", "TEXT")],
    # a create whose reply was never read holds its slot (providers/poll/lane.py); and an index
    # on spend.state for has_reservations
    5: [("task", "create_hold_until", "DOUBLE PRECISION")],
    # the expected duration a lane's ``longest`` order reads (core/order.py)
    6: [("task", "expected_s", "DOUBLE PRECISION NOT NULL DEFAULT 0")],
    # indexes for the ``longest`` and ``fair`` claims (task_longest_order, task_route_batches)
    7: [],
}
SCHEMA_VERSION = max(SCHEMA_COLUMNS)


@dataclass
class NewTask:
    model: str
    model_kind: str
    route: str
    prompt: str = ""
    task_id: str | None = None
    account: str | None = None
    system_prompt: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    priority: int = 0
    inputs: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    not_before: float = 0.0  # epoch seconds before which it is not started (0: at once)
    row: int | None = None  # the task file's row number
    group: str | None = None  # shared by the tasks of one row (fan-out) and their reruns
    parent_id: str | None = None  # a rerun's original
    remix_of: str | None = None  # a remix: the parent's remote id
    cells: dict[str, str] = field(default_factory=dict)  # task-file cells the naming templates name


def iso(ts: float | None) -> str | None:
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, tz=UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


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


def settle_short_file(db: _SqliteStoreDatabase, path: Path) -> bool:
    """A file shorter than its header: damaged only when ``PRAGMA integrity_check`` says so (then
    ``StorageFault`` with the back-up-first advice). Else it is whole through its -wal: write the
    -wal back now; False when there is no room for that yet (it is written back once there is)."""
    refuse_damaged(db, path, "integrity_check")
    return checkpoint(db, path)


def refuse_damaged(db: _SqliteStoreDatabase, path: Path, check: str) -> None:
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


def checkpoint(db: _SqliteStoreDatabase, path: Path) -> bool:
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


def _wal_of(path: Path) -> Path:
    return path.with_name(path.name + "-wal")


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


class _SqliteStoreDatabase(pw.SqliteDatabase):
    """SQLite that checks, on every statement, that the file is still the one it opened (a file
    deleted or replaced under a running app would otherwise swallow every write unseen), and
    turns the file's faults into ``StorageFault``."""

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


class _PgStoreDatabase(pw.PostgresqlDatabase):
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
        """Many rows, ``_CHUNK`` per statement: psycopg2's executemany is one round trip per
        row (100,000 tasks over a LAN would take minutes)."""
        from psycopg2 import Error as DriverError
        from psycopg2.extras import execute_values

        try:
            execute_values(self.cursor(), sql, values, page_size=_CHUNK)  # type: ignore[no-untyped-call]  # unannotated in peewee-stubs
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


_StoreDatabase: TypeAlias = _SqliteStoreDatabase | _PgStoreDatabase


class Store:
    """Synchronous store; each call is a short statement, cheap enough for the event loop."""

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
            self.db: _StoreDatabase = self._connect(str(location))
            database_proxy.initialize(self.db)
            # Times that every process judges (heartbeats, leases, back-offs) come from one
            # clock: a shared store's server's, or this machine's for the local file.
            self._now: Callable[[], float] = now or (
                ServerClock(self._server_time, self.where).now if self.shared else time.time)
            try:
                ensure_schema(self.db, MODELS, SCHEMA_COLUMNS, self.where)
            except BaseException:
                self.db.close()
                raise

    # --- database specific (the one marked place) ------------------------------------------
    def _connect(self, location: str) -> _StoreDatabase:
        if self.shared:
            from playhouse.db_url import parse

            pg = _PgStoreDatabase(self.where, **parse(location, unquote_password=True, unquote_user=True),
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
        db = _SqliteStoreDatabase(
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
        if isinstance(self.db, _SqliteStoreDatabase):
            refuse_damaged(self.db, self.path, "quick_check")

    def check_file(self) -> None:
        """Raise ``StorageFault`` if the database file was deleted or replaced since it was opened."""
        if isinstance(self.db, _SqliteStoreDatabase):
            self.db.check_identity()

    def probe_write(self) -> None:
        """One small real write; raises ``StorageFault`` while the store still refuses writes.

        A small write alone proves little: an update in place fits in pages (or WAL frames) the
        file already has while the disk stays full. So the probe also wants room to grow.

        While another process holds the write lock (stopped mid-write) the probe gives up after
        ``PROBE_BUSY_TIMEOUT_MS``, not the ``BUSY_TIMEOUT_S`` every other write waits: it is
        repeated every few seconds for as long as the lock is held."""
        self.check_file()
        if isinstance(self.db, pw.SqliteDatabase) and not self._has_room_to_grow():
            raise StorageFault(FAULT_FULL, str(self.path),
                               fault_message(FAULT_FULL, self.path, msg("no room to grow")))
        with self._busy_timeout_ms(PROBE_BUSY_TIMEOUT_MS):
            self.set_gate_not_before(PROBE_GATE, self.now())
        if self.wal_pending and isinstance(self.db, _SqliteStoreDatabase):
            self.wal_pending = not checkpoint(self.db, self.path)

    @contextlib.contextmanager
    def _busy_timeout_ms(self, ms: int) -> Iterator[None]:
        """This thread's connection waits ``ms`` for another process's write lock, then the usual."""
        if not isinstance(self.db, pw.SqliteDatabase):  # PostgreSQL has no such wait here
            yield
            return
        self.db.execute_sql(f"PRAGMA busy_timeout = {int(ms)}")
        try:
            yield
        finally:
            self.db.execute_sql(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_S * 1000}")

    def _has_room_to_grow(self) -> bool:
        """Room for ``PROBE_HEADROOM_PAGES`` more pages: on the disk, and under SQLite's own
        ``max_page_count`` (which gives the same 'database or disk is full')."""
        page_size, pages, max_pages = (self.db.execute_sql(f"PRAGMA {name}").fetchone()[0]
                                       for name in ("page_size", "page_count", "max_page_count"))
        try:
            free = shutil.disk_usage(self.path.parent).free
        except OSError:
            return False
        return bool(max_pages - pages >= PROBE_HEADROOM_PAGES and free >= PROBE_HEADROOM_PAGES * page_size)

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

    def _take(self, head: str, params: Sequence[Any], changes: dict[str, Any]) -> list[Task]:
        """Write ``changes`` to the rows ``head`` (a SELECT of seqs) picks, and read them back:
        a claim, inside a write transaction."""
        mark = self.db.param
        assignments = ", ".join(f"{column} = {mark}" for column in changes)
        # No second "state = pending" test on the update: the rows are taken under SQLite's write
        # lock (or locked FOR UPDATE on PostgreSQL), and that test would steer the planner from
        # seq lookups to a scan of every pending row.
        if isinstance(self.db, pw.PostgresqlDatabase):
            # One round trip; the rows are locked, and concurrent claimers skip them.
            return self._tasks(f'UPDATE "task" SET {assignments} WHERE seq IN ({head} FOR UPDATE SKIP LOCKED) '
                               f"RETURNING {_TASK_COLUMNS}", (*changes.values(), *params))
        # SQLite serialises writers, so nothing comes between these statements; the same as one
        # UPDATE ... WHERE seq IN (SELECT ...) RETURNING cost SQLite 2.5x their time.
        seqs = [row[0] for row in self.db.execute_sql(head, params)]
        if not seqs:
            return []
        taken = f"seq IN ({_marks(mark, len(seqs))})"
        self.db.execute_sql(f'UPDATE "task" SET {assignments} WHERE {taken}', (*changes.values(), *seqs))
        return self._tasks(f'SELECT {_TASK_COLUMNS} FROM "task" WHERE {taken}', seqs)

    def _tasks(self, sql: str, params: Sequence[Any]) -> list[Task]:
        """The tasks of a statement that yields every column (``_TASK_COLUMNS``), built without
        peewee's per-query setup of its row reader."""
        return [_task_of(row) for row in self.db.execute_sql(sql, params).fetchall()]

    # ----------------------------------------------------------------------------------------
    def close(self) -> None:
        if not self.db.is_closed():
            self.db.close()

    def now(self) -> float:
        return self._now()

    # --- enqueue ---------------------------------------------------------------------------
    def enqueue(self, batch_id: str, tasks: Sequence[NewTask],
                created_at: float | None = None) -> tuple[list[str], list[str]]:
        """Insert tasks; ids already in the store are skipped, never duplicated.

        ``created_at``: one batch enqueued in several steps keeps one creation time (the window
        groups batches by it). Returns (inserted ids, skipped ids).
        """
        now = self.now() if created_at is None else created_at
        fits = {model: self._recent_fit(model) for model in {item.model for item in tasks}}
        rows: list[dict[str, Any]] = []
        for item in tasks:
            fit = fits[item.model]
            rows.append({
                "task_id": item.task_id or uuid.uuid4().hex[:16],
                "batch_id": batch_id, "model": item.model, "model_kind": item.model_kind,
                "route": item.route, "account": item.account,
                "account_pinned": item.account is not None, "prompt": item.prompt,
                "system_prompt": item.system_prompt,
                "params": json.dumps(item.params, ensure_ascii=False), "priority": item.priority,
                "inputs": json.dumps(item.inputs, ensure_ascii=False), "not_before": item.not_before,
                "source_row": item.row, "group_key": item.group, "parent_id": item.parent_id,
                "remix_of": item.remix_of,
                "cells": json.dumps(item.cells, ensure_ascii=False),
                "expected_s": fit.expected(len(item.prompt)) if fit is not None else 0.0,
                "state": PENDING, "created_at": now, "updated_at": now,
            })
        ids: list[str] = [r["task_id"] for r in rows]
        with self._write_transaction():
            existing = self._existing_ids(ids)
            fresh = [r for r in rows if r["task_id"] not in existing]
            self._insert_rows(fresh)
        inserted = [r["task_id"] for r in fresh]
        return inserted, [i for i in ids if i in existing]

    def _insert_rows(self, rows: list[dict[str, Any]]) -> None:
        """executemany over one prepared INSERT: peewee's insert_many spends ~0.1 ms per row
        building SQL, which is most of the cost of importing 100,000 tasks."""
        if not rows:
            return
        defaults = {f.column_name: f.default for f in Task._meta.sorted_fields
                     if f.default is not None and f.column_name not in rows[0]}
        columns = list(rows[0]) + list(defaults)
        values = [tuple({**row, **defaults}[c] for c in columns) for row in rows]
        insert = f'INSERT INTO "task" ({", ".join(columns)}) VALUES {{}} ON CONFLICT (task_id) DO NOTHING'
        if isinstance(self.db, _PgStoreDatabase):
            self.db.insert_values(insert.format("%s"), values)
            return
        marks = ", ".join([self.db.param] * len(columns))
        with faults_as_storage(self.path):  # a raw cursor: peewee's translation is bypassed here
            self.db.cursor().executemany(insert.format(f"({marks})"), values)  # type: ignore[no-untyped-call]  # unannotated in peewee-stubs

    def duration_fit(self, model: str) -> DurationFit | None:
        """The line of a model's expected durations against its prompts' lengths, fitted to its
        latest successes (core/order.py); None when none is recorded."""
        samples = (Task.select(pw.fn.LENGTH(Task.prompt), Task.finished_at - Task.started_at)
                   .where((Task.model == model) & (Task.state == SUCCESS) & Task.started_at.is_null(False)
                          & Task.finished_at.is_null(False))
                   .order_by(Task.seq.desc()).limit(HISTORY_SAMPLES))
        # cast: peewee-stubs type a tuples() query's rows as model instances
        rows = cast(Iterable[tuple[int | None, float]], samples.tuples())
        return fit_durations([(int(chars or 0), float(seconds)) for chars, seconds in rows])

    def _recent_fit(self, model: str) -> DurationFit | None:
        """``duration_fit``, read again at most every FIT_TTL_S (a model with no record costs a
        scan of the task table: no index leads with the model)."""
        read_at, fit = self._fits.get(model, (-FIT_TTL_S, None))
        if time.monotonic() - read_at >= FIT_TTL_S:
            fit = self.duration_fit(model)
            self._fits[model] = (time.monotonic(), fit)
        return fit

    def refresh_expected(self, model: str) -> None:
        """Set the model's pending tasks' expected durations from its latest record."""
        fit = self.duration_fit(model)
        self._fits[model] = (time.monotonic(), fit)
        if fit is not None:  # base_s >= MIN_EXPECTED_S and per_char_s >= 0: as ``fit.expected``
            (Task.update(expected_s=pw.fn.LENGTH(Task.prompt) * fit.per_char_s + fit.base_s)
             .where((Task.model == model) & (Task.state == PENDING)).execute())

    def _existing_ids(self, ids: list[str]) -> set[str]:
        # Plain SQL: peewee spends ~80 us per value building an IN list, 20x SQLite's lookup.
        found: set[str] = set()
        for start in range(0, len(ids), _CHUNK):
            chunk = ids[start:start + _CHUNK]
            marks = ", ".join([self.db.param] * len(chunk))
            rows = self.db.execute_sql(f'SELECT task_id FROM "task" WHERE task_id IN ({marks})', chunk)
            found.update(r[0] for r in rows)
        return found

    # --- claim and run ---------------------------------------------------------------------
    def claim(self, route: str, owner: str, limit: int = 1, account: str | None = None,
              batch_ids: Sequence[str] | None = None, lane_limit: int | None = None,
              skip_batches: Sequence[str] = (), order: str = "fifo", key: str | None = None) -> list[Task]:
        """Atomically move up to ``limit`` due pending tasks of a route to running.

        Order: higher priority first, then by ``order`` (core/order.py): ``fifo``; ``longest``
        expected first, the unknown after them in FIFO order; ``fair``: batches round-robin, the
        batch running fewest tasks on the route first, FIFO within each. For web routes
        ``account`` is the free account; tasks pinned to another account are not taken.
        ``batch_ids`` restricts the claim to those batches. With ``lane_limit`` the route's running
        rows -- whichever process runs them -- and its pending rows with a remote id (a remote task
        still at the service) are counted in the same transaction, and at most ``lane_limit`` minus
        those new tasks are taken; pending rows with a remote id are taken first, from any batch.
        ``skip_batches`` leaves those batches' new tasks out.

        ``key``: the claim is for one key of the route's provider (its label): the limit counts
        that key's rows, the claimed rows name it, and rows another key holds (a remote task it
        created, pending again) are left to that key -- a service knows a task by its key only.
        """
        if limit <= 0:
            return []
        holder = account if account is not None else key
        if lane_limit is None:
            return self._claim_in_order(route, owner, limit, holder, batch_ids, None, skip_batches, order)
        with self._lane_lock(route if key is None else f"{route}/{key}"):
            holding = self._holding(route, key)
            # A remote task whose process died or stopped runs on at the service: its row holds
            # its slot until it ends, and any process may take it (its slot is counted already),
            # whichever batch it belongs to. So does a create whose reply nobody read (its
            # process died, the reply was lost), for as long as such a task could run.
            # New work gets only what the limit leaves.
            # Only when there are any: looking for none walked the whole queue in claim order.
            resumed = self._claim(route, owner, limit, holder, None, remote=True) if holding.remote else []
            fresh = self._claim_in_order(route, owner, min(limit - len(resumed), lane_limit - holding.total), holder,
                                         batch_ids, False, skip_batches, order)
            return resumed + fresh

    def _holding(self, route: str, key: str | None) -> Holding:
        """What holds the slots of a route (or of one key of it): its running rows, its pending
        rows with a remote task, and creates sent with no reply read."""
        # Plain SQL: peewee's query building would cost more than the count itself.
        mark = self.db.param
        of_key = f" AND account = {mark}" if key is not None else ""
        keyed = (key,) if key is not None else ()
        # Three counts, each on an index of its own (a single OR walked every row of the route).
        running, remote, unread = self.db.execute_sql(
            f'SELECT (SELECT COUNT(*) FROM "task" WHERE route = {mark}{of_key} AND state = {mark}), '
            f'(SELECT COUNT(*) FROM "task" WHERE route = {mark}{of_key} AND state = {mark} '
            'AND remote_id IS NOT NULL), '
            # "|| ''" keeps the planner on create_hold_until's index (few rows), off the route's
            f'(SELECT COUNT(*) FROM "task" WHERE create_hold_until > {mark} AND route || \'\' = {mark}{of_key} '
            f'AND state <> {mark} AND remote_id IS NULL)',
            (route, *keyed, RUNNING, route, *keyed, PENDING, self.now(), route, *keyed, RUNNING)).fetchone()
        return Holding(running, remote, unread)

    def _claim_in_order(self, route: str, owner: str, limit: int, account: str | None,
                        batch_ids: Sequence[str] | None, remote: bool | None, skip_batches: Sequence[str],
                        order: str) -> list[Task]:
        if order != "fair" or limit <= 0:
            return self._claim(route, owner, limit, account, batch_ids, remote, skip_batches, order)
        # Fair: how many each batch gets (core/order.py), then each batch's head, FIFO.
        now = self.now()
        waiting = self._waiting_batches(route) if batch_ids is None else list(batch_ids)
        queues = [queue for batch in waiting if batch not in skip_batches
                  for queue in self._batch_queues(self._due(route, now, account, [batch], remote, ()), limit)]
        busy = (Task.select(Task.batch_id, pw.fn.COUNT(Task.seq))
                .where((Task.route == route) & (Task.state == RUNNING)).group_by(Task.batch_id))
        # cast: peewee-stubs type a tuples() query's rows as model instances
        running = dict(cast(Iterable[tuple[str, int]], busy.tuples()))
        claimed: list[Task] = []
        for batch, share in fair_shares(queues, running, limit).items():
            claimed += self._claim(route, owner, share, account, [batch], remote, (), "fifo")
        return claimed

    def _waiting_batches(self, route: str) -> list[str]:
        """The batches with pending rows on ``route``: one step of task_route_batches per batch
        (a loose index scan), however many rows each has."""
        mark = self.db.param
        rows = self.db.execute_sql(
            'WITH RECURSIVE waiting(batch_id) AS ('
            f'SELECT MIN(batch_id) FROM "task" WHERE route = {mark} AND state = {mark} '
            f'UNION ALL SELECT (SELECT MIN(batch_id) FROM "task" WHERE route = {mark} AND state = {mark} '
            'AND batch_id > waiting.batch_id) FROM waiting WHERE waiting.batch_id IS NOT NULL) '
            'SELECT batch_id FROM waiting WHERE batch_id IS NOT NULL', (route, PENDING, route, PENDING))
        return [row[0] for row in rows]

    @staticmethod
    def _batch_queues(due: pw.SQL, limit: int) -> list[BatchQueue]:
        """One batch's due rows per priority, counted up to ``limit`` in claim order: no batch
        gets more than ``limit`` slots, so ``fair_shares`` needs no more (a batch's lower
        priority is reached only when its higher one has fewer)."""
        # cast: peewee-stubs type a tuples() query's rows as model instances
        rows = cast(Iterable[tuple[str, int, int]], Task.select(Task.batch_id, Task.priority, Task.seq).where(due)
                    .order_by(Task.priority.desc(), Task.seq).limit(limit).tuples())
        queues: list[BatchQueue] = []
        for batch, priority, seq in rows:
            if queues and queues[-1].priority == priority:
                queues[-1] = BatchQueue(batch, priority, queues[-1].pending + 1, queues[-1].head_seq)
            else:
                queues.append(BatchQueue(batch, priority, 1, seq))
        return queues

    def _due(self, route: str, now: float, account: str | None, batch_ids: Sequence[str] | None,
             remote: bool | None, skip_batches: Sequence[str]) -> pw.SQL:
        """The route's pending rows that may start now (for ``account``, of ``batch_ids``), as
        plain SQL over the unaliased task table (peewee's building of it cost more than the claim)."""
        mark = self.db.param
        # "+ 0" keeps the planner off the (state, not_before) index: the claim must walk
        # task_claim_order, or every claim sorts the whole queue.
        where = [f"route = {mark} AND state = {mark} AND not_before + 0 <= {mark}"]
        params: list[Any] = [route, PENDING, now]
        if batch_ids is not None:
            where.append(f"batch_id IN ({_marks(mark, len(batch_ids))})" if batch_ids else "0 = 1")
            params += batch_ids
        if remote is not None:
            where.append("remote_id IS NOT NULL" if remote else "remote_id IS NULL")
        if skip_batches:
            where.append(f"batch_id NOT IN ({_marks(mark, len(skip_batches))})")
            params += skip_batches
        if account is not None:
            # A web account runs one task at a time (a key's limit is counted by ``claim``).
            where.append(f"(account IS NULL OR account = {mark}) AND NOT EXISTS (SELECT busy.seq FROM "
                         f'"task" AS busy WHERE busy.account = {mark} AND busy.state = {mark} '
                         f"AND busy.model_kind = {mark})")
            params += [account, account, RUNNING, "web"]
        return pw.SQL(" AND ".join(where), params)

    def _claim(self, route: str, owner: str, limit: int, account: str | None,
               batch_ids: Sequence[str] | None, remote: bool | None = None,
               skip_batches: Sequence[str] = (), order: str = "fifo") -> list[Task]:
        """``remote``: only rows with a saved remote id (True), only rows without one (False).
        ``order``: ``fifo`` or ``longest`` (``fair`` is ``_claim_in_order``'s)."""
        if limit <= 0:
            return []
        now = self.now()
        due = self._due(route, now, account, batch_ids, remote, skip_batches)
        # ``longest`` sorts the route's due rows (no index has the expected duration): a web
        # lane's claim starts a task of minutes.
        ordering = "priority DESC, expected_s DESC, seq" if order == "longest" else "priority DESC, seq"
        changes = {"state": RUNNING, "owner": owner, "host": owner_host(owner), "started_at": now,
                   "heartbeat_at": now, "finished_at": None, "updated_at": now}
        if account is not None:
            changes["account"] = account
        head = f'SELECT seq FROM "task" WHERE {due.sql} ORDER BY {ordering} LIMIT {int(limit)}'
        try:
            with self._write_transaction():
                claimed = self._take(head, due.params, changes)
        except pw.IntegrityError:  # another process took this account's one slot first
            return []
        return sorted(claimed, key=lambda t: order_key(order, t.priority, t.expected_s, t.seq))

    # --- money: reservations and settlements (core.money) -------------------------------------
    def claim_within_budget(self, request: ClaimRequest, owner: str, batch_ids: Sequence[str] | None,
                            plan: Callable[[Task], Reservation | None], day: str,
                            ) -> tuple[list[Task], BudgetStop | None, dict[str, BudgetStop]]:
        """``claim``, and in the same transaction each claimed attempt's estimate reserved
        against every budget that covers it (``plan`` says which). The first task that does
        not fit goes back to the head of its queue with those behind it. When it broke its
        batch's budget, that batch is left out and the claim goes on with the others (the
        batch's stop is returned by batch id); any other budget stops the lane (its stop is
        returned). Budgets are summed from the spend rows under one store-wide lock (SQLite's
        write lock; a PostgreSQL advisory lock), so two processes or machines never both spend
        the last of a budget. Returns (the tasks claimed, the lane's stop, the batches' stops)."""
        taken: list[Task] = []
        batch_stops: dict[str, BudgetStop] = {}
        spent: dict[Limit, Decimal] = {}
        with self._budget_lock():
            while len(taken) < request.count:
                claimed = self.claim(request.route, owner, request.count - len(taken), request.account, batch_ids,
                                     request.lane_limit, skip_batches=list(batch_stops), order=request.order,
                                     key=request.key)
                stop, fitted = self._reserve_in_turn(claimed, plan, day, spent)
                taken += fitted
                if stop is None:
                    return taken, None, batch_stops
                if stop.limit.scope != "batch":
                    return taken, stop, batch_stops
                batch_stops[stop.limit.key] = stop
        return taken, None, batch_stops

    def _reserve_in_turn(self, claimed: list[Task], plan: Callable[[Task], Reservation | None], day: str,
                         spent: dict[Limit, Decimal]) -> tuple[BudgetStop | None, list[Task]]:
        """Reserve for each claimed task in order; the first that does not fit goes back to the
        queue with the tasks behind it. (its stop or None, the tasks that fitted)"""
        for index, task in enumerate(claimed):
            reservation = plan(task)
            if reservation is None:
                continue
            # A task that resumes a remote task was paid for when it was created: never held back.
            stop = None if task.remote_id else self._exceeded(reservation, spent)
            if stop is not None:
                for back in claimed[index:]:
                    self.release(back)
                return stop, claimed[:index]
            self._reserve(task, reservation, day)
            for covered in reservation.limits:
                # A sum not read yet is read later from the store, which has this reservation.
                if covered in spent and covered.cap.currency == reservation.estimate.currency:
                    spent[covered] += reservation.estimate.amount
        return None, claimed

    @contextlib.contextmanager
    def _budget_lock(self) -> Iterator[None]:
        if isinstance(self.db, pw.PostgresqlDatabase):
            with self.db.atomic():
                self.db.execute_sql("SELECT pg_advisory_xact_lock(hashtext(%s))", (BUDGET_LOCK,))
                yield
            return
        with self._write_transaction():  # SQLite: one writer at a time holds it already
            yield

    def _exceeded(self, reservation: Reservation, spent: dict[Limit, Decimal]) -> BudgetStop | None:
        needed = reservation.estimate
        for covered in reservation.limits:
            if covered.cap.currency != needed.currency:
                continue
            if covered not in spent:
                spent[covered] = self._spent_in(covered)
            if spent[covered] + needed.amount > covered.cap.amount:
                return BudgetStop(covered, Money(spent[covered], needed.currency), needed)
        return None

    def _spent_in(self, covered: Limit) -> Decimal:
        """What is spent (reserved and settled) in a budget's scope: its running total; for a
        balance, the route's spend since the balance was read."""
        currency = covered.cap.currency
        if covered.scope == "balance":
            where = ((Spend.route == covered.key) & (Spend.currency == currency)
                     & (Spend.created_at >= covered.since))
            micros = Spend.select(pw.fn.COALESCE(pw.fn.SUM(Spend.amount), 0)).where(where).scalar()
        else:
            key = f"{covered.key}|{covered.day}" if covered.scope == "provider" else covered.key
            micros = (SpendTotal.select(SpendTotal.amount)
                      .where(SpendTotal.name == total_name(covered.scope, key, currency)).scalar())
        return from_micros(int(micros or 0))

    def _count(self, row: Spend, delta: int) -> None:
        """Add ``delta`` micro-units to the running totals ``row`` counts in."""
        if not delta:
            return
        for name in row.total_names:
            (SpendTotal.insert(name=name, amount=delta)
             .on_conflict(conflict_target=[SpendTotal.name], update={SpendTotal.amount: SpendTotal.amount + delta})
             .execute())

    def _reserve(self, task: Task, reservation: Reservation, day: str) -> None:
        table = reservation.table_estimate
        micros = to_micros(reservation.estimate.amount)
        row = Spend(task_id=task.task_id, attempt=task.attempt, batch_id=task.batch_id, route=task.route,
                    model=task.model, day=day, currency=reservation.estimate.currency, amount=micros,
                    estimate=micros, table_estimate=to_micros(table.amount) if table is not None else None,
                    state=SPEND_RESERVED, source=SOURCE_ESTIMATE, created_at=self.now())
        with self.db.atomic():
            row.save(force_insert=True)
            self._count(row, micros)

    def reserve(self, task: Task, reservation: Reservation, day: str) -> None:
        """Record an attempt's estimate with no budget to check (no lock needed)."""
        self._reserve(task, reservation, day)

    def settle_spend(self, task: Task, cost: Money | None, source: str, produced: Produced | None,
                     day: str) -> None:
        """The attempt ended having spent ``cost`` (None: unknown, so its reservation stands as
        its cost). Replaces the attempt's reservation; with none, records the cost alone."""
        now = self.now()
        produced_json = json.dumps(produced.to_json()) if produced is not None else None
        with self.db.atomic():
            # The window's change sweep reads task.updated_at: the row shows its cost at once.
            Task.update(updated_at=now).where(Task.task_id == task.task_id).execute()
            reserved = self._reserved_rows(task)
            same = next((r for r in reserved if cost is None or r.currency == cost.currency), None)
            for other in reserved:
                if other is not same:  # reserved in another currency than the cost came in
                    self._drop(other)
            row = same or Spend(task_id=task.task_id, attempt=task.attempt, batch_id=task.batch_id,
                                route=task.route, model=task.model, day=day, currency=cost.currency if cost else "",
                                amount=0, created_at=now)
            if cost is None and same is None:
                return  # nothing reserved, nothing known: nothing to record
            new_micros = to_micros(cost.amount) if cost is not None else row.amount
            self._count(row, new_micros - row.amount)
            row.amount, row.state, row.settled_at, row.produced = new_micros, SPEND_SETTLED, now, produced_json
            if cost is not None:
                row.source = source
            row.save(force_insert=same is None)

    def _reserved_rows(self, task: Task) -> list[Spend]:
        return list(Spend.select().where((Spend.task_id == task.task_id) & (Spend.attempt == task.attempt)
                                         & (Spend.state == SPEND_RESERVED)))

    def _drop(self, row: Spend) -> None:
        self._count(row, -row.amount)
        Spend.delete().where(Spend.id == row.id).execute()

    def has_reservations(self) -> bool:
        """Some attempt, of any process on the store, holds money it has not settled yet."""
        return bool(Spend.select().where(Spend.state == SPEND_RESERVED).exists())

    def release_spend(self, task: Task) -> None:
        """The attempt spent nothing (it failed or went back to the queue before any charge)."""
        with self.db.atomic():
            for row in self._reserved_rows(task):
                self._drop(row)

    def spend_totals(self, day: str | None = None, batch_ids: Iterable[str] | None = None,
                     route: str | None = None, settled_only: bool = False) -> Totals:
        where: pw.Expression = Spend.id > 0
        if day is not None:
            where &= Spend.day == day
        if batch_ids is not None:
            where &= Spend.batch_id.in_(list(batch_ids))
        if route is not None:
            where &= Spend.route == route
        if settled_only:
            where &= Spend.state == SPEND_SETTLED
        query = (Spend.select(Spend.currency, pw.fn.SUM(Spend.amount)).where(where).group_by(Spend.currency))
        rows = cast(Iterable[tuple[str, int]], query.tuples())
        return Totals(Money(from_micros(int(micros)), currency) for currency, micros in rows)

    def spend_by_route(self, day: str) -> dict[str, Totals]:
        query = (Spend.select(Spend.route, Spend.currency, pw.fn.SUM(Spend.amount)).where(Spend.day == day)
                 .group_by(Spend.route, Spend.currency))
        by_route: dict[str, Totals] = {}
        for route, currency, micros in cast(Iterable[tuple[str, str, int]], query.tuples()):
            by_route.setdefault(route, Totals()).add(Money(from_micros(int(micros)), currency))
        return by_route

    def batch_estimates(self, batch_ids: Iterable[str]) -> Totals:
        """What was reserved for the batches' attempts: the estimate to set beside the actual."""
        query = (Spend.select(Spend.currency, pw.fn.SUM(Spend.estimate))
                 .where(Spend.batch_id.in_(list(batch_ids)) & Spend.estimate.is_null(False))
                 .group_by(Spend.currency))
        rows = cast(Iterable[tuple[str, int]], query.tuples())
        return Totals(Money(from_micros(int(micros)), currency) for currency, micros in rows)

    def task_spend(self, task_ids: Iterable[str]) -> dict[str, list[Spend]]:
        """{task_id: its spend rows, oldest first} (every attempt's)."""
        ids = list(task_ids)
        found: dict[str, list[Spend]] = {}
        for start in range(0, len(ids), _CHUNK):
            query = Spend.select().where(Spend.task_id.in_(ids[start:start + _CHUNK])).order_by(Spend.id)
            for row in query:
                found.setdefault(row.task_id, []).append(row)
        return found

    def model_history(self, model: str, tasks: int = HISTORY_TASKS) -> History:
        """What the model's latest settled tasks produced and cost (core.money.History)."""
        rows = list(Spend.select().where((Spend.model == model) & (Spend.state == SPEND_SETTLED)
                                         & (Spend.source != SOURCE_ESTIMATE))
                    .order_by(Spend.id.desc()).limit(tasks))
        history = History(tasks=len(rows))
        if not rows:
            return history
        produced = [Produced.from_json(json.loads(r.produced)) for r in rows if r.produced]
        if produced:
            count = Decimal(len(produced))
            history.output_tokens = sum((Decimal(p.output_tokens) for p in produced), Decimal(0)) / count
            history.images = sum((Decimal(p.images) for p in produced), Decimal(0)) / count
            history.seconds = sum((p.seconds for p in produced), Decimal(0)) / count
            history.megapixels = sum((p.megapixels for p in produced), Decimal(0)) / count
        for currency in {r.currency for r in rows}:
            mine = [r for r in rows if r.currency == currency]
            history.actual_per_task[currency] = from_micros(sum(r.amount for r in mine)) / len(mine)
            told = [r for r in mine if r.source == SOURCE_PROVIDER and r.table_estimate]
            if told:
                history.correction[currency] = (Decimal(sum(r.amount for r in told))
                                                / Decimal(sum(r.table_estimate or 0 for r in told)))
        return history

    def heartbeat(self, task_ids: Iterable[str], owner: str) -> None:
        ids = list(task_ids)
        now = self.now()
        for start in range(0, len(ids), _CHUNK):
            (Task.update(heartbeat_at=now)
             .where(Task.task_id.in_(ids[start:start + _CHUNK]) & (Task.state == RUNNING)
                    & (Task.owner == owner))
             .execute())

    def save_remote_id(self, task: Task, remote_id: str) -> bool:
        """Persist the provider's id for this task before anything else happens to it.

        Saved whoever owns the row now: a remote task that really exists must never be lost,
        even when this attempt was reaped meanwhile (its retry then polls it, never re-creates).
        False when the row already holds a *different* remote id: another attempt created one
        first, and the caller's remote task is the extra one (it must cancel it).
        """
        updated = (Task.update(remote_id=remote_id, create_hold_until=None, updated_at=self.now())
                   .where((Task.task_id == task.task_id) & Task.remote_id.is_null()).execute())
        if updated != 1 and self.remote_id_of(task.task_id) != remote_id:
            return False
        task.remote_id = remote_id
        return True

    def hold_create(self, task: Task, hold_s: float) -> None:
        """A create is about to be sent: until its reply is read (``save_remote_id``, or
        ``release_create`` when nothing was created) the row holds a slot of its route for
        ``hold_s`` -- and a later attempt must not send it again blindly (``Task.create_unresolved``)."""
        (Task.update(create_hold_until=self.now() + hold_s)
         .where((Task.task_id == task.task_id) & Task.remote_id.is_null()).execute())

    def release_create(self, task: Task) -> None:
        """The create was answered "nothing created" (refused, full, never sent)."""
        Task.update(create_hold_until=None).where(Task.task_id == task.task_id).execute()

    def remote_id_of(self, task_id: str) -> str | None:
        """The row's remote id now, whoever saved it (read at the last moment before a create)."""
        remote_id: str | None = Task.select(Task.remote_id).where(Task.task_id == task_id).scalar()
        return remote_id

    def save_upload(self, task: Task, key: str, name: str, uploaded_at: float | None = None) -> None:
        """Record one finished upload (``key`` = ``provider:sha256``) at once; ``uploaded_at``: an
        upload made earlier for another task, taken over with its own age (it expires as one).

        Written whoever owns the row now, like ``save_remote_id``: a file really uploaded must not
        be uploaded (and paid for) again by a retry -- nor by another task with the same file
        (``upload_of``). The no-op UPDATE first takes the row's write lock, so two writers cannot
        each merge into a stale copy and drop the other's record.
        """
        record = {"name": name, "at": self.now() if uploaded_at is None else uploaded_at}
        with self.db.atomic():
            (Upload.insert(key=key, name=name, uploaded_at=record["at"])
             .on_conflict(conflict_target=[Upload.key],
                          update={Upload.name: name, Upload.uploaded_at: record["at"]}).execute())
            Task.update(updated_at=self.now()).where(Task.task_id == task.task_id).execute()
            current = Task.get_or_none(Task.task_id == task.task_id)
            uploads = current.uploads_dict if current is not None else {}
            uploads[key] = record
            text = json.dumps(uploads, ensure_ascii=False)
            Task.update(uploads=text).where(Task.task_id == task.task_id).execute()
        task.uploads = text

    def upload_of(self, key: str) -> dict[str, Any] | None:
        """The latest upload of a file to a provider by any task (``{"name", "at"}``), or None."""
        row = Upload.get_or_none(Upload.key == key)
        return None if row is None else {"name": row.name, "at": row.uploaded_at}

    def started_since(self, since: float, lanes: Sequence[tuple[str, str | None]]) -> dict[tuple[str, str | None], int]:
        """{(route, holder): tasks started since ``since``} for lanes given as (route, the account
        or key whose rows are counted, or None for the whole route): a daily limit's count. A row
        counts once however often it was tried; a task handed back unstarted does not count."""
        counts: dict[tuple[str, str | None], int] = {}
        for route, holder in lanes:
            started = (Task.route == route) & (Task.started_at >= since)
            if holder is not None:
                started &= Task.account == holder
            counts[(route, holder)] = Task.select().where(started).count()
        return counts

    def running_needing_attention(self, stall_cutoff: float) -> tuple[set[str], bool]:
        """The running rows flagged for cancel (their ids) and whether any running row's heartbeat
        is older than ``stall_cutoff``: the scheduler's frequent check, one indexed query that
        reads only the running rows (plain SQL: peewee's query building would cost more)."""
        mark = self.db.param
        rows = self.db.execute_sql(
            f'SELECT task_id, cancel_requested, heartbeat_at < {mark} FROM "task" WHERE state = {mark} '
            f'AND (cancel_requested = {mark} OR heartbeat_at < {mark})',
            (stall_cutoff, RUNNING, True, stall_cutoff)).fetchall()
        flagged = {task_id for task_id, cancel_requested, _stalled in rows if cancel_requested}
        return flagged, any(stalled for _id, _flag, stalled in rows)

    def cancel_requested_among(self, task_ids: Iterable[str]) -> set[str]:
        ids = list(task_ids)
        found: set[str] = set()
        for start in range(0, len(ids), _CHUNK):
            found.update(t.task_id for t in Task.select(Task.task_id).where(
                Task.task_id.in_(ids[start:start + _CHUNK]) & (Task.cancel_requested == True)))  # noqa: E712
        return found

    # --- finishing an attempt --------------------------------------------------------------
    def finish_success(self, task: Task, result_text: Message | str | None, files: list[str],
                       usage: dict[str, int] | None = None, outputs: Sequence[OutputFile] = ()) -> bool:
        """End the attempt as success and upsert its result (and its output files' records, which
        replace an earlier result's). False if the attempt lost the row.
        ``result_text``: the answer, or a provider's summary of what it made (a message)."""
        now = self.now()
        # a server may echo the key in its answer
        text = redact(str(result_text)) if result_text is not None else None
        text_message = _stored_json(result_text)
        usage_json = json.dumps(usage) if usage else None
        files_json = json.dumps(files, ensure_ascii=False)
        mark = self.db.param
        with self.db.atomic():
            if not self._end_attempt(task, {"state": SUCCESS, "finished_at": now, "updated_at": now,
                                            "error_kind": None, "error": None, "error_message": None}):
                return False
            self.db.execute_sql(
                f'INSERT INTO "result" (task_id, text, text_message, files, usage, written_at) VALUES '
                f"({_marks(mark, 6)}) ON CONFLICT (task_id) DO UPDATE SET text = excluded.text, "
                "text_message = excluded.text_message, files = excluded.files, usage = excluded.usage, "
                "written_at = excluded.written_at",
                (task.task_id, text, text_message, files_json, usage_json, now))
            self.db.execute_sql(f'DELETE FROM "output" WHERE task_id = {mark}', (task.task_id,))
            if outputs:
                Output.insert_many([{"task_id": task.task_id, "n": o.n, "path": o.path, "bytes": o.bytes,
                                     "sha256": o.sha256, "media": o.media, "width": o.width, "height": o.height,
                                     "duration_s": o.duration_s} for o in outputs]).execute()
        if task.model_kind == "web":
            # A web lane orders its queue by these (``longest``); a web task takes minutes. The
            # success is written: a refresh the database refuses now waits for the next one.
            try:
                self.refresh_expected(task.model)
            except pw.OperationalError as exc:
                log.warning("expected durations of %s not refreshed: %s", task.model, exc)
        return True

    # --- output files ------------------------------------------------------------------------
    def outputs_of(self, task_ids: Iterable[str]) -> dict[str, list[Output]]:
        """{task_id: its output files in order} for these tasks (those without any are left out)."""
        ids = list(task_ids)
        found: dict[str, list[Output]] = {}
        for start in range(0, len(ids), _CHUNK):
            query = (Output.select().where(Output.task_id.in_(ids[start:start + _CHUNK]))
                     .order_by(Output.task_id, Output.n))
            for output in query:
                found.setdefault(output.task_id, []).append(output)
        return found

    def set_picked(self, task_id: str, n: int | None, picked: bool) -> int:
        """Mark (or unmark) output ``n`` of a task -- every output of it when ``n`` is None; how many changed."""
        scope = Output.task_id == task_id
        if n is not None:
            scope &= Output.n == n
        changed: int = Output.update(picked=picked).where(scope).execute()
        if changed:
            Task.update(updated_at=self.now()).where(Task.task_id == task_id).execute()  # the window's sweep sees it
        return changed

    def finish_failure(self, task: Task, kind: ErrorKind, message: Message | str, retry_at: float | None,
                       crashed: bool = False) -> str | None:
        """End the attempt as failed; with ``retry_at`` the same row goes back to pending.

        ``crashed``: the attempt was lost because the process running it died; the retry draws on
        the crash budget (``crash_retries_left``), not on the task's own retries.
        Returns the new state, or None if the attempt no longer owned the row.
        """
        now = self.now()
        budget = "crash_retries_left" if crashed else "retries_left"
        retry = retry_at is not None and (task.crash_retries_left if crashed else task.retries_left) > 0
        changes: dict[str, Any] = {"error_kind": kind.value, "error": redact(str(message)),
                                   "error_message": _stored_json(message), "updated_at": now, "owner": None}
        if retry:
            changes.update({"state": PENDING, "attempt": pw.SQL("attempt + 1"), budget: pw.SQL(f"{budget} - 1"),
                            "not_before": retry_at, "finished_at": None, "account": _holder_kept(_HOLDS_REMOTE)})
        else:
            changes.update({"state": FAILED, "finished_at": now})
        if not self._end_attempt(task, changes):
            return None
        # The caller's row shows what was written: the scheduler's listeners (the tray's failure
        # notice) read the kind from it, and a first attempt's row had none.
        task.error_kind, task.error = kind.value, redact(str(message))
        return PENDING if retry else FAILED

    def _end_attempt(self, task: Task, changes: dict[str, Any]) -> bool:
        """Write ``changes`` ({column: value, or an SQL expression}) to the attempt's row if it is
        still this attempt's (plain SQL: peewee's building cost more than the update); False if
        the attempt lost the row."""
        mark = self.db.param
        assignments: list[str] = []
        params: list[Any] = []
        for column, value in changes.items():
            if isinstance(value, pw.SQL):
                assignments.append(f"{column} = {value.sql}")
                params += value.params or ()
            else:
                assignments.append(f"{column} = {mark}")
                params.append(value)
        attempt_is = _attempt_is(task, mark)
        cursor = self.db.execute_sql(f'UPDATE "task" SET {", ".join(assignments)} WHERE {attempt_is.sql}',
                                     (*params, *attempt_is.params))
        return bool(cursor.rowcount == 1)

    def finish_canceled(self, task: Task, message: Message | str = CANCELED_BY_OPERATOR) -> bool:
        now = self.now()
        return self._end_attempt(task, {"state": CANCELED, "finished_at": now, "updated_at": now, "owner": None,
                                        "error_kind": ErrorKind.CANCELED.value, "error": redact(str(message)),
                                        "error_message": _stored_json(message)})

    def release(self, task: Task) -> bool:
        """Give a claimed task back to the head of its queue, not counted as an attempt."""
        now = self.now()
        changes: dict[Any, Any] = {Task.state: PENDING, Task.owner: None, Task.started_at: None,
                                   Task.heartbeat_at: None, Task.updated_at: now,
                                   Task.account: _holder_kept(_HOLDS_REMOTE)}
        updated: int = Task.update(changes).where(_attempt_is(task, self.db.param)).execute()
        return updated == 1

    # --- recovery --------------------------------------------------------------------------
    def stalled(self, cutoff: float) -> list[Task]:
        """Running rows whose heartbeat is older than ``cutoff``."""
        return list(Task.select().where((Task.state == RUNNING) & (Task.heartbeat_at < cutoff)))

    def running_owners(self) -> set[str]:
        return {t.owner for t in Task.select(Task.owner).where(Task.state == RUNNING).distinct()
                if t.owner}

    def running_of_owner(self, owner: str) -> list[Task]:
        return list(Task.select().where((Task.state == RUNNING) & (Task.owner == owner)))

    # --- presence: the processes at work on this store -------------------------------------
    def announce(self, owner: str, batch_ids: Sequence[str] | None = None) -> None:
        """``owner`` is at work now, on every batch or only on ``batch_ids`` (call it with every
        heartbeat)."""
        now = self.now()
        batches = None if batch_ids is None else json.dumps(sorted(batch_ids))
        (Presence.insert(owner=owner, host=owner_host(owner) or host_id(), beat_at=now, batches=batches)
         .on_conflict(conflict_target=[Presence.owner],
                      update={Presence.beat_at: now, Presence.batches: batches}).execute())

    def silent_owners(self, owners: Iterable[str], cutoff: float) -> set[str]:
        """Those of ``owners`` whose presence row was last renewed before ``cutoff`` (a process
        that withdrew, or never announced, has no row and is not among them)."""
        wanted = list(owners)
        if not wanted:
            return set()
        query = Presence.select(Presence.owner).where(Presence.owner.in_(wanted) & (Presence.beat_at < cutoff))
        return {row.owner for row in query}

    def withdraw(self, owner: str) -> None:
        Presence.delete().where(Presence.owner == owner).execute()

    def forget_long_absent(self) -> None:
        """Drop the rows of processes that died without withdrawing, a day on: only clutter."""
        Presence.delete().where(Presence.beat_at < self.now() - FORGET_ABSENT_S).execute()

    def hosts_present(self, cutoff: float, batch_ids: Iterable[str] | None = None) -> dict[str, int]:
        """{machine: processes} with a heartbeat newer than ``cutoff`` -- only the processes that
        take work of one of ``batch_ids``, when given."""
        wanted = None if batch_ids is None else set(batch_ids)
        present: dict[str, int] = {}
        for row in Presence.select().where(Presence.beat_at >= cutoff).order_by(Presence.host):
            if wanted is None or row.batches is None or wanted & set(json.loads(row.batches)):
                present[row.host] = present.get(row.host, 0) + 1
        return present

    # --- operator actions ------------------------------------------------------------------
    def cancel(self, task_ids: Iterable[str] | None = None, batch_id: str | None = None) -> dict[str, int]:
        """Pending → canceled at once; running → cancel_requested (the lane writes the end)."""
        scope = _scope(task_ids, batch_id)
        now = self.now()
        with self.db.atomic():
            canceled = (Task.update(state=CANCELED, finished_at=now, updated_at=now,
                                    error_kind=ErrorKind.CANCELED.value, error=str(CANCELED_BEFORE_IT_RAN),
                                    error_message=CANCELED_BEFORE_IT_RAN.to_json())
                        .where(scope & (Task.state == PENDING)).execute())
            flagged = (Task.update(cancel_requested=True, updated_at=now)
                       .where(scope & (Task.state == RUNNING)).execute())
        return {"canceled": canceled, "cancel_requested": flagged}

    def retry(self, task_ids: Iterable[str] | None = None, batch_id: str | None = None,
              all_failed: bool = False) -> int:
        """A fresh try on the same row (attempt + 1, pending): failed or canceled tasks of a
        batch or of the whole store (``all_failed``: failed only); tasks named by id may also be
        successes, to generate them again on purpose (the old result stays until replaced)."""
        if all_failed:
            scope = Task.state == FAILED
        elif batch_id is not None:
            scope = (Task.batch_id == batch_id) & Task.state.in_((FAILED, CANCELED))
        else:
            scope = Task.task_id.in_(list(task_ids or [])) & Task.state.in_(FINAL_STATES)
        now = self.now()
        mark = self.db.param
        remote_ended = f"state = {mark} OR error_kind IN ({_marks(mark, len(REMOTE_FINAL_KINDS))})"
        ended = [SUCCESS, *REMOTE_FINAL_KINDS]
        changes: dict[Any, Any] = {
            Task.state: PENDING, Task.attempt: Task.attempt + 1, Task.retries_left: AUTO_RETRIES,
            Task.crash_retries_left: CRASH_RETRIES,
            Task.not_before: 0.0, Task.cancel_requested: False, Task.finished_at: None,
            Task.started_at: None, Task.owner: None, Task.updated_at: now,
            # A remote task that ended (succeeded, failed or was canceled there) is done for good:
            # the operator's retry creates a new one. Any other remote id -- a local time-out, a
            # lost poll -- may still be running, so the retry resumes polling it, never resubmits
            # (with the key that created it: the row keeps it).
            Task.remote_id: pw.SQL(f"CASE WHEN {remote_ended} THEN NULL ELSE remote_id END", ended),
            # a fresh try may go to any account or key unless the task file pinned one
            Task.account: _holder_kept(pw.SQL(f"remote_id IS NOT NULL AND NOT ({remote_ended})", ended)),
            Task.error_kind: None, Task.error: None, Task.error_message: None,
            # The operator checked the service (the error said to) and asks for a new create.
            Task.create_hold_until: None,
        }
        updated: int = Task.update(changes).where(scope).execute()
        return updated

    def missing(self, task_ids: Iterable[str]) -> list[str]:
        """The ids among ``task_ids`` that no task has."""
        ids = list(task_ids)
        existing = self._existing_ids(ids)  # once: asking per id made a 10k-row preview take minutes
        return [i for i in ids if i not in existing]

    def delete(self, task_ids: Iterable[str]) -> int:
        """Delete finished tasks (with their results and logs). A pending or running task is
        left alone: the operator's view may be stale, and deleting queued work is a cancel."""
        ids = list(task_ids)
        with self.db.atomic():
            deleted: int = Task.delete().where(Task.task_id.in_(ids) & Task.state.in_(FINAL_STATES)).execute()
            Result.delete().where(Result.task_id.in_(ids) & ~Result.task_id.in_(
                Task.select(Task.task_id))).execute()
            TaskLog.delete().where(TaskLog.task_id.in_(ids) & ~TaskLog.task_id.in_(
                Task.select(Task.task_id))).execute()
            Output.delete().where(Output.task_id.in_(ids) & ~Output.task_id.in_(
                Task.select(Task.task_id))).execute()
        return deleted

    # --- gates: one holder at a time, across processes --------------------------------------
    def try_gate(self, name: str, owner: str, ttl_s: float) -> bool:
        """Take the gate ``name`` for ``owner`` for ``ttl_s`` seconds (renew before it ends).

        True if ``owner`` holds it now (taking it again renews it). The gate is free when nobody
        holds it, when the holder's lease has ended, or when the holder is a process on this host
        that is proven dead (then at once, without waiting for the lease).
        """
        now = self.now()
        with self.db.atomic():
            Gate.insert(name=name).on_conflict_ignore().execute()
            free = (Gate.owner.is_null() | (Gate.owner == owner) | (Gate.expires_at < now))
            if Gate.update(owner=owner, expires_at=now + ttl_s).where((Gate.name == name) & free).execute():
                return True
            holder = Gate.get_or_none(Gate.name == name)
            if holder is None or holder.owner is None or not owner_is_dead(holder.owner):
                return False
            # The holder died: take it over, unless someone else just did.
            return bool(Gate.update(owner=owner, expires_at=now + ttl_s)
                        .where((Gate.name == name) & (Gate.owner == holder.owner)).execute())

    def renew_gate(self, name: str, owner: str, ttl_s: float) -> bool:
        """Extend ``owner``'s lease; False if it no longer holds the gate (the lease ran out and
        another process took it)."""
        return bool(Gate.update(expires_at=self.now() + ttl_s)
                    .where((Gate.name == name) & (Gate.owner == owner)).execute())

    def release_gate(self, name: str, owner: str) -> bool:
        return bool(Gate.update(owner=None, expires_at=0.0)
                    .where((Gate.name == name) & (Gate.owner == owner)).execute())

    def gate_holder(self, name: str) -> str | None:
        gate = Gate.get_or_none(Gate.name == name)
        return gate.owner if gate is not None and gate.expires_at >= self.now() else None

    def set_gate_not_before(self, name: str, at: float) -> None:
        """A back-off for everyone using the gate: nobody should pass it before ``at``."""
        (Gate.insert(name=name, not_before=at)
         .on_conflict(conflict_target=[Gate.name], update={Gate.not_before: at}).execute())

    def defer_gate(self, name: str, at: float) -> None:
        """Nobody should pass the gate before ``at`` (store clock); a later back-off already
        there stands: two processes told different waits both get theirs."""
        later = pw.Case(None, [(Gate.not_before < at, at)], Gate.not_before)
        (Gate.insert(name=name, not_before=at)
         .on_conflict(conflict_target=[Gate.name], update={Gate.not_before: later}).execute())

    def gate_not_before(self, name: str) -> float:
        gate = Gate.get_or_none(Gate.name == name)
        return gate.not_before if gate is not None else 0.0

    # --- logs ------------------------------------------------------------------------------
    def log(self, task_id: str, line: Message | str) -> None:
        """A line of the task's log: its English, and the message it renders from in any language."""
        # Plain SQL: two lines a task, and peewee's query building costs more than the insert.
        mark = self.db.param
        self.db.execute_sql(f'INSERT INTO "task_log" (task_id, at, line, message) VALUES ({mark}, {mark}, {mark}, '
                            f'{mark})', (task_id, self.now(), redact(str(line)), _stored_json(line)))

    def logs(self, task_id: str) -> list[TaskLog]:
        return list(TaskLog.select().where(TaskLog.task_id == task_id).order_by(TaskLog.id))

    # --- lanes and accounts ----------------------------------------------------------------
    def pause_lane(self, name: str, reason: Message | str | None) -> None:
        now = self.now()
        english = None if reason is None else redact(str(reason))
        message = _stored_json(reason)
        (LaneState.insert(name=name, paused=True, reason=english, reason_message=message, updated_at=now)
         .on_conflict(conflict_target=[LaneState.name],
                      update={LaneState.paused: True, LaneState.reason: english, LaneState.reason_message: message,
                              LaneState.updated_at: now})
         .execute())

    def resume_lane(self, name: str) -> None:
        LaneState.update(paused=False, reason=None, reason_message=None, updated_at=self.now()).where(
            LaneState.name == name).execute()

    def save_lane_limit(self, name: str, limit: int) -> None:
        """The learned limit of an adaptive lane; every process on this store reads it."""
        now = self.now()
        (LaneState.insert(name=name, learned_limit=limit, updated_at=now)
         .on_conflict(conflict_target=[LaneState.name],
                      update={LaneState.learned_limit: limit, LaneState.updated_at: now})
         .execute())

    def lane_limits(self) -> dict[str, int]:
        """{lane: learned limit} for the lanes that have learnt one."""
        query = LaneState.select(LaneState.name, LaneState.learned_limit).where(LaneState.learned_limit.is_null(False))
        # The WHERE already leaves out NULLs; the check only tells the type checker.
        return {s.name: s.learned_limit for s in query if s.learned_limit is not None}

    def lane_conditions(self) -> LaneConditions:
        """Pauses, learned limits and accounts in one read: what a scheduler pass plans with."""
        states = cast(Iterable[tuple[str, object, str | None, str | None, int | None]], (
            LaneState.select(LaneState.name, LaneState.paused, LaneState.reason, LaneState.reason_message,
                             LaneState.learned_limit)
            .where((LaneState.paused == True) | LaneState.learned_limit.is_null(False))  # noqa: E712
            .tuples()))
        paused: dict[str, Message] = {}
        learned: dict[str, int] = {}
        for name, is_paused, reason, reason_message, limit in states:
            if is_paused:
                paused[name] = stored_message(reason, reason_message) or verbatim("")
            if limit is not None:
                learned[name] = limit
        rows = cast(Iterable[tuple[str, str, object, str, str | None]], (
            Account.select(Account.name, Account.site, Account.enabled, Account.login_state, Account.host)
            .order_by(Account.name).tuples()))
        accounts = {name: AccountView(name, site, bool(enabled), login_state, host)
                    for name, site, enabled, login_state, host in rows}
        return LaneConditions(paused=paused, learned=learned, accounts=accounts)

    def paused_lanes(self) -> dict[str, str]:
        """{lane: why it is paused, in English}."""
        return {name: str(reason) for name, reason in self.paused_lane_reasons().items()}

    def paused_lane_reasons(self) -> dict[str, Message]:
        """{lane: why it is paused}, to be shown in the reader's language (and, by its id, whose
        pause it is: ``budget.is_budget_pause``)."""
        return {s.name: stored_message(s.reason, s.reason_message) or verbatim("")
                for s in LaneState.select().where(LaneState.paused == True)}  # noqa: E712

    def sync_accounts(self, accounts: Iterable[Any]) -> None:
        """Add configured accounts the store has not seen; the operator's toggles then win.
        A ``host`` in the config binds the account to that machine (over a login's binding)."""
        now = self.now()
        for acct in accounts:
            host = getattr(acct, "host", None)
            update: dict[Any, Any] = {Account.site: acct.site}
            if host is not None:
                update[Account.host] = host
            (Account.insert(name=acct.name, site=acct.site, enabled=acct.enabled, host=host, updated_at=now)
             .on_conflict(conflict_target=[Account.name], update=update)
             .execute())

    def accounts(self) -> list[Account]:
        return list(Account.select().order_by(Account.name))

    def account(self, name: str) -> Account | None:
        return Account.get_or_none(Account.name == name)

    def set_account_enabled(self, name: str, enabled: bool) -> bool:
        updated: int = Account.update(enabled=enabled, updated_at=self.now()).where(Account.name == name).execute()
        return updated == 1

    def set_login_state(self, name: str, state: str, error: Message | str | None = None) -> None:
        """A login that worked binds an unbound account to this machine: its browser profile,
        and so the session, lives here."""
        changes: dict[Any, Any] = {Account.login_state: state,
                                   Account.last_error: None if error is None else redact(str(error)),
                                   Account.last_error_message: _stored_json(error),
                                   Account.updated_at: self.now()}
        if state == "ok":
            changes[Account.host] = pw.fn.COALESCE(Account.host, host_id())
        Account.update(changes).where(Account.name == name).execute()

    # --- reading ---------------------------------------------------------------------------
    def get(self, task_id: str) -> Task | None:
        return Task.get_or_none(Task.task_id == task_id)

    def result(self, task_id: str) -> Result | None:
        return Result.get_or_none(Result.task_id == task_id)

    def batch_usage(self, batch_ids: Iterable[str]) -> dict[str, int]:
        """Token counts summed over the results of some batches ({"total_tokens": n, ...})."""
        query = (Result.select(Result.usage).join(Task, on=(Task.task_id == Result.task_id))
                 .where(Task.batch_id.in_(list(batch_ids)) & Result.usage.is_null(False)))
        totals: dict[str, int] = {}
        for row in query:
            for key, value in row.usage_dict.items():
                if isinstance(value, int) and not isinstance(value, bool):
                    totals[key] = totals.get(key, 0) + value
        return totals

    def tasks(self, batch_ids: Iterable[str] | None = None) -> list[Task]:
        query = Task.select().order_by(Task.seq)
        if batch_ids is not None:
            query = query.where(Task.batch_id.in_(list(batch_ids)))
        return list(query)

    def open_batches(self) -> list[str]:
        """Batches with tasks still pending or running."""
        query = Task.select(Task.batch_id).where(Task.state.in_((PENDING, RUNNING))).distinct()
        return sorted(t.batch_id for t in query)

    def counts(self) -> dict[tuple[str, str | None, str], int]:
        """{(route, account, state): n} over the whole store, one GROUP BY."""
        query = (Task.select(Task.route, Task.account, Task.state, pw.fn.COUNT(Task.seq).alias("n"))
                 .group_by(Task.route, Task.account, Task.state))
        # cast: peewee-stubs type a tuples() query's rows as model instances
        rows = cast(Iterable[tuple[str, str | None, str, int]], query.tuples())
        return {(route, account, state): n for route, account, state, n in rows}

    def batch_counts(self, batch_ids: Iterable[str]) -> dict[tuple[str, str | None, bool, str], int]:
        """{(route, account, account_pinned, state): n} over some batches, one GROUP BY."""
        query = (Task.select(Task.route, Task.account, Task.account_pinned, Task.state,
                             pw.fn.COUNT(Task.seq).alias("n"))
                 .where(Task.batch_id.in_(list(batch_ids)))
                 .group_by(Task.route, Task.account, Task.account_pinned, Task.state))
        # cast: peewee-stubs type a tuples() query's rows as model instances
        rows = cast(Iterable[tuple[str, str | None, object, str, int]], query.tuples())
        return {(route, account, bool(pinned), state): n for route, account, pinned, state, n in rows}

    def polling_counts(self, route: str) -> tuple[int, int]:
        """(running with a remote id, running still waiting to be submitted) for a poll lane."""
        query = (Task.select(Task.remote_id.is_null(False).alias("submitted"), pw.fn.COUNT(Task.seq).alias("n"))
                 .where((Task.route == route) & (Task.state == RUNNING))
                 .group_by(Task.remote_id.is_null(False)))
        # cast: peewee-stubs type a tuples() query's rows as model instances
        rows = cast(Iterable[tuple[object, int]], query.tuples())
        found = {bool(submitted): n for submitted, n in rows}
        return found.get(True, 0), found.get(False, 0)

    def next_due(self) -> float | None:
        """Earliest not_before among pending tasks that are not yet due."""
        due: float | None = (Task.select(pw.fn.MIN(Task.not_before))
                             .where((Task.state == PENDING) & (Task.not_before > self.now())).scalar())
        return due


def _marks(mark: str, count: int) -> str:
    return ", ".join([mark] * count)


# The row holds a remote task, or a create whose reply nobody read, that its key made.
_HOLDS_REMOTE = pw.SQL("remote_id IS NOT NULL OR create_hold_until IS NOT NULL")


def _holder_kept(holds_remote: pw.SQL) -> pw.SQL:
    """A row's ``account`` when it goes back to the queue: kept when the task file pinned it or
    (a provider's key) when the row still holds a remote task that key created -- the service
    knows the task by that key only; else cleared, so any account or key may take it."""
    return pw.SQL(f"CASE WHEN account_pinned OR ({holds_remote.sql}) THEN account END", holds_remote.params)


@dataclass(frozen=True)
class Holding:
    """What holds a lane's slots: running rows, pending rows with a remote task, unread creates."""

    running: int
    remote: int
    unread: int

    @property
    def total(self) -> int:
        return self.running + self.remote + self.unread


def _attempt_is(task: Task, mark: str) -> pw.SQL:
    """The row is still this attempt's: running, same attempt, same owner (plain SQL: it is in
    every finish, where peewee's building of it cost more than the update)."""
    owner = f"owner = {mark}" if task.owner is not None else "owner IS NULL"
    params = [task.task_id, RUNNING, task.attempt] + ([task.owner] if task.owner is not None else [])
    return pw.SQL(f"task_id = {mark} AND state = {mark} AND attempt = {mark} AND {owner}", params)


def _scope(task_ids: Iterable[str] | None, batch_id: str | None) -> pw.Expression:
    if batch_id is not None:
        return Task.batch_id == batch_id
    return Task.task_id.in_(list(task_ids or []))
