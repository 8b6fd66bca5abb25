"""The task table: a window onto the store that stays smooth at 100,000 rows.

Why it is built this way: a ``QSortFilterProxyModel`` needs ~11 s to sort
100k rows, so sorting and filtering happen in the database (``core.queries``) and the model only
holds the ordered list of row keys (``seq``). Row contents are fetched a page at a time when the
view asks for them and cached. Updates never reset the model: changed rows are collected
(scheduler events, a periodic ``updated_at`` sweep) and flushed on a timer as one
``dataChanged`` per contiguous range; when the set of matching rows changes, the model
inserts/removes/reorders rows in place.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, QTimer
from PySide6.QtGui import QColor

from mediaassist.core.queries import OffLoopReader, Queries, TaskFilter, TaskMoney, TaskOrder, TaskRow
from mediaassist.core.secrets import redact
from mediaassist.ui.core_texts import translated
from mediaassist.ui.i18n import labelled, tr
from mediaassist.ui.labels import cost_source_label, error_kind_labels, format_seconds, money_text, state_labels
from mediaassist.ui.marks import kind_badge, state_icon, video_icon
from mediaassist.ui.thumbnails import ThumbnailCache, is_image, is_video

Index = QModelIndex | QPersistentModelIndex
ROOT = QModelIndex()  # the invalid index: the parent of every row (a flat table)
Changes = tuple[list[int], float | None]  # changed keys, the newest write among them
NO_CHANGES: Changes = ([], None)
Blocks = list[tuple[int, list[int]]]  # fresh row keys to insert: (position, keys)
# Row keys in order, key -> row, the same rows as shown, and -- when only new rows came -- their blocks
Keys = tuple[list[int], dict[int, int], bool, Blocks | None]

PAGE = 200  # rows fetched per query when the view scrolls onto uncached rows
CACHE_LIMIT = 5000  # cached rows before the cache is dropped (the view only needs a screenful)
FLUSH_MS = 200  # coalescing period for dataChanged
MEMBERSHIP_S = 1.0  # at most this often: re-run the id query when states move rows in/out
SWEEP_S = 2.0  # catch changes no event told us about (heartbeats, other processes)
THUMB = 30  # px: fits the table's row height
ROW_FLAGS = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
NO_FLAGS = Qt.ItemFlag.NoItemFlags
DISPLAY, DECORATION, TOOLTIP = (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.DecorationRole,
                                Qt.ItemDataRole.ToolTipRole)


@dataclass(frozen=True)
class Column:
    key: str
    sort_key: str | None  # a key of core.queries.SORT_KEYS; None: not sortable
    width: int  # px at first start; a stretching column's share of the room instead
    volatile: bool = False  # changes while tasks run: sorting on it moves rows
    shown: bool = True  # shown until the operator's column chooser says otherwise
    stretch: bool = False  # takes the table's spare width (long text, elided); never scrolls sideways
    # as narrow as its title while the rows in view have nothing in it (pending rows have no
    # result or error): the prompt gets that room
    fit: bool = False


# Column order is the table's order: what the operator reads first comes first. The default set
# fits a 1366 px laptop's table without a sideways scroll bar (tests/ui/test_fit.py): the text
# columns stretch and elide, the others are as narrow as their content; ids are in the detail
# pane and the batch list, and a column chooser away.
COLUMNS: tuple[Column, ...] = (
    Column("state", "state", 96, volatile=True),
    Column("prompt", "prompt", 300, stretch=True),
    Column("result", None, 200, fit=True),
    Column("output", None, 40),
    Column("error", "error", 170, volatile=True, fit=True),  # the reason, read beside the prompt
    Column("model", "model", 90),
    Column("lane", "lane", 100, volatile=True),
    # Which machine ran it: news on a team's shared store, noise on one desktop (hidden there).
    Column("machine", "machine", 100, volatile=True),
    Column("attempt", "attempt", 40, volatile=True),
    Column("created", "created", 80),
    Column("duration", "duration", 64, volatile=True),
    Column("cost", "cost", 70, volatile=True),
    Column("heartbeat", "heartbeat", 80, volatile=True, shown=False),
    Column("batch", "batch", 150, shown=False),
    Column("task_id", "task_id", 160, shown=False),
)
COL = {c.key: i for i, c in enumerate(COLUMNS)}
CLOCK_COLUMNS = (COL["duration"], COL["heartbeat"])  # tick every second while tasks run


def column_label(key: str) -> str:
    return {"state": tr("State"), "prompt": tr("Prompt"), "result": tr("Result"), "output": tr("Output"),
            "error": tr("Error"), "model": tr("Model"), "lane": tr("Lane"), "attempt": tr("Attempt"),
            "created": tr("Created"), "duration": tr("Duration"), "heartbeat": tr("Heartbeat age"),
            "batch": tr("Batch"), "task_id": tr("Task"), "machine": tr("Machine"), "cost": tr("Cost")}[key]


STATE_COLORS = {"pending": QColor("#8d6e63"), "running": QColor("#1565c0"), "success": QColor("#2e7d32"),
                "failed": QColor("#c62828"), "canceled": QColor("#757575")}

TaskIdRole = Qt.ItemDataRole.UserRole
StateRole = Qt.ItemDataRole.UserRole + 1
SeqRole = Qt.ItemDataRole.UserRole + 2


def local_time(ts: float | None) -> str:
    """Local wall-clock time, short enough for a narrow column (the tooltip has all of it): the
    time today, month and day this year, the date before that."""
    if ts is None:
        return ""
    moment, now = datetime.fromtimestamp(ts), datetime.now()
    if moment.date() == now.date():
        return moment.strftime("%H:%M:%S")
    return moment.strftime("%m-%d %H:%M" if moment.year == now.year else "%Y-%m-%d")


def precise_local_time(ts: float) -> str:
    """Local time to the millisecond, for log lines."""
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def lane_text(row: TaskRow) -> str:
    """The account that runs a web task, or the provider of an API/poll task."""
    target = row.route.partition(":")[2] or row.route
    if row.model_kind == "web":
        return row.account or tr("{site}: any account").format(site=target)
    return target


def one_line(text: str | None) -> str:
    return redact(text or "").replace("\r", " ").replace("\n", " ").strip()


def result_text(row: TaskRow) -> str:
    if row.result_text:
        return one_line(translated(row.result_shown))
    if row.files:
        return tr("{n} files").format(n=len(row.files)) if len(row.files) > 1 else row.files[0].rsplit("/", 1)[-1]
    return ""


def cost_text(row: TaskRow) -> str:
    """What the task cost; before it has, what it is estimated at ("≈ ¥0.40")."""
    if row.money is None:
        return ""
    if row.money.cost:
        return money_text(row.money.cost)
    if row.state in ("pending", "running") and row.money.estimate:
        return "≈ " + money_text(row.money.estimate)
    return ""


def cost_tooltip(money: TaskMoney) -> str:
    """Actual beside estimate, and where the actual came from."""
    lines = []
    if money.cost:
        lines.append(tr("Cost: {cost} ({source})").format(
            cost=money_text(money.cost), source=tr(", ").join(map(cost_source_label, money.sources))))
    if money.estimate:
        lines.append(tr("Estimated: {estimate}").format(estimate=money_text(money.estimate)))
    return "\n".join(lines)


class TaskTableModel(QAbstractTableModel):
    def __init__(self, queries: Queries, reader: OffLoopReader, parent: Any = None) -> None:
        """``queries`` on the loop, ``reader`` (its own connection) in a worker thread."""
        super().__init__(parent)
        self.queries = queries
        self.reader = reader
        self._reading: asyncio.Future[None] | None = None
        self._generation = 0  # bumped by every row-set change made on the loop
        self.filter = TaskFilter()
        self._wanted_filter = self.filter  # the newest search asked for (off the loop)
        self.order = TaskOrder()
        self._wanted_order = self.order  # the newest header click (its keys are read off the loop)
        self.sorting: asyncio.Future[None] | None = None  # the read of the newest click, if any
        self.thumbnails = ThumbnailCache(THUMB, self)
        self.thumbnails.ready.connect(self._thumbnail_ready)
        self._thumb_rows: dict[str, int] = {}  # path -> seq of the row that asked for it
        self._ids: list[int] = []
        self._row_of: dict[int, int] | None = None
        self._cache: dict[int, TaskRow] = {}
        self._dirty: set[int] = set()
        self._membership_dirty = False
        self._last_membership = 0.0
        self._last_sweep = time.time()
        self._last_tick = 0.0
        self._watermark = 0.0
        self._known_totals = (0, 0)
        self._timer = QTimer(self)
        self._timer.setInterval(FLUSH_MS)
        self._timer.timeout.connect(self._tick)
        self.reload()

    # --- Qt model API ------------------------------------------------------------------------
    def rowCount(self, parent: Index = ROOT) -> int:
        return 0 if parent.isValid() else len(self._ids)

    def columnCount(self, parent: Index = ROOT) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = DISPLAY) -> Any:
        if role == DISPLAY and orientation == Qt.Orientation.Horizontal and 0 <= section < len(COLUMNS):
            return column_label(COLUMNS[section].key)
        return None

    def data(self, index: Index, role: int = DISPLAY) -> Any:
        if not index.isValid() or index.row() >= len(self._ids):
            return None
        row = self._row(index.row())
        if row is None:
            return None
        key = COLUMNS[index.column()].key
        if role == DISPLAY:
            return self._display(row, key)
        if role == DECORATION:
            return self._decoration(row, key)
        if role == TOOLTIP:
            return self._tooltip(row, key)
        if role == Qt.ItemDataRole.ForegroundRole and key == "state":
            return STATE_COLORS.get(row.state)
        if role == TaskIdRole:
            return row.task_id
        if role == StateRole:
            return row.state
        if role == SeqRole:
            return row.seq
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        # Qt may ask per cell (1M calls when 100k rows are selected): precomputed constants only.
        return ROW_FLAGS if index.isValid() else NO_FLAGS

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """A header click: the ORDER BY over every matching row (~0.3 s at 100k rows) runs in the
        reader thread and the rows move when it is done (``self.sorting``); a newer click
        supersedes it."""
        key = COLUMNS[column].sort_key if 0 <= column < len(COLUMNS) else None
        wanted = TaskOrder(key, order == Qt.SortOrder.DescendingOrder)
        if wanted == self._wanted_order:
            return
        self._wanted_order = wanted
        self.sorting = asyncio.ensure_future(self._sort_off_loop(wanted))

    # --- public API for the window -----------------------------------------------------------
    def start(self) -> None:
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()
        for reading in (self._reading, self.sorting):
            if reading is not None:
                reading.cancel()
        self.thumbnails.close()
        self.reader.close()

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

    async def _sort_off_loop(self, wanted: TaskOrder) -> None:
        while True:
            shown, current = self.filter, list(self._ids)
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
        if ids == self._ids:
            return
        before = set(self._ids)
        if read_from != self._ids:  # rows moved on the loop meanwhile: what was found is stale
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

    def reload(self, ids: list[int] | None = None) -> None:
        """Reset to the current filter and order (``ids``: their row keys, already read)."""
        self._generation += 1
        self.beginResetModel()
        self._cache.clear()
        self._ids = self._query_ids() if ids is None else ids
        self._row_of = None
        self._dirty.clear()
        self._known_totals = self.queries.totals()
        self._watermark = max(self._watermark, self.queries.newest_update() - 0.5)
        self.endResetModel()

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

    def task_id_at(self, row: int) -> str | None:
        data = self._row(row)
        return data.task_id if data else None

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
                seqs.extend(self._ids[first:last + 1])
                end = last
        return seqs

    def states_of(self, seqs: Sequence[int]) -> set[str]:
        """The distinct states of these rows, from the database (the cache may be stale)."""
        if seqs and len(seqs) == len(self._ids):  # everything in view: one indexed query
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

    # --- updates -----------------------------------------------------------------------------
    def flush(self) -> None:
        """One coalescing tick, all on the loop (after an operator action: shown at once)."""
        now = time.time()
        if now - self._last_sweep >= SWEEP_S:
            self._last_sweep = now
            self._apply_sweep(self.queries.changed_since(self._watermark), self.queries.totals())
        if self._wants_ids(now):
            self._last_membership = now
            self._membership_dirty = False
            self._apply_ids(self._query_ids())
        self._flush_contents(now)

    def _tick(self) -> None:
        """The timer's tick: the big reads (change sweep, row keys) run off the loop."""
        if self._reading is None or self._reading.done():
            self._reading = asyncio.ensure_future(self._tick_off_loop())

    async def _tick_off_loop(self) -> None:
        now = time.time()
        sweep = now - self._last_sweep >= SWEEP_S
        want_ids = self._wants_ids(now)
        if sweep or want_ids:
            if sweep:
                self._last_sweep = now
            if want_ids:
                self._last_membership = now
                self._membership_dirty = False
            generation, shown, current = self._generation, (self.filter, self.order), list(self._ids)
            changed, totals, keys = await self.reader.run(
                self._read_changes, sweep, want_ids, self._watermark, self._known_totals, shown, current)
            if sweep:
                self._apply_sweep(changed, totals)
            if keys is not None and generation == self._generation and shown == (self.filter, self.order):
                self._show_keys(current, *keys)
        self._flush_contents(time.time())

    def _read_changes(self, sweep: bool, want_ids: bool, watermark: float, known_totals: tuple[int, int],
                      shown: tuple[TaskFilter, TaskOrder], current: list[int]
                      ) -> tuple[Changes, tuple[int, int], Keys | None]:
        """Worker thread: what changed, the totals, and the row keys when they may have moved."""
        changed = self.queries.changed_since(watermark) if sweep else NO_CHANGES
        totals = self.queries.totals() if sweep else known_totals
        if not (want_ids or totals != known_totals):
            return changed, totals, None
        return changed, totals, self._read_keys(*shown, current)

    def _wants_ids(self, now: float) -> bool:
        return self._membership_dirty and self._moves_rows() and now - self._last_membership >= MEMBERSHIP_S

    def _flush_contents(self, now: float) -> None:
        self._flush_dirty()
        if now - self._last_tick >= 1.0 and self._ids:
            self._last_tick = now
            for column in CLOCK_COLUMNS:
                self.dataChanged.emit(self.index(0, column), self.index(len(self._ids) - 1, column),
                                      [DISPLAY])

    def _moves_rows(self) -> bool:
        sort_volatile = self.order.key is not None and any(
            c.volatile for c in COLUMNS if c.sort_key == self.order.key)
        return self.filter.volatile or sort_volatile or self._last_membership == 0.0

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
        last_col = len(COLUMNS) - 1
        if len(dirty) > CACHE_LIMIT:  # an import or a bulk action: cheaper to repaint it all
            self._cache.clear()
            if self._ids:
                self.dataChanged.emit(self.index(0, 0), self.index(len(self._ids) - 1, last_col))
            return
        for seq in dirty:
            self._cache.pop(seq, None)
        self._drop_rows_that_left_the_state_filter(dirty)
        for first, last in row_ranges(self.rows_of(dirty)):
            self.dataChanged.emit(self.index(first, 0), self.index(last, last_col))

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

    def _thumbnail_ready(self, path: str) -> None:
        seq = self._thumb_rows.pop(path, None)
        row = self._rows().get(seq) if seq is not None else None
        if row is not None:
            cell = self.index(row, COL["output"])
            self.dataChanged.emit(cell, cell, [DECORATION])

    def _apply_ids(self, new: list[int]) -> None:
        """Turn the current row list into ``new``; under a state filter, rows that left it since
        the row keys were read (in the reader thread) leave again at once, before any is shown."""
        before = set(self._ids)
        self._move_to(new)
        self._drop_rows_that_left_the_state_filter({seq for seq in new if seq not in before})

    def _remove_rows(self, rows: list[int]) -> None:
        """Take these rows (ascending) out, a range at a time, the last first."""
        for first, last in reversed(row_ranges(rows)):
            self.beginRemoveRows(QModelIndex(), first, last)
            del self._ids[first:last + 1]
            self.endRemoveRows()

    def _move_to(self, new: list[int]) -> None:
        """Turn the current row list into ``new`` with removes, a reorder and inserts -- no reset."""
        if new == self._ids:
            return
        self._generation += 1
        self._row_of = None
        if self._insert_new_blocks(new):
            return
        new_set = set(new)
        self._remove_rows([i for i, seq in enumerate(self._ids) if seq not in new_set])
        kept = set(self._ids)
        target = [seq for seq in new if seq in kept]
        if target != self._ids:
            self._reorder(target)
        i = 0
        while i < len(new):
            if i < len(self._ids) and self._ids[i] == new[i]:
                i += 1
                continue
            j = i
            while j < len(new) and new[j] not in kept:
                j += 1
            self.beginInsertRows(QModelIndex(), i, j - 1)
            self._ids[i:i] = new[i:j]
            self.endInsertRows()
            i = j
        self._row_of = None

    def _insert_new_blocks(self, new: list[int]) -> bool:
        """The common case of an import: blocks of new rows between old ones that keep their
        order (a batch arriving in steps lands after its earlier steps, above older batches).
        The runs of old rows are found by comparing slices, which happens in C: 200k rows cost
        a few ms instead of a walk in Python."""
        blocks = _inserted_blocks(self._ids, new)
        if blocks is None:
            return False
        self._insert_blocks(blocks)
        return True

    def _insert_blocks(self, blocks: Blocks) -> None:
        self._generation += 1
        self._row_of = None
        for position, rows in blocks:
            self.beginInsertRows(QModelIndex(), position, position + len(rows) - 1)
            self._ids[position:position] = rows
            self.endInsertRows()

    def _reorder(self, target: list[int], position: dict[int, int] | None = None) -> None:
        """The same rows in the order of ``target`` (``position``: each key's row in it)."""
        self._generation += 1
        self.layoutAboutToBeChanged.emit()
        position = {seq: i for i, seq in enumerate(target)} if position is None else position
        old = self.persistentIndexList()
        moved = [self.index(position[self._ids[idx.row()]], idx.column()) for idx in old]
        self._ids = target
        self._row_of = position
        self.changePersistentIndexList(old, moved)
        self.layoutChanged.emit()

    # --- reading -----------------------------------------------------------------------------
    def _query_ids(self) -> list[int]:
        return self.queries.seqs(self.filter, self.order)

    def _rows(self) -> dict[int, int]:
        if self._row_of is None:
            self._row_of = {seq: i for i, seq in enumerate(self._ids)}
        return self._row_of

    def _row(self, row: int) -> TaskRow | None:
        seq = self._ids[row]
        cached = self._cache.get(seq)
        if cached is None:
            self._fetch_page(row)
            cached = self._cache.get(seq)
        return cached

    def _fetch_page(self, row: int) -> None:
        if len(self._cache) > CACHE_LIMIT:
            self._cache.clear()
        start = row - row % PAGE
        wanted = [s for s in self._ids[start:start + PAGE] if s not in self._cache]
        for found in self.queries.rows(wanted):
            self._cache[found.seq] = found

    # --- cells -------------------------------------------------------------------------------
    @staticmethod
    def _display(row: TaskRow, key: str) -> Any:
        if key == "state":
            return state_labels().get(row.state, row.state)
        if key == "prompt":  # a picked output shows where the operator reads first
            return ("★ " if row.picked else "") + one_line(row.prompt)
        if key == "result":
            return result_text(row)
        if key == "error":
            return one_line(translated(row.error_text)) if row.error_kind else ""
        if key == "lane":
            return lane_text(row)
        if key == "attempt":  # "1" on every row is noise: only retries and live attempts show
            return str(row.attempt) if row.attempt > 1 or row.state == "running" else ""
        if key == "created":
            return local_time(row.created_at)
        if key == "duration":
            return format_seconds((row.finished_at or time.time()) - row.started_at) if row.started_at else ""
        if key == "heartbeat":
            return format_seconds(time.time() - row.heartbeat_at) if row.state == "running" and row.heartbeat_at else ""
        if key == "cost":
            return cost_text(row)
        return {"model": row.model, "batch": row.batch_id, "task_id": row.task_id, "machine": row.host}.get(key)

    def _decoration(self, row: TaskRow, key: str) -> Any:
        if key == "state":
            return state_icon(STATE_COLORS.get(row.state, QColor("#757575")))
        if key == "error" and row.error_kind:
            return kind_badge(error_kind_labels().get(row.error_kind, row.error_kind))
        if key == "output" and row.files:
            return self._thumbnail(row)
        return None

    def _thumbnail(self, row: TaskRow) -> Any:
        """The first image's thumbnail, else the first video's first frame (the generic video
        mark while it is decoded, or when it cannot be)."""
        media = next((f for f in row.files if is_image(f)), None) or next((f for f in row.files if is_video(f)), None)
        if media is None:
            return None
        pixmap = self.thumbnails.get(media)
        if pixmap is None:
            self._thumb_rows[media] = row.seq
            return video_icon() if is_video(media) else None
        return pixmap

    @staticmethod
    def _tooltip(row: TaskRow, key: str) -> str | None:
        if key == "prompt":
            return redact(row.prompt) or None
        if key == "result":
            return "\n".join([translated(row.result_shown), *row.files]).strip() or None
        if key == "output":
            return "\n".join(row.files) or None
        if key == "error" and row.error_kind:
            kind = error_kind_labels().get(row.error_kind, row.error_kind)
            return labelled(kind, translated(row.error_text))
        if key == "lane":
            return row.route if row.account is None else f"{row.route} · {row.account}"
        if key == "cost" and row.money is not None:
            return cost_tooltip(row.money)
        if key == "created":
            return datetime.fromtimestamp(row.created_at).strftime("%Y-%m-%d %H:%M:%S")
        if key in ("batch", "task_id"):
            return row.batch_id if key == "batch" else row.task_id
        return None


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
