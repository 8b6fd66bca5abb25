"""Reads of the task table and what hangs off it: the window's, status's and the scheduler's."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import cast

import peewee as pw

from mediaassist.core.store.connection import StoreConnection
from mediaassist.core.store.database import CHUNK
from mediaassist.core.store.tables import PENDING_LATER, PENDING_ROW, RUNNING_ROW, Output, Result, Task, TaskLog


class Reads(StoreConnection):
    """Reading tasks, results, outputs, logs and counts."""

    def _existing_ids(self, ids: list[str]) -> set[str]:
        # Plain SQL: peewee spends ~80 us per value building an IN list, 20x SQLite's lookup.
        found: set[str] = set()
        for start in range(0, len(ids), CHUNK):
            chunk = ids[start:start + CHUNK]
            marks = ", ".join([self.db.param] * len(chunk))
            rows = self.db.execute_sql(f'SELECT task_id FROM "task" WHERE task_id IN ({marks})', chunk)
            found.update(r[0] for r in rows)
        return found

    def missing(self, task_ids: Iterable[str]) -> list[str]:
        """The ids among ``task_ids`` that no task has."""
        ids = list(task_ids)
        existing = self._existing_ids(ids)  # once: asking per id made a 10k-row preview take minutes
        return [i for i in ids if i not in existing]

    # --- output files ------------------------------------------------------------------------
    def outputs_of(self, task_ids: Iterable[str]) -> dict[str, list[Output]]:
        """{task_id: its output files in order} for these tasks (those without any are left out)."""
        ids = list(task_ids)
        found: dict[str, list[Output]] = {}
        for start in range(0, len(ids), CHUNK):
            query = (Output.select().where(Output.task_id.in_(ids[start:start + CHUNK]))
                     .order_by(Output.task_id, Output.n))
            for output in query:
                found.setdefault(output.task_id, []).append(output)
        return found

    def logs(self, task_id: str) -> list[TaskLog]:
        return list(TaskLog.select().where(TaskLog.task_id == task_id).order_by(TaskLog.id))

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
        # A union: each side walks a partial index (an IN of both states walked the table).
        query = Task.select(Task.batch_id).where(PENDING_ROW) | Task.select(Task.batch_id).where(RUNNING_ROW)
        return sorted(t.batch_id for t in query)

    def recent_batches(self, starting_with: str = "", limit: int = 5) -> list[str]:
        """The batches whose id starts with ``starting_with``, the latest imported first: the
        candidates an operator who mistyped a batch id is shown (a scan, on an error path only)."""
        query = (Task.select(Task.batch_id).where(Task.batch_id.startswith(starting_with))
                 .group_by(Task.batch_id).order_by(pw.fn.MAX(Task.seq).desc()).limit(limit))
        return [t.batch_id for t in query]

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

    def polling_counts(self, route: str, key: str | None = None) -> tuple[int, int]:
        """(running with a remote id, running still waiting to be submitted) for a poll lane:
        the rows of one of the provider's keys, or (``key`` None) every row of the provider."""
        rows_of = (Task.route == route) & RUNNING_ROW
        if key is not None:
            rows_of &= Task.account == key
        query = (Task.select(Task.remote_id.is_null(False).alias("submitted"), pw.fn.COUNT(Task.seq).alias("n"))
                 .where(rows_of)
                 .group_by(Task.remote_id.is_null(False)))
        # cast: peewee-stubs type a tuples() query's rows as model instances
        rows = cast(Iterable[tuple[object, int]], query.tuples())
        found = {bool(submitted): n for submitted, n in rows}
        return found.get(True, 0), found.get(False, 0)

    def next_due(self) -> float | None:
        """Earliest not_before among pending tasks that are not yet due."""
        due: float | None = (Task.select(pw.fn.MIN(Task.not_before))
                             .where(PENDING_LATER & (Task.not_before > self.now())).scalar())
        return due
