"""Start the installed app's window offscreen on the demo providers, wait until it shows, quit.

Used by the wheel and frozen-build smoke tests: proves the window, its resources (icon,
translations) and the scheduler start from an install with no checkout. Exit 0 on success.
    QT_QPA_PLATFORM=offscreen python packaging/smoke_window.py DATA_DIR
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import qasync
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication

from mediaassist.runtime import RuntimeOptions
from mediaassist.ui.app import run_window


def main(data: Path) -> int:
    app = QApplication.instance() or QApplication(sys.argv[:1])
    settings = QSettings(str(data / "smoke-settings.ini"), QSettings.Format.IniFormat)
    shown: list[str] = []

    def on_window(window: object) -> None:
        shown.append(window.windowTitle())  # type: ignore[attr-defined]
        window.quit_requested.set_result(False)  # type: ignore[attr-defined]

    options = RuntimeOptions(data_dir=data, demo=True, speed=60.0)
    with asyncio.Runner(loop_factory=lambda: qasync.QEventLoop(app)) as runner:
        code = runner.run(run_window([], options, settings, use_tray=False, on_window=on_window))
    print(f"window shown: {shown[0]!r}" if shown else "window never shown")
    return code if shown else 1


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
