"""Screenshots for review on a 1366×768 laptop screen, the demo running, English and Chinese.

    .venv/bin/python -m bench.screenshots [--docs] [--compare-only]

Runs offscreen on a simulated 1366×768 screen (Qt's offscreen platform with a screen config), so
the result does not depend on the X server's size. Saves screenshots/{en,zh_CN}-{first-start,
busy,error,gallery,preview-image,preview-video,compare,import,import-errors,settings,accounts,tray}.png;
``--docs`` also refreshes the pictures in docs/images/ (README and the documentation site: the
main views in both languages, ``<language>-<view>.png``, and the compare view's);
``--compare-only`` shoots only the compare view (English).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_API", "pyside6")  # read by qasync when it is imported

import qasync
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication, QWidget

from mediaassist.core.media_items import OUTPUT, MediaItem
from mediaassist.core.options import RuntimeOptions
from mediaassist.core.paths import RESOURCES
from mediaassist.core.store import NewTask, Task
from mediaassist.ui.app import run_window
from mediaassist.ui.gallery import PreviewDialog
from mediaassist.ui.main_window import MainWindow

# Qt reads the platform when the application is made (in main), not when it is imported.
SCREEN = (1366, 768)
_screens = Path(tempfile.gettempdir()) / f"mediaassist-screens-{SCREEN[0]}x{SCREEN[1]}.json"
_screens.write_text(json.dumps({"screens": [{"name": "laptop", "x": 0, "y": 0, "width": SCREEN[0],
                                             "height": SCREEN[1], "logicalDpi": 96, "logicalBaseDpi": 96,
                                             "dpr": 1}]}))
os.environ["QT_QPA_PLATFORM"] = f"offscreen:configfile={_screens}"

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "screenshots"
DOCS = ROOT / "docs" / "images"
EXAMPLES = RESOURCES / "examples"
LONG_REASON = ("RunningHub balance or membership exhausted (416 APIKEY_USER_BALANCE_NOT_ENOUGH); fix it, "
               "then resume the lane")


# The main views, in both languages, for the documentation (docs/images/<language>-<view>.png).
DOC_VIEWS = ("first-start", "busy", "error", "gallery", "accounts", "import", "import-errors", "settings", "tray")
DOC_SHOTS: list[bool] = []  # [True] with --docs


def save(widget: QWidget, name: str) -> Path:
    path = OUT / f"{name}.png"
    widget.grab().save(str(path))
    print("saved", path)
    if DOC_SHOTS and name.partition("-")[2] in DOC_VIEWS:
        save_small(widget, DOCS / f"{name}.png")
    return path


def save_small(widget: QWidget, path: Path) -> None:
    """For the README: 256 colours are plenty for a window and make the file a third the size."""
    image = widget.grab().toImage().convertToFormat(QImage.Format.Format_Indexed8, Qt.ImageConversionFlag.AvoidDither)
    image.save(str(path), "PNG")
    print("saved", path)


async def until(predicate, timeout: float = 30.0, what: str = "") -> bool:  # type: ignore[no-untyped-def]
    """Wait for ``predicate``. With ``what`` a time-out stops the run, naming what never came:
    a shot taken after it would show another state (and code after it could fail obscurely)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            if what:
                raise TimeoutError(f"screenshots: waited {timeout:.0f} s for {what}")
            return False
        await asyncio.sleep(0.1)
    return True


async def accept_import(window: MainWindow, path: Path, model: str | None = None, shot: str = "") -> None:
    """Import ``path`` through the preview dialog (``shot``: save the dialog first, its inputs' thumbnails in)."""
    window.open_files([path])
    await until(lambda: window.importer.dialog is not None and window.importer.dialog.import_button.isEnabled(),
                what=f"the import preview of {path.name}")
    dialog = window.importer.dialog
    if model is not None:
        dialog.model_box.setCurrentIndex(dialog.model_box.findData(model))
        await until(lambda: dialog.preview is not None and dialog.import_button.isEnabled(),
                    what=f"{path.name} read again for {model}")
    if shot:
        await asyncio.sleep(0.8)
        save(dialog, shot)
    dialog.import_button.click()
    await until(lambda: window.importer.dialog is None, what=f"{path.name} imported")


async def shoot(window: MainWindow, language: str, docs: bool) -> None:
    await asyncio.sleep(0.5)
    save(window, f"{language}-first-start")  # maximized: a first start on a 1366-px screen
    await accept_import(window, EXAMPLES / "images.txt", "demo-illustrator")
    await accept_import(window, EXAMPLES / "seed-batch.csv")
    # the preview of a file not imported yet (a second look says "nothing new to import")
    await accept_import(window, EXAMPLES / "image-to-video.csv", shot=f"{language}-import")
    await accept_import(window, EXAMPLES / "video-services.csv")
    # a model the config no longer has: the attempt fails as bad_input, with no retry
    window.rt.store.enqueue("broken-demo", [NewTask(model="retired-model", model_kind="api", route="api:demo-openai",
                                                 task_id="demo-fails", prompt="这个任务会失败 / this one fails")])
    window.rt.store.pause_lane("poll:demo-runninghub", LONG_REASON)
    window.rt.scheduler.wake()
    await asyncio.sleep(8)
    window.refresh_stats()
    window.table.viewport().repaint()  # paints the output cells: their thumbnails are asked for
    await until(lambda: not window.model.thumbnails.loading)
    window.table.viewport().repaint()
    save(window, f"{language}-busy")
    if docs and language == "en":
        save_small(window, DOCS / "table-en.png")
    await until(lambda: window.rt.store.get("demo-fails").state == "failed", what="the task demo-fails to fail")
    window.text_filter.setText("demo-fails")
    await window.apply_filter()  # off the loop: selecting before it lands selected another task
    window.feed.flush()
    await until(lambda: window.model.rowCount() == 1 and window.feed.task_id_at(0) == "demo-fails",
                what="the table filtered to demo-fails")
    window.table.selectRow(0)
    await asyncio.sleep(0.5)
    save(window, f"{language}-error")
    window.text_filter.setText("")
    await window.apply_filter()
    await until(lambda: any(t.state == "success" and t.model == "demo-illustrator"
                            for t in window.rt.store.tasks()), 60, "an image of demo-illustrator")
    # the video services' clips too: the gallery shows their first frames
    await until(lambda: any(t.state == "success" and t.model in ("demo-sora", "demo-kling")
                            for t in window.rt.store.tasks()), 90, "a clip of demo-sora or demo-kling")
    window.tabs.setCurrentWidget(window.gallery)
    await asyncio.sleep(0.3)
    await until(lambda: window.gallery.model.rowCount() > 0 and not window.gallery.model.loading,
                what="the gallery's thumbnails")
    await asyncio.sleep(0.5)
    save(window, f"{language}-gallery")
    if docs and language == "en":
        save_small(window, DOCS / "gallery-en.png")
    await shoot_previews(window, language)
    await shoot_compare(window, language, docs)
    window.tabs.setCurrentWidget(window.accounts)
    await asyncio.sleep(0.3)
    save(window, f"{language}-accounts")
    window.tabs.setCurrentIndex(0)
    window.open_files([EXAMPLES / "bad-rows.csv"])
    await until(lambda: window.importer.dialog is not None and window.importer.dialog.preview is not None,
                what="the import preview of bad-rows.csv")
    await asyncio.sleep(0.3)
    save(window.importer.dialog, f"{language}-import-errors")
    window.importer.dialog.reject()
    window.open_settings()
    await asyncio.sleep(0.3)
    save(window.settings_dialog, f"{language}-settings")
    window.settings_dialog.reject()
    window.tray.menu.adjustSize()
    save(window.tray.menu, f"{language}-tray")


async def shoot_previews(window: MainWindow, language: str) -> None:
    items = window.gallery.model.items
    for media in ("image", "video"):
        item = next((i for i in items if i.media == media and i.role == OUTPUT), None)
        if item is None:
            item = MediaItem("-", OUTPUT, media, f"missing.{media}", path=f"/nonexistent/missing.{media}")
        window.gallery.media_actions.show_preview(item)
        dialog: PreviewDialog = window.gallery.media_actions.preview  # type: ignore[assignment]
        if dialog.loaded is not None:
            await dialog.loaded
        await asyncio.sleep(0.3)
        save(dialog, f"{language}-preview-{media}")
        dialog.reject()


async def shoot_compare(window: MainWindow, language: str, docs: bool) -> None:
    """A row fanned out to three video services, one of them remixed: side by side, playing."""
    # demo-video runs on the RunningHub lane shoot() paused for the busy shot: until it resumes,
    # row 2 never finishes (the wait below used to time out unseen and the view lacked a tile)
    window.rt.resume_lane("poll:demo-runninghub")
    await accept_import(window, EXAMPLES / "fan-out.csv")
    def first_row() -> list[Task]:  # row 2 of fan-out.csv: one task per model (its batch enqueues in steps)
        # of this batch only: every batch has a "row-2" (video-services.csv's is on demo-video too)
        return [t for t in window.rt.store.tasks() if t.group_key == "row-2" and t.parent_id is None
                and t.batch_id.startswith("fan-out-") and t.model in ("demo-sora", "demo-kling", "demo-video")]

    await until(lambda: len(first_row()) == 3, 60, "row 2 of fan-out.csv on its three models")
    await until(lambda: all(t.state == "success" for t in first_row()), 180, "row 2's three clips")
    (sora,) = [t for t in first_row() if t.model == "demo-sora"]  # a bare next() here raised StopIteration
    child = window.rt.rerun(sora.task_id, prompt=sora.prompt + ", seen from above", remix=True)
    await until(lambda: window.rt.store.get(child).state == "success", 180, "the remix of row 2's demo-sora clip")
    window.rt.set_picked([(child, 1)], True)
    dialog = window.outputs.compare(MediaItem(sora.task_id, OUTPUT, "video", "", batch_id=sora.batch_id,
                                              group="row-2"))
    dialog.playback.play_from_start()
    await asyncio.sleep(1.5)
    save(dialog, f"{language}-compare")
    if docs and language == "en":
        save_small(dialog, DOCS / "compare-en.png")
    dialog.reject()


async def compare_only(window: MainWindow, docs: bool) -> None:
    window.resize(*SCREEN)
    await shoot_compare(window, "en", docs)


async def then_quit(window: MainWindow, shots: Coroutine[Any, Any, None]) -> None:
    """Quit the window when the shots end, also when they fail: a failure used to leave the demo
    window running with nothing on the terminal (the error waited in a future nobody read)."""
    try:
        await shots
    finally:
        if not window.quit_requested.done():
            window.quit_requested.set_result(True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", action="store_true", help="also refresh the pictures in docs/images/")
    parser.add_argument("--compare-only", action="store_true", help="only the compare view, in English")
    args = parser.parse_args()
    docs = args.docs
    if docs:
        DOC_SHOTS.append(True)
    OUT.mkdir(exist_ok=True)
    DOCS.mkdir(parents=True, exist_ok=True)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setAttribute(Qt.ApplicationAttribute.AA_DontShowIconsInMenus, False)
    for language in ("en",) if args.compare_only else ("en", "zh_CN"):
        with tempfile.TemporaryDirectory() as tmp:
            settings = QSettings(str(Path(tmp) / "ui.ini"), QSettings.Format.IniFormat)
            settings.setValue("app/language", language)
            options = RuntimeOptions(demo=True, speed=20, data_dir=Path(tmp) / "data")
            jobs: list[asyncio.Future[None]] = []
            with asyncio.Runner(loop_factory=lambda: qasync.QEventLoop(app)) as runner:
                runner.run(run_window([], options, settings, use_tray=False,
                                      on_window=lambda w, lang=language, shots=jobs:
                                      shots.append(asyncio.ensure_future(then_quit(
                                          w, compare_only(w, docs) if args.compare_only else shoot(w, lang, docs))))))
            jobs[0].result()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
