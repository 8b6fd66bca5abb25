"""A config the window cannot start with: every problem in a dialog, not one line on a stderr
nobody sees when the app was started from the launcher.

The dialog offers to open the config file (and read it again once fixed), to start with the
demo providers instead, or to quit. It runs before the qasync loop exists, so ``exec()`` is safe.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from mediaassist.core.errors import ConfigError
from mediaassist.core.options import RuntimeOptions, load_app_config
from mediaassist.core.paths import default_config_path, demo_data_dir
from mediaassist.ui.core_texts import translated
from mediaassist.ui.i18n import tr

DEMO_CHOSEN = 2  # the dialog's result when the operator starts the demo instead


def open_in_editor(path: Path) -> None:
    QDesktopServices.openUrl(QUrl.fromLocalFile(str(path)))


class ConfigProblemsDialog(QDialog):
    """Lists the problems; "Try again" reads the file again and accepts once it loads."""

    def __init__(self, path: Path, error: ConfigError, options: RuntimeOptions,
                 open_file: Callable[[Path], None] = open_in_editor, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.path, self.options, self._open_file = path, options, open_file
        self.setWindowTitle(tr("mediaassist cannot start"))
        self.resize(760, 360)
        layout = QVBoxLayout(self)
        self.heading = QLabel()
        self.heading.setWordWrap(True)
        layout.addWidget(self.heading)
        self.problems = QPlainTextEdit()
        self.problems.setReadOnly(True)
        self.problems.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        layout.addWidget(self.problems, 1)
        self.buttons = QDialogButtonBox()
        self.open_button = self._button(tr("Open the config file"), self._open)
        self.retry_button = self._button(tr("Try again"), self.try_again)
        self.demo_button = self._button(tr("Start with the demo providers"), lambda: self.done(DEMO_CHOSEN))
        self.quit_button = self._button(tr("Quit"), self.reject)
        layout.addWidget(self.buttons)
        self.show_problems(error)

    def _button(self, text: str, slot: Callable[[], object]) -> QPushButton:
        button = self.buttons.addButton(text, QDialogButtonBox.ButtonRole.ActionRole)
        button.clicked.connect(lambda _checked=False: slot())
        return button

    def show_problems(self, error: ConfigError) -> None:
        self.heading.setText(tr("The config file {path} has {n} problems. Fix them and try again, or start "
                                "with the demo providers.").format(path=self.path, n=len(error.problems)))
        self.problems.setPlainText("\n".join(translated(problem) for problem in error.problems))

    def _open(self) -> None:
        self._open_file(self.path)

    def try_again(self) -> None:
        try:
            load_app_config(self.options)
        except ConfigError as exc:
            self.show_problems(exc)
        else:
            self.accept()


def options_after_config_problems(options: RuntimeOptions,
                                  open_file: Callable[[Path], None] = open_in_editor) -> RuntimeOptions | None:
    """The options to start with: these when the config loads (now or after a fix), the demo's
    when the operator chose it, None to quit."""
    if options.demo:
        return options
    try:
        load_app_config(options)
        return options
    except ConfigError as exc:
        dialog = ConfigProblemsDialog(options.config_path or default_config_path(), exc, options, open_file)
        result = dialog.exec()
    if result == DEMO_CHOSEN:
        return RuntimeOptions(config_path=options.config_path, data_dir=demo_data_dir(options.data_dir), demo=True,
                              speed=options.speed)
    return options if result == QDialog.DialogCode.Accepted else None
