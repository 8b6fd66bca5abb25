"""The task table: a window onto the store that stays smooth at 100,000 rows.

Why it is built this way (see qt-app-notes §2): a ``QSortFilterProxyModel`` needs ~11 s to sort
100k rows, so sorting and filtering happen in SQL and the model only holds the ordered list of row
keys (``seq``). Row contents are fetched a page at a time when the view asks for them and cached.
Updates never reset the model: changed rows are collected (scheduler events, a periodic
``updated_at`` sweep) and flushed on a timer as one ``dataChanged`` per contiguous range; when
the set of matching rows changes, the model inserts/removes/reorders rows in place.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, QTimer
from PySide6.QtGui import QColor

from mediaassist.core.secrets import redact
from mediaassist.core.store import Store
from mediaassist.ui.i18n import tr
from mediaassist.ui.labels import error_kind_labels, format_seconds, state_labels

Index = QModelIndex | QPersistentModelIndex

PAGE = 200  # rows fetched per query when the view scrolls onto uncached rows
CACHE_LIMIT = 5000  # cached rows before the cache is dropped (the view only needs a screenful)
FLUSH_MS = 200  # coalescing period for dataChanged
MEMBERSHIP_S = 1.0  # at most this often: re-run the id query when states move rows in/out
SWEEP_S = 2.0  # catch changes no event told us about (heartbeats, other processes)
SEQ_CHUNK = 5000  # row keys per ``seq IN (...)`` statement (SQLite allows 32766 variables)
ROW_FLAGS = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
NO_FLAGS = Qt.ItemFlag.NoItemFlags

LANE_SQL = "CASE WHEN model_kind = 'web' AND account IS NOT NULL THEN 'web:' || account ELSE route END"
_ROW_SQL = ("SELECT seq, task_id, batch_id, model, " + LANE_SQL + ", state, attempt, error_kind, "
            "heartbeat_at, started_at, finished_at, substr(prompt, 1, 200), error FROM task")


@dataclass(frozen=True)
class Column:
    key: str
    sort_sql: str
    volatile: bool = False  # changes while tasks run: sorting on it moves rows


# Column order is the table's order. Labels are translated in headerData.
COLUMNS: tuple[Column, ...] = (
    Column("task_id", "task_id"),
    Column("batch", "batch_id"),
    Column("model", "model"),
    Column("lane", LANE_SQL, volatile=True),
    Column("state", "state", volatile=True),
    Column("attempt", "attempt", volatile=True),
    Column("error_kind", "error_kind", volatile=True),
    Column("heartbeat", "heartbeat_at", volatile=True),
    Column("duration", "COALESCE(finished_at, strftime('%s','now')) - started_at", volatile=True),
    Column("prompt", "prompt"),
)
COL = {c.key: i for i, c in enumerate(COLUMNS)}


def column_label(key: str) -> str:
    return {"task_id": tr("Task"), "batch": tr("Batch"), "model": tr("Model"), "lane": tr("Lane"),
            "state": tr("State"), "attempt": tr("Attempt"), "error_kind": tr("Error"),
            "heartbeat": tr("Heartbeat age"), "duration": tr("Duration"), "prompt": tr("Prompt")}[key]


# Positions in the row tuple of _ROW_SQL
(R_SEQ, R_ID, R_BATCH, R_MODEL, R_LANE, R_STATE, R_ATTEMPT, R_KIND, R_BEAT, R_START, R_END,
 R_PROMPT, R_ERROR) = range(13)

STATE_COLORS = {"running": QColor("#1565c0"), "success": QColor("#2e7d32"), "failed": QColor("#c62828"),
                "canceled": QColor("#757575")}

TaskIdRole = Qt.ItemDataRole.UserRole
StateRole = Qt.ItemDataRole.UserRole + 1
SeqRole = Qt.ItemDataRole.UserRole + 2


@dataclass(frozen=True)
class TaskFilter:
    state: str | None = None
    lane: str | None = None
    batch: str | None = None
    text: str = ""

    def where(self) -> tuple[str, list[Any]]:
        clauses: list[str] = []
        args: list[Any] = []
        if self.state:
            clauses.append("state = ?")
            args.append(self.state)
        if self.lane:
            clauses.append(f"({LANE_SQL}) = ?")
            args.append(self.lane)
        if self.batch:
            clauses.append("batch_id = ?")
            args.append(self.batch)
        if self.text:
            like = "%" + self.text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            clauses.append("(task_id LIKE ? ESCAPE '\\' OR prompt LIKE ? ESCAPE '\\' "
                           "OR error LIKE ? ESCAPE '\\' OR model LIKE ? ESCAPE '\\')")
            args.extend([like] * 4)
        return (" WHERE " + " AND ".join(clauses)) if clauses else "", args

    @property
    def volatile(self) -> bool:
        """Rows move in or out of this filter as tasks run (state/lane/error text change)."""
        return bool(self.state or self.lane or self.text)


class TaskTableModel(QAbstractTableModel):
    def __init__(self, store: Store, parent: Any = None) -> None:
        super().__init__(parent)
        self.store = store
        self.filter = TaskFilter()
        self._sort_col = -1  # -1: queue order (seq)
        self._sort_desc = False
        self._ids: list[int] = []
        self._row_of: dict[int, int] | None = None
        self._cache: dict[int, tuple[Any, ...]] = {}
        self._dirty: set[int] = set()
        self._membership_dirty = False
        self._last_membership = 0.0
        self._last_sweep = time.time()
        self._last_tick = 0.0
        self._watermark = 0.0
        self._known_totals = (0, 0)
        self._timer = QTimer(self)
        self._timer.setInterval(FLUSH_MS)
        self._timer.timeout.connect(self.flush)
        self.reload()

    # --- Qt model API ------------------------------------------------------------------------
    def rowCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._ids)

    def columnCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            if 0 <= section < len(COLUMNS):
                return column_label(COLUMNS[section].key)
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.row() >= len(self._ids):
            return None
        row = self._row(index.row())
        if row is None:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(row, COLUMNS[index.column()].key)
        if role == Qt.ItemDataRole.ToolTipRole:
            return redact(row[R_ERROR] or "") if COLUMNS[index.column()].key == "error_kind" else None
        if role == Qt.ItemDataRole.ForegroundRole and COLUMNS[index.column()].key == "state":
            return STATE_COLORS.get(row[R_STATE])
        if role == TaskIdRole:
            return row[R_ID]
        if role == StateRole:
            return row[R_STATE]
        if role == SeqRole:
            return row[R_SEQ]
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        # Qt may ask per cell (1M calls when 100k rows are selected): precomputed constants only.
        return ROW_FLAGS if index.isValid() else NO_FLAGS

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        self._sort_col = column if 0 <= column < len(COLUMNS) else -1
        self._sort_desc = order == Qt.SortOrder.DescendingOrder
        self._apply_ids(self._query_ids())

    # --- public API for the window -----------------------------------------------------------
    def start(self) -> None:
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()

    def set_filter(self, task_filter: TaskFilter) -> None:
        """A new filter is an operator action: one reset, then updates go back to in-place."""
        if task_filter == self.filter:
            return
        self.filter = task_filter
        self.reload()

    def reload(self) -> None:
        self.beginResetModel()
        self._cache.clear()
        self._ids = self._query_ids()
        self._row_of = None
        self._dirty.clear()
        self._known_totals = self._totals()
        newest = self.store.db.execute_sql("SELECT MAX(updated_at) FROM task").fetchone()[0]
        self._watermark = max(self._watermark, (newest or 0.0) - 0.5)
        self.endResetModel()

    def mark_dirty(self, seqs: Iterable[int]) -> None:
        """Rows whose contents changed; shown at the next flush."""
        self._dirty.update(seqs)
        self._membership_dirty = True

    def refresh_membership(self) -> None:
        """Rows were added or deleted: bring the row set up to date at the next flush."""
        self._membership_dirty = True
        self._last_membership = 0.0

    def task_id_at(self, row: int) -> str | None:
        data = self._row(row)
        return data[R_ID] if data else None

    def row_of_task(self, task_id: str) -> int | None:
        found = self.store.db.execute_sql("SELECT seq FROM task WHERE task_id = ?", (task_id,)).fetchone()
        return self._rows().get(found[0]) if found else None

    def seqs_in(self, row_ranges: Iterable[tuple[int, int]]) -> list[int]:
        """The row keys of inclusive (first, last) row ranges, in table order, each once."""
        seqs: list[int] = []
        end = -1
        for first, last in sorted(row_ranges):
            first = max(first, end + 1)
            if last >= first:
                seqs.extend(self._ids[first:last + 1])
                end = last
        return seqs

    def states_of(self, seqs: Sequence[int]) -> set[str]:
        """The distinct states of these rows, from the database (the cache may be stale)."""
        if seqs and len(seqs) == len(self._ids):  # everything in view: one indexed query
            where, args = self.filter.where()
            return {r[0] for r in self.store.db.execute_sql(f"SELECT DISTINCT state FROM task{where}", args)}
        return {r[0] for r in self._in_chunks("SELECT DISTINCT state FROM task", seqs)}

    def tasks_of(self, seqs: Sequence[int]) -> list[tuple[str, str]]:
        """(task id, state) of these rows in the given order; deleted rows are left out."""
        found = {r[0]: (r[1], r[2]) for r in self._in_chunks("SELECT seq, task_id, state FROM task", seqs)}
        return [found[seq] for seq in seqs if seq in found]

    def _in_chunks(self, select: str, seqs: Sequence[int]) -> Iterator[tuple[Any, ...]]:
        for start in range(0, len(seqs), SEQ_CHUNK):
            chunk = seqs[start:start + SEQ_CHUNK]
            yield from self.store.db.execute_sql(f"{select} WHERE seq IN ({','.join('?' * len(chunk))})", chunk)

    def matching_task_ids(self) -> list[str]:
        """Every task id under the current filter, in table order (bulk actions, export)."""
        where, args = self.filter.where()
        cursor = self.store.db.execute_sql(f"SELECT task_id FROM task{where}{self._order_by()}", args)
        return [r[0] for r in cursor]

    # --- updates -----------------------------------------------------------------------------
    def flush(self) -> None:
        """One coalescing tick: row-set changes, then contents, then the running clocks."""
        now = time.time()
        if now - self._last_sweep >= SWEEP_S:
            self._sweep()
            self._last_sweep = now
        if self._membership_dirty and self._moves_rows() and now - self._last_membership >= MEMBERSHIP_S:
            self._membership_dirty = False
            self._last_membership = now
            self._apply_ids(self._query_ids())
        self._flush_dirty()
        if now - self._last_tick >= 1.0 and self._ids:
            self._last_tick = now
            first, last = COL["heartbeat"], COL["duration"]
            self.dataChanged.emit(self.index(0, first), self.index(len(self._ids) - 1, last),
                                  [Qt.ItemDataRole.DisplayRole])

    def _moves_rows(self) -> bool:
        sort_volatile = self._sort_col >= 0 and COLUMNS[self._sort_col].volatile
        return self.filter.volatile or sort_volatile or self._last_membership == 0.0

    def _sweep(self) -> None:
        """Changes no scheduler event reported: heartbeats, the CLI or another machine."""
        db = self.store.db
        changed = db.execute_sql("SELECT seq, updated_at FROM task WHERE updated_at > ?",
                                 (self._watermark,)).fetchall()
        if changed:
            self._watermark = max(u for _, u in changed) - 0.5  # clocks of writers are not ordered
            self.mark_dirty(seq for seq, _ in changed)
        totals = self._totals()
        if totals != self._known_totals:
            self._known_totals = totals
            self.refresh_membership()

    def _totals(self) -> tuple[int, int]:
        """(row count, max seq): changes when rows are added or deleted anywhere."""
        count, max_seq = self.store.db.execute_sql("SELECT COUNT(*), COALESCE(MAX(seq), 0) FROM task").fetchone()
        return count, max_seq

    def _flush_dirty(self) -> None:
        if not self._dirty:
            return
        dirty, self._dirty = self._dirty, set()
        for seq in dirty:
            self._cache.pop(seq, None)
        rows_of = self._rows()
        rows = sorted(rows_of[s] for s in dirty if s in rows_of)
        last_col = len(COLUMNS) - 1
        for first, last in _ranges(rows):
            self.dataChanged.emit(self.index(first, 0), self.index(last, last_col))

    def _apply_ids(self, new: list[int]) -> None:
        """Turn the current row list into ``new`` with removes, a reorder and inserts -- no reset."""
        if new == self._ids:
            return
        self._row_of = None
        new_set = set(new)
        gone = [i for i, seq in enumerate(self._ids) if seq not in new_set]
        for first, last in reversed(_ranges(gone)):
            self.beginRemoveRows(QModelIndex(), first, last)
            del self._ids[first:last + 1]
            self.endRemoveRows()
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

    def _reorder(self, target: list[int]) -> None:
        self.layoutAboutToBeChanged.emit()
        position = {seq: i for i, seq in enumerate(target)}
        old = self.persistentIndexList()
        moved = [self.index(position[self._ids[idx.row()]], idx.column()) for idx in old]
        self._ids = target
        self.changePersistentIndexList(old, moved)
        self.layoutChanged.emit()

    # --- SQL ---------------------------------------------------------------------------------
    def _order_by(self) -> str:
        if self._sort_col < 0:
            return " ORDER BY seq"
        direction = " DESC" if self._sort_desc else ""
        return f" ORDER BY {COLUMNS[self._sort_col].sort_sql}{direction}, seq{direction}"

    def _query_ids(self) -> list[int]:
        where, args = self.filter.where()
        cursor = self.store.db.execute_sql(f"SELECT seq FROM task{where}{self._order_by()}", args)
        return [r[0] for r in cursor]

    def _rows(self) -> dict[int, int]:
        if self._row_of is None:
            self._row_of = {seq: i for i, seq in enumerate(self._ids)}
        return self._row_of

    def _row(self, row: int) -> tuple[Any, ...] | None:
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
        placeholders = ",".join("?" * len(wanted))
        cursor = self.store.db.execute_sql(f"{_ROW_SQL} WHERE seq IN ({placeholders})", wanted)
        for values in cursor:
            self._cache[values[R_SEQ]] = values

    @staticmethod
    def _display(row: Sequence[Any], key: str) -> Any:
        if key == "task_id":
            return row[R_ID]
        if key == "batch":
            return row[R_BATCH]
        if key == "model":
            return row[R_MODEL]
        if key == "lane":
            return row[R_LANE]
        if key == "state":
            return state_labels().get(row[R_STATE], row[R_STATE])
        if key == "attempt":
            return row[R_ATTEMPT]
        if key == "error_kind":
            return error_kind_labels().get(row[R_KIND], row[R_KIND]) if row[R_KIND] else ""
        if key == "heartbeat":
            return format_seconds(time.time() - row[R_BEAT]) if row[R_STATE] == "running" and row[R_BEAT] else ""
        if key == "duration":
            return format_seconds((row[R_END] or time.time()) - row[R_START]) if row[R_START] else ""
        return redact(row[R_PROMPT] or "").replace("\n", " ")[:120]


def _ranges(sorted_rows: Sequence[int]) -> list[tuple[int, int]]:
    """[1, 2, 3, 7, 8] -> [(1, 3), (7, 8)]"""
    ranges: list[tuple[int, int]] = []
    for row in sorted_rows:
        if ranges and row == ranges[-1][1] + 1:
            ranges[-1] = (ranges[-1][0], row)
        else:
            ranges.append((row, row))
    return ranges
