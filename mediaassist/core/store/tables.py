"""The store's tables (peewee models), their schema versions (``SCHEMA_COLUMNS``, applied by
``core.schema``), the task states and the texts stored as messages beside their English.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import peewee as pw

from mediaassist.core.lanes import lane_of
from mediaassist.core.messages import Message, msg, verbatim
from mediaassist.core.money import SOURCE_ESTIMATE, Money, Totals, from_micros
from mediaassist.core.secrets import redacted

PENDING, RUNNING, SUCCESS, FAILED, CANCELED = "pending", "running", "success", "failed", "canceled"
FINAL_STATES = (SUCCESS, FAILED, CANCELED)
STATES = (PENDING, RUNNING, *FINAL_STATES)
AUTO_RETRIES = 2  # 3 attempts in all
# Attempts lost because the process running them died are not the task's fault: they draw on
# their own, larger budget, so a crash loop elsewhere does not fail tasks that never failed.
CRASH_RETRIES = 5

database_proxy = pw.DatabaseProxy()


# Why a lane stopped taking work when the operator paused it (the window, ``lanes pause``).
PAUSED_BY_OPERATOR = msg("paused by operator")
CANCELED_BY_OPERATOR = msg("canceled by operator")
CANCELED_BEFORE_IT_RAN = msg("canceled before it ran")

def stored_json(text: Message | str | None) -> str | None:
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
        # Only the indexes every state change must keep: the counts (batch first, for a batch's
        # progress; the whole store's counts walk all of it) and the window's change sweep. The
        # rest are partial (below): a row is in them only while it is pending, or running, or
        # holds a remote task -- most rows are finished, and a partial index is not written when
        # a row changes outside it (half a task's commit, bench/bench_store.py).
        indexes = ((("batch_id", "route", "state", "account"), False), (("updated_at",), False))

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


# A partial index serves a query only when the query's WHERE names its condition literally:
# these go into the queries that rely on them. A state compared with a bound parameter instead
# costs SQLite a new query plan on every run of the statement (it peeks at the value, to see
# whether a partial index applies): write states as literals in every hot statement.
PENDING_ROW = pw.SQL("state = 'pending'")
RUNNING_ROW = pw.SQL("state = 'running'")
PENDING_LATER = pw.SQL(f"{PENDING_ROW.sql} AND not_before > 0")  # waiting for a time, or for nothing


def _partial_index(name: str, columns: str, where: str, unique: bool = False) -> None:
    kind = "UNIQUE INDEX" if unique else "INDEX"
    Task.add_index(pw.SQL(f'CREATE {kind} IF NOT EXISTS "{name}" ON "task" ({columns}) WHERE {where}'))


# The claim's ORDER BY priority DESC, seq ASC walks this index instead of sorting the queue.
_partial_index("task_pending_order", "route, priority DESC, seq", PENDING_ROW.sql)
# The same order inside one batch, for ``run FILE``: walking task_pending_order past the pending
# rows of other batches cost ~9x per claim with the file's batch behind 90,000 others.
_partial_index("task_batch_pending_order", "batch_id, route, priority DESC, seq", PENDING_ROW.sql)
# ``longest``'s order (core/order.py): sorting the due rows instead cost ~25x FIFO's claim on a
# queue of 100,000.
_partial_index("task_pending_longest", "route, priority DESC, expected_s DESC, seq", PENDING_ROW.sql)
# ``fair`` finds the batches waiting on a route by skipping from one to the next on this index
# (its state column only makes it covering: SQLite would otherwise read each row for it).
_partial_index("task_pending_batches", "route, batch_id, state", PENDING_ROW.sql)
# Tasks waiting for a later time (a retry's back-off, a task file's not_before): the loop's
# next wake-up.
_partial_index("task_pending_later", "not_before", PENDING_LATER.sql)
# A lane's running rows (its claim counts them; a provider key's by account), and the reaper's.
_partial_index("task_running", "route, account", RUNNING_ROW.sql)
# The claim's count of a lane's slots held by remote tasks and by creates with no reply read.
_partial_index("task_remote", "route, state", "remote_id IS NOT NULL")
_partial_index("task_create_held", "create_hold_until", "create_hold_until IS NOT NULL")
# One logged-in session runs one generation: at most one running web task per account, held by
# the database itself, so it holds across every process that shares the store.
_partial_index("task_one_running_per_account", "account", f"{RUNNING_ROW.sql} AND model_kind = 'web'", unique=True)


# Every column of a task, in the model's order: what a claim reads back.
TASK_FIELDS = tuple(Task._meta.sorted_fields)
TASK_COLUMNS = ", ".join(f'"{f.column_name}"' for f in TASK_FIELDS)


# The fields whose stored value peewee's reader converts: SQLite's 0/1 to a bool (every other
# field is read as it is stored).
_BOOLEANS = tuple((index, field.name) for index, field in enumerate(TASK_FIELDS) if isinstance(field, pw.BooleanField))
_NAMES = tuple(field.name for field in TASK_FIELDS)


def task_of(row: Sequence[Any]) -> Task:
    """A task from a row of ``TASK_COLUMNS``, its values converted as peewee's reader does; its
    values are set as one dict (setting each field marks it changed, to be cleared again)."""
    task = Task(__no_default__=1)  # no defaults, nothing changed
    data = dict(zip(_NAMES, row, strict=True))
    for index, name in _BOOLEANS:
        data[name] = None if row[index] is None else bool(row[index])
    task.__data__ = data
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
    # partial indexes: a finished row is in none of the claim's (SCHEMA_DROPPED_INDEXES)
    8: [],
}
# version -> the indexes it drops (replaced by others of that version, created by create_tables)
SCHEMA_DROPPED_INDEXES: dict[int, list[str]] = {
    8: ["task_state_heartbeat_at", "task_state_not_before", "task_route_account_state",
        "task_batch_id_route_account_state", "task_route_state_remote_id", "task_create_hold_until",
        "task_claim_order", "task_batch_claim_order", "task_longest_order", "task_route_batches"],
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
