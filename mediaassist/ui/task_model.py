"""The task table: the cells of the feed's rows (``ui.feed``), smooth at 100,000 rows.

The feed holds the view's ordered row keys and reads, caches and diffs the rows; this model only
forwards its signals to Qt (rows in, out, reordered, repainted) and draws each cell: texts,
colours, badges and output thumbnails.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor

from mediaassist.core.queries import TaskMoney, TaskOrder, TaskRow
from mediaassist.core.secrets import redact
from mediaassist.ui.core_texts import translated
from mediaassist.ui.feed import TaskFeed
from mediaassist.ui.i18n import labelled, tr
from mediaassist.ui.labels import cost_source_label, error_kind_labels, format_seconds, money_text, state_labels
from mediaassist.ui.marks import kind_badge, state_icon, video_icon
from mediaassist.ui.thumbnails import ThumbnailCache, is_image, is_video, no_picture_reason

Index = QModelIndex | QPersistentModelIndex
ROOT = QModelIndex()  # the invalid index: the parent of every row (a flat table)

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
    Column("state", "state", 96),
    Column("prompt", "prompt", 300, stretch=True),
    Column("result", None, 200, fit=True),
    Column("output", None, 40),
    Column("error", "error", 170, fit=True),  # the reason, read beside the prompt
    Column("model", "model", 90),
    Column("lane", "lane", 100),
    # Which machine ran it: news on a team's shared store, noise on one desktop (hidden there).
    Column("machine", "machine", 100),
    Column("attempt", "attempt", 40),
    Column("created", "created", 80),
    Column("duration", "duration", 64),
    Column("cost", "cost", 70),
    Column("heartbeat", "heartbeat", 80, shown=False),
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
    """The account that runs a web task, or the provider of an API/poll task (and the key that
    runs it, for a provider with several)."""
    target = row.route.partition(":")[2] or row.route
    if row.model_kind == "web":
        return row.account or tr("{site}: any account").format(site=target)
    return f"{target}/{row.account}" if row.account else target


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


def shown_media(row: TaskRow) -> str | None:
    """The output the row's thumbnail shows: its first image, else its first video."""
    return next((f for f in row.files if is_image(f)), None) or next((f for f in row.files if is_video(f)), None)


class TaskTableModel(QAbstractTableModel):
    """The table's face on the feed (qutebrowser's download model): the feed owns the row keys,
    their reading and their diffing; this forwards its signals to Qt and draws the cells."""

    def __init__(self, feed: TaskFeed, parent: Any = None) -> None:
        super().__init__(parent)
        self.feed = feed
        self.thumbnails = ThumbnailCache(THUMB, self)
        self.thumbnails.ready.connect(self._thumbnail_ready)
        self._thumb_rows: dict[str, int] = {}  # path -> seq of the row that asked for it
        self._moving: tuple[list[QModelIndex], list[QModelIndex]] = ([], [])  # a reorder's indexes
        feed.resetting.connect(self.beginResetModel)
        feed.was_reset.connect(self.endResetModel)
        feed.inserting.connect(lambda first, last: self.beginInsertRows(ROOT, first, last))
        feed.inserted.connect(self.endInsertRows)
        feed.removing.connect(lambda first, last: self.beginRemoveRows(ROOT, first, last))
        feed.removed.connect(self.endRemoveRows)
        feed.reordering.connect(self._reordering)
        feed.reordered.connect(self._reordered)
        feed.rows_changed.connect(self._rows_changed)
        feed.ticked.connect(self._clock_ticked)

    # --- Qt model API ------------------------------------------------------------------------
    def rowCount(self, parent: Index = ROOT) -> int:
        return 0 if parent.isValid() else len(self.feed.ids)

    def columnCount(self, parent: Index = ROOT) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = DISPLAY) -> Any:
        if role == DISPLAY and orientation == Qt.Orientation.Horizontal and 0 <= section < len(COLUMNS):
            return column_label(COLUMNS[section].key)
        return None

    def data(self, index: Index, role: int = DISPLAY) -> Any:
        if not index.isValid() or index.row() >= len(self.feed.ids):
            return None
        row = self.feed.row_at(index.row())
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
        """A header click: the feed reads the new order off the loop (``feed.sorting``)."""
        key = COLUMNS[column].sort_key if 0 <= column < len(COLUMNS) else None
        self.feed.sort(TaskOrder(key, order == Qt.SortOrder.DescendingOrder))

    def stop(self) -> None:
        self.thumbnails.close()

    # --- the feed's signals ------------------------------------------------------------------
    def _reordering(self, position: dict[int, int]) -> None:
        """The same rows in a new order: every persistent index (the selection) moves with its row."""
        self.layoutAboutToBeChanged.emit()
        old = self.persistentIndexList()
        ids = self.feed.ids
        self._moving = (old, [self.index(position[ids[idx.row()]], idx.column()) for idx in old])

    def _reordered(self) -> None:
        self.changePersistentIndexList(*self._moving)
        self._moving = ([], [])
        self.layoutChanged.emit()

    def _rows_changed(self, first: int, last: int) -> None:
        self.dataChanged.emit(self.index(first, 0), self.index(last, len(COLUMNS) - 1))

    def _clock_ticked(self) -> None:
        last = len(self.feed.ids) - 1
        for column in CLOCK_COLUMNS:
            self.dataChanged.emit(self.index(0, column), self.index(last, column), [DISPLAY])

    def _thumbnail_ready(self, path: str) -> None:
        seq = self._thumb_rows.pop(path, None)
        row = self.feed.row_of(seq) if seq is not None else None
        if row is not None:
            cell = self.index(row, COL["output"])
            self.dataChanged.emit(cell, cell, [DECORATION])

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
        media = shown_media(row)
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
            media = shown_media(row)
            why = no_picture_reason() if media is not None and is_video(media) else ""
            return "\n".join([*row.files, why]).strip() or None
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

