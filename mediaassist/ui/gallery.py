"""See the media: a thumbnail grid of a view's inputs and outputs, a strip of one task's media,
and a preview (images scaled to the window; videos and sounds handed to the system player).

Thumbnails are only asked for when a cell is painted, are made in the thumbnail cache's worker
thread and reach the view in one coalesced ``dataChanged`` per tick, newest requests first (the
cells on screen now). A video or sound plays inside the preview with Qt Multimedia (PySide6-Addons);
a build without it shows a video's first frame (decoded by PyAV) and "Open with the system player".
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
from collections import OrderedDict
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from PySide6.QtCore import (
    QAbstractListModel,
    QEvent,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QPoint,
    QPointF,
    QRectF,
    QSize,
    Qt,
    QTimer,
)
from PySide6.QtGui import (
    QColor,
    QFont,
    QGuiApplication,
    QKeyEvent,
    QPainter,
    QPixmap,
    QPolygonF,
    QResizeEvent,
)
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QListView,
    QMenu,
    QMessageBox,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from mediaassist.core.media_items import INPUT, OUTPUT, MediaItem, iter_media
from mediaassist.core.outputs import VIDEO_EXTRA_HINT, video_tools_installed
from mediaassist.core.queries import task_costs
from mediaassist.ui.disk_thumbnails import DiskThumbnails
from mediaassist.ui.i18n import tr
from mediaassist.ui.labels import money_text
from mediaassist.ui.opener import open_externally
from mediaassist.ui.player import MediaPlayer, playback_available
from mediaassist.ui.thumbnails import no_picture_reason

log = logging.getLogger("mediaassist.ui")

ITEM_ROLE = Qt.ItemDataRole.UserRole
ROOT = QModelIndex()
KEPT_PIXMAPS = 600  # thumbnails held as pixmaps; older ones are read again from the disk cache
MAX_QUEUED = 300  # requests beyond this (cells scrolled past long ago) are dropped, asked again on paint
WORKERS_FED = 2  # requests in flight, so the worker thread never waits for the loop
FLUSH_MS = 100
MAX_GALLERY_ITEMS = 10_000  # the bench measures the gallery at 10,000 outputs (docs/outputs.md)
READ_CHUNK = 100  # tasks read per loop step (~20 ms on a busy 2-core box)
STRIP_PX = 96


def _placeholder(kind: str, size: int, label: str = "") -> QPixmap:
    """A neutral tile with a symbol: a play triangle for videos, a note for sounds, and so on;
    ``label``, small under the symbol, says why there is no picture."""
    pixmap = QPixmap(size, size)
    pixmap.fill(QColor("#eceff1"))
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(QColor("#607d8b"))
    if kind == "video":
        third = size / 3
        painter.drawPolygon(QPolygonF([QPointF(third * 1.1, third), QPointF(third * 1.1, third * 2),
                                       QPointF(third * 2.1, size / 2)]))
    else:
        glyph = {"audio": "♪", "missing": "✕", "loading": "…", "link": "⇗"}.get(kind, "?")
        font = QFont()
        font.setPixelSize(int(size * 0.45))
        painter.setFont(font)
        painter.setPen(QColor("#607d8b"))
        painter.drawText(pixmap.rect(), Qt.AlignmentFlag.AlignCenter, glyph)
    if label:
        _draw_label(painter, size, label)
    painter.end()
    return pixmap


def _draw_label(painter: QPainter, size: int, label: str) -> None:
    """``label`` wrapped in the tile's bottom third, below the symbol (a strip's 96 px tile too)."""
    font = QFont()
    font.setPixelSize(max(10, size // 13))
    painter.setFont(font)
    painter.setPen(QColor("#37474f"))
    margin = max(3, size // 20)
    band = QRectF(margin, size * 2 / 3, size - 2 * margin, size / 3 - margin)
    painter.drawText(band, int(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignVCenter)
                     | int(Qt.TextFlag.TextWordWrap), label)


def role_label(item: MediaItem) -> str:
    if item.role == INPUT:
        return tr("input {name}").format(name=item.name)
    return tr("output")


def caption(item: MediaItem, prompt_chars: int = 40, star: bool = True) -> str:
    """Row, model (↻: a rerun) and the prompt's start: what tells a row's outputs apart (the id is
    in the tooltip). ``star``: a picked output's ★ first (the compare view has a button for it)."""
    head = tr("row {row}").format(row=item.row) if item.row is not None else item.task_id
    prompt = " ".join(item.prompt.split())
    if len(prompt) > prompt_chars:
        prompt = prompt[:prompt_chars - 1] + "…"
    mark = "★ " if item.picked and star else ""
    model = f"{item.model} ↻" if item.rerun else item.model
    return " · ".join(part for part in (f"{mark}{head}", model, prompt) if part)


def media_label(kind: str) -> str:
    return {"image": tr("image"), "video": tr("video"), "audio": tr("audio")}.get(kind, tr("file"))


class MediaModel(QAbstractListModel):
    """Media items with thumbnails loaded on demand (see the module's docstring)."""

    def __init__(self, cache: DiskThumbnails, icon_px: int, parent: Any = None, whose: bool = True) -> None:
        super().__init__(parent)
        self.cache = cache
        self.icon_px = icon_px
        self.whose = whose  # captions name the task (a grid of many tasks), or only the file (one task's strip)
        self.items: list[MediaItem] = []
        self.costs: dict[str, str] = {}  # task id → what it cost, as the caption shows it
        self._rows_of: dict[str, list[int]] = {}
        self._pixmaps: OrderedDict[str, QPixmap] = OrderedDict()
        self._no_thumbnail: set[str] = set()
        self._queue: list[str] = []
        self._queued: set[str] = set()
        self._feeders: set[asyncio.Task[None]] = set()
        self._placeholders: dict[tuple[str, str], QPixmap] = {}
        self._dirty: set[int] = set()
        self._flush = QTimer(self)
        self._flush.setSingleShot(True)
        self._flush.setInterval(FLUSH_MS)
        self._flush.timeout.connect(self._emit_changes)
        self.made = 0  # thumbnails delivered so far (the benchmark reads it)

    def set_items(self, items: list[MediaItem], costs: dict[str, str] | None = None) -> None:
        self.beginResetModel()
        self.items = items
        self.costs = costs or {}
        self._rows_of = {}
        for row, item in enumerate(items):
            self._rows_of.setdefault(item.location, []).append(row)
        self._queue.clear()
        self._queued.clear()
        self._dirty.clear()
        self.endResetModel()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = ROOT) -> int:
        return 0 if parent.isValid() else len(self.items)

    def replace_item(self, row: int, item: MediaItem) -> None:
        """One item changed in place (its pick mark): its cell is painted again."""
        self.items[row] = item
        self.dataChanged.emit(self.index(row), self.index(row), [Qt.ItemDataRole.DisplayRole])

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.row() >= len(self.items):
            return None
        item = self.items[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:  # whose it is first: outputs are often all "image-1.png"
            cost = self.costs.get(item.task_id) if item.role == OUTPUT else None
            if item.role == OUTPUT and self.whose:
                text = caption(item, 24)
            else:
                star = "★ " if item.picked else ""
                text = f"{star}{item.task_id} · {item.name}" if self.whose else f"{star}{item.name}"
            return f"{text} · {cost}" if cost else text
        if role == Qt.ItemDataRole.ToolTipRole:
            about = f"\n{tr('row {row}').format(row=item.row)} · {item.model}\n{item.prompt[:200]}" \
                if item.role == OUTPUT and item.model else ""
            why = no_picture_reason() if item.media == "video" else ""
            text = f"{item.task_id} · {role_label(item)} · {media_label(item.media)}{about}\n{item.location}"
            return f"{text}\n{why}" if why else text
        if role == Qt.ItemDataRole.DecorationRole:
            return self._decoration(item)
        if role == ITEM_ROLE:
            return item
        return None

    def _decoration(self, item: MediaItem) -> QPixmap:
        if not item.is_local:
            return self._placeholder("link")
        pixmap = self._pixmaps.get(item.location)
        if pixmap is not None:
            self._pixmaps.move_to_end(item.location)
            return pixmap
        if item.media not in ("image", "video"):
            return self._placeholder(item.media)
        if item.media == "video" and (why := no_picture_reason()):  # the worker has no PyAV either: not asked
            return self._placeholder("video", why)
        if item.location in self._no_thumbnail:  # a clip without a decodable frame is still a clip
            return self._placeholder("video" if item.media == "video" else "missing")
        self._request(item.location)
        return self._placeholder("loading")

    def _placeholder(self, kind: str, label: str = "") -> QPixmap:
        if (kind, label) not in self._placeholders:  # the label in the key: it follows the language
            self._placeholders[kind, label] = _placeholder(kind, self.icon_px, label)
        return self._placeholders[kind, label]

    # --- loading ------------------------------------------------------------------------------
    def _request(self, location: str) -> None:
        if location in self._queued:
            return
        self._queued.add(location)
        self._queue.append(location)
        if len(self._queue) > MAX_QUEUED:
            dropped = self._queue.pop(0)
            self._queued.discard(dropped)
        while len(self._feeders) < WORKERS_FED:
            feeder = asyncio.ensure_future(self._feed())
            self._feeders.add(feeder)
            feeder.add_done_callback(self._feeder_done)

    def _feeder_done(self, feeder: asyncio.Task[None]) -> None:
        self._feeders.discard(feeder)
        if not feeder.cancelled() and feeder.exception() is not None:
            log.error("thumbnail loading failed: %s", feeder.exception())

    async def _feed(self) -> None:
        while self._queue:
            location = self._queue.pop()  # newest first: the cells on screen now
            image = await self.cache.thumbnail(Path(location))
            self._queued.discard(location)
            if image is None:
                self._no_thumbnail.add(location)
            else:
                pixmap = QPixmap.fromImage(image)
                if pixmap.width() > self.icon_px:  # the cache is one size; a strip shows them smaller
                    pixmap = pixmap.scaled(self.icon_px, self.icon_px, Qt.AspectRatioMode.KeepAspectRatio,
                                           Qt.TransformationMode.SmoothTransformation)
                self._pixmaps[location] = pixmap
                self.made += 1
                while len(self._pixmaps) > KEPT_PIXMAPS:
                    self._pixmaps.popitem(last=False)
            self._dirty.update(self._rows_of.get(location, ()))
            if not self._flush.isActive():
                self._flush.start()
            await asyncio.sleep(0)  # a cached thumbnail returns at once: let the loop run between them

    def _emit_changes(self) -> None:
        rows = [r for r in self._dirty if r < len(self.items)]
        self._dirty.clear()
        if rows:  # one range per tick: one signal per row saturates the loop
            self.dataChanged.emit(self.index(min(rows)), self.index(max(rows)), [Qt.ItemDataRole.DecorationRole])

    @property
    def loading(self) -> bool:
        return bool(self._feeders)

    def close(self) -> None:
        self._flush.stop()
        for feeder in list(self._feeders):
            feeder.cancel()


class MediaActions:
    """Preview, open with the system program, open the folder: shared by the grid and strips."""

    def __init__(self, parent: QWidget, cache: DiskThumbnails,
                 extra_menu: Callable[[QMenu, MediaItem], None] | None = None) -> None:
        self.parent = parent
        self.cache = cache
        self.extra_menu = extra_menu  # the grid's own entries (pick, compare, run again)
        self.jobs: set[asyncio.Future[Any]] = set()
        self.preview: PreviewDialog | None = None
        self.last_message = ""  # what the operator was last told (tests read it)

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Future[Any]:
        job = asyncio.ensure_future(coro)
        self.jobs.add(job)
        job.add_done_callback(self._done)
        return job

    def _done(self, job: asyncio.Future[Any]) -> None:
        self.jobs.discard(job)
        if not job.cancelled() and job.exception() is not None:
            log.error("media action failed: %s", job.exception())

    def show_preview(self, item: MediaItem) -> None:
        if self.preview is not None:
            self.preview.close()
        self.preview = PreviewDialog(item, self, self.parent)
        self.preview.finished.connect(self._preview_closed)
        self.preview.open()

    def _preview_closed(self) -> None:
        if self.preview is not None:
            self.preview.deleteLater()
            self.preview = None

    def open_file(self, item: MediaItem) -> asyncio.Future[Any]:
        return self.spawn(self._open(Path(item.location)))

    def open_folder(self, item: MediaItem) -> asyncio.Future[Any]:
        return self.spawn(self._open(Path(item.location).parent))

    async def _open(self, path: Path) -> None:
        if not path.exists():
            self._message(tr("The file is gone: {path}").format(path=path))
            return
        reason = await open_externally(path)
        if reason is not None:
            self._message(reason)

    def _message(self, text: str) -> None:
        box = QMessageBox(QMessageBox.Icon.Information, tr("Cannot open"), text, QMessageBox.StandardButton.Ok,
                          self.parent)
        box.finished.connect(box.deleteLater)
        box.open()
        self.last_message = text

    def context_menu(self, item: MediaItem) -> QMenu:
        menu = QMenu(self.parent)
        menu.addAction(tr("Preview"), lambda: self.show_preview(item))
        if item.is_local and Path(item.location).exists():
            menu.addAction(open_label(item), lambda: self.open_file(item))
            menu.addAction(tr("Open folder"), lambda: self.open_folder(item))
        menu.addAction(tr("Copy location"), lambda: QGuiApplication.clipboard().setText(item.location))
        if self.extra_menu is not None:
            menu.addSeparator()
            self.extra_menu(menu, item)
        return menu

    def close(self) -> None:
        for job in list(self.jobs):
            job.cancel()


def open_label(item: MediaItem) -> str:
    return tr("Open with the system player") if item.media in ("video", "audio") else tr("Open with the system viewer")


def _media_list(model: MediaModel, icon_px: int, actions: MediaActions) -> QListView:
    view = QListView()
    view.setViewMode(QListView.ViewMode.IconMode)
    view.setMovement(QListView.Movement.Static)
    view.setResizeMode(QListView.ResizeMode.Adjust)
    view.setUniformItemSizes(True)
    view.setIconSize(QSize(icon_px, icon_px))
    view.setGridSize(QSize(icon_px + 24, icon_px + 34))
    # A caption starts with what tells two cells apart (row and model; a task's id for inputs), so
    # a long one loses its end; the tooltip has it all.
    view.setTextElideMode(Qt.TextElideMode.ElideRight)
    view.setWordWrap(False)
    view.setLayoutMode(QListView.LayoutMode.Batched)  # thousands of cells lay out in steps
    view.setBatchSize(200)
    view.setModel(model)
    view.doubleClicked.connect(lambda index: actions.show_preview(index.data(ITEM_ROLE)))
    view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)

    def menu_at(pos: QPoint) -> None:
        index = view.indexAt(pos)
        if index.isValid():
            actions.context_menu(index.data(ITEM_ROLE)).popup(view.viewport().mapToGlobal(pos))

    view.customContextMenuRequested.connect(menu_at)
    return view


class MediaStrip(QWidget):
    """One row of small thumbnails (a task's inputs beside its outputs, an import's inputs)."""

    def __init__(self, cache: DiskThumbnails, parent: Any = None) -> None:
        super().__init__(parent)
        self.media_actions = MediaActions(self, cache)
        self.model = MediaModel(cache, STRIP_PX, self, whose=False)
        self.view = _media_list(self.model, STRIP_PX, self.media_actions)
        self.view.setFlow(QListView.Flow.LeftToRight)
        self.view.setWrapping(False)
        # As tall as a row of thumbnails with captions, and allowed to shrink to half of it
        # (a 768 px screen), never setting the detail pane's height.
        self.view.setMaximumHeight(STRIP_PX + 52)
        self.view.setMinimumHeight(STRIP_PX // 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.view)

    def set_items(self, items: list[MediaItem]) -> None:
        if items != self.model.items:
            self.model.set_items(items)

    def close_media(self) -> None:
        self.model.close()
        self.media_actions.close()


class GalleryView(QWidget):
    """The grid for a set of tasks (the table's current view), with a filter of its own on top
    (picked only, media kind). With ``pick`` an output is picked with P, the Pick button or its
    menu; with ``compare``/``rerun`` its menu opens the compare view and "Edit and run again…"."""

    def __init__(self, cache: DiskThumbnails, task_ids: Callable[[], list[str]], parent: Any = None,
                 pick: Callable[[list[MediaItem], bool], object] | None = None,
                 compare: Callable[[MediaItem], object] | None = None,
                 rerun: Callable[[str], object] | None = None,
                 table_filter: Callable[[], str] = lambda: "") -> None:
        super().__init__(parent)
        self.task_ids = task_ids
        self.table_filter = table_filter  # the Queue tab's filter in words ("" when it shows all)
        self.pick, self.compare, self.rerun = pick, compare, rerun
        self.media_actions = MediaActions(self, cache, self._menu_entries)
        self.model = MediaModel(cache, cache.size, self)
        self.view = _media_list(self.model, cache.size, self.media_actions)
        self.view.setSelectionMode(QListView.SelectionMode.ExtendedSelection)
        self.summary = QLabel()
        self.summary.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.roles = QComboBox()
        for label, roles in ((tr("Outputs and inputs"), (INPUT, OUTPUT)), (tr("Outputs"), (OUTPUT,)),
                             (tr("Inputs"), (INPUT,))):
            self.roles.addItem(label, roles)
        self.roles.currentIndexChanged.connect(lambda _i: self.reload())
        self.kinds = QComboBox()
        for label, kind in ((tr("All kinds"), ""), (tr("Images"), "image"), (tr("Videos"), "video"),
                            (tr("Sounds"), "audio")):
            self.kinds.addItem(label, kind)
        self.kinds.currentIndexChanged.connect(lambda _i: self.reload())
        self.grouping = QComboBox()
        self.grouping.addItem(tr("In the table's order"), False)
        self.grouping.addItem(tr("By batch and row"), True)  # a row's fan-out and reruns side by side
        self.grouping.currentIndexChanged.connect(lambda _i: self.reload())
        self.models = QComboBox()
        self.models.addItem(tr("All models"), "")
        self.batches = QComboBox()
        self.batches.addItem(tr("All batches"), "")
        self.batches.setMaximumWidth(220)  # batch ids are long; the list shows them whole
        for choice in (self.models, self.batches):
            choice.currentIndexChanged.connect(lambda _i: self.reload())
        self.picked_only = QCheckBox(tr("Picked only"))
        self.picked_only.toggled.connect(lambda _on: self.reload())
        self.pick_button = QPushButton(tr("★ Pick (P)"))
        self.pick_button.setToolTip(tr("Pick or unpick the selected outputs (key P)"))
        self.pick_button.clicked.connect(self.toggle_pick_selected)
        self.pick_button.setVisible(pick is not None)
        self.view.installEventFilter(self)  # the P key picks (a filter: the list view has its own keys)
        reload_button = QPushButton(tr("Reload"))
        reload_button.clicked.connect(self.reload)
        top = QHBoxLayout()  # what is shown, then the gallery's own filter on a line of its own (1366 px)
        top.addWidget(self.summary, 1)
        top.addWidget(self.pick_button)
        top.addWidget(reload_button)
        filters = QHBoxLayout()
        for widget in (self.roles, self.kinds, self.models, self.batches, self.grouping, self.picked_only):
            filters.addWidget(widget)
        filters.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addLayout(filters)
        layout.addWidget(self.view, 1)
        self._loading: asyncio.Task[None] | None = None

    def reload(self) -> asyncio.Task[None]:
        """Read the media of the view's tasks in chunks, the loop free between them."""
        if self._loading is not None:
            self._loading.cancel()
        self._loading = asyncio.ensure_future(self._load(self.task_ids(), self.roles.currentData()))
        return self._loading

    def _wanted(self, item: MediaItem) -> bool:
        kind, model, batch = self.kinds.currentData(), self.models.currentData(), self.batches.currentData()
        return ((not kind or item.media == kind) and (not model or item.model == model)
                and (not batch or item.batch_id == batch) and (not self.picked_only.isChecked() or item.picked))

    def _own_filter_on(self) -> bool:
        return bool(self.kinds.currentData() or self.models.currentData() or self.batches.currentData()
                    or self.picked_only.isChecked())

    def _offer(self, choice: QComboBox, values: set[str]) -> None:
        """The models or batches of the view as choices, the current one kept."""
        current = choice.currentData()
        choice.blockSignals(True)
        while choice.count() > 1:
            choice.removeItem(1)
        for value in sorted(values | ({current} if current else set())):
            choice.addItem(value, value)
        choice.setCurrentIndex(max(0, choice.findData(current)))
        choice.blockSignals(False)

    async def _load(self, task_ids: list[str], roles: tuple[str, ...]) -> None:
        self.summary.setText(tr("Reading the media of {n} tasks…").format(n=len(task_ids)))
        items: list[MediaItem] = []
        models: set[str] = set()
        batches: set[str] = set()
        for chunk in iter_media(task_ids, roles, READ_CHUNK):
            models.update(item.model for item in chunk)
            batches.update(item.batch_id for item in chunk)
            items.extend(item for item in chunk if self._wanted(item))
            if len(items) >= MAX_GALLERY_ITEMS:
                break
            await asyncio.sleep(0)
        self._offer(self.models, models - {""})
        self._offer(self.batches, batches - {""})
        shown = items[:MAX_GALLERY_ITEMS]
        if self.grouping.currentData():
            shown.sort(key=_batch_and_row)  # stable: the table's order within a row
        costs = task_costs({item.task_id for item in shown if item.role == OUTPUT})
        self.model.set_items(shown, {task_id: money_text(monies) for task_id, monies in costs.items()})
        # it says plainly that it follows the table's filter, and what it adds of its own
        text = tr("{n} media files of {tasks} tasks in the current view").format(n=len(shown), tasks=len(task_ids))
        if self._own_filter_on():
            text += " · " + tr("filtered here too")
        if len(items) > len(shown):
            text += " · " + tr("showing the first {n}").format(n=len(shown))
        following = self.table_filter()
        if not shown:
            text = tr("No images or videos in the current view yet: outputs appear here as tasks finish.")
        if following:  # said plainly: an empty gallery under a "pending" filter is no mystery
            text = tr("Follows the Queue tab's filter ({filter}); clear it there to see every task's media.").format(
                filter=following) + " " + text
        self.summary.setText(text)
        self.summary.setToolTip(text)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (watched is self.view and event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent)
                and event.key() == Qt.Key.Key_P and not event.modifiers() and self.pick is not None):
            self.toggle_pick_selected()
            return True
        return super().eventFilter(watched, event)

    # --- pick, compare, run again --------------------------------------------------------------
    def toggle_pick_selected(self) -> int:
        """Pick the selected outputs (or unpick them, when all are picked already); how many changed."""
        if self.pick is None:
            return 0
        rows = sorted(i.row() for i in self.view.selectionModel().selectedIndexes())
        outputs = [(row, self.model.items[row]) for row in rows if self.model.items[row].role == OUTPUT]
        picked = not all(item.picked for _row, item in outputs)
        self.pick([item for _row, item in outputs], picked)  # one write of each batch's manifest
        for row, item in outputs:
            self.model.replace_item(row, dataclasses.replace(item, picked=picked))
        return len(outputs)

    def toggle_pick(self, item: MediaItem) -> MediaItem:
        """One item's mark flipped (the compare view's star); the item as it is now."""
        if self.pick is None or item.role != OUTPUT:
            return item
        self.pick([item], not item.picked)
        changed = dataclasses.replace(item, picked=not item.picked)
        for row, shown in enumerate(self.model.items):
            if (shown.task_id, shown.n) == (item.task_id, item.n):
                self.model.replace_item(row, changed)
        return changed

    def _menu_entries(self, menu: QMenu, item: MediaItem) -> None:
        if item.role != OUTPUT:
            return
        if self.pick is not None:
            menu.addAction(tr("Unpick") if item.picked else tr("Pick"), lambda: self.toggle_pick(item))
        if self.compare is not None:
            menu.addAction(tr("Compare this row's outputs…"), lambda: self.compare(item))  # type: ignore[misc]
        if self.rerun is not None:
            menu.addAction(tr("Edit and run again…"), lambda: self.rerun(item.task_id))  # type: ignore[misc]

    def close_media(self) -> None:
        if self._loading is not None:
            self._loading.cancel()
        self.model.close()
        self.media_actions.close()


def _batch_and_row(item: MediaItem) -> tuple[str, int, str]:
    return item.batch_id, item.row if item.row is not None else 1 << 30, item.group or item.task_id


class PreviewDialog(QDialog):
    """One item large: images scaled to the dialog and zoomable, videos and sounds played inside
    (Qt Multimedia) where this build can, else the first frame; the system player and the folder
    only where the file exists."""

    def __init__(self, item: MediaItem, actions: MediaActions, parent: Any = None) -> None:
        super().__init__(parent)
        self.item = item
        self.setWindowTitle(f"{role_label(item)} · {item.task_id}")
        self.image: QPixmap | None = None
        self.zoom: float | None = None  # None: fit the window; else the scale of the picture
        self.picture = QLabel()
        self.picture.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.picture.setMinimumSize(200, 150)
        self.picture.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Ignored)
        self.scroller = QScrollArea()
        self.scroller.setWidgetResizable(True)
        self.scroller.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.scroller.setWidget(self.picture)
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.note.setTextFormat(Qt.TextFormat.PlainText)
        where = QLabel(item.location)
        where.setTextFormat(Qt.TextFormat.PlainText)
        where.setToolTip(item.location)
        where.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        where.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        exists = item.is_local and Path(item.location).exists()
        self.open_button: QPushButton | None = None
        self.folder_button: QPushButton | None = None
        self.zoom_buttons: list[QPushButton] = []
        if exists:
            self.open_button = buttons.addButton(open_label(item), QDialogButtonBox.ButtonRole.ActionRole)
            self.open_button.clicked.connect(lambda: actions.open_file(item))
            self.folder_button = buttons.addButton(tr("Open folder"), QDialogButtonBox.ButtonRole.ActionRole)
            self.folder_button.clicked.connect(lambda: actions.open_folder(item))
        self.player: MediaPlayer | None = None
        if exists and item.media in ("video", "audio") and playback_available():
            self.player = MediaPlayer(Path(item.location), item.media == "video")
        if exists and item.media == "image":
            for label, factor in ((tr("Zoom in"), 1.25), (tr("Zoom out"), 0.8), (tr("Fit"), 0.0)):
                button = buttons.addButton(label, QDialogButtonBox.ButtonRole.ActionRole)
                button.clicked.connect(functools.partial(self.zoom_by, factor))
                self.zoom_buttons.append(button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.player if self.player is not None else self.scroller, 1)
        layout.addWidget(self.note)
        layout.addWidget(where)
        layout.addWidget(buttons)
        self.resize(760, 560)
        self.loaded: asyncio.Future[Any] | None = None
        if not exists:
            self._show_placeholder("missing" if item.is_local else "link",
                                   tr("The file is gone: {path}").format(path=item.location) if item.is_local
                                   else tr("A link: it is fetched by the provider, not stored here."))
        elif self.player is not None:
            self.note.setText(tr("Playing inside the window; the system player is there too."))
            self.player.play_from(0)
        elif item.media in ("image", "video"):
            self.note.setText(tr("Loading…"))
            self.loaded = actions.spawn(self._load(actions.cache))
        else:
            self._show_placeholder(item.media, self._system_player_note())

    @staticmethod
    def _system_player_note() -> str:
        return tr("Videos and sounds play in the system player: this build has no Qt Multimedia "
                  "(PySide6-Essentials).")

    @staticmethod
    def _no_frame_note() -> str:
        if not video_tools_installed():
            return tr("First frames of videos need PyAV, which is not installed (the optional video part, "
                      "~100 MB); add it with {command}.").format(command=VIDEO_EXTRA_HINT)
        return tr("This video has no frame that can be shown.")

    def _show_placeholder(self, kind: str, text: str) -> None:
        self.picture.setPixmap(_placeholder(kind, 160))
        self.note.setText(text)

    async def _load(self, cache: DiskThumbnails) -> None:
        image = await cache.full_image(Path(self.item.location))
        video = self.item.media == "video"
        if image is None:
            self._show_placeholder(*(("video", self._no_frame_note() + " " + self._system_player_note()) if video
                                     else ("missing", tr("This file cannot be shown as an image."))))
            return
        self.image = QPixmap.fromImage(image)
        size = tr("{w}×{h} pixels").format(w=image.width(), h=image.height())
        self.note.setText(tr("The first frame ({size}). {player}").format(size=size, player=self._system_player_note())
                          if video else size)
        self._fit()

    def zoom_by(self, factor: float) -> None:
        """Scale the picture by ``factor`` (0: fit the window again)."""
        if self.image is None:
            return
        if not factor:
            self.zoom = None
        else:
            current = self.zoom or min(self.scroller.viewport().width() / max(1, self.image.width()),
                                       self.scroller.viewport().height() / max(1, self.image.height()))
            self.zoom = max(0.05, min(16.0, current * factor))
        self.scroller.setWidgetResizable(self.zoom is None)
        self._fit()

    def _fit(self) -> None:
        if self.image is None:
            return
        if self.zoom is None:
            self.picture.setPixmap(self.image.scaled(self.scroller.viewport().size(),
                                                     Qt.AspectRatioMode.KeepAspectRatio,
                                                     Qt.TransformationMode.SmoothTransformation))
            return
        scaled = self.image.scaled(int(self.image.width() * self.zoom), int(self.image.height() * self.zoom),
                                   Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.SmoothTransformation)
        self.picture.setPixmap(scaled)
        self.picture.resize(scaled.size())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit()

    def done(self, result: int) -> None:
        if self.player is not None:
            self.player.stop()
        super().done(result)
