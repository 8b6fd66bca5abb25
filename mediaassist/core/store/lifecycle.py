"""A task's life in the store: enqueue, claim (the lane's limit counted in the same transaction),
what an attempt saves while it runs, and its end -- every end a conditional UPDATE on the
attempt (``WHERE state = 'running' AND owner = ? AND attempt = ?``), so a late writer can never
overwrite a newer truth.

The hot paths (claim, the ends of an attempt, log lines) are plain SQL: peewee's building of
them cost more CPU than SQLite's running of them (bench/bench_store.py).
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import peewee as pw

from mediaassist.core.errors import KIND_TEXTS, ErrorKind
from mediaassist.core.messages import Message, msg
from mediaassist.core.order import HISTORY_SAMPLES, BatchQueue, DurationFit, fair_shares, fit_durations, order_key
from mediaassist.core.outputs import OutputFile
from mediaassist.core.owners import owner_host
from mediaassist.core.secrets import redact
from mediaassist.core.store.database import PgStoreDatabase, faults_as_storage, sql_marks
from mediaassist.core.store.reads import Reads
from mediaassist.core.store.tables import (
    CANCELED,
    CANCELED_BY_OPERATOR,
    FAILED,
    PENDING,
    PENDING_ROW,
    RUNNING,
    RUNNING_ROW,
    SUCCESS,
    TASK_COLUMNS,
    NewTask,
    Output,
    Task,
    Upload,
    stored_json,
    task_of,
)

log = logging.getLogger("mediaassist.store")

FIT_TTL_S = 60.0  # how long enqueue trusts a model's duration fit it read (core/order.py)


# The row holds a remote task, or a create whose reply nobody read, that its key made.
HOLDS_REMOTE = pw.SQL("remote_id IS NOT NULL OR create_hold_until IS NOT NULL")


def holder_kept(holds_remote: pw.SQL) -> pw.SQL:
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
    params = [task.task_id, task.attempt] + ([task.owner] if task.owner is not None else [])
    return pw.SQL(f"task_id = {mark} AND {RUNNING_ROW.sql} AND attempt = {mark} AND {owner}", params)


class TaskLifecycle(Reads):
    """A task from enqueue to its end: claims, what an attempt saves while it runs (remote id,
    uploads, log lines), and the conditional writes that end it."""

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
        if isinstance(self.db, PgStoreDatabase):
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
             .where((Task.model == model) & PENDING_ROW).execute())

    # --- claim and run ---------------------------------------------------------------------
    def claim(self, route: str, owner: str, limit: int = 1, account: str | None = None,
              batch_ids: Sequence[str] | None = None, lane_limit: int | None = None,
              skip_batches: Sequence[str] = (), order: str = "fifo", key: str | None = None,
              note_start: bool = True) -> list[Task]:
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

        ``note_start``: each claimed task's log gets its "attempt N started on <lane>" line in the
        same transaction (``claim_within_budget`` notes only the tasks its budgets let start).
        """
        if limit <= 0:
            return []
        holder = account if account is not None else key
        if lane_limit is None:
            with self._write_transaction():
                return self._noted(self._claim_in_order(route, owner, limit, holder, batch_ids, None, skip_batches,
                                                        order), note_start)
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
            return self._noted(resumed + fresh, note_start)

    def _noted(self, claimed: list[Task], note_start: bool) -> list[Task]:
        if note_start:
            self.note_started(claimed)
        return claimed

    def note_started(self, tasks: Sequence[Task]) -> None:
        """Each task's "attempt N started" line, written in the claim's own transaction (a line
        of its own cost a commit: a quarter of a task's store CPU, bench/bench_store.py)."""
        for task in tasks:
            self.log(task.task_id, msg("attempt {attempt} started on {lane}", attempt=task.attempt, lane=task.lane))

    def _holding(self, route: str, key: str | None) -> Holding:
        """What holds the slots of a route (or of one key of it): its running rows, its pending
        rows with a remote task, and creates sent with no reply read."""
        # Plain SQL: peewee's query building would cost more than the count itself.
        mark = self.db.param
        of_key = f" AND account = {mark}" if key is not None else ""
        keyed = (key,) if key is not None else ()
        # Three counts, each on an index of its own (a single OR walked every row of the route).
        running, remote, unread = self._run(
            f'SELECT (SELECT COUNT(*) FROM "task" WHERE route = {mark}{of_key} AND {RUNNING_ROW.sql}), '
            f'(SELECT COUNT(*) FROM "task" WHERE route = {mark}{of_key} AND {PENDING_ROW.sql} '
            'AND remote_id IS NOT NULL), '
            f'(SELECT COUNT(*) FROM "task" WHERE create_hold_until > {mark} AND route = {mark}{of_key} '
            "AND state <> 'running' AND remote_id IS NULL)",
            (route, *keyed, route, *keyed, self.now(), route, *keyed)).fetchone()
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
                .where((Task.route == route) & RUNNING_ROW).group_by(Task.batch_id))
        # cast: peewee-stubs type a tuples() query's rows as model instances
        running = dict(cast(Iterable[tuple[str, int]], busy.tuples()))
        claimed: list[Task] = []
        for batch, share in fair_shares(queues, running, limit).items():
            claimed += self._claim(route, owner, share, account, [batch], remote, (), "fifo")
        return claimed

    def _waiting_batches(self, route: str) -> list[str]:
        """The batches with pending rows on ``route``: one step of task_pending_batches per batch
        (a loose index scan), however many rows each has."""
        mark = self.db.param
        rows = self._run(
            'WITH RECURSIVE waiting(batch_id) AS ('
            f'SELECT MIN(batch_id) FROM "task" WHERE route = {mark} AND {PENDING_ROW.sql} '
            f'UNION ALL SELECT (SELECT MIN(batch_id) FROM "task" WHERE route = {mark} AND {PENDING_ROW.sql} '
            'AND batch_id > waiting.batch_id) FROM waiting WHERE waiting.batch_id IS NOT NULL) '
            'SELECT batch_id FROM waiting WHERE batch_id IS NOT NULL', (route, route))
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
        # The claim walks task_pending_order (or the batch's, or longest's), never sorts the queue.
        where = [f"route = {mark} AND {PENDING_ROW.sql} AND not_before <= {mark}"]
        params: list[Any] = [route, now]
        if batch_ids is not None:
            where.append(f"batch_id IN ({sql_marks(mark, len(batch_ids))})" if batch_ids else "0 = 1")
            params += batch_ids
        if remote is not None:
            where.append("remote_id IS NOT NULL" if remote else "remote_id IS NULL")
        if skip_batches:
            where.append(f"batch_id NOT IN ({sql_marks(mark, len(skip_batches))})")
            params += skip_batches
        if account is not None:
            # A web account runs one task at a time (a key's limit is counted by ``claim``).
            # (on task_one_running_per_account: its condition written out, as a partial index needs)
            where.append(f"(account IS NULL OR account = {mark}) AND NOT EXISTS (SELECT busy.seq FROM "
                         f'"task" AS busy WHERE busy.account = {mark} AND busy.state = \'running\' '
                         "AND busy.model_kind = 'web')")
            params += [account, account]
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
            with self._statements_undone_alone():
                claimed = self._take(head, due.params, changes)
        except pw.IntegrityError:  # another process took this account's one slot first
            return []
        return sorted(claimed, key=lambda t: order_key(order, t.priority, t.expected_s, t.seq))

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
                               f"RETURNING {TASK_COLUMNS}", (*changes.values(), *params))
        # SQLite serialises writers, so nothing comes between these statements; the same as one
        # UPDATE ... WHERE seq IN (SELECT ...) RETURNING cost SQLite 2.5x their time.
        seqs = [row[0] for row in self._run(head, params)]
        if not seqs:
            return []
        taken = f"seq IN ({sql_marks(mark, len(seqs))})"
        self._run(f'UPDATE "task" SET {assignments} WHERE {taken}', (*changes.values(), *seqs))
        return self._tasks(f'SELECT {TASK_COLUMNS} FROM "task" WHERE {taken}', seqs)

    def _tasks(self, sql: str, params: Sequence[Any]) -> list[Task]:
        """The tasks of a statement that yields every column (``TASK_COLUMNS``), built without
        peewee's per-query setup of its row reader."""
        return [task_of(row) for row in self._run(sql, params).fetchall()]

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

    # --- finishing an attempt --------------------------------------------------------------
    def finish_success(self, task: Task, result_text: Message | str | None, files: list[str],
                       usage: dict[str, int] | None = None, outputs: Sequence[OutputFile] = ()) -> bool:
        """End the attempt as success and upsert its result (and its output files' records, which
        replace an earlier result's). False if the attempt lost the row.
        ``result_text``: the answer, or a provider's summary of what it made (a message)."""
        now = self.now()
        # a server may echo the key in its answer
        text = redact(str(result_text)) if result_text is not None else None
        text_message = stored_json(result_text)
        usage_json = json.dumps(usage) if usage else None
        files_json = json.dumps(files, ensure_ascii=False)
        mark = self.db.param
        with self.db.atomic():
            if not self._end_attempt(task, {"state": SUCCESS, "finished_at": now, "updated_at": now,
                                            "error_kind": None, "error": None, "error_message": None}):
                return False
            self._run(
                f'INSERT INTO "result" (task_id, text, text_message, files, usage, written_at) VALUES '
                f"({sql_marks(mark, 6)}) ON CONFLICT (task_id) DO UPDATE SET text = excluded.text, "
                "text_message = excluded.text_message, files = excluded.files, usage = excluded.usage, "
                "written_at = excluded.written_at",
                (task.task_id, text, text_message, files_json, usage_json, now))
            self._run(f'DELETE FROM "output" WHERE task_id = {mark}', (task.task_id,))
            self.log(task.task_id, msg("success"))
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

    def finish_failure(self, task: Task, kind: ErrorKind, message: Message | str, retry_at: float | None,
                       crashed: bool = False) -> str | None:
        """End the attempt as failed; with ``retry_at`` the same row goes back to pending. The
        task's log gets the failure's line in the same transaction.

        ``crashed``: the attempt was lost because the process running it died; the retry draws on
        the crash budget (``crash_retries_left``), not on the task's own retries.
        Returns the new state, or None if the attempt no longer owned the row.
        """
        now = self.now()
        budget = "crash_retries_left" if crashed else "retries_left"
        retry = retry_at is not None and (task.crash_retries_left if crashed else task.retries_left) > 0
        changes: dict[str, Any] = {"error_kind": kind.value, "error": redact(str(message)),
                                   "error_message": stored_json(message), "updated_at": now, "owner": None}
        if retry:
            changes.update({"state": PENDING, "attempt": pw.SQL("attempt + 1"), budget: pw.SQL(f"{budget} - 1"),
                            "not_before": retry_at, "finished_at": None, "account": holder_kept(HOLDS_REMOTE)})
        else:
            changes.update({"state": FAILED, "finished_at": now})
        said = {"attempt": task.attempt, "kind": KIND_TEXTS[kind], "message": message}
        with self._write_transaction():
            if not self._end_attempt(task, changes):
                return None
            self.log(task.task_id, msg("attempt {attempt} failed ({kind}): {message}; will retry", **said)
                     if retry else msg("attempt {attempt} failed ({kind}): {message}", **said))
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
        cursor = self._run(f'UPDATE "task" SET {", ".join(assignments)} WHERE {attempt_is.sql}',
                                     (*params, *attempt_is.params))
        return bool(cursor.rowcount == 1)

    def finish_canceled(self, task: Task, message: Message | str = CANCELED_BY_OPERATOR) -> bool:
        now = self.now()
        return self._end_attempt(task, {"state": CANCELED, "finished_at": now, "updated_at": now, "owner": None,
                                        "error_kind": ErrorKind.CANCELED.value, "error": redact(str(message)),
                                        "error_message": stored_json(message)})

    def release(self, task: Task) -> bool:
        """Give a claimed task back to the head of its queue, not counted as an attempt."""
        now = self.now()
        changes: dict[Any, Any] = {Task.state: PENDING, Task.owner: None, Task.started_at: None,
                                   Task.heartbeat_at: None, Task.updated_at: now,
                                   Task.account: holder_kept(HOLDS_REMOTE)}
        updated: int = Task.update(changes).where(_attempt_is(task, self.db.param)).execute()
        return updated == 1

    # --- logs ------------------------------------------------------------------------------
    def log(self, task_id: str, line: Message | str) -> None:
        """A line of the task's log: its English, and the message it renders from in any language."""
        # Plain SQL: two lines a task, and peewee's query building costs more than the insert.
        mark = self.db.param
        self._run(f'INSERT INTO "task_log" (task_id, at, line, message) VALUES ({mark}, {mark}, {mark}, '
                            f'{mark})', (task_id, self.now(), redact(str(line)), stored_json(line)))
