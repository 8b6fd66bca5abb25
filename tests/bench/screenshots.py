"""Screenshots for review: the demo batch running, under Xvfb (or offscreen), English and Chinese.

    xvfb-run -a -s "-screen 0 1366x768x24" .venv/bin/python tests/bench/screenshots.py

Saves screenshots/{en,zh_CN}-{idle,busy,error,import,accounts,settings}.png.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_API", "pyside6")
if not os.environ.get("DISPLAY"):
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import qasync  # noqa: E402
from PySide6.QtCore import QSettings  # noqa: E402
from PySide6.QtWidgets import QApplication, QWidget  # noqa: E402

from mediaassist.core.paths import RESOURCES  # noqa: E402
from mediaassist.core.store import NewTask  # noqa: E402
from mediaassist.runtime import RuntimeOptions  # noqa: E402
from mediaassist.ui.app import run_window  # noqa: E402
from mediaassist.ui.main_window import MainWindow  # noqa: E402
from mediaassist.ui.task_model import TaskFilter  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "screenshots"
SEED = RESOURCES / "examples" / "seed-batch.csv"
BAD = RESOURCES / "examples" / "bad-rows.csv"


def save(widget: QWidget, name: str) -> None:
    widget.grab().save(str(OUT / f"{name}.png"))
    print("saved", OUT / f"{name}.png")


async def previewed(window: MainWindow) -> None:
    while window.importer.dialog is None or window.importer.dialog.reading:
        await asyncio.sleep(0.05)


async def shoot(window: MainWindow, language: str) -> None:
    window.resize(1366, 740)  # a 1366x768 laptop screen less a panel
    await asyncio.sleep(0.5)
    save(window, f"{language}-idle")
    window.open_files([SEED])
    await previewed(window)
    window.importer.dialog.import_button.click()
    window.open_files([BAD])
    await previewed(window)
    await asyncio.sleep(0.2)
    save(window.importer.dialog, f"{language}-import")
    window.importer.dialog.reject()
    # a model the config no longer has: the attempt fails as bad_input, with no retry
    window.store.enqueue("broken-demo", [NewTask(model="retired-model", model_kind="api", route="api:demo-openai",
                                                 task_id="demo-fails", prompt="这个任务会失败 / this one fails")])
    window.scheduler.wake()
    await asyncio.sleep(6)
    save(window, f"{language}-busy")
    window.model.set_filter(TaskFilter(text="demo-fails"))
    for _ in range(100):
        if window.store.get("demo-fails").state == "failed":
            break
        await asyncio.sleep(0.2)
    window.model.refresh_membership()
    window.model.flush()
    window.table.selectRow(0)
    await asyncio.sleep(0.3)
    save(window, f"{language}-error")
    window.tabs.setCurrentIndex(1)
    await asyncio.sleep(0.3)
    save(window, f"{language}-accounts")
    window.tabs.setCurrentIndex(0)
    window.open_settings()
    await asyncio.sleep(0.3)
    save(window.settings_dialog, f"{language}-settings")
    window.settings_dialog.reject()
    window.quit_requested.set_result(False)


def main() -> int:
    OUT.mkdir(exist_ok=True)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    for language in ("en", "zh_CN"):
        with tempfile.TemporaryDirectory() as tmp:
            settings = QSettings(str(Path(tmp) / "ui.ini"), QSettings.Format.IniFormat)
            settings.setValue("app/language", language)
            options = RuntimeOptions(demo=True, speed=10, data_dir=Path(tmp) / "data")
            jobs: list[asyncio.Future[None]] = []
            with asyncio.Runner(loop_factory=lambda: qasync.QEventLoop(app)) as runner:
                runner.run(run_window([], options, settings, use_tray=False,
                                      on_window=lambda w, lang=language: jobs.append(asyncio.ensure_future(shoot(w, lang)))))
            jobs[0].result()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
