"""Run the window on a simulated 1366×768 screen and report what does not fit (tests/ui/test_fit.py).

    QT_QPA_PLATFORM=offscreen:configfile=SCREENS python -m tests.ui.fit_probe LANGUAGE WORKDIR

A separate process because the screen is fixed when Qt starts. The window is filled the way that
used to push it past the screen: paused lanes with long reasons, accounts needing login or
disabled, several batches with long ids, a failure with a long message. Then the first window,
each tab and every dialog is checked against the available screen (and 1280×720 as the
smallest supported). Prints one JSON object: {"problems": [...], "checked": [...]}.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("QT_API", "pyside6")

import qasync
from PySide6.QtCore import QRect, QSettings, QSize
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QApplication, QLabel, QSizePolicy, QWidget

from mediaassist.core.media_items import OUTPUT, MediaItem
from mediaassist.core.options import RuntimeOptions
from mediaassist.core.store import NewTask
from mediaassist.ui.actions import TaskAction
from mediaassist.ui.app import run_window
from mediaassist.ui.main_window import MainWindow
from tests.helpers import sim_config_text

SMALLEST = QSize(1280, 720)
WIDEST_LABEL = 640  # no single label may ask for more than half the smallest screen
ACCOUNTS = ("operator-account-with-a-long-name-01", "operator-account-with-a-long-name-02", "acct-c")
LONG_REASON = ("RunningHub balance or membership exhausted (416 APIKEY_USER_BALANCE_NOT_ENOUGH: the account "
               "balance is not enough to run this workflow, please recharge); fix it, then resume the lane")
LONG_BATCH = "quarterly-campaign-assets-for-the-autumn-launch-final-v3-20261201T101500Z-{n:08x}"


class Probe:
    def __init__(self, window: MainWindow, workdir: Path) -> None:
        self.window = window
        self.workdir = workdir
        self.screen = window.screen().availableGeometry()
        self.problems: list[str] = []
        self.checked: list[str] = []

    def fits(self, name: str, widget: QWidget) -> None:
        """Its frame inside the screen and its minimum within the smallest supported screen."""
        self.checked.append(name)
        frame, minimum = widget.frameGeometry(), widget.minimumSizeHint().expandedTo(widget.minimumSize())
        if not self.screen.contains(frame):
            self.problems.append(f"{name}: {rect(frame)} is not inside the screen {rect(self.screen)}")
        if minimum.width() > SMALLEST.width() or minimum.height() > SMALLEST.height():
            self.problems.append(f"{name}: needs at least {minimum.width()}x{minimum.height()}, more than "
                                 f"{SMALLEST.width()}x{SMALLEST.height()}")
        for label in widget.findChildren(QLabel):
            ignored = label.sizePolicy().horizontalPolicy() == QSizePolicy.Policy.Ignored  # layouts skip its hint
            if label.isVisibleTo(widget) and not ignored and label.minimumSizeHint().width() > WIDEST_LABEL:
                self.problems.append(f"{name}: label {label.text()[:60]!r} asks for "
                                     f"{label.minimumSizeHint().width()} px")

    def table_fits(self, name: str) -> None:
        """The default columns fit the table: no sideways scrolling to read a task's state or error."""
        self.checked.append(f"{name}, table")
        table = self.window.table
        bar = table.horizontalScrollBar()
        if bar.isVisible() or bar.maximum() > 0:
            shown = sum(table.columnWidth(i) for i in range(table.model().columnCount()) if not table.isColumnHidden(i))
            self.problems.append(f"{name}: the table scrolls sideways ({shown} px of columns in a "
                                 f"{table.viewport().width()} px view)")

    async def dialog(self, name: str, widget: QWidget | None) -> None:
        if widget is None:
            self.problems.append(f"{name}: did not open")
            return
        await settle()
        self.fits(name, widget)
        widget.close()

    async def run(self) -> None:
        window = self.window
        await settle()
        self.fits("first window", window)
        self.table_fits("first window")
        fill(window, self.workdir)
        window.showMaximized()  # (a first start on this screen is maximized already)
        await settle(1.0)
        self.table_fits("maximized window")
        for index in range(window.tabs.count()):
            window.tabs.setCurrentIndex(index)
            await settle()
            self.fits(f"window, tab {window.tabs.tabText(index)!r}", window)
        window.tabs.setCurrentIndex(0)
        await self.dialogs()

    async def dialogs(self) -> None:
        window = self.window
        window.open_settings()
        await self.dialog("settings", window.settings_dialog)
        window.open_files([write_batch(self.workdir)])
        for _ in range(200):
            if window.importer.dialog is not None and window.importer.dialog.preview is not None:
                break
            await asyncio.sleep(0.05)
        await self.dialog("import preview", window.importer.dialog)
        image = self.workdir / "wide.png"
        picture = QImage(4000, 1000, QImage.Format.Format_RGB32)
        picture.fill(QColor("#607d8b"))
        picture.save(str(image))
        actions = window.gallery.media_actions
        actions.show_preview(MediaItem("t-preview", OUTPUT, "image", image.name, path=str(image)))
        if actions.preview is not None and actions.preview.loaded is not None:
            await actions.preview.loaded
        await self.dialog("image preview", actions.preview)
        actions.show_preview(MediaItem("t-preview", OUTPUT, "video", "clip.mp4", path=str(self.workdir / "clip.mp4")))
        await self.dialog("video preview", actions.preview)
        window.outputs.edit_and_run_again("b0-t000")
        await self.dialog("edit and run again", window.outputs.dialog)
        window.outputs.compare(MediaItem("b0-t000", OUTPUT, "image", image.name, path=str(image),
                                         batch_id=LONG_BATCH.format(n=0), group="b0-t000"))
        await self.dialog("compare", window.outputs.dialog)
        window.confirm_destructive = True
        window.tasks.run_on_selection(TaskAction.DELETE)  # nothing selected: nothing asked
        window.request_quit()
        await self.dialog("quit question", window.quit_box)
        window.quit_box = None
        window._message("Export failed", LONG_REASON * 3)
        await settle()
        boxes = [w for w in QApplication.topLevelWidgets() if w.isVisible() and w is not window]
        for box in boxes:
            await self.dialog(f"message box {box.windowTitle()!r}", box)


def rect(r: QRect) -> str:
    return f"{r.width()}x{r.height()}+{r.x()}+{r.y()}"


async def settle(seconds: float = 0.3) -> None:
    """Let layouts and paints happen: the loop runs Qt's events while we sleep (never call
    processEvents() from a coroutine: it re-enters the loop's tasks)."""
    await asyncio.sleep(seconds)


def fill(window: MainWindow, workdir: Path) -> None:
    store = window.rt.store
    for n in range(4):
        store.enqueue(LONG_BATCH.format(n=n * 0x1111111), [
            NewTask(model="writer", model_kind="api", route="api:sim-api", task_id=f"b{n}-t{i:03d}",
                    prompt="写一段很长的产品介绍 " * 20) for i in range(30)])
    store.enqueue("web-batch", [NewTask(model="reasoner", model_kind="web", route="web:simulated",
                                        task_id=f"w{i:03d}", prompt="reason") for i in range(20)])
    store.pause_lane("poll:sim-poll", LONG_REASON)
    store.pause_lane(f"web:{ACCOUNTS[2]}", "paused by operator")
    store.set_login_state(ACCOUNTS[0], "needs_login", "logged out of the site during the answer " * 4)
    store.set_account_enabled(ACCOUNTS[1], False)
    window.rt.scheduler.wake()
    window.feed.refresh_membership()
    window.feed.flush()
    window.refresh_stats()


def write_batch(workdir: Path) -> Path:
    folder = workdir / ("a-folder-with-a-rather-long-name-" * 3)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "the-operators-batch-file-with-a-long-descriptive-name.csv"
    rows = ["model,prompt"] + [f"writer,{'a long prompt ' * 30}"] * 5 + [f"nosuchmodel,{'x' * 300}"] * 5
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


async def main(language: str, workdir: Path) -> dict[str, list[str]]:
    config = workdir / "config.toml"
    config.write_text(sim_config_text(api_concurrency=2, api_s=(600, 600), poll_limit=3, poll_s=(600, 600),
                                      accounts=ACCOUNTS))
    settings = QSettings(str(workdir / "ui.ini"), QSettings.Format.IniFormat)
    settings.setValue("app/language", language)
    outcome: dict[str, list[str]] = {}
    probes: list[asyncio.Future[None]] = []  # a reference, so the running probe is not collected

    def probe(window: MainWindow) -> None:
        async def run() -> None:
            checker = Probe(window, workdir)
            try:
                await checker.run()
            finally:
                outcome.update(problems=checker.problems, checked=checker.checked)
                if not window.quit_requested.done():
                    window.quit_requested.set_result(False)
        probes.append(asyncio.ensure_future(run()))

    await run_window([], RuntimeOptions(config_path=config, data_dir=workdir / "data", speed=1.0), settings,
                     use_tray=False, on_window=probe)
    return outcome


if __name__ == "__main__":
    app = QApplication(sys.argv[:1])
    with asyncio.Runner(loop_factory=lambda: qasync.QEventLoop(app)) as runner:
        result = runner.run(main(sys.argv[1], Path(sys.argv[2])))
    print(json.dumps(result, ensure_ascii=False))
