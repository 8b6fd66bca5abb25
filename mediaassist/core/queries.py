"""Every read the window does, in one place: the task table's pages, sorts and filters, the
counts behind the panels and batch progress, and the rows an export writes.

Peewee expressions only -- no SQL text -- so the same reads run on SQLite and on PostgreSQL (a
shared queue). Hot paths build the query with peewee and read the raw cursor
(``db.execute(query)``): peewee's row wrappers cost more than SQLite's work for 100k keys.
"""

from __future__ import annotations

import asyncio
import functools
import json
import operator
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from operator import itemgetter
from typing import Any

import peewee as pw

from mediaassist.core.lanes import lane_of
from mediaassist.core.messages import Message
from mediaassist.core.money import Money, Totals, from_micros
from mediaassist.core.store import (
    FINAL_STATES,
    PENDING_ROW,
    RUNNING_ROW,
    SPEND_SETTLED,
    Output,
    Result,
    Spend,
    Store,
    Task,
    settled_cost,
    stored_message,
)

CHUNK = 500  # keys per IN (...) (SQLite's variable limit is far above; PG plans stay simple)
PREVIEW_CHARS = 200  # prompt, result and error text a table row carries

# The lane a task shows and filters on: its account once a web task has one, else its route.
# Task.lane in SQL: a web account's lane, a provider key's (``api:x/<key>``), or the route.
LANE = pw.Case(None, [((Task.model_kind == "web") & Task.account.is_null(False),
                       pw.Value("web:").concat(Task.account)),
                      (Task.account.is_null(False), Task.route.concat("/").concat(Task.account))], Task.route)


def one_of(field: pw.Field, values: Sequence[Any]) -> pw.Node:
    """``field IN (values)`` with one placeholder each: peewee's ``in_`` builds a node per value
    (~80 us each, 16 ms for a page of 200 rows on the loop); this is one node, same SQL."""
    marks = ", ".join([Task._meta.database.param] * len(values))
    return pw.NodeList((field, pw.SQL(f"IN ({marks})", list(values))))


def _duration(now: float) -> pw.Node:
    return pw.fn.COALESCE(Task.finished_at, now) - Task.started_at


def _cost(now: float) -> pw.Node:
    """A task's largest settled charge: an order, not a sum (a sum could mix currencies)."""
    charge = Spend.alias("charge")
    largest = (charge.select(pw.fn.MAX(charge.amount))
               .where((charge.task_id == Task.task_id) & (charge.state == SPEND_SETTLED)))
    return pw.fn.COALESCE(largest, -1)  # no charge sorts below every charge on both databases


# Sortable columns of the table, by key; the value builds the ORDER BY term (some need "now").
SORT_KEYS: dict[str, Any] = {
    "task_id": lambda now: Task.task_id, "batch": lambda now: Task.batch_id,
    "model": lambda now: Task.model, "lane": lambda now: LANE, "state": lambda now: Task.state,
    "attempt": lambda now: Task.attempt, "error": lambda now: Task.error_kind,
    "heartbeat": lambda now: Task.heartbeat_at, "duration": _duration,
    "created": lambda now: Task.created_at, "prompt": lambda now: Task.prompt,
    "machine": lambda now: Task.host, "cost": _cost,
}
# Those that change while tasks run: sorting on one moves rows.
VOLATILE_SORT_KEYS = frozenset({"state", "error", "lane", "machine", "attempt", "duration", "cost", "heartbeat"})


@dataclass(frozen=True)
class TaskFilter:
    state: str | None = None
    lane: str | None = None
    batch: str | None = None
    text: str = ""

    def conditions(self) -> list[pw.Node]:
        """The WHERE terms (peewee ANDs them; none is no WHERE)."""
        terms: list[pw.Node] = []
        if self.state:
            terms.append(Task.state == self.state)
        if self.lane:
            # LANE is a column expression, not a constant: on the left, == builds SQL (typed as a Node)
            terms.append(LANE == self.lane)  # noqa: SIM300
        if self.batch:
            terms.append(Task.batch_id == self.batch)
        if self.text:  # contains() escapes %, _ and \ in the operator's text
            terms.append(Task.task_id.contains(self.text) | Task.prompt.contains(self.text)
                         | Task.error.contains(self.text) | Task.model.contains(self.text))
        return terms

    def applied(self, query: pw.Select) -> pw.Select:
        terms = self.conditions()
        return query.where(*terms) if terms else query

    def with_state(self, state: str) -> TaskFilter:
        return TaskFilter(state=state, lane=self.lane, batch=self.batch, text=self.text)

    @property
    def volatile(self) -> bool:
        """Rows move in or out of this filter as tasks run (state/lane/error text change)."""
        return bool(self.state or self.lane or self.text)


@dataclass(frozen=True)
class TaskOrder:
    """``key`` None: the default, newest batch first and each batch in queue order."""

    key: str | None = None
    descending: bool = False

    def terms(self, now: float) -> list[pw.Node]:
        if self.key is None:
            # A batch's tasks share created_at (one enqueue), so this groups them, newest first.
            return [Task.created_at.desc(), Task.seq]
        term = SORT_KEYS[self.key](now)
        if self.descending:
            return [term.desc(), Task.seq.desc()]
        return [term, Task.seq]

    @property
    def volatile(self) -> bool:
        """Rows move under this order as tasks run."""
        return self.key in VOLATILE_SORT_KEYS


@dataclass(frozen=True, slots=True)
class TaskRow:
    """What one table row shows (texts cut to PREVIEW_CHARS)."""

    seq: int
    task_id: str
    batch_id: str
    model: str
    model_kind: str
    route: str
    account: str | None
    host: str | None  # the machine that ran it last (a shared queue has several)
    state: str
    attempt: int
    error_kind: str | None
    error: str | None
    created_at: float
    started_at: float | None
    heartbeat_at: float | None
    finished_at: float | None
    prompt: str
    result_text: str | None
    error_message: str | None  # the error as a stored message (JSON), beside its English
    result_message: str | None  # a provider's summary as a stored message (JSON)
    picked: int  # the task's outputs the operator picked
    files: tuple[str, ...]
    money: TaskMoney | None = None  # None: nothing was estimated or spent

    @property
    def error_text(self) -> Message | None:
        return stored_message(self.error, self.error_message)

    @property
    def result_shown(self) -> Message | None:
        return stored_message(self.result_text, self.result_message)


@dataclass(frozen=True, slots=True)
class TaskMoney:
    """What a task cost (every attempt's settled charge, per currency) and what its latest
    attempt was estimated at; ``sources``: where the costs came from (provider, price table)."""

    cost: tuple[Money, ...]
    estimate: tuple[Money, ...]
    sources: tuple[str, ...]

    @classmethod
    def of(cls, rows: Sequence[Spend]) -> TaskMoney:
        settled = [r for r in rows if r.state == SPEND_SETTLED]
        latest = max(r.attempt for r in rows)
        estimate = Totals(Money(from_micros(r.estimate), r.currency)
                          for r in rows if r.attempt == latest and r.estimate is not None)
        return cls(tuple(settled_cost(settled).monies()), tuple(estimate.monies()),
                   tuple(sorted({r.source for r in settled})))


def _preview(column: pw.Field) -> pw.Node:
    return pw.fn.SUBSTR(column, 1, PREVIEW_CHARS)


def _picked_count() -> pw.Node:
    """How many of the row's outputs are picked (one indexed look per row read)."""
    return (Output.select(pw.fn.COUNT(Output.id))
            .where((Output.task_id == Task.task_id) & (Output.picked == True)))  # noqa: E712


_ROW_COLUMNS = (Task.seq, Task.task_id, Task.batch_id, Task.model, Task.model_kind, Task.route, Task.account,
                Task.host, Task.state, Task.attempt, Task.error_kind, _preview(Task.error), Task.created_at,
                Task.started_at, Task.heartbeat_at, Task.finished_at, _preview(Task.prompt),
                _preview(Result.text), Task.error_message, Result.text_message, _picked_count(), Result.files)


DETAIL_TASKS = 200  # a batch with at most this many unfinished tasks is read task by task...
DETAIL_BATCHES = 10  # ...the newest this many of them


@dataclass
class Snapshot:
    """One GROUP BY over the store, cut the ways the panels and the tray need it."""

    by_route: dict[tuple[str, str], int] = field(default_factory=lambda: defaultdict(int))
    # (lane, state): the rows an account's or a key's lane runs or ran (Task.lane)
    by_lane: dict[tuple[str, str], int] = field(default_factory=lambda: defaultdict(int))
    by_batch: dict[str, dict[str, int]] = field(default_factory=dict)
    batch_routes: dict[str, dict[str, int]] = field(default_factory=dict)  # unfinished per route
    batch_routes_ended: dict[str, dict[str, int]] = field(default_factory=dict)  # ended per route
    batch_order: list[str] = field(default_factory=list)  # newest first
    batch_spent: dict[str, Totals] = field(default_factory=dict)  # reserved and settled
    batch_estimate: dict[str, Totals] = field(default_factory=dict)
    # route -> [(batch, started_at, expected_s)] of its running attempts (store clock): how far
    # along they are, and how long each is expected to take (0: not known)
    running_started: dict[str, list[tuple[str, float, float]]] = field(default_factory=dict)
    # batch -> route -> [(priority, expected_s)] of its pending tasks in FIFO order, for the
    # newest few batches small enough to read task by task (``DETAIL_TASKS``); every such batch
    # has an entry, empty when nothing of it waits
    pending_expected: dict[str, dict[str, list[tuple[int, float]]]] = field(default_factory=dict)

    def totals(self) -> dict[str, int]:
        out: dict[str, int] = defaultdict(int)
        for (_, state), n in self.by_route.items():
            out[state] += n
        return out

    def totals_by_kind(self) -> dict[tuple[str, str], int]:
        """{(lane kind, state): n} -- the kind is the route's prefix (web, api, poll)."""
        out: dict[tuple[str, str], int] = defaultdict(int)
        for (route, state), n in self.by_route.items():
            out[(route.partition(":")[0], state)] += n
        return out


class Queries:
    """The window's reads over one store."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.db = store.db

    def task_spend(self, task_ids: Iterable[str]) -> dict[str, list[Spend]]:
        """{task_id: its spend rows, oldest first} (every attempt's), for the export."""
        return self.store.task_spend(task_ids)

    def off_loop(self) -> OffLoopReader:
        """A worker thread with its own connection to the same store, for reads too long for the loop."""
        return OffLoopReader(self.store)

    def _values(self, query: pw.Query) -> Iterator[tuple[Any, ...]]:
        # peewee-stubs leave Database.execute unannotated; the result is the driver's row cursor
        return iter(self.db.execute(query))  # type: ignore[no-untyped-call]

    def _first_column(self, query: pw.Query) -> list[Any]:
        # map over the cursor runs in C: a Python loop over 100k rows costs ~0.2 s more
        return list(map(itemgetter(0), self._values(query)))

    def _chunked(self, query_of: Any, keys: Sequence[Any]) -> Iterator[tuple[Any, ...]]:
        for start in range(0, len(keys), CHUNK):
            yield from self._values(query_of(keys[start:start + CHUNK]))

    # --- the table ---------------------------------------------------------------------------
    def seqs(self, task_filter: TaskFilter, order: TaskOrder) -> list[int]:
        """Row keys under the filter, in table order."""
        query = (task_filter.applied(Task.select(Task.seq))
                 .order_by(*order.terms(self.store.now())))
        return self._first_column(query)

    def rows(self, seqs: Sequence[int]) -> list[TaskRow]:
        """The table rows of these keys (any order; deleted ones are left out)."""
        def query(chunk: Sequence[int]) -> pw.Query:
            return (Task.select(*_ROW_COLUMNS)
                    .join(Result, pw.JOIN.LEFT_OUTER, on=(Result.task_id == Task.task_id))
                    .where(one_of(Task.seq, chunk)))
        rows = [_task_row(values) for values in self._chunked(query, list(seqs))]
        money = self.store.task_spend([row.task_id for row in rows])
        return [replace(row, money=TaskMoney.of(money[row.task_id])) if row.task_id in money else row
                for row in rows]

    def task_ids(self, task_filter: TaskFilter, order: TaskOrder) -> list[str]:
        """Every task id under the filter, in table order (bulk actions, export)."""
        query = (task_filter.applied(Task.select(Task.task_id))
                 .order_by(*order.terms(self.store.now())))
        return self._first_column(query)

    def distinct_states(self, task_filter: TaskFilter) -> set[str]:
        query = task_filter.applied(Task.select(Task.state)).distinct()
        return {r[0] for r in self._values(query)}

    def states_of(self, seqs: Sequence[int]) -> set[str]:
        return {r[0] for r in self._chunked(
            lambda chunk: Task.select(Task.state).where(one_of(Task.seq, chunk)).distinct(), list(seqs))}

    def tasks_of(self, seqs: Sequence[int]) -> list[tuple[str, str]]:
        """(task id, state) of these rows in the given order; deleted rows are left out."""
        found = {r[0]: (r[1], r[2]) for r in self._chunked(
            lambda chunk: Task.select(Task.seq, Task.task_id, Task.state).where(one_of(Task.seq, chunk)),
            list(seqs))}
        return [found[seq] for seq in seqs if seq in found]

    def changed_since(self, when: float) -> tuple[list[int], float | None]:
        """Keys of rows written after ``when`` and the newest such write (the change sweep)."""
        query = Task.select(Task.seq, Task.updated_at).where(Task.updated_at > when)
        rows = list(self._values(query))
        return [r[0] for r in rows], max((r[1] for r in rows), default=None)

    def newest_update(self) -> float:
        return Task.select(pw.fn.MAX(Task.updated_at)).scalar() or 0.0

    def totals(self) -> tuple[int, int]:
        """(row count, max seq): changes when rows are added or deleted anywhere."""
        count, max_seq = next(self._values(Task.select(pw.fn.COUNT(Task.seq), pw.fn.MAX(Task.seq))))
        return count, max_seq or 0

    # --- counts for the panels, the batches and the tray -------------------------------------
    def snapshot(self) -> Snapshot:
        snap = Snapshot()
        query = (Task.select(Task.batch_id, Task.route, Task.account, Task.state, pw.fn.COUNT(Task.seq),
                             pw.fn.MAX(Task.seq))
                 .group_by(Task.batch_id, Task.route, Task.state, Task.account))  # the counts index's order
        newest: dict[str, int] = {}
        for batch, route, account, state, n, max_seq in self._values(query):
            snap.by_route[(route, state)] += n
            if account:
                snap.by_lane[(lane_of(route, account), state)] += n
            snap.by_batch.setdefault(batch, defaultdict(int))[state] += n
            if state not in FINAL_STATES:
                snap.batch_routes.setdefault(batch, defaultdict(int))[route] += n
            else:
                snap.batch_routes_ended.setdefault(batch, defaultdict(int))[route] += n
            newest[batch] = max(newest.get(batch, 0), max_seq)
        snap.batch_order = sorted(newest, key=newest.__getitem__, reverse=True)
        running = (Task.select(Task.batch_id, Task.route, Task.started_at, Task.expected_s)
                   .where(RUNNING_ROW))
        for batch, route, started_at, expected in self._values(running):
            if started_at is not None:
                snap.running_started.setdefault(route, []).append((batch, started_at, expected or 0.0))
        snap.pending_expected = self._pending_expected(snap)
        money = (Spend.select(Spend.batch_id, Spend.currency, pw.fn.SUM(Spend.amount),
                              pw.fn.SUM(pw.fn.COALESCE(Spend.estimate, 0)))
                 .group_by(Spend.batch_id, Spend.currency))
        for batch, currency, spent, estimated in self._values(money):
            snap.batch_spent.setdefault(batch, Totals()).add(Money(from_micros(int(spent)), currency))
            snap.batch_estimate.setdefault(batch, Totals()).add(Money(from_micros(int(estimated)), currency))
        return snap

    def _pending_expected(self, snap: Snapshot) -> dict[str, dict[str, list[tuple[int, float]]]]:
        """Each pending task's priority and expected seconds, for the newest unfinished batches of
        at most DETAIL_TASKS unfinished tasks (an ETA of a few tasks depends on which they are;
        a big batch's on their count): one indexed read of a few thousand rows at most."""
        small = [batch for batch in snap.batch_order
                 if 0 < sum(snap.batch_routes.get(batch, {}).values()) <= DETAIL_TASKS][:DETAIL_BATCHES]
        found: dict[str, dict[str, list[tuple[int, float]]]] = {batch: {} for batch in small}
        # Each (batch, route, pending) is a range of task_batch_pending_order, one OR term each (a
        # row-value IN of several made SQLite scan the table): the rows that ended are never read.
        waiting = [(Task.batch_id == batch) & (Task.route == route) & PENDING_ROW
                   for batch in small for route in snap.batch_routes[batch]]
        if waiting:
            query = (Task.select(Task.batch_id, Task.route, Task.priority, Task.expected_s)
                     .where(functools.reduce(operator.or_, waiting)).order_by(Task.seq))
            for batch, route, priority, expected in self._values(query):
                found[batch].setdefault(route, []).append((priority, expected or 0.0))
        return found

    # --- export ------------------------------------------------------------------------------
    def export_chunk(self, task_ids: Sequence[str]) -> list[tuple[Task, Result | None]]:
        """Whole tasks with their results, in the given order (deleted ones left out)."""
        ids = list(task_ids)
        tasks = {t.task_id: t for t in Task.select().where(one_of(Task.task_id, ids))}
        results = {r.task_id: r for r in Result.select().where(one_of(Result.task_id, ids))}
        return [(tasks[i], results.get(i)) for i in ids if i in tasks]


class OffLoopReader:
    """Runs reads in one worker thread with its own connection, so big ones (every row key of
    a 200k-row store, the counts' GROUP BY) never hold up the loop. The database driver
    releases the GIL while it works; the Python part is what remains on the loop's clock.

    peewee keeps one connection per thread: this thread's opens on first use, closes in
    ``close``. Reads see committed data only -- what the loop's writes committed before."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="store-reads")
        self._closed = False

    async def run(self, read: Callable[..., Any], *args: Any) -> Any:
        if self._closed:
            # The window is closing: a read asked for now (a sort, a search the teardown set off)
            # has nobody to show it to; it ends as canceled rather than failing the loop's end.
            raise asyncio.CancelledError
        return await asyncio.get_running_loop().run_in_executor(self._pool, read, *args)

    def close(self) -> None:
        self._closed = True
        self._pool.submit(self.store.db.close)  # this thread's connection, not the loop's
        self._pool.shutdown(wait=True)


def task_costs(task_ids: Iterable[str]) -> dict[str, tuple[Money, ...]]:
    """What each of these tasks cost (its settled charges per currency); tasks with none left out."""
    ids = list(task_ids)
    costs: dict[str, Totals] = {}
    for chunk in chunks(ids):
        query = Spend.select().where(Spend.task_id.in_(list(chunk)) & (Spend.state == SPEND_SETTLED))
        for row in query:
            costs.setdefault(row.task_id, Totals()).add(row.money)
    return {task_id: tuple(totals.monies()) for task_id, totals in costs.items()}


def _task_row(values: Sequence[Any]) -> TaskRow:
    *head, files = values
    cells = [*head, tuple(json.loads(files)) if files else ()]  # the files column holds JSON text
    return TaskRow(*cells)


def chunks(items: Sequence[Any], size: int = CHUNK) -> Iterable[Sequence[Any]]:
    return (items[i:i + size] for i in range(0, len(items), size))
