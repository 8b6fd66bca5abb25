"""The detail pane: one task's prompt, result, output thumbnails, error and log lines."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QIcon, QPixmap
from PySide6.QtWidgets import QFormLayout, QLabel, QListWidget, QListWidgetItem, QPlainTextEdit, QWidget

from mediaassist.core.secrets import redact
from mediaassist.core.store import Store, iso
from mediaassist.ui.i18n import tr
from mediaassist.ui.labels import state_labels

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".webp", ".gif", ".bmp"}
THUMB = 96


def _text_box(lines: int) -> QPlainTextEdit:
    box = QPlainTextEdit()
    box.setReadOnly(True)
    box.setMaximumHeight(18 * lines + 10)
    return box


class DetailPane(QWidget):
    def __init__(self, store: Store) -> None:
        super().__init__()
        self.store = store
        self.task_id: str | None = None
        form = QFormLayout(self)
        self.header = QLabel(tr("Select a task to see its details."))
        self.header.setWordWrap(True)
        self.header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.prompt, self.result = _text_box(4), _text_box(5)
        self.error = QLabel()
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #c62828")
        self.thumbs = QListWidget()
        self.thumbs.setViewMode(QListWidget.ViewMode.IconMode)
        self.thumbs.setIconSize(QSize(THUMB, THUMB))
        self.thumbs.setMaximumHeight(THUMB + 30)
        self.log = _text_box(8)
        form.addRow(self.header)
        form.addRow(tr("Prompt"), self.prompt)
        form.addRow(tr("Result"), self.result)
        form.addRow(tr("Outputs"), self.thumbs)
        form.addRow(tr("Error"), self.error)
        form.addRow(tr("Log"), self.log)

    def show_task(self, task_id: str | None) -> None:
        self.task_id = task_id
        self.refresh()

    def refresh(self) -> None:
        task = self.store.get(self.task_id) if self.task_id else None
        if task is None:
            self.header.setText(tr("Select a task to see its details."))
            for box in (self.prompt, self.result, self.log):
                box.setPlainText("")
            self.error.setText("")
            self.thumbs.clear()
            return
        self.header.setText(tr("<b>{id}</b> · {state} · {lane} · attempt {attempt} · created {created}").format(
            id=task.task_id, state=state_labels().get(task.state, task.state), lane=task.lane,
            attempt=task.attempt, created=iso(task.created_at)))
        self.prompt.setPlainText(task.prompt)
        result = self.store.result(task.task_id)
        self.result.setPlainText(redact(result.text or "") if result else "")
        self.error.setText(f"{task.error_kind}: {redact(task.error)}" if task.error else "")
        self._show_files(result.file_list if result else [])
        lines = [f"{iso(entry.at)}  {redact(entry.line)}" for entry in self.store.logs(task.task_id)]
        self.log.setPlainText("\n".join(lines))

    def _show_files(self, files: list[str]) -> None:
        self.thumbs.clear()
        for name in files:
            path = Path(name)
            item = QListWidgetItem(path.name)
            item.setToolTip(str(path))
            if path.suffix.lower() in IMAGE_SUFFIXES and path.exists():
                item.setIcon(QIcon(QPixmap(str(path)).scaled(THUMB, THUMB, Qt.AspectRatioMode.KeepAspectRatio)))
            self.thumbs.addItem(item)
