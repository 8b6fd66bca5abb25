"""See the media: a thumbnail grid of a view's inputs and outputs, a strip of one task's media,
and a preview (images scaled to the window; videos and sounds handed to the system player).

Thumbnails are only asked for when a cell is painted, are made in the thumbnail cache's worker
thread and reach the view in one coalesced ``dataChanged`` per tick, newest requests first (the
cells on screen now). PySide6-Essentials has no Qt Multimedia, so a video shows its first frame
(decoded by PyAV) and an "Open with the system player" button rather than playing inside the window.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from PySide6.QtCore import (
    QAbstractListModel,
    QModelIndex,
    QPersistentModelIndex,
    QPoint,
    QPointF,
    QSize,
    Qt,
    QTimer,
)
from PySide6.QtGui import (
    QColor,
    QFont,
    QGuiApplication,
    QPainter,
    QPixmap,
    QPolygonF,
    QResizeEvent,
)
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QListView,
    QMenu,
    QMessageBox,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from mediaassist.core.media_items import INPUT, OUTPUT, MediaItem, iter_media
from mediaassist.ui.disk_thumbnails import DiskThumbnails
from mediaassist.ui.i18n import tr
from mediaassist.ui.opener import open_externally

log = logging.getLogger("mediaassist.ui")

ITEM_ROLE = Qt.ItemDataRole.UserRole
ROOT = QModelIndex()
KEPT_PIXMAPS = 600  # thumbnails held as pixmaps; older ones are read again from the disk cache
MAX_QUEUED = 300  # requests beyond this (cells scrolled past long ago) are dropped, asked again on paint
WORKERS_FED = 2  # requests in flight, so the worker thread never waits for the loop
FLUSH_MS = 100
MAX_GALLERY_ITEMS = 5000
READ_CHUNK = 100  # tasks read per loop step (~20 ms on a busy 2-core box)
STRIP_PX = 96


def _placeholder(kind: str, size: int) -> QPixmap:
    """A neutral tile with a symbol: a play triangle for videos, a note for sounds, and so on."""
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
    painter.end()
    return pixmap


def role_label(item: MediaItem) -> str:
    if item.role == INPUT:
        return tr("input {name}").format(name=item.name)
    return tr("output")


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
        self._rows_of: dict[str, list[int]] = {}
        self._pixmaps: OrderedDict[str, QPixmap] = OrderedDict()
        self._no_thumbnail: set[str] = set()
        self._queue: list[str] = []
        self._queued: set[str] = set()
        self._feeders: set[asyncio.Task[None]] = set()
        self._placeholders: dict[str, QPixmap] = {}
        self._dirty: set[int] = set()
        self._flush = QTimer(self)
        self._flush.setSingleShot(True)
        self._flush.setInterval(FLUSH_MS)
        self._flush.timeout.connect(self._emit_changes)
        self.made = 0  # thumbnails delivered so far (the benchmark reads it)

    def set_items(self, items: list[MediaItem]) -> None:
        self.beginResetModel()
        self.items = items
        self._rows_of = {}
        for row, item in enumerate(items):
            self._rows_of.setdefault(item.location, []).append(row)
        self._queue.clear()
        self._queued.clear()
        self._dirty.clear()
        self.endResetModel()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = ROOT) -> int:
        return 0 if parent.isValid() else len(self.items)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.row() >= len(self.items):
            return None
        item = self.items[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:  # whose it is first: outputs are often all "image-1.png"
            return f"{item.task_id} · {item.name}" if self.whose else item.name
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{item.task_id} · {role_label(item)} · {media_label(item.media)}\n{item.location}"
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
        if item.location in self._no_thumbnail:  # a clip without a decodable frame is still a clip
            return self._placeholder("video" if item.media == "video" else "missing")
        self._request(item.location)
        return self._placeholder("loading")

    def _placeholder(self, kind: str) -> QPixmap:
        if kind not in self._placeholders:
            self._placeholders[kind] = _placeholder(kind, self.icon_px)
        return self._placeholders[kind]

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

    def __init__(self, parent: QWidget, cache: DiskThumbnails) -> None:
        self.parent = parent
        self.cache = cache
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
    # A long caption loses its head: the tasks of one batch share their id's start, so the end of
    # the id and the file name are what tell two cells apart (the tooltip has it all).
    view.setTextElideMode(Qt.TextElideMode.ElideLeft)
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
    """The grid for a set of tasks (the table's current view)."""

    def __init__(self, cache: DiskThumbnails, task_ids: Callable[[], list[str]], parent: Any = None) -> None:
        super().__init__(parent)
        self.task_ids = task_ids
        self.media_actions = MediaActions(self, cache)
        self.model = MediaModel(cache, cache.size, self)
        self.view = _media_list(self.model, cache.size, self.media_actions)
        self.summary = QLabel()
        self.summary.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.roles = QComboBox()
        for label, roles in ((tr("Outputs and inputs"), (INPUT, OUTPUT)), (tr("Outputs"), (OUTPUT,)),
                             (tr("Inputs"), (INPUT,))):
            self.roles.addItem(label, roles)
        self.roles.currentIndexChanged.connect(lambda _i: self.reload())
        reload_button = QPushButton(tr("Reload"))
        reload_button.clicked.connect(self.reload)
        top = QHBoxLayout()
        top.addWidget(self.summary, 1)
        top.addWidget(self.roles)
        top.addWidget(reload_button)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.view, 1)
        self._loading: asyncio.Task[None] | None = None

    def reload(self) -> asyncio.Task[None]:
        """Read the media of the view's tasks in chunks, the loop free between them."""
        if self._loading is not None:
            self._loading.cancel()
        self._loading = asyncio.ensure_future(self._load(self.task_ids(), self.roles.currentData()))
        return self._loading

    async def _load(self, task_ids: list[str], roles: tuple[str, ...]) -> None:
        self.summary.setText(tr("Reading the media of {n} tasks…").format(n=len(task_ids)))
        items: list[MediaItem] = []
        for chunk in iter_media(task_ids, roles, READ_CHUNK):
            items.extend(chunk)
            if len(items) >= MAX_GALLERY_ITEMS:
                break
            await asyncio.sleep(0)
        shown = items[:MAX_GALLERY_ITEMS]
        self.model.set_items(shown)
        text = tr("{n} media files of {tasks} tasks in the current view").format(n=len(shown), tasks=len(task_ids))
        if len(items) > len(shown):
            text += " · " + tr("showing the first {n}").format(n=len(shown))
        if not shown:
            text = tr("No images or videos in the current view yet: outputs appear here as tasks finish.")
        self.summary.setText(text)
        self.summary.setToolTip(text)

    def close_media(self) -> None:
        if self._loading is not None:
            self._loading.cancel()
        self.model.close()
        self.media_actions.close()


class PreviewDialog(QDialog):
    """One item large: images scaled to the dialog, everything else a placeholder plus the
    system player; the folder button only where the file exists."""

    def __init__(self, item: MediaItem, actions: MediaActions, parent: Any = None) -> None:
        super().__init__(parent)
        self.item = item
        self.setWindowTitle(f"{role_label(item)} · {item.task_id}")
        self.image: QPixmap | None = None
        self.picture = QLabel()
        self.picture.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.picture.setMinimumSize(200, 150)
        self.picture.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Ignored)
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
        if exists:
            self.open_button = buttons.addButton(open_label(item), QDialogButtonBox.ButtonRole.ActionRole)
            self.open_button.clicked.connect(lambda: actions.open_file(item))
            self.folder_button = buttons.addButton(tr("Open folder"), QDialogButtonBox.ButtonRole.ActionRole)
            self.folder_button.clicked.connect(lambda: actions.open_folder(item))
        layout = QVBoxLayout(self)
        layout.addWidget(self.picture, 1)
        layout.addWidget(self.note)
        layout.addWidget(where)
        layout.addWidget(buttons)
        self.resize(760, 560)
        self.loaded: asyncio.Future[Any] | None = None
        if not exists:
            self._show_placeholder("missing" if item.is_local else "link",
                                   tr("The file is gone: {path}").format(path=item.location) if item.is_local
                                   else tr("A link: it is fetched by the provider, not stored here."))
        elif item.media in ("image", "video"):
            self.note.setText(tr("Loading…"))
            self.loaded = actions.spawn(self._load(actions.cache))
        else:
            self._show_placeholder(item.media, self._system_player_note())

    @staticmethod
    def _system_player_note() -> str:
        return tr("Videos and sounds play in the system player: this build has no Qt Multimedia "
                  "(PySide6-Essentials).")

    def _show_placeholder(self, kind: str, text: str) -> None:
        self.picture.setPixmap(_placeholder(kind, 160))
        self.note.setText(text)

    async def _load(self, cache: DiskThumbnails) -> None:
        image = await cache.full_image(Path(self.item.location))
        video = self.item.media == "video"
        if image is None:
            self._show_placeholder(*(("video", tr("This video has no frame that can be shown.") + " "
                                      + self._system_player_note()) if video
                                     else ("missing", tr("This file cannot be shown as an image."))))
            return
        self.image = QPixmap.fromImage(image)
        size = tr("{w}×{h} pixels").format(w=image.width(), h=image.height())
        self.note.setText(tr("The first frame ({size}). {player}").format(size=size, player=self._system_player_note())
                          if video else size)
        self._fit()

    def _fit(self) -> None:
        if self.image is not None:
            self.picture.setPixmap(self.image.scaled(self.picture.size(), Qt.AspectRatioMode.KeepAspectRatio,
                                                     Qt.TransformationMode.SmoothTransformation))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit()
