"""Qt's own dialogs speak the window's language and open where the operator's files are (issue 27
item 8): in Chinese the import dialog's labels and dates are Chinese; Import… opens in the last
import folder, Export… in the outputs folder (never the process's working directory)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from PySide6.QtCore import QDate, QLocale
from PySide6.QtWidgets import QLabel

from tests.harness import wait_until

from .test_window import App, app, switch_language, write_task_file  # noqa: F401  (the app fixture)


@pytest.mark.asyncio
async def test_file_dialogs_in_chinese_open_in_the_last_import_and_the_outputs_folder(
        app: App, tmp_path: Path) -> None:  # noqa: F811
    window = app.window
    await switch_language(window, "zh_CN")
    folder = tmp_path / "批次文件"
    folder.mkdir()
    path = folder / "tasks.csv"
    write_task_file(path)
    window.open_files([path])  # a drop or a hand-over remembers the folder too
    await wait_until(lambda: window.importer.dialog is not None)
    window.importer.dialog.reject()
    await wait_until(lambda: window.importer.dialog is None)
    dialog = window.importer.choose_file()
    try:
        await asyncio.sleep(0.2)  # let it lay out
        assert Path(dialog.directory().absolutePath()) == folder
        look_in = dialog.findChild(QLabel, "lookInLabel")
        file_type = dialog.findChild(QLabel, "fileTypeLabel")
        assert look_in is not None and look_in.text() == "查找范围：", look_in.text() if look_in else None
        assert file_type is not None and file_type.text() == "文件类型：", file_type.text() if file_type else None
        assert QLocale().toString(QDate(2026, 12, 1), QLocale.FormatType.ShortFormat) == "2026/12/1"
    finally:
        dialog.reject()
    export = window.choose_export_file()
    try:
        assert Path(export.directory().absolutePath()) == window.rt.outputs_root
        assert Path(export.directory().absolutePath()) != Path.cwd()
    finally:
        export.reject()
