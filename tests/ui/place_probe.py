"""The window's place under a real window manager (tests/ui/test_window_place.py).

    xvfb-run -s "-screen 0 1366x768x24" sh -c 'openbox & exec python -m tests.ui.place_probe WORKDIR'

Three starts on one settings file: the first opens maximized on the 1366×768 screen and stays so
when a file is handed over and dropped; the operator then makes it smaller and moves the
splitter; the next start finds it so. Prints one JSON object per start.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_API", "pyside6")

import qasync
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication

from mediaassist.runtime import RuntimeOptions
from mediaassist.ui.app import run_window
from mediaassist.ui.main_window import MainWindow
from tests.harness import wait_until
from tests.helpers import sim_config_text
from tests.ui.test_window import drop

SMALLER = (1000, 600)
TABLE_SPLIT = [500, 480]


def place(window: MainWindow) -> dict[str, Any]:
    frame = window.frameGeometry()
    return {"maximized": window.isMaximized(), "size": [window.width(), window.height()],
            "frame": [frame.x(), frame.y(), frame.width(), frame.height()],
            "table_split": window.splitters[2].sizes()}


async def start(workdir: Path, step: str) -> dict[str, Any]:
    settings = QSettings(str(workdir / "ui.ini"), QSettings.Format.IniFormat)
    options = RuntimeOptions(config_path=workdir / "config.toml", data_dir=workdir / "data", speed=20.0)
    found: dict[str, Any] = {}

    def on_window(window: MainWindow) -> None:
        async def look() -> None:
            try:
                await wait_until(lambda: window.isVisible() and window.windowHandle().isExposed(), timeout=20)
                await asyncio.sleep(0.5)  # the window manager's own moves after mapping
                found["shown"] = place(window)
                if step == "first":
                    tasks = workdir / "tasks.csv"
                    tasks.write_text("model,prompt\nwriter,a\n", encoding="utf-8")
                    window.open_files([tasks])  # what a second launch with a file calls
                    await wait_until(lambda: window.importer.dialog is not None, timeout=20)
                    window.importer.dialog.reject()
                    await asyncio.sleep(0.5)
                    found["handed_over"] = place(window)
                    found["dropped"] = drop(window, tasks)
                    await wait_until(lambda: window.importer.dialog is not None, timeout=20)
                    window.importer.dialog.reject()
                    await asyncio.sleep(0.5)
                    found["after_drop"] = place(window)
                elif step == "second":
                    window.showNormal()
                    window.resize(*SMALLER)
                    window.splitters[2].setSizes(TABLE_SPLIT)
                    await asyncio.sleep(0.5)
                    found["left"] = place(window)
            finally:
                window.quit_requested.set_result(False)
        tasks.append(asyncio.ensure_future(look()))

    tasks: list[asyncio.Future[None]] = []
    await run_window([], options, settings, use_tray=False, on_window=on_window)
    return found


async def main(workdir: Path) -> None:
    (workdir / "config.toml").write_text(sim_config_text(accounts=("acct-a",)), encoding="utf-8")
    for step in ("first", "second", "third"):
        print(json.dumps({"step": step, **await start(workdir, step)}), flush=True)


if __name__ == "__main__":
    app = QApplication(sys.argv[:1])
    with asyncio.Runner(loop_factory=lambda: qasync.QEventLoop(app)) as runner:
        runner.run(main(Path(sys.argv[1])))
