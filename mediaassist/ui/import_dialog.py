"""The import preview: what a task file holds before anything is enqueued.

A child process reads the file and counts the ids the store already has (see
``core/import_process.py``), so a 100,000-row file never stalls the loop that runs the scheduler
and the window; on Import the same child enqueues it. Until the preview is ready the dialog says
"Reading…" and Import is disabled.
"""

from __future__ import annotations

import asyncio
import html
from pathlib import Path
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from mediaassist.core.budget import BatchEstimate
from mediaassist.core.import_process import ImportFailed, ImportPreview, ImportReading
from mediaassist.core.importer import FORMATS
from mediaassist.core.media_items import input_items
from mediaassist.core.secrets import redact
from mediaassist.runtime import Runtime
from mediaassist.ui.core_texts import translated
from mediaassist.ui.disk_thumbnails import DiskThumbnails
from mediaassist.ui.gallery import MediaStrip
from mediaassist.ui.i18n import tr
from mediaassist.ui.labels import lane_kind_label, money_text

INPUTS_COLUMN, PROMPT_COLUMN = 2, 3  # model, account, inputs (hidden when none), prompt
PROMPT_CHARS = 160


def importable(path: Path) -> bool:
    return path.suffix.lower() in FORMATS


def _table(headers: list[str]) -> QTableWidget:
    table = QTableWidget(0, len(headers))
    table.setHorizontalHeaderLabels(headers)
    table.horizontalHeader().setStretchLastSection(True)
    table.verticalHeader().setVisible(False)
    table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
    return table


def inputs_text(inputs: dict[str, list[dict[str, Any]]]) -> str:
    """``first_frame: dawn.png · last_frame: day.png`` (file names, or the URLs)."""
    return " · ".join(f"{name}: " + ", ".join(Path(e["path"]).name if "path" in e else str(e.get("url", ""))
                                           for e in entries) for name, entries in inputs.items())


def estimate_html(estimate: BatchEstimate) -> str:
    """The batch's estimated cost in total and per model, before anything is spent."""
    if not estimate.total and not any(m.unknown for m in estimate.models):
        return ""
    lines = [tr("Estimated cost: about {total}").format(total=money_text(estimate.total.monies()) or "-")]
    for model in estimate.models:
        cost = money_text(model.total.monies())
        # a model with no price at all reads "2 task(s) · 2 with no price", not "about -"
        line = (tr("{model}: {n} task(s), about {cost}").format(model=model.model, n=model.tasks, cost=cost) if cost
                else tr("{model}: {n} task(s)").format(model=model.model, n=model.tasks))
        if model.unknown:
            line += " · " + tr("{n} with no price").format(n=model.unknown)
        lines.append(line)
    return "<br>" + "<br>".join(html.escape(line) for line in lines)


def _fill(table: QTableWidget, rows: list[tuple[str, ...]]) -> None:
    table.setRowCount(len(rows))
    for i, row in enumerate(rows):
        for j, text in enumerate(row):
            item = QTableWidgetItem(text)
            item.setToolTip(text)  # cells are one line, elided
            table.setItem(i, j, item)


class ImportPreviewDialog(QDialog):
    """Reads the file (again whenever the default model changes); on Import the controller
    takes the reading (``take_reading``) and enqueues through it.

    Signals:
        previewed(): a reading finished and the dialog shows its outcome (or its error).
    """

    previewed = Signal()

    def __init__(self, path: Path, rt: Runtime, thumbnails: DiskThumbnails, default_model: str | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.path = path
        self.rt = rt
        self.preview: ImportPreview | None = None
        self._child: ImportReading | None = None
        self._reading: asyncio.Task[None] | None = None
        self.setWindowTitle(tr("Import {name}").format(name=path.name))
        self.resize(720, 460)
        layout = QVBoxLayout(self)
        form = QFormLayout()
        self.model_box = QComboBox()
        self.model_box.addItem(tr("(from the file)"), None)
        for model in rt.config.models:
            self.model_box.addItem(f"{model.name} ({lane_kind_label(model.kind)})", model.name)
        is_txt = FORMATS.get(path.suffix.lower()) == "txt"
        if is_txt and default_model is None and rt.config.models:
            default_model = rt.config.models[0].name
        if default_model is not None:
            self.model_box.setCurrentIndex(max(0, self.model_box.findData(default_model)))
        file_label = QLabel(str(path))
        file_label.setWordWrap(True)
        form.addRow(tr("File"), file_label)
        form.addRow(tr("Default model") + (tr(" (required for TXT)") if is_txt else ""), self.model_box)
        layout.addLayout(form)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        layout.addWidget(self.summary)
        self.tabs = QTabWidget()
        self.good_rows = _table([tr("Model"), tr("Account"), tr("Inputs"), tr("Prompt")])
        self.good_rows.currentCellChanged.connect(lambda row, *_: self._show_inputs(row))
        self.good_rows.setWordWrap(False)  # one line a task; the whole text is in the cell's tooltip
        self.good_rows.setColumnWidth(INPUTS_COLUMN, 240)
        self.bad_rows = _table([tr("Row"), tr("Reason")])
        self.tabs.addTab(self.good_rows, tr("Tasks"))
        self.tabs.addTab(self.bad_rows, tr("Errors"))
        layout.addWidget(self.tabs, 1)
        # The input files of the row chosen above, as thumbnails (made off the loop); a file
        # that cannot be used is a row error on the Errors tab, naming the column.
        self.inputs_label = QLabel()
        self.inputs = MediaStrip(thumbnails)
        layout.addWidget(self.inputs_label)
        layout.addWidget(self.inputs)
        self.finished.connect(lambda _result: self.inputs.close_media())
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.import_button = self.buttons.addButton(tr("Import"), QDialogButtonBox.ButtonRole.AcceptRole)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self.model_box.currentIndexChanged.connect(self.reread)
        self.reread()

    def _show_inputs(self, row: int) -> None:
        tasks = self.preview.tasks if self.preview is not None else []
        task = tasks[row] if 0 <= row < len(tasks) else None
        items = input_items(task.task_id or "", task.inputs) if task is not None else []
        self.inputs.set_items(items)
        self.inputs.setVisible(bool(items))
        self.inputs_label.setVisible(bool(items))
        if items:
            self.inputs_label.setText(tr("Input files of task {n}:").format(n=row + 1))

    @property
    def new_tasks(self) -> int:
        """The good rows the store does not have yet: what Import adds."""
        return self.preview.task_count - self.preview.stored if self.preview is not None else 0

    @property
    def default_model(self) -> str | None:
        data = self.model_box.currentData()  # a model's name, or None for "(from the file)"
        return data if isinstance(data, str) else None

    @property
    def reading(self) -> bool:
        return self._reading is not None and not self._reading.done()

    def reread(self) -> None:
        """Start (again) reading the file; a reading still under way is abandoned."""
        self.close_reading()
        self.preview = None
        self.import_button.setEnabled(False)
        self.summary.setText(html.escape(tr("Reading {name}…").format(name=self.path.name)))
        self._reading = asyncio.ensure_future(self._read(self.default_model))

    def take_reading(self) -> ImportReading | None:
        """The child that read the file, now the caller's to enqueue through or to close."""
        child, self._child = self._child, None
        return child

    def close_reading(self) -> None:
        """Abandon a reading under way and end its child, unless it was taken."""
        if self._reading is not None:
            self._reading.cancel()
        child = self.take_reading()
        if child is not None:
            child.close()

    async def _read(self, default_model: str | None) -> None:
        try:
            self._child = self.rt.start_import(self.path, default_model)
            preview = await self._child.preview()
        except ImportFailed as exc:
            self._show_error(self._failure_text(exc))
        except OSError as exc:  # no child process could be started
            self._show_error(tr("Cannot read {path}: {reason}").format(path=self.path, reason=exc.strerror or exc))
        else:
            self._show(preview)
        self.previewed.emit()

    def _failure_text(self, exc: ImportFailed) -> str:
        if exc.kind in ("file", "store"):
            return translated(exc.message)  # the importer's or the store's own line, naming the file
        return tr("Cannot read {path}: {reason}").format(path=self.path, reason=translated(exc.message))

    def _show_error(self, text: str) -> None:
        self.preview = None
        self.summary.setText(f"<span style='color:#c62828'>{html.escape(text)}</span>")
        _fill(self.good_rows, [])
        self._show_inputs(-1)
        _fill(self.bad_rows, [])
        self.import_button.setEnabled(False)

    def _show(self, preview: ImportPreview) -> None:
        self.preview = preview
        text = tr("{good} of {total} rows are good and will be enqueued as one batch; {bad} rows have errors.").format(
            good=preview.task_count, total=preview.total_rows, bad=preview.error_count)
        if preview.stored and preview.stored == preview.task_count:
            text += "<br>" + tr("All {n} of them are in the queue already: importing the file again adds "
                                "nothing and creates no batch.").format(n=preview.stored)
        elif preview.stored:
            text += "<br>" + tr("{n} of them are already in the store (an earlier import of this file) "
                                "and will be skipped, not run twice.").format(n=preview.stored)
        for warning in preview.warnings:
            text += "<br>" + tr("Note: {w}").format(w=html.escape(translated(warning)))
        if preview.estimate is not None:
            text += estimate_html(preview.estimate)
        self.summary.setText(text)
        _fill(self.good_rows, [(task.model, task.account or "", inputs_text(task.inputs),
                                redact(task.prompt)[:PROMPT_CHARS].replace("\n", " "))
                               for task in preview.tasks])
        self.good_rows.setColumnHidden(INPUTS_COLUMN, not preview.any_inputs)
        self._show_inputs(0 if preview.tasks else -1)
        _fill(self.bad_rows, [(str(error.row), translated(error.message or error.reason)) for error in preview.errors])
        self.tabs.setTabText(0, tr("Tasks ({n})").format(n=preview.task_count))
        self.tabs.setTabText(1, tr("Errors ({n})").format(n=preview.error_count))
        self.tabs.setCurrentIndex(1 if preview.errors else 0)  # rows to fix come first
        fresh = self.new_tasks
        self.import_button.setEnabled(bool(fresh))
        self.import_button.setText(tr("Import {n} tasks").format(n=fresh) if fresh or not preview.task_count
                                   else tr("Nothing new to import"))
