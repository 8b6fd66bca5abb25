"""The window's one feed of task state: every read, poll and diff of the tasks, for every view.

qutebrowser's shape: a manager owns the state and says what happened with signals; the views
only forward (the table model turns the row-set signals into Qt's begin/end calls) or show.
The table, the counts (panels, batches, tray, ETA), the detail pane and the gallery all hear
this one object instead of polling the store on timers of their own.

How it reads, and why:

- The scheduler's events (this process's tasks) mark rows dirty at once.
- One timer (FLUSH_MS) coalesces. A cycle reads, in one call on the reader thread, what changed
  since the last sweep (heartbeats, the CLI, another machine: every SWEEP_S), the counts (every
  COUNTS_S or more: the period stretches as the store grows) and, when rows came, left or may have
  moved, the row keys of the table's view. Then it says what changed, once, to every subscriber.
- The table holds only the ordered row keys (``seq``); a ``QSortFilterProxyModel`` needs ~11 s to
  sort 100k rows, so sorting and filtering happen in the database (``core.queries``). Row contents
  are read a page at a time when the view paints them, and cached. The row set never resets on an
  update: changed rows are repainted in contiguous ranges, and rows are inserted, removed or
  reordered in place.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Sequence

from PySide6.QtCore import QObject, QTimer, Signal

from mediaassist.core.events import STATE_AFTER, TaskEvent
from mediaassist.core.queries import OffLoopReader, Queries, Snapshot, TaskFilter, TaskOrder, TaskRow
from mediaassist.runtime import Runtime

Changes = tuple[list[int], float | None]  # changed keys, the newest write among them
NO_CHANGES: Changes = ([], None)
Blocks = list[tuple[int, list[int]]]  # fresh row keys to insert: (position, keys)
# Row keys in order, key -> row, the same rows as shown, and -- when only new rows came -- their blocks
Keys = tuple[list[int], dict[int, int], bool, Blocks | None]
Counts = tuple[Snapshot, float]  # the counts and the CPU reading them took

PAGE = 200  # rows fetched per query when the view scrolls onto uncached rows
CACHE_LIMIT = 5000  # cached rows before the cache is dropped (the view only needs a screenful)
FLUSH_MS = 200  # coalescing period: one cycle
MEMBERSHIP_S = 1.0  # at most this often: re-run the id query when states move rows in/out
SWEEP_S = 2.0  # catch changes no event told us about (heartbeats, other processes)
COUNTS_S = 1.0  # the counts at most this often ...
COUNTS_BUDGET = 20  # ... and at least this many times what one read of them costs
CLOCK_S = 1.0  # durations and heartbeat ages move on


class TaskFeed(QObject):
    """Signals:
        inserting(first, last) / inserted(), removing(first, last) / removed(): rows of the
            table's view come or go (the row keys change between the two).
        reordering(position) / reordered(): the same rows in a new order ({seq: new row}).
        resetting() / was_reset(): a new filter: the view's rows are read again.
        rows_changed(first, last): the contents of these rows of the view changed.
        tasks_changed(set[int]): the row keys whose contents changed (in the view or not).
        ticked(): a second passed: durations and heartbeat ages move on.
        counts(Snapshot): new counts (every COUNTS_S or more, and after any operator change).
        task_event(TaskEvent): the scheduler's event, once its row is marked for repainting.
        filter_changed(): the view now shows another filter's rows.
    """

    inserting = Signal(int, int)
    inserted = Signal()
    removing = Signal(int, int)
    removed = Signal()
    reordering = Signal(object)
    reordered = Signal()
    resetting = Signal()
    was_reset = Signal()
    rows_changed = Signal(int, int)
    tasks_changed = Signal(object)
    ticked = Signal()
    counts = Signal(object)
    task_event = Signal(object)
    filter_changed = Signal()

    def __init__(self, queries: Queries, reader: OffLoopReader, parent: QObject | None = None) -> None:
        """``queries`` on the loop, ``reader`` (its own connection) in a worker thread."""
        super().__init__(parent)
        self.queries = queries
        self.reader = reader
        self.cycling: asyncio.Future[None] | None = None  # the cycle being read, if any
        self._generation = 0  # bumped by every row-set change made on the loop
        self.filter = TaskFilter()
        self._wanted_filter = self.filter  # the newest search asked for (off the loop)
        self.order = TaskOrder()
        self._wanted_order = self.order  # the newest header click (its keys are read off the loop)
        self.sorting: asyncio.Future[None] | None = None  # the read of the newest click, if any
        self.ids: list[int] = []  # the view's row keys, in table order
        self._row_of: dict[int, int] | None = None
        self._cache: dict[int, TaskRow] = {}
        self._dirty: set[int] = set()
        self._membership_dirty = False
        self._last_membership = 0.0
        self._last_sweep = time.time()
        self._last_tick = 0.0
        self._watermark = 0.0
        self._known_totals = (0, 0)
        self.last_counts = Snapshot()
        self.counts_period_s = COUNTS_S
        self._counts_due = 0.0  # monotonic
        self._timer = QTimer(self)
        self._timer.setInterval(FLUSH_MS)
        self._timer.timeout.connect(self._tick)
        self.reload()

    @classmethod
    def of(cls, rt: Runtime, parent: QObject | None = None) -> TaskFeed:
        """The running app's feed: its reads, and the scheduler's events."""
        feed = cls(rt.queries(), rt.off_loop_reader(), parent)
        rt.add_event_listener(feed.on_event)
        return feed

    def start(self) -> None:
        self.read_counts()
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()
        for reading in (self.cycling, self.sorting):
            if reading is not None:
                reading.cancel()
        self.reader.close()

    # --- what the window asks for -------------------------------------------------------------
    def set_filter(self, task_filter: TaskFilter) -> None:
        """A new filter is an operator action: one reset, then updates go back to in-place."""
        if task_filter == self.filter:
            return
        self.filter = task_filter
        self.reload()

    async def set_filter_off_loop(self, task_filter: TaskFilter) -> None:
        """``set_filter`` for typing in the search box: the matching keys (a LIKE over every
        prompt) are read in the reader thread; a newer search supersedes this one."""
        self._wanted_filter = task_filter
        if task_filter == self.filter:
            return
        order = self._wanted_order
        ids = await self.reader.run(self.queries.seqs, task_filter, order)
        if self._wanted_filter == task_filter and self._wanted_order == order:
            self.filter, self.order = task_filter, order
            self.reload(ids)

    def sort(self, wanted: TaskOrder) -> None:
        """A header click: the ORDER BY over every matching row (~0.3 s at 100k rows) runs in the
        reader thread and the rows move when it is done (``self.sorting``); a newer click
        supersedes it."""
        if wanted == self._wanted_order:
            return
        self._wanted_order = wanted
        self.sorting = asyncio.ensure_future(self._sort_off_loop(wanted))

    def read_counts(self) -> None:
        """Now, on the loop: after the operator changed something, the numbers follow at once."""
        started = time.perf_counter()
        snap = self.queries.snapshot()
        self._publish_counts(snap, time.perf_counter() - started)

    def read_counts_soon(self) -> None:
        """After an operator action: new counts as soon as the reader thread has them."""
        self._counts_due = 0.0
        self._tick()

    def mark_dirty(self, seqs: Iterable[int]) -> None:
        """Rows whose contents changed; shown at the next flush."""
        self._dirty.update(seqs)
        self._membership_dirty = True

    def mark_changed_since(self, when: float) -> None:
        """Rows the window itself just wrote (an operator action): shown at the next flush."""
        self.mark_dirty(self.queries.changed_since(when)[0])

    def refresh_membership(self) -> None:
        """Rows were added or deleted: bring the row set up to date at the next flush."""
        self._membership_dirty = True
        self._last_membership = 0.0

    def on_event(self, event: TaskEvent) -> None:
        """A scheduler event: its row is repainted at the next flush."""
        self.mark_dirty([event.seq])
        if self.filter.state is not None and event.kind in STATE_AFTER:
            # It moves in or out of the filtered view at the next tick: a finished row is never
            # shown under "running".
            self.refresh_membership()
        self.task_event.emit(event)

    # --- the view's rows ----------------------------------------------------------------------
    def row_at(self, row: int) -> TaskRow | None:
        seq = self.ids[row]
        cached = self._cache.get(seq)
        if cached is None:
            self._fetch_page(row)
            cached = self._cache.get(seq)
        return cached

    def task_id_at(self, row: int) -> str | None:
        data = self.row_at(row)
        return data.task_id if data else None

    def row_of(self, seq: int) -> int | None:
        return self._rows().get(seq)

    def rows_of(self, seqs: Iterable[int]) -> list[int]:
        """Current rows of these keys (keys no longer in view are left out), ascending."""
        rows_of = self._rows()
        return sorted(rows_of[s] for s in seqs if s in rows_of)

    def seqs_in(self, spans: Iterable[tuple[int, int]]) -> list[int]:
        """The row keys of inclusive (first, last) row ranges, in table order, each once."""
        seqs: list[int] = []
        end = -1
        for first, last in sorted(spans):
            first = max(first, end + 1)
            if last >= first:
                seqs.extend(self.ids[first:last + 1])
                end = last
        return seqs

    def states_of(self, seqs: Sequence[int]) -> set[str]:
        """The distinct states of these rows, from the database (the cache may be stale)."""
        if seqs and len(seqs) == len(self.ids):  # everything in view: one indexed query
            return self.queries.distinct_states(self.filter)
        return self.queries.states_of(seqs)

    def tasks_of(self, seqs: Sequence[int]) -> list[tuple[str, str]]:
        """(task id, state) of these rows in the given order; deleted rows are left out."""
        return self.queries.tasks_of(seqs)

    def matching_task_ids(self, state: str | None = None) -> list[str]:
        """Every task id under the current filter (narrowed to ``state``), in table order."""
        if state is not None and self.filter.state not in (None, state):
            return []
        shown = self.filter if state is None else self.filter.with_state(state)
        return self.queries.task_ids(shown, self.order)

    def reload(self, ids: list[int] | None = None) -> None:
        """Reset to the current filter and order (``ids``: their row keys, already read)."""
        self._generation += 1
        self.resetting.emit()
        self._cache.clear()
        self.ids = self.queries.seqs(self.filter, self.order) if ids is None else ids
        self._row_of = None
        self._dirty.clear()
        self._known_totals = self.queries.totals()
        self._watermark = max(self._watermark, self.queries.newest_update() - 0.5)
        self.was_reset.emit()
        self.filter_changed.emit()

    # --- one cycle ----------------------------------------------------------------------------
    def flush(self) -> None:
        """One cycle, all on the loop (after an operator action: shown at once)."""
        now = time.time()
        if now - self._last_sweep >= SWEEP_S:
            self._last_sweep = now
            self._apply_sweep(self.queries.changed_since(self._watermark), self.queries.totals())
        if self._wants_ids(now):
            self._last_membership = now
            self._membership_dirty = False
            self._apply_ids(self.queries.seqs(self.filter, self.order))
        self._flush_contents(now)

    def _tick(self) -> None:
        """The timer's tick: the big reads (change sweep, row keys, counts) run off the loop."""
        if self.cycling is None or self.cycling.done():
            self.cycling = asyncio.ensure_future(self._cycle())

    async def _cycle(self) -> None:
        now = time.time()
        sweep = now - self._last_sweep >= SWEEP_S
        want_ids = self._wants_ids(now)
        want_counts = time.monotonic() >= self._counts_due
        counts: Counts | None = None
        if sweep or want_ids or want_counts:
            if sweep:
                self._last_sweep = now
            if want_ids:
                self._last_membership = now
                self._membership_dirty = False
            generation, shown, current = self._generation, (self.filter, self.order), list(self.ids)
            changed, totals, keys, counts = await self.reader.run(
                self._read_cycle, sweep, want_ids, want_counts, self._watermark, self._known_totals, shown,
                current)
            if sweep:
                self._apply_sweep(changed, totals)
            if keys is not None and generation == self._generation and shown == (self.filter, self.order):
                self._show_keys(current, *keys)
        self._flush_contents(time.time())
        if counts is not None:
            self._publish_counts(*counts)

    def _read_cycle(self, sweep: bool, want_ids: bool, want_counts: bool, watermark: float,
                    known_totals: tuple[int, int], shown: tuple[TaskFilter, TaskOrder], current: list[int]
                    ) -> tuple[Changes, tuple[int, int], Keys | None, Counts | None]:
        """Worker thread: what changed, the totals, the counts when due, and the row keys when
        they may have moved."""
        changed = self.queries.changed_since(watermark) if sweep else NO_CHANGES
        totals = self.queries.totals() if sweep else known_totals
        counts = self._timed_counts() if want_counts else None
        if not (want_ids or totals != known_totals):
            return changed, totals, None, counts
        return changed, totals, self._read_keys(*shown, current), counts

    def _timed_counts(self) -> Counts:
        """Worker thread: the counts and the CPU they took (the wall time includes waiting for a
        core on a busy machine, which is no cost of ours)."""
        started = time.thread_time()
        snap = self.queries.snapshot()
        return snap, time.thread_time() - started

    def _publish_counts(self, snap: Snapshot, cost_s: float) -> None:
        # The counts are one GROUP BY over the whole store (~0.1 s at 100k rows on a slow box):
        # keep them under ~5 % of the time by stretching the period as the store grows.
        self.counts_period_s = max(COUNTS_S, COUNTS_BUDGET * cost_s)
        self._counts_due = time.monotonic() + self.counts_period_s
        self.last_counts = snap
        self.counts.emit(snap)

    def _wants_ids(self, now: float) -> bool:
        return self._membership_dirty and self._moves_rows() and now - self._last_membership >= MEMBERSHIP_S

    def _moves_rows(self) -> bool:
        return self.filter.volatile or self.order.volatile or self._last_membership == 0.0

    def _flush_contents(self, now: float) -> None:
        self._flush_dirty()
        if now - self._last_tick >= CLOCK_S and self.ids:
            self._last_tick = now
            self.ticked.emit()

    def _apply_sweep(self, changed: Changes, totals: tuple[int, int]) -> None:
        """Changes no scheduler event reported: heartbeats, the CLI or another machine."""
        seqs, newest = changed
        if newest is not None:
            self._watermark = newest - 0.5  # the clocks of several writers are not ordered
            self.mark_dirty(seqs)
        if totals != self._known_totals:
            self._known_totals = totals
            self.refresh_membership()

    def _flush_dirty(self) -> None:
        if not self._dirty:
            return
        dirty, self._dirty = self._dirty, set()
        if len(dirty) > CACHE_LIMIT:  # an import or a bulk action: cheaper to repaint it all
            self._cache.clear()
            if self.ids:
                self.rows_changed.emit(0, len(self.ids) - 1)
        else:
            for seq in dirty:
                self._cache.pop(seq, None)
            self._drop_rows_that_left_the_state_filter(dirty)
            for first, last in row_ranges(self.rows_of(dirty)):
                self.rows_changed.emit(first, last)
        self.tasks_changed.emit(dirty)

    def _drop_rows_that_left_the_state_filter(self, dirty: set[int]) -> None:
        """Under a state filter, a changed row whose state is no longer the filter's leaves now:
        repainted first, it showed e.g. "success" under "running" until the next row-set query
        (at most every MEMBERSHIP_S). The rest of the row set follows at that query."""
        if not self.filter.state or not dirty:
            return
        in_view = [seq for seq in dirty if seq in self._rows()]
        fresh = {row.seq: row for row in self.queries.rows(in_view)} if in_view else {}
        gone = sorted(self._rows()[seq] for seq in in_view
                      if seq not in fresh or fresh[seq].state != self.filter.state)
        self._cache.update({seq: row for seq, row in fresh.items() if row.state == self.filter.state})
        if not gone:
            return
        self._generation += 1
        self._remove_rows(gone)
        self._row_of = None
        self.refresh_membership()

    # --- turning the row keys into new ones, in place -----------------------------------------
    async def _sort_off_loop(self, wanted: TaskOrder) -> None:
        while True:
            shown, current = self.filter, list(self.ids)
            keys = await self.reader.run(self._read_keys, shown, wanted, current)
            if self._wanted_order != wanted:
                return  # a newer click reads its own order
            if self.filter == shown:
                break  # else a new filter landed meanwhile: these keys are not the view's
        self.order = wanted
        self._show_keys(current, *keys)

    def _read_keys(self, task_filter: TaskFilter, order: TaskOrder, current: list[int]) -> Keys:
        """Worker thread: the row keys in table order, each one's row and -- when they are the
        rows of ``current`` in another order -- True: the loop then only moves them (walking
        100k keys there to find what came and went costs it ~50 ms). When rows only came (an
        import), where they go is found here too: on the loop it cost 30-70 ms a step."""
        ids = self.queries.seqs(task_filter, order)
        position = {seq: i for i, seq in enumerate(ids)}
        same_rows = len(position) == len(current) and position.keys() >= set(current)
        return ids, position, same_rows, None if same_rows else _inserted_blocks(current, ids)

    def _show_keys(self, read_from: list[int], ids: list[int], position: dict[int, int],
                   same_rows: bool, blocks: Blocks | None) -> None:
        """Bring the rows to keys read off the loop from the rows ``read_from``."""
        if ids == self.ids:
            return
        before = set(self.ids)
        if read_from != self.ids:  # rows moved on the loop meanwhile: what was found is stale
            self._move_to(ids)
        elif same_rows:
            self._reorder(ids, position)  # the usual case: the same rows in a new order
            return
        elif blocks is not None:
            self._insert_blocks(blocks)  # an import: new rows between the old ones
        else:
            self._move_to(ids)  # rows came and went
        self._row_of = position
        # Read in the reader thread a moment ago: a new row may have left the state filter since.
        self._drop_rows_that_left_the_state_filter({seq for seq in ids if seq not in before})

    def _apply_ids(self, new: list[int]) -> None:
        """Turn the current row list into ``new``; under a state filter, rows that left it since
        the row keys were read (in the reader thread) leave again at once, before any is shown."""
        before = set(self.ids)
        self._move_to(new)
        self._drop_rows_that_left_the_state_filter({seq for seq in new if seq not in before})

    def _remove_rows(self, rows: list[int]) -> None:
        """Take these rows (ascending) out, a range at a time, the last first."""
        for first, last in reversed(row_ranges(rows)):
            self.removing.emit(first, last)
            del self.ids[first:last + 1]
            self.removed.emit()

    def _insert(self, position: int, rows: list[int]) -> None:
        self.inserting.emit(position, position + len(rows) - 1)
        self.ids[position:position] = rows
        self.inserted.emit()

    def _move_to(self, new: list[int]) -> None:
        """Turn the current row list into ``new`` with removes, a reorder and inserts -- no reset."""
        if new == self.ids:
            return
        self._generation += 1
        self._row_of = None
        if self._insert_new_blocks(new):
            return
        new_set = set(new)
        self._remove_rows([i for i, seq in enumerate(self.ids) if seq not in new_set])
        kept = set(self.ids)
        target = [seq for seq in new if seq in kept]
        if target != self.ids:
            self._reorder(target)
        i = 0
        while i < len(new):
            if i < len(self.ids) and self.ids[i] == new[i]:
                i += 1
                continue
            j = i
            while j < len(new) and new[j] not in kept:
                j += 1
            self._insert(i, new[i:j])
            i = j
        self._row_of = None

    def _insert_new_blocks(self, new: list[int]) -> bool:
        """The common case of an import: blocks of new rows between old ones that keep their
        order (a batch arriving in steps lands after its earlier steps, above older batches).
        The runs of old rows are found by comparing slices, which happens in C: 200k rows cost
        a few ms instead of a walk in Python."""
        blocks = _inserted_blocks(self.ids, new)
        if blocks is None:
            return False
        self._insert_blocks(blocks)
        return True

    def _insert_blocks(self, blocks: Blocks) -> None:
        self._generation += 1
        self._row_of = None
        for position, rows in blocks:
            self._insert(position, rows)

    def _reorder(self, target: list[int], position: dict[int, int] | None = None) -> None:
        """The same rows in the order of ``target`` (``position``: each key's row in it)."""
        self._generation += 1
        position = {seq: i for i, seq in enumerate(target)} if position is None else position
        self.reordering.emit(position)
        self.ids = target
        self._row_of = position
        self.reordered.emit()

    # --- reading rows -------------------------------------------------------------------------
    def _rows(self) -> dict[int, int]:
        if self._row_of is None:
            self._row_of = {seq: i for i, seq in enumerate(self.ids)}
        return self._row_of

    def _fetch_page(self, row: int) -> None:
        if len(self._cache) > CACHE_LIMIT:
            self._cache.clear()
        start = row - row % PAGE
        wanted = [s for s in self.ids[start:start + PAGE] if s not in self._cache]
        for found in self.queries.rows(wanted):
            self._cache[found.seq] = found


def _common_run(old: list[int], p: int, new: list[int], q: int) -> int:
    """How many rows from ``old[p]`` and ``new[q]`` on are equal (slices compare in C)."""
    longest = min(len(old) - p, len(new) - q)
    if old[p:p + longest] == new[q:q + longest]:
        return longest
    low, high = 0, longest  # old[p:p+low] matches, old[p:p+high] does not
    while high - low > 1:
        middle = (low + high) // 2
        if old[p:p + middle] == new[q:q + middle]:
            low = middle
        else:
            high = middle
    return low


def _inserted_blocks(old: list[int], new: list[int]) -> Blocks | None:
    """``new`` as ``old`` plus blocks of fresh keys, as (position in new, keys); None when rows
    were also removed or reordered."""
    if len(new) <= len(old):
        return None
    known = set(old)
    blocks: Blocks = []
    p = q = 0
    while q < len(new):
        run = _common_run(old, p, new, q)
        p, q = p + run, q + run
        if q == len(new):
            break
        end = len(new) if p == len(old) else _index(new, old[p], q)
        if end is None or not known.isdisjoint(new[q:end]):
            return None
        blocks.append((q, new[q:end]))
        q = end
    return blocks if p == len(old) else None


def _index(items: list[int], value: int, start: int) -> int | None:
    try:
        return items.index(value, start)
    except ValueError:
        return None


def row_ranges(sorted_rows: Sequence[int]) -> list[tuple[int, int]]:
    """[1, 2, 3, 7, 8] -> [(1, 3), (7, 8)]"""
    ranges: list[tuple[int, int]] = []
    for row in sorted_rows:
        if ranges and row == ranges[-1][1] + 1:
            ranges[-1] = (ranges[-1][0], row)
        else:
            ranges.append((row, row))
    return ranges
