"""The detail pane: one task's prompt, result, input and output thumbnails, error and log lines.

It follows the feed: at once when its task's row changes, and with every read of the counts (a
running task's log grows without a row write). So it only touches what changed: new log lines
are appended, and a box whose text did change keeps its scroll position. Whatever the operator
is reading or selecting stays put.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFormLayout, QLabel, QPlainTextEdit, QWidget

from mediaassist.core.media_items import MediaItem, task_media
from mediaassist.core.queries import Snapshot
from mediaassist.core.secrets import redact
from mediaassist.runtime import Runtime
from mediaassist.ui.core_texts import translated
from mediaassist.ui.disk_thumbnails import DiskThumbnails
from mediaassist.ui.feed import TaskFeed
from mediaassist.ui.gallery import MediaStrip
from mediaassist.ui.i18n import labelled, tr
from mediaassist.ui.labels import error_kind_labels, state_labels
from mediaassist.ui.task_model import cost_tooltip, local_time, precise_local_time


def _text_box(lines: int) -> QPlainTextEdit:
    box = QPlainTextEdit()
    box.setReadOnly(True)
    box.setMaximumHeight(18 * lines + 10)
    return box


def _plain_label() -> QLabel:
    """Task ids and error texts are data (an error may be an HTML page): never rich text."""
    label = QLabel()
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


def _set_label(label: QLabel, text: str) -> None:
    if label.text() != text:
        label.setText(text)


def _set_box(box: QPlainTextEdit, text: str) -> None:
    if box.toPlainText() == text:
        return
    bar = box.verticalScrollBar()
    position = bar.value()
    box.setPlainText(text)
    bar.setValue(position)


class DetailPane(QWidget):
    def __init__(self, rt: Runtime, thumbnails: DiskThumbnails, feed: TaskFeed) -> None:
        super().__init__()
        self.rt = rt
        self.task_id: str | None = None
        self._seq: int | None = None  # the row key of task_id, once read
        self._log_lines = 0  # log entries of task_id already shown
        form = self.form = QFormLayout(self)
        self.header = _plain_label()
        font = self.header.font()
        font.setBold(True)
        self.header.setFont(font)
        self.prompt, self.result = _text_box(4), _text_box(5)
        self.error = _plain_label()
        self.error.setStyleSheet("color: #c62828")
        self.media = MediaStrip(thumbnails)  # inputs beside outputs; double-click to preview
        self.log = _text_box(8)
        form.addRow(self.header)
        form.addRow(tr("Prompt"), self.prompt)
        form.addRow(tr("Result"), self.result)
        form.addRow(tr("Media"), self.media)
        form.addRow(tr("Error"), self.error)
        self.cost = _plain_label()
        form.addRow(tr("Cost"), self.cost)
        form.addRow(tr("Log"), self.log)
        self.refresh()
        feed.tasks_changed.connect(self._tasks_changed)
        feed.counts.connect(self._counts_read)

    def show_task(self, task_id: str | None) -> None:
        """Another task (or none): shown at once; the same one again reads nothing."""
        if task_id == self.task_id:
            return
        self.task_id, self._seq = task_id, None
        self._log_lines = 0
        self.log.clear()
        self.refresh()

    def _counts_read(self, _snap: Snapshot) -> None:
        self.refresh()

    def _tasks_changed(self, seqs: set[int]) -> None:
        if self._seq in seqs:
            self.refresh()

    def refresh(self) -> None:
        task = self.rt.task(self.task_id) if self.task_id else None
        self._seq = task.seq if task is not None else None
        if task is None:
            _set_label(self.header, tr("Select a task to see its details."))
            for box in (self.prompt, self.result, self.log):
                _set_box(box, "")
            _set_label(self.error, "")
            self._show_media([])
            self.form.setRowVisible(self.cost, False)
            return
        _set_label(self.header, tr("{id} · {state} · {lane} · attempt {attempt} · created {created}").format(
            id=task.task_id, state=state_labels().get(task.state, task.state), lane=task.lane,
            attempt=task.attempt, created=local_time(task.created_at)))
        _set_box(self.prompt, redact(task.prompt))
        result = self.rt.result(task.task_id)
        _set_box(self.result, translated(result.text_shown) if result else "")
        kind = error_kind_labels().get(task.error_kind or "", task.error_kind or "")
        _set_label(self.error, labelled(kind, translated(task.error_text)) if task.error else "")
        self._show_media(task_media(task, result))
        money = self.rt.task_money(task.task_id)
        _set_label(self.cost, cost_tooltip(money).replace("\n", " · ") if money else "")
        self.form.setRowVisible(self.cost, money is not None)
        self._show_log(task.task_id)

    def _show_media(self, items: list[MediaItem]) -> None:
        """A task without inputs or outputs gets no empty box: its log has the room."""
        self.media.set_items(items)
        self.form.setRowVisible(self.media, bool(items))

    def _show_log(self, task_id: str) -> None:
        entries = self.rt.logs(task_id)
        if len(entries) < self._log_lines:  # the log was cut (a retry, a delete): start over
            self._log_lines = 0
            self.log.clear()
        for entry in entries[self._log_lines:]:
            # appendPlainText keeps the view where it is unless it was at the bottom already
            self.log.appendPlainText(f"{precise_local_time(entry.at)}  {translated(entry.text)}")
        self._log_lines = len(entries)

    def close_media(self) -> None:
        self.media.close_media()
