"""The import preview: what a task file holds before anything is enqueued."""

from __future__ import annotations

import html
import logging
from collections.abc import Callable
from pathlib import Path

from PySide6.QtWidgets import (QComboBox, QDialog, QDialogButtonBox, QFormLayout, QLabel, QTableWidget,
                               QTableWidgetItem, QVBoxLayout)

from mediaassist.core.config import AppConfig
from mediaassist.core.errors import ImportFileError
from mediaassist.core.importer import FORMATS, ImportReport, read_task_file
from mediaassist.ui.i18n import tr

log = logging.getLogger("mediaassist.ui")

MAX_BAD_ROWS_SHOWN = 1000


def importable(path: Path) -> bool:
    return path.suffix.lower() in FORMATS


class ImportPreviewDialog(QDialog):
    """Reads the file (again whenever the default model changes); Import enqueues ``report``."""

    def __init__(self, path: Path, config: AppConfig, default_model: str | None = None, parent=None,
                 count_stored: Callable[[ImportReport], int] | None = None) -> None:
        super().__init__(parent)
        self.path = path
        self.config = config
        self.count_stored = count_stored  # how many of the report's tasks the store already has
        self.report: ImportReport | None = None
        self.setWindowTitle(tr("Import {name}").format(name=path.name))
        self.resize(640, 420)
        layout = QVBoxLayout(self)
        form = QFormLayout()
        self.model_box = QComboBox()
        self.model_box.addItem(tr("(from the file)"), None)
        for model in config.models:
            self.model_box.addItem(f"{model.name} ({model.kind})", model.name)
        is_txt = FORMATS.get(path.suffix.lower()) == "txt"
        if is_txt and default_model is None and config.models:
            default_model = config.models[0].name
        if default_model is not None:
            self.model_box.setCurrentIndex(max(0, self.model_box.findData(default_model)))
        form.addRow(tr("File"), QLabel(str(path)))
        form.addRow(tr("Default model") + (tr(" (required for TXT)") if is_txt else ""), self.model_box)
        layout.addLayout(form)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        layout.addWidget(self.summary)
        self.bad_rows = QTableWidget(0, 2)
        self.bad_rows.setHorizontalHeaderLabels([tr("Row"), tr("Reason")])
        self.bad_rows.horizontalHeader().setStretchLastSection(True)
        self.bad_rows.verticalHeader().setVisible(False)
        layout.addWidget(self.bad_rows)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.import_button = self.buttons.addButton(tr("Import"), QDialogButtonBox.ButtonRole.AcceptRole)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self.model_box.currentIndexChanged.connect(self.reread)
        self.reread()

    def _show_error(self, text: str) -> None:
        self.report = None
        self.summary.setText(f"<span style='color:#c62828'>{html.escape(text)}</span>")
        self.bad_rows.setRowCount(0)
        self.import_button.setEnabled(False)

    @property
    def default_model(self) -> str | None:
        return self.model_box.currentData()

    def reread(self) -> None:
        try:
            self.report = read_task_file(self.path, self.config, self.default_model)
        except ImportFileError as exc:
            self._show_error(str(exc))
            return
        except OSError as exc:  # unreadable: permissions, a folder, a file gone since the drop
            self._show_error(tr("Cannot read {path}: {reason}").format(path=self.path, reason=exc.strerror or exc))
            return
        except Exception as exc:  # a reader bug must not escape from a drop or a hand-over
            log.exception("reading %s failed", self.path)
            self._show_error(tr("Cannot read {path}: {reason}").format(path=self.path, reason=f"{type(exc).__name__}: {exc}"))
            return
        report = self.report
        text = tr("{good} of {total} rows are good and will be enqueued as one batch; {bad} rows have errors.").format(
            good=len(report.tasks), total=report.total_rows, bad=len(report.errors))
        stored = self.count_stored(report) if self.count_stored is not None else 0
        if stored:
            text += "<br>" + tr("{n} of them are already in the store (an earlier import of this file) "
                                "and will be skipped, not run twice.").format(n=stored)
        for warning in report.warnings:
            text += "<br>" + tr("Note: {w}").format(w=html.escape(warning))
        self.summary.setText(text)
        shown = report.errors[:MAX_BAD_ROWS_SHOWN]
        self.bad_rows.setRowCount(len(shown))
        for i, error in enumerate(shown):
            self.bad_rows.setItem(i, 0, QTableWidgetItem(str(error.row)))
            self.bad_rows.setItem(i, 1, QTableWidgetItem(error.reason))
        self.import_button.setEnabled(bool(report.tasks))
        self.import_button.setText(tr("Import {n} tasks").format(n=len(report.tasks)))
