"""The import preview: what a task file holds before anything is enqueued.

The file is read in a worker thread and the stored ids are counted a chunk at a time, so a
100,000-row file never stalls the loop that runs the scheduler and the window. Until the
preview is ready the dialog says "Reading…" and Import is disabled.
"""

from __future__ import annotations

import asyncio
import html
import logging
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

from mediaassist.core.errors import ImportFileError
from mediaassist.core.importer import FORMATS, ImportReport
from mediaassist.core.media_items import input_items
from mediaassist.core.secrets import redact
from mediaassist.runtime import Runtime
from mediaassist.ui.core_texts import translated, translated_reasons
from mediaassist.ui.disk_thumbnails import DiskThumbnails
from mediaassist.ui.gallery import MediaStrip
from mediaassist.ui.i18n import tr
from mediaassist.ui.labels import lane_kind_label

log = logging.getLogger("mediaassist.ui")

MAX_ROWS_SHOWN = 200  # per tab: a preview, not a copy of the file
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


def _fill(table: QTableWidget, rows: list[tuple[str, ...]]) -> None:
    table.setRowCount(len(rows))
    for i, row in enumerate(rows):
        for j, text in enumerate(row):
            item = QTableWidgetItem(text)
            item.setToolTip(text)  # cells are one line, elided
            table.setItem(i, j, item)


class ImportPreviewDialog(QDialog):
    """Reads the file (again whenever the default model changes); Import enqueues ``report``.

    Signals:
        previewed(): a reading finished and the dialog shows its outcome (or its error).
    """

    previewed = Signal()

    def __init__(self, path: Path, rt: Runtime, thumbnails: DiskThumbnails, default_model: str | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.path = path
        self.rt = rt
        self.report: ImportReport | None = None
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
        self.finished.connect(self._stop_reading)
        self.reread()

    def _show_inputs(self, row: int) -> None:
        tasks = self.report.tasks if self.report is not None else []
        task = tasks[row] if 0 <= row < min(len(tasks), MAX_ROWS_SHOWN) else None
        items = input_items(task.task_id or "", task.inputs) if task is not None else []
        self.inputs.set_items(items)
        self.inputs.setVisible(bool(items))
        self.inputs_label.setVisible(bool(items))
        if items:
            self.inputs_label.setText(tr("Input files of task {n}:").format(n=row + 1))

    @property
    def default_model(self) -> str | None:
        data = self.model_box.currentData()  # a model's name, or None for "(from the file)"
        return data if isinstance(data, str) else None

    @property
    def reading(self) -> bool:
        return self._reading is not None and not self._reading.done()

    def reread(self) -> None:
        """Start (again) reading the file; a reading still under way is abandoned."""
        self._stop_reading()
        self.report = None
        self.import_button.setEnabled(False)
        self.summary.setText(html.escape(tr("Reading {name}…").format(name=self.path.name)))
        self._reading = asyncio.ensure_future(self._read(self.default_model))

    def _stop_reading(self) -> None:
        if self._reading is not None:
            self._reading.cancel()  # the worker thread finishes on its own; its result is dropped

    async def _read(self, default_model: str | None) -> None:
        try:
            report = await asyncio.to_thread(self.rt.read_import, self.path, default_model)
            stored = await self.rt.count_stored(report)
        except ImportFileError as exc:
            self._show_error(str(exc))
        except OSError as exc:  # unreadable: permissions, a folder, a file gone since the drop
            self._show_error(tr("Cannot read {path}: {reason}").format(path=self.path, reason=exc.strerror or exc))
        except Exception as exc:  # a reader bug must not escape from a drop or a hand-over
            log.exception("reading %s failed", self.path)
            self._show_error(tr("Cannot read {path}: {reason}").format(
                path=self.path, reason=f"{type(exc).__name__}: {exc}"))
        else:
            self._show(report, stored)
        self.previewed.emit()

    def _show_error(self, text: str) -> None:
        self.report = None
        self.summary.setText(f"<span style='color:#c62828'>{html.escape(translated(text))}</span>")
        _fill(self.good_rows, [])
        self._show_inputs(-1)
        _fill(self.bad_rows, [])
        self.import_button.setEnabled(False)

    def _show(self, report: ImportReport, stored: int) -> None:
        self.report = report
        text = tr("{good} of {total} rows are good and will be enqueued as one batch; {bad} rows have errors.").format(
            good=len(report.tasks), total=report.total_rows, bad=len(report.errors))
        if stored:
            text += "<br>" + tr("{n} of them are already in the store (an earlier import of this file) "
                                "and will be skipped, not run twice.").format(n=stored)
        for warning in report.warnings:
            text += "<br>" + tr("Note: {w}").format(w=html.escape(translated(warning)))
        self.summary.setText(text)
        _fill(self.good_rows, [(task.model, task.account or "", inputs_text(task.inputs),
                                redact(task.prompt)[:PROMPT_CHARS].replace("\n", " "))
                               for task in report.tasks[:MAX_ROWS_SHOWN]])
        self.good_rows.setColumnHidden(INPUTS_COLUMN, not any(task.inputs for task in report.tasks))
        self._show_inputs(0 if report.tasks else -1)
        _fill(self.bad_rows, [(str(error.row), translated_reasons(error.reason))
                              for error in report.errors[:MAX_ROWS_SHOWN]])
        self.tabs.setTabText(0, tr("Tasks ({n})").format(n=len(report.tasks)))
        self.tabs.setTabText(1, tr("Errors ({n})").format(n=len(report.errors)))
        self.tabs.setCurrentIndex(1 if report.errors else 0)  # rows to fix come first
        self.import_button.setEnabled(bool(report.tasks))
        self.import_button.setText(tr("Import {n} tasks").format(n=len(report.tasks)))
