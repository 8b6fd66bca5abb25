"""Choosing and handing over outputs in the window: edit and run again, compare a row's outputs
side by side, pick, deliver the picked files. Every change goes through ``Runtime``."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QKeyEvent, QPixmap
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QGridLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from mediaassist.core.delivery import Delivery, DeliveryError
from mediaassist.core.media_items import MediaItem, group_outputs
from mediaassist.core.store import SUCCESS
from mediaassist.runtime import Runtime
from mediaassist.ui.core_texts import error_text, translated
from mediaassist.ui.gallery import caption
from mediaassist.ui.i18n import tr
from mediaassist.ui.player import MediaPlayer, PlaybackGroup, playback_available

COMPARE_COLUMNS = 3  # tiles per line: three clips side by side still fit 1366 px


def deliver_picked(rt: Runtime, task_ids: list[str], folder: Path) -> list[Delivery]:
    """The picked outputs of these tasks copied to ``folder`` -- into ``folder/<batch>`` each when
    they come from several batches, so every delivery keeps its own manifest."""
    batches: dict[str, list[str]] = {}
    for task_id in task_ids:
        task = rt.task(task_id)
        if task is not None:
            batches.setdefault(task.batch_id, []).append(task_id)
    picked = rt.tasks_with_picks(task_ids)
    deliveries = []
    for batch_id, ids in batches.items():
        chosen = [i for i in ids if i in picked]
        if chosen:
            target = folder if len(batches) == 1 else folder / batch_id
            deliveries.append(rt.deliver(batch_id, target, picked_only=True, task_ids=chosen))
    if not deliveries:
        raise DeliveryError(tr("Nothing picked among these tasks: pick outputs with P or the star first."))
    return deliveries


class RerunDialog(QDialog):
    """"Edit and run again…": the prompt, model and params prefilled from the task."""

    queued = Signal(str)  # the new task's id

    def __init__(self, rt: Runtime, task_id: str, parent: Any = None) -> None:
        super().__init__(parent)
        self.rt = rt
        self.task_id = task_id
        task = rt.task(task_id)
        if task is None:
            raise DeliveryError(tr("The task is gone."))
        self.setWindowTitle(tr("Edit and run again: {id}").format(id=task_id))
        self.prompt = QPlainTextEdit(task.prompt)
        self.model = QComboBox()
        for model in rt.config.models:
            self.model.addItem(model.name)
        self.model.setCurrentText(task.model)
        self.params = QPlainTextEdit(json.dumps(task.params_dict, ensure_ascii=False, indent=1))
        self.params.setMaximumHeight(90)
        self.remix = QCheckBox(tr("Remix the finished video (the service's remix route; no new create)"))
        remixable = task.state == SUCCESS and bool(task.remote_id) and self._remixable(task.model)
        self.remix.setEnabled(remixable)  # a remix keeps the model: another one turns it off
        self.model.currentTextChanged.connect(lambda name: self.remix.setEnabled(remixable and name == task.model))
        self.problem = QLabel()
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet("color: #b3261e;")
        form = QFormLayout()
        form.addRow(tr("Prompt"), self.prompt)
        form.addRow(tr("Model"), self.model)
        form.addRow(tr("Params (JSON)"), self.params)
        form.addRow("", self.remix)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText(tr("Run again"))
        buttons.accepted.connect(self.run_again)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.problem)
        layout.addWidget(buttons)
        self.resize(560, 420)

    def _remixable(self, model_name: str) -> bool:
        model = self.rt.config.model(model_name)
        provider = self.rt.config.provider(model.provider or "") if model is not None else None
        return provider is not None and provider.task_profile is not None and provider.task_profile.remix is not None

    def run_again(self) -> str | None:
        """Queue the edited task; its id (None, with the reason shown, when it cannot be)."""
        try:
            params = json.loads(self.params.toPlainText() or "{}")
        except ValueError as exc:
            self.problem.setText(tr("Params are not valid JSON: {error}").format(error=exc))
            return None
        if not isinstance(params, dict):
            self.problem.setText(tr("Params must be a JSON object, e.g. {\"seconds\": \"8\"}"))
            return None
        try:
            new_id = self.rt.rerun(self.task_id, prompt=self.prompt.toPlainText(), model=self.model.currentText(),
                                   params=params, remix=self.remix.isChecked() and self.remix.isEnabled())
        except DeliveryError as exc:
            self.problem.setText(translated(error_text(exc)))
            return None
        self.queued.emit(new_id)
        self.accept()
        return new_id


class CompareTile(QWidget):
    """One output in the compare view: the clip playing (or the picture), its caption and its star."""

    def __init__(self, item: MediaItem, toggle_pick: Callable[[MediaItem], MediaItem], parent: Any = None) -> None:
        super().__init__(parent)
        self.item = item
        self.toggle_pick = toggle_pick
        self.player: MediaPlayer | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        exists = item.path is not None and Path(item.path).exists()
        if exists and item.media in ("video", "audio") and playback_available():
            self.player = MediaPlayer(Path(item.location), item.media == "video")
            layout.addWidget(self.player, 1)
        else:
            picture = QLabel()
            picture.setAlignment(Qt.AlignmentFlag.AlignCenter)
            picture.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Ignored)
            picture.setMinimumSize(160, 90)
            pixmap = QPixmap(item.location) if exists and item.media == "image" else QPixmap()
            if not pixmap.isNull():
                picture.setPixmap(pixmap.scaled(320, 240, Qt.AspectRatioMode.KeepAspectRatio,
                                                Qt.TransformationMode.SmoothTransformation))
            else:
                picture.setText(item.name)
            layout.addWidget(picture, 1)
        self.star = QToolButton()
        self.star.clicked.connect(self._toggle)
        self.label = QLabel()
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.label.setToolTip(f"{item.task_id} · {item.location}\n{item.prompt}")
        self.label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        line = QGridLayout()
        line.addWidget(self.star, 0, 0)
        line.addWidget(self.label, 0, 1)
        line.setColumnStretch(1, 1)
        layout.addLayout(line)
        self._show()

    def _show(self) -> None:
        self.star.setText("★" if self.item.picked else "☆")
        self.star.setToolTip(tr("Picked (P to toggle)") if self.item.picked else tr("Pick (P)"))
        self.label.setText(caption(self.item, 30, star=False))

    def _toggle(self) -> None:
        self.item = self.toggle_pick(self.item)
        self._show()


class CompareDialog(QDialog):
    """A row's outputs -- its fan-out and its reruns -- side by side; clips play in step."""

    def __init__(self, rt: Runtime, batch_id: str, group: str, pick: Callable[[MediaItem], MediaItem],
                 parent: Any = None) -> None:
        super().__init__(parent)
        items = group_outputs(batch_id, group)
        row = next((i.row for i in items if i.row is not None), None)
        self.setWindowTitle(tr("Compare: row {row}").format(row=row) if row is not None
                            else tr("Compare: {group}").format(group=group))
        self.tiles = [CompareTile(item, pick) for item in items]
        grid_host = QWidget()
        grid = QGridLayout(grid_host)
        for index, tile in enumerate(self.tiles):
            grid.addWidget(tile, index // COMPARE_COLUMNS, index % COMPARE_COLUMNS)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(grid_host)
        self.playback = PlaybackGroup([t.player for t in self.tiles if t.player is not None], self)
        self.play_all = QPushButton(tr("Play all from the start"))
        self.play_all.setEnabled(bool(self.playback.players))
        self.play_all.clicked.connect(self.playback.toggle)
        self.playback.playing_changed.connect(lambda playing: self.play_all.setText(
            tr("Pause all") if playing else tr("Play all from the start")))
        note = QLabel(tr("{n} outputs of this row (its models and reruns). Click a star, or select a tile and "
                         "press P, to pick.").format(n=len(items)) if items
                      else tr("This row has no outputs yet."))
        note.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        buttons.addButton(self.play_all, QDialogButtonBox.ButtonRole.ActionRole)
        layout = QVBoxLayout(self)
        layout.addWidget(note)
        layout.addWidget(scroll, 1)
        layout.addWidget(buttons)
        for tile in self.tiles:
            tile.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.resize(1100, 620)  # inside a 1366x768 screen with its task bar

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_P and not event.modifiers():
            self._pick_focused()
            return
        super().keyPressEvent(event)

    def _pick_focused(self) -> None:
        focused = self.focusWidget()
        for tile in self.tiles:
            if tile is focused or tile.isAncestorOf(focused):
                tile._toggle()

    def done(self, result: int) -> None:
        self.playback.pause()
        for tile in self.tiles:
            if tile.player is not None:
                tile.player.stop()
        super().done(result)


class OutputsController(QObject):
    """The window's outputs verbs. Signals: notice(title, line) for the status bar and tray,
    message(title, text) for what the operator must read, changed() after a rerun was queued."""

    notice = Signal(str, str)
    message = Signal(str, str)
    changed = Signal()

    def __init__(self, rt: Runtime, view_task_ids: Callable[[], list[str]], parent: QWidget) -> None:
        super().__init__(parent)
        self.rt = rt
        self.view_task_ids = view_task_ids
        self.window = parent
        self.dialog: QDialog | None = None  # the open rerun or compare dialog (tests reach it here)
        self.gallery_toggle: Callable[[MediaItem], MediaItem] | None = None  # the gallery's, once built

    def pick(self, items: list[MediaItem], picked: bool) -> None:
        self.rt.set_picked([(item.task_id, item.n) for item in items], picked)

    def _toggle(self, item: MediaItem) -> MediaItem:
        if self.gallery_toggle is not None:
            return self.gallery_toggle(item)
        self.pick([item], not item.picked)
        return dataclasses.replace(item, picked=not item.picked)

    def compare(self, item: MediaItem) -> CompareDialog:
        dialog = CompareDialog(self.rt, item.batch_id, item.group or item.task_id, self._toggle, self.window)
        self._show(dialog)
        return dialog

    def edit_and_run_again(self, task_id: str) -> RerunDialog | None:
        try:
            dialog = RerunDialog(self.rt, task_id, self.window)
        except DeliveryError as exc:
            self.message.emit(tr("Cannot run again"), translated(error_text(exc)))
            return None
        dialog.queued.connect(lambda new_id: self.notice.emit(
            tr("Queued again"), tr("{new} queued as a rerun of {old}").format(new=new_id, old=task_id)))
        dialog.queued.connect(lambda _id: self.changed.emit())
        self._show(dialog)
        return dialog

    def _show(self, dialog: QDialog) -> None:
        if self.dialog is not None:
            self.dialog.close()
        self.dialog = dialog
        dialog.finished.connect(dialog.deleteLater)
        dialog.finished.connect(lambda _r: setattr(self, "dialog", None) if self.dialog is dialog else None)
        dialog.open()

    def choose_delivery_folder(self) -> QFileDialog:
        dialog = QFileDialog(self.window, tr("Deliver picked outputs to"))
        dialog.setFileMode(QFileDialog.FileMode.Directory)
        dialog.setOption(QFileDialog.Option.ShowDirsOnly, True)
        dialog.fileSelected.connect(lambda folder: self.deliver_picked_to(Path(folder)))
        dialog.finished.connect(dialog.deleteLater)
        dialog.open()
        return dialog

    def deliver_picked_to(self, folder: Path) -> list[Delivery]:
        """The picked outputs of the selected tasks (else of the table's current view), delivered to ``folder``."""
        try:
            deliveries = deliver_picked(self.rt, self.view_task_ids(), folder)
        except (DeliveryError, OSError) as exc:
            self.message.emit(tr("Nothing delivered"), translated(error_text(exc)))
            return []
        files = sum(len(d.files) for d in deliveries)
        missing = [path for d in deliveries for path in d.missing]
        text = tr("{n} files delivered to {folder}, with a manifest").format(n=files, folder=folder)
        if missing:
            self.message.emit(tr("Delivered with gaps"), text + "\n" + tr("Gone from disk: {files}").format(
                files=", ".join(missing)))
        else:
            self.notice.emit(tr("Delivered"), text)
        return deliveries
