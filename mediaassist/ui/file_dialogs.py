"""File dialogs that speak the window's language and open where the operator's files are.

The desktop's native dialog follows the system's locale, not the language chosen in Settings
(a Chinese window showed "Look in:" and "Files of type:"); Qt's own dialog is translated with
the window (qtbase_*.qm, loaded by ``i18n.Translations``). A dialog never opens in the process's
working directory: exports open in the outputs folder, imports in the last import folder.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QStandardPaths
from PySide6.QtWidgets import QFileDialog, QWidget

from mediaassist.ui.i18n import tr


def file_dialog(parent: QWidget, title: str, folder: Path) -> QFileDialog:
    dialog = QFileDialog(parent, title, str(folder))
    dialog.setOption(QFileDialog.Option.DontUseNativeDialog, True)
    # Qt 6.11 renamed these ("&Look in:", "Files of &type:") and its shipped Chinese catalogue
    # still has the old ones: they are the app's own texts, translated with the rest.
    for label, text in ((QFileDialog.DialogLabel.LookIn, tr("Look in:")),
                        (QFileDialog.DialogLabel.FileName, tr("File name:")),
                        (QFileDialog.DialogLabel.FileType, tr("Files of type:"))):
        dialog.setLabelText(label, text)
    return dialog


def documents_folder() -> Path:
    return Path(QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DocumentsLocation) or Path.home())
