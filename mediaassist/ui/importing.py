"""Importing task files: one preview dialog at a time, then the batch enqueued in steps."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, QSettings, Signal
from PySide6.QtWidgets import QFileDialog, QWidget

from mediaassist.core.import_process import ImportReading
from mediaassist.runtime import Runtime
from mediaassist.ui.background import BackgroundJobs
from mediaassist.ui.core_texts import error_text, translated
from mediaassist.ui.disk_thumbnails import DiskThumbnails
from mediaassist.ui.file_dialogs import documents_folder, file_dialog
from mediaassist.ui.i18n import tr
from mediaassist.ui.import_dialog import ImportPreviewDialog

LAST_FOLDER_KEY = "import/last_folder"


class ImportController(QObject):
    """Signals:
        imported(str, int): a batch id and how many of its tasks were new.
        progress(str): a line for the status bar while a batch is enqueued.
        notice(str, str): a title and a line for the tray / status bar.
        message(str, str): a title and a text the operator must read.
    """

    imported = Signal(str, int)
    progress = Signal(str)
    notice = Signal(str, str)
    message = Signal(str, str)

    def __init__(self, rt: Runtime, settings: QSettings, jobs: BackgroundJobs, window: QWidget,
                 thumbnails: DiskThumbnails) -> None:
        super().__init__(window)
        self.rt = rt
        self.thumbnails = thumbnails  # the preview shows the input files' thumbnails
        self.settings = settings
        self.jobs = jobs
        self.window = window
        self.dialog: ImportPreviewDialog | None = None
        self._queue: list[Path] = []

    def open_files(self, paths: list[Path] | list[str]) -> None:
        """Queue files for the import preview, one dialog at a time."""
        self._queue.extend(Path(p) for p in paths)
        if paths:  # the next Import… opens where this file was
            self.settings.setValue(LAST_FOLDER_KEY, str(Path(paths[0]).resolve().parent))
        self._next()

    def choose_file(self) -> QFileDialog:
        last = str(self.settings.value(LAST_FOLDER_KEY, "") or "")
        folder = Path(last) if last and Path(last).is_dir() else documents_folder()
        dialog = file_dialog(self.window, tr("Import task file"), folder)
        dialog.setNameFilter(tr("Task files (*.csv *.xlsx *.json *.jsonl *.txt)"))
        dialog.setFileMode(QFileDialog.FileMode.ExistingFiles)
        dialog.filesSelected.connect(self.open_files)
        dialog.open()
        return dialog

    def _next(self) -> None:
        if self.dialog is not None or not self._queue:
            return
        path = self._queue.pop(0)
        dialog = ImportPreviewDialog(path, self.rt, self.thumbnails, self.settings.value("import/default_model"),
                                     self.window)
        dialog.finished.connect(lambda result, d=dialog: self._finished(d, result))
        self.dialog = dialog
        dialog.open()

    def _finished(self, dialog: ImportPreviewDialog, result: int) -> None:
        self.dialog = None
        preview = dialog.preview
        accepted = result == ImportPreviewDialog.DialogCode.Accepted
        reading = dialog.take_reading() if accepted and dialog.new_tasks else None
        dialog.close_reading()
        if reading is not None and preview is not None:
            if dialog.default_model:
                self.settings.setValue("import/default_model", dialog.default_model)
            self.jobs.spawn(self._enqueue(reading, dialog.path.name, dialog.new_tasks),
                            lambda exc: self.message.emit(tr("Import failed"), translated(error_text(exc))),
                            finish_on_quit=True)
        dialog.deleteLater()
        self._next()

    async def _enqueue(self, reading: ImportReading, name: str, total: int) -> None:
        def on_progress(inserted: int) -> None:
            self.progress.emit(tr("Importing {name}: {n} of {total} tasks…").format(name=name, n=inserted,
                                                                                      total=total))

        try:
            batch = await self.rt.enqueue_reading(reading, on_progress)
        finally:
            reading.close()
        if not batch.inserted:  # another import took them meanwhile: there is no batch to name
            self.notice.emit(tr("Imported"), tr("Nothing imported from {name}: its {n} tasks are in the queue "
                                                "already").format(name=name, n=batch.skipped))
            return
        message = tr("{n} tasks enqueued as {batch}").format(n=batch.inserted, batch=batch.batch_id)
        if batch.skipped:
            message += tr("; {n} task ids were already in the queue and were skipped").format(n=batch.skipped)
        self.notice.emit(tr("Imported"), message)
        self.imported.emit(batch.batch_id, batch.inserted)
