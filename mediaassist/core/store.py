"""The durable task store: one row per task, peewee over SQLite (WAL) or PostgreSQL.

Every state change is a *conditional* UPDATE (``WHERE state = 'running' AND owner = ? AND
attempt = ?``), so a late writer -- a reaped attempt, a cancelled one, a second process -- can
never overwrite a newer truth, and a result is never written twice (it is upserted by task_id
inside the same transaction that ends the attempt).

The only database-specific code is ``_claim_lock`` and ``_connect``, both marked below; where
the store lives is ``core.location``, its schema version and migrations ``core.schema``.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import peewee as pw
import psutil

from mediaassist.core.errors import ErrorKind
from mediaassist.core.location import StoreUnavailable, connect_kwargs, describe, host_id, is_pg_url
from mediaassist.core.schema import ensure_schema
from mediaassist.core.secrets import redact

PENDING, RUNNING, SUCCESS, FAILED, CANCELED = "pending", "running", "success", "failed", "canceled"
FINAL_STATES = (SUCCESS, FAILED, CANCELED)
STATES = (PENDING, RUNNING) + FINAL_STATES
AUTO_RETRIES = 2  # 3 attempts in all
REMOTE_FINAL_KINDS = ("provider", "bad_input", "canceled")
_CHUNK = 500  # rows per insert statement (SQLite's variable limit)

database_proxy = pw.DatabaseProxy()


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
    created_at = pw.DoubleField()
    not_before = pw.DoubleField(default=0.0)
    started_at = pw.DoubleField(null=True)
    heartbeat_at = pw.DoubleField(null=True)
    finished_at = pw.DoubleField(null=True)
    cancel_requested = pw.BooleanField(default=False)
    remote_id = pw.CharField(null=True)
    error_kind = pw.CharField(null=True)
    error = pw.TextField(null=True)
    owner = pw.CharField(null=True)  # host:pid:start of the process running it
    host = pw.CharField(null=True)  # the machine that ran it last (kept after the attempt ends)
    updated_at = pw.DoubleField(default=0.0)

    class Meta:
        table_name = "task"
        indexes = ((("state", "heartbeat_at"), False), (("state", "not_before"), False),
                   # covering indexes for the window's counts and its change sweep
                   (("route", "account", "state"), False), (("batch_id", "route", "account", "state"), False),
                   (("updated_at",), False))

    @property
    def params_dict(self) -> dict[str, Any]:
        return json.loads(self.params or "{}")

    @property
    def lane(self) -> str:
        if self.model_kind == "web" and self.account:
            return f"web:{self.account}"
        return self.route


# The claim's ORDER BY priority DESC, seq ASC must walk this index, not sort the whole queue.
Task.add_index(Task.route, Task.state, Task.priority.desc(), Task.seq, name="task_claim_order")
# One logged-in session runs one generation: at most one running web task per account, held by
# the database itself, so it holds across every process that shares the store.
Task.add_index(pw.SQL('CREATE UNIQUE INDEX IF NOT EXISTS "task_one_running_per_account" ON "task" '
                      "(account) WHERE state = 'running' AND model_kind = 'web'"))


class Result(_Base):
    task_id = pw.CharField(primary_key=True)
    text = pw.TextField(null=True)
    files = pw.TextField(default="[]")
    written_at = pw.DoubleField()

    class Meta:
        table_name = "result"

    @property
    def file_list(self) -> list[str]:
        return json.loads(self.files or "[]")


class TaskLog(_Base):
    task_id = pw.CharField(index=True)
    at = pw.DoubleField()
    line = pw.TextField()

    class Meta:
        table_name = "task_log"


class LaneState(_Base):
    name = pw.CharField(primary_key=True)
    paused = pw.BooleanField(default=False)
    reason = pw.TextField(null=True)
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
    updated_at = pw.DoubleField(default=0.0)

    class Meta:
        table_name = "account"


MODELS = (Task, Result, TaskLog, LaneState, Account)


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


def process_owner_id() -> str:
    """host:pid:create_time -- unique even when the OS reuses a pid."""
    proc = psutil.Process()
    return f"{host_id()}:{proc.pid}:{proc.create_time():.0f}"


def owner_is_dead(owner: str) -> bool:
    """True only when we can prove it: same host, and that pid is gone or is another process.
    A process on another host is never judged here: its heartbeat's age decides (reap_stalled)."""
    host, _, rest = owner.partition(":")
    pid_text, _, created = rest.partition(":")
    if host != host_id() or not pid_text.isdigit():
        return False
    try:
        proc = psutil.Process(int(pid_text))
        return f"{proc.create_time():.0f}" != created
    except psutil.NoSuchProcess:
        return True


def iso(ts: float | None) -> str | None:
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, tz=timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Store:
    """Synchronous store; each call is a short statement, cheap enough for the event loop."""

    def __init__(self, location: Path | str, now: Any = None) -> None:
        """``location``: an SQLite file path, or a ``postgresql://`` URL for a shared queue.

        Raises StoreUnavailable (one line for the operator) when a server cannot be reached or
        the schema is newer than this program knows.
        """
        import time

        self._now = now or time.time
        self.shared = is_pg_url(location)
        self.where = describe(location)  # for messages: never a password
        self.path = Path(location)
        self.db = self._connect(str(location))
        database_proxy.initialize(self.db)
        try:
            ensure_schema(self.db, MODELS, self.where)
        except BaseException:
            self.db.close()
            raise

    # --- database specific (the one marked place) ------------------------------------------
    def _connect(self, location: str) -> pw.Database:
        if self.shared:
            from playhouse.db_url import connect

            db = connect(location, **connect_kwargs(location))
            try:
                db.connect(reuse_if_open=True)
            except pw.ImproperlyConfigured:
                raise StoreUnavailable("a shared store needs the PostgreSQL driver: "
                                       "pip install 'mediaassist[postgres]'") from None
            except pw.OperationalError as exc:
                reason = redact(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__)
                raise StoreUnavailable(f"cannot reach the shared store {self.where}: {reason}") from None
            return db
        path = Path(location)
        path.parent.mkdir(parents=True, exist_ok=True)
        db = pw.SqliteDatabase(
            str(path),
            pragmas={"journal_mode": "wal", "synchronous": "normal", "busy_timeout": 10000,
                     "cache_size": -65536,  # 64 MiB: a 100k-task queue stays in memory
                     "foreign_keys": 1},
            timeout=10,
        )
        db.connect(reuse_if_open=True)
        os.chmod(path, 0o600)
        return db

    def _claim_lock(self, query: pw.Select) -> pw.Select:
        # SQLite serialises writers, so UPDATE ... WHERE seq IN (subselect) is atomic as is.
        # PostgreSQL needs the rows locked and concurrent claimers to skip them.
        if isinstance(self.db, pw.PostgresqlDatabase):
            return query.for_update("FOR UPDATE SKIP LOCKED")
        return query

    # ----------------------------------------------------------------------------------------
    def close(self) -> None:
        if not self.db.is_closed():
            self.db.close()

    def now(self) -> float:
        return self._now()

    # --- enqueue ---------------------------------------------------------------------------
    def enqueue(self, batch_id: str, tasks: Sequence[NewTask]) -> tuple[list[str], list[str]]:
        """Insert tasks; ids already in the store are skipped, never duplicated.

        Returns (inserted ids, skipped ids).
        """
        now = self.now()
        rows = []
        for item in tasks:
            rows.append({
                "task_id": item.task_id or uuid.uuid4().hex[:16],
                "batch_id": batch_id, "model": item.model, "model_kind": item.model_kind,
                "route": item.route, "account": item.account,
                "account_pinned": item.account is not None, "prompt": item.prompt,
                "system_prompt": item.system_prompt,
                "params": json.dumps(item.params, ensure_ascii=False), "priority": item.priority,
                "state": PENDING, "created_at": now, "updated_at": now,
            })
        ids = [r["task_id"] for r in rows]
        with self.db.atomic():
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
        rows = [{**row, **defaults} for row in rows]
        marks = ", ".join([self.db.param] * len(columns))
        sql = (f'INSERT INTO "task" ({", ".join(columns)}) VALUES ({marks}) '
               "ON CONFLICT (task_id) DO NOTHING")
        cursor = self.db.cursor()
        cursor.executemany(sql, [tuple(row[c] for c in columns) for row in rows])

    def _existing_ids(self, ids: list[str]) -> set[str]:
        found: set[str] = set()
        for start in range(0, len(ids), _CHUNK):
            chunk = ids[start:start + _CHUNK]
            found.update(t.task_id for t in Task.select(Task.task_id).where(Task.task_id.in_(chunk)))
        return found

    # --- claim and run ---------------------------------------------------------------------
    def claim(self, route: str, owner: str, limit: int = 1, account: str | None = None) -> list[Task]:
        """Atomically move up to ``limit`` due pending tasks of a route to running.

        Order: higher priority first, then FIFO. For web routes ``account`` is the free account;
        tasks pinned to another account are not taken.
        """
        if limit <= 0:
            return []
        now = self.now()
        # "+ 0" keeps the planner off the (state, not_before) index: the claim must walk
        # task_claim_order, or every claim sorts the whole queue.
        due = (Task.route == route) & (Task.state == PENDING) & ((Task.not_before + 0) <= now)
        if account is not None:
            due &= Task.account.is_null() | (Task.account == account)
            busy = Task.alias("busy")
            due &= ~pw.fn.EXISTS(busy.select(busy.seq).where((busy.account == account)
                                                             & (busy.state == RUNNING)))
        head = self._claim_lock(
            Task.select(Task.seq).where(due).order_by(Task.priority.desc(), Task.seq).limit(limit)
        )
        changes: dict[Any, Any] = {
            Task.state: RUNNING, Task.owner: owner, Task.host: owner.partition(":")[0],
            Task.started_at: now, Task.heartbeat_at: now, Task.finished_at: None, Task.updated_at: now,
        }
        if account is not None:
            changes[Task.account] = account
        # No second "state = pending" test out here: the subselect and the update are one
        # statement under SQLite's write lock (and FOR UPDATE re-checks rows on PostgreSQL), and
        # that test would steer the planner from seq lookups to a scan of every pending row.
        query = Task.update(changes).where(Task.seq.in_(head)).returning(Task)
        try:
            with self.db.atomic():
                claimed = list(query.execute())
        except pw.IntegrityError:  # another process took this account's one slot first
            return []
        return sorted(claimed, key=lambda t: (-t.priority, t.seq))

    def heartbeat(self, task_ids: Iterable[str], owner: str) -> None:
        ids = list(task_ids)
        now = self.now()
        for start in range(0, len(ids), _CHUNK):
            (Task.update(heartbeat_at=now)
             .where(Task.task_id.in_(ids[start:start + _CHUNK]) & (Task.state == RUNNING)
                    & (Task.owner == owner))
             .execute())

    def save_remote_id(self, task: Task, remote_id: str) -> None:
        """Persist the provider's id for this task before anything else happens to it.

        Saved whoever owns the row now: a remote task that really exists must never be lost,
        even when this attempt was reaped meanwhile (its retry then polls it, never re-creates).
        """
        updated = (Task.update(remote_id=remote_id, updated_at=self.now())
                   .where((Task.task_id == task.task_id) & Task.remote_id.is_null()).execute())
        if updated != 1:
            current = Task.get_or_none(Task.task_id == task.task_id)
            if current is None or current.remote_id != remote_id:
                raise RuntimeError(f"task {task.task_id} already has remote id "
                                   f"{current.remote_id if current else None}, not {remote_id}")
        task.remote_id = remote_id

    def cancel_requested_among(self, task_ids: Iterable[str]) -> set[str]:
        ids = list(task_ids)
        found: set[str] = set()
        for start in range(0, len(ids), _CHUNK):
            found.update(t.task_id for t in Task.select(Task.task_id).where(
                Task.task_id.in_(ids[start:start + _CHUNK]) & (Task.cancel_requested == True)))  # noqa: E712
        return found

    # --- finishing an attempt --------------------------------------------------------------
    def finish_success(self, task: Task, text: str | None, files: list[str]) -> bool:
        """End the attempt as success and upsert its result. False if the attempt lost the row."""
        now = self.now()
        with self.db.atomic():
            updated = (Task.update(state=SUCCESS, finished_at=now, updated_at=now, error_kind=None,
                                   error=None)
                       .where(_attempt_is(task)).execute())
            if updated != 1:
                return False
            (Result.insert(task_id=task.task_id, text=text, files=json.dumps(files, ensure_ascii=False),
                           written_at=now)
             .on_conflict(conflict_target=[Result.task_id],
                          update={Result.text: text, Result.files: json.dumps(files, ensure_ascii=False),
                                  Result.written_at: now})
             .execute())
        return True

    def finish_failure(self, task: Task, kind: ErrorKind, message: str, retry_at: float | None) -> str | None:
        """End the attempt as failed; with ``retry_at`` the same row goes back to pending.

        Returns the new state, or None if the attempt no longer owned the row.
        """
        now = self.now()
        retry = retry_at is not None and task.retries_left > 0
        changes: dict[Any, Any] = {
            Task.error_kind: kind.value, Task.error: redact(message), Task.updated_at: now, Task.owner: None,
        }
        if retry:
            changes.update({Task.state: PENDING, Task.attempt: Task.attempt + 1,
                            Task.retries_left: Task.retries_left - 1, Task.not_before: retry_at,
                            Task.finished_at: None})
            if not task.account_pinned:
                changes[Task.account] = None
        else:
            changes.update({Task.state: FAILED, Task.finished_at: now})
        updated = Task.update(changes).where(_attempt_is(task)).execute()
        if updated != 1:
            return None
        return PENDING if retry else FAILED

    def finish_canceled(self, task: Task, message: str = "canceled by operator") -> bool:
        now = self.now()
        updated = (Task.update(state=CANCELED, finished_at=now, updated_at=now, owner=None,
                               error_kind=ErrorKind.CANCELED.value, error=message)
                   .where(_attempt_is(task)).execute())
        return updated == 1

    def release(self, task: Task) -> bool:
        """Give a claimed task back to the head of its queue, not counted as an attempt."""
        now = self.now()
        changes: dict[Any, Any] = {Task.state: PENDING, Task.owner: None, Task.started_at: None,
                                   Task.heartbeat_at: None, Task.updated_at: now}
        if not task.account_pinned:
            changes[Task.account] = None
        return Task.update(changes).where(_attempt_is(task)).execute() == 1

    # --- recovery --------------------------------------------------------------------------
    def stalled(self, cutoff: float) -> list[Task]:
        """Running rows whose heartbeat is older than ``cutoff``."""
        return list(Task.select().where((Task.state == RUNNING) & (Task.heartbeat_at < cutoff)))

    def running_owners(self) -> set[str]:
        return {t.owner for t in Task.select(Task.owner).where(Task.state == RUNNING).distinct()
                if t.owner}

    def running_of_owner(self, owner: str) -> list[Task]:
        return list(Task.select().where((Task.state == RUNNING) & (Task.owner == owner)))

    # --- operator actions ------------------------------------------------------------------
    def cancel(self, task_ids: Iterable[str] | None = None, batch_id: str | None = None) -> dict[str, int]:
        """Pending → canceled at once; running → cancel_requested (the lane writes the end)."""
        scope = _scope(task_ids, batch_id)
        now = self.now()
        with self.db.atomic():
            canceled = (Task.update(state=CANCELED, finished_at=now, updated_at=now,
                                    error_kind=ErrorKind.CANCELED.value, error="canceled before it ran")
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
        changes: dict[Any, Any] = {
            Task.state: PENDING, Task.attempt: Task.attempt + 1, Task.retries_left: AUTO_RETRIES,
            Task.not_before: 0.0, Task.cancel_requested: False, Task.finished_at: None,
            Task.started_at: None, Task.owner: None, Task.updated_at: now,
            # a fresh try may go to any account unless the task file pinned one
            Task.account: pw.Case(None, [(Task.account_pinned == True, Task.account)], None),  # noqa: E712
            # A remote task that ended (succeeded, failed or was canceled there) is done for good:
            # the operator's retry creates a new one. Any other remote id -- a local time-out, a
            # lost poll -- may still be running, so the retry resumes polling it, never resubmits.
            Task.remote_id: pw.Case(None, [((Task.state == SUCCESS) | Task.error_kind.in_(REMOTE_FINAL_KINDS),
                                            None)], Task.remote_id),
            Task.error_kind: None, Task.error: None,
        }
        return Task.update(changes).where(scope).execute()

    def missing(self, task_ids: Iterable[str]) -> list[str]:
        """The ids among ``task_ids`` that no task has."""
        ids = list(task_ids)
        return [i for i in ids if i not in self._existing_ids(ids)]

    def delete(self, task_ids: Iterable[str]) -> int:
        """Delete finished tasks (with their results and logs). A pending or running task is
        left alone: the operator's view may be stale, and deleting queued work is a cancel."""
        ids = list(task_ids)
        with self.db.atomic():
            deleted = Task.delete().where(Task.task_id.in_(ids) & Task.state.in_(FINAL_STATES)).execute()
            Result.delete().where(Result.task_id.in_(ids) & ~Result.task_id.in_(
                Task.select(Task.task_id))).execute()
            TaskLog.delete().where(TaskLog.task_id.in_(ids) & ~TaskLog.task_id.in_(
                Task.select(Task.task_id))).execute()
        return deleted

    # --- logs ------------------------------------------------------------------------------
    def log(self, task_id: str, line: str) -> None:
        # Plain SQL: two lines a task, and peewee's query building costs more than the insert.
        mark = self.db.param
        self.db.execute_sql(f'INSERT INTO "task_log" (task_id, at, line) VALUES ({mark}, {mark}, {mark})',
                            (task_id, self.now(), redact(line)))

    def logs(self, task_id: str) -> list[TaskLog]:
        return list(TaskLog.select().where(TaskLog.task_id == task_id).order_by(TaskLog.id))

    # --- lanes and accounts ----------------------------------------------------------------
    def pause_lane(self, name: str, reason: str | None) -> None:
        now = self.now()
        (LaneState.insert(name=name, paused=True, reason=reason, updated_at=now)
         .on_conflict(conflict_target=[LaneState.name],
                      update={LaneState.paused: True, LaneState.reason: reason, LaneState.updated_at: now})
         .execute())

    def resume_lane(self, name: str) -> None:
        LaneState.update(paused=False, reason=None, updated_at=self.now()).where(
            LaneState.name == name).execute()

    def paused_lanes(self) -> dict[str, str]:
        return {s.name: s.reason or "" for s in LaneState.select().where(LaneState.paused == True)}  # noqa: E712

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
        return Account.update(enabled=enabled, updated_at=self.now()).where(Account.name == name).execute() == 1

    def set_login_state(self, name: str, state: str, error: str | None = None) -> None:
        """A login that worked binds an unbound account to this machine: its browser profile,
        and so the session, lives here."""
        changes: dict[Any, Any] = {Account.login_state: state, Account.last_error: error,
                                   Account.updated_at: self.now()}
        if state == "ok":
            changes[Account.host] = pw.fn.COALESCE(Account.host, host_id())
        Account.update(changes).where(Account.name == name).execute()

    # --- reading ---------------------------------------------------------------------------
    def get(self, task_id: str) -> Task | None:
        return Task.get_or_none(Task.task_id == task_id)

    def result(self, task_id: str) -> Result | None:
        return Result.get_or_none(Result.task_id == task_id)

    def tasks(self, batch_ids: Iterable[str] | None = None) -> list[Task]:
        query = Task.select().order_by(Task.seq)
        if batch_ids is not None:
            query = query.where(Task.batch_id.in_(list(batch_ids)))
        return list(query)

    def counts(self) -> dict[tuple[str, str | None, str], int]:
        """{(route, account, state): n} over the whole store, one GROUP BY."""
        query = (Task.select(Task.route, Task.account, Task.state, pw.fn.COUNT(Task.seq).alias("n"))
                 .group_by(Task.route, Task.account, Task.state))
        return {(r.route, r.account, r.state): r.n for r in query}

    def batch_counts(self, batch_ids: Iterable[str]) -> dict[tuple[str, str | None, bool, str], int]:
        """{(route, account, account_pinned, state): n} over some batches, one GROUP BY."""
        query = (Task.select(Task.route, Task.account, Task.account_pinned, Task.state,
                             pw.fn.COUNT(Task.seq).alias("n"))
                 .where(Task.batch_id.in_(list(batch_ids)))
                 .group_by(Task.route, Task.account, Task.account_pinned, Task.state))
        return {(r.route, r.account, bool(r.account_pinned), r.state): r.n for r in query}

    def polling_counts(self, route: str) -> tuple[int, int]:
        """(running with a remote id, running still waiting to be submitted) for a poll lane."""
        query = (Task.select(Task.remote_id.is_null(False).alias("submitted"), pw.fn.COUNT(Task.seq).alias("n"))
                 .where((Task.route == route) & (Task.state == RUNNING))
                 .group_by(Task.remote_id.is_null(False)))
        found = {bool(r.submitted): r.n for r in query}
        return found.get(True, 0), found.get(False, 0)

    def next_due(self) -> float | None:
        """Earliest not_before among pending tasks that are not yet due."""
        return (Task.select(pw.fn.MIN(Task.not_before))
                .where((Task.state == PENDING) & (Task.not_before > self.now())).scalar())


def _attempt_is(task: Task) -> pw.Expression:
    """The row is still this attempt's: running, same attempt, same owner."""
    return ((Task.task_id == task.task_id) & (Task.state == RUNNING)
            & (Task.attempt == task.attempt) & (Task.owner == task.owner))


def _scope(task_ids: Iterable[str] | None, batch_id: str | None) -> pw.Expression:
    if batch_id is not None:
        return Task.batch_id == batch_id
    return Task.task_id.in_(list(task_ids or []))
