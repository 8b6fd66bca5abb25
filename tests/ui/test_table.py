"""The task table as operators read it, batch progress in the window, and imports that never block."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path

import pytest
import pytest_asyncio
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QColor, QIcon, QImage, QPixmap

from mediaassist.core.errors import ErrorKind
from mediaassist.core.paths import RESOURCES
from mediaassist.core.queries import TaskFilter
from mediaassist.core.store import Store
from mediaassist.ui.actions import TaskAction
from mediaassist.ui.i18n import Translations
from mediaassist.ui.import_dialog import PROMPT_COLUMN
from mediaassist.ui.labels import format_seconds
from mediaassist.ui.main_window import MainWindow
from mediaassist.ui.task_model import COL, THUMB, TaskTableModel, local_time
from tests.harness import sim_web_tasks, wait_until
from tests.helpers import write_csv
from tests.media_helpers import png_bytes, write_mp4
from tests.ui.ui_helpers import close_table, table_model

from .conftest import api_tasks
from .test_window import App, previewed, start_app, stop_app, writer_tasks

DECORATION = Qt.ItemDataRole.DecorationRole


@pytest_asyncio.fixture
async def running(tmp_path: Path, ui_settings: QSettings) -> AsyncIterator[App]:
    started = await start_app(tmp_path, ui_settings)
    yield started
    await stop_app(started)


def cell(model: TaskTableModel, task_id: str, column: str, role: int = Qt.ItemDataRole.DisplayRole) -> object:
    row = next(r for r in range(model.rowCount()) if model.feed.task_id_at(r) == task_id)
    return model.index(row, COL[column]).data(role)


def test_cells_show_reason_badge_lane_attempts_and_local_time(qtbot, store: Store) -> None:
    store.enqueue("b1", api_tasks(3) + sim_web_tasks(1, prompt="ask"))
    first, _second = store.claim("api:sim-api", "me", 2)
    store.finish_failure(first, ErrorKind.PROVIDER, "quota of the day used up\nretry tomorrow", retry_at=None)
    model = table_model(store)
    assert cell(model, "t00000", "error") == "quota of the day used up retry tomorrow"
    badge = cell(model, "t00000", "error", DECORATION)
    assert isinstance(badge, QPixmap) and not badge.isNull()
    assert cell(model, "t00002", "error") == "" and cell(model, "t00002", "error", DECORATION) is None
    assert cell(model, "t00002", "attempt") == ""  # a first attempt that waits says nothing
    assert cell(model, "t00001", "attempt") == "1"  # a running one says which attempt it is
    assert cell(model, "t00002", "lane") == "sim-api"
    assert cell(model, "w000", "lane") == "simulated: any account"
    assert cell(model, "t00002", "state", DECORATION) is not None
    created = str(cell(model, "t00002", "created"))
    assert "Z" not in created and "T" not in created and created.count(":") == 2
    store.retry(["t00000"])
    model.feed.mark_dirty(range(1, 5))
    model.feed.flush()
    assert cell(model, "t00000", "attempt") == "2"


def test_created_times_are_short_enough_for_a_narrow_column() -> None:
    now = datetime.now()
    assert local_time(now.replace(hour=12, minute=0, second=0).timestamp()) == "12:00:00"  # today: the time
    other_day = now.replace(month=1, day=1) if (now.month, now.day) != (1, 1) else now.replace(month=12, day=31)
    expected = other_day.replace(hour=9, minute=5).strftime("%m-%d 09:05")
    assert local_time(other_day.replace(hour=9, minute=5).timestamp()) == expected  # this year: month-day time
    assert local_time(datetime(now.year - 1, 3, 4, 5, 6).timestamp()) == f"{now.year - 1}-03-04"


def test_a_duration_never_wraps_between_its_number_and_unit(qtbot) -> None:
    assert [" " in format_seconds(s) for s in (9, 1342, 7300)] == [False, False, False]
    assert format_seconds(1342).split() == ["22", "min", "22", "s"]  # still words apart, to read


def test_prompt_comes_before_ids_and_the_result_column_previews_text(qtbot, store: Store) -> None:
    store.enqueue("b1", api_tasks(1))
    task = store.claim("api:sim-api", "me", 1)[0]
    store.finish_success(task, "第一行\n第二行", [])
    model = table_model(store)
    assert COL["state"] < COL["prompt"] < COL["result"] < COL["batch"] < COL["task_id"]
    assert cell(model, "t00000", "result") == "第一行 第二行"
    assert cell(model, "t00000", "prompt") == "prompt 0"


@pytest.mark.asyncio
async def test_output_thumbnail_is_scaled_off_the_loop_and_cached(store: Store, tmp_path: Path) -> None:
    image = QImage(400, 200, QImage.Format.Format_RGB32)
    image.fill(QColor("#2e7d32"))
    picture = tmp_path / "out.png"
    assert image.save(str(picture))
    store.enqueue("b1", api_tasks(1))
    store.finish_success(store.claim("api:sim-api", "me", 1)[0], None, [str(picture)])
    model = table_model(store)
    ready: list[str] = []
    model.thumbnails.ready.connect(ready.append)
    changed: list[int] = []
    model.dataChanged.connect(lambda a, b, roles=None: changed.append(a.column()))
    assert cell(model, "t00000", "output", DECORATION) is None  # asked: a worker scales it
    await wait_until(lambda: ready == [str(picture)])
    assert COL["output"] in changed  # the row is told to repaint
    thumb = cell(model, "t00000", "output", DECORATION)
    assert isinstance(thumb, QPixmap) and thumb.width() == THUMB and thumb.height() == THUMB // 2
    assert cell(model, "t00000", "result") == "out.png"
    close_table(model)


@pytest.mark.asyncio
async def test_a_video_output_shows_its_first_frame_made_off_the_loop(store: Store, tmp_path: Path) -> None:
    clip = write_mp4(tmp_path / "clip.mp4", (21, 101, 192), width=320, height=180)
    broken = tmp_path / "broken.mp4"
    broken.write_bytes(clip.read_bytes()[:300])
    store.enqueue("b1", api_tasks(2))
    first, second = store.claim("api:sim-api", "me", 2)
    store.finish_success(first, None, [str(clip)])
    store.finish_success(second, None, [str(broken)])
    model = table_model(store)
    ready: list[str] = []
    model.thumbnails.ready.connect(ready.append)
    assert isinstance(cell(model, "t00000", "output", DECORATION), QIcon)  # the video mark while it decodes
    assert isinstance(cell(model, "t00001", "output", DECORATION), QIcon)
    assert model.thumbnails.loading
    await wait_until(lambda: set(ready) == {str(clip), str(broken)})
    assert not model.thumbnails.loading
    thumb = cell(model, "t00000", "output", DECORATION)
    assert isinstance(thumb, QPixmap) and (thumb.width(), thumb.height()) == (THUMB, THUMB * 180 // 320)
    frame = thumb.toImage()
    corner = frame.pixelColor(1, 1)  # the clip's colour (H.264 rounds it a little) ...
    assert abs(corner.red() - 21) < 12 and abs(corner.green() - 101) < 12 and abs(corner.blue() - 192) < 12
    middle = frame.pixelColor(thumb.width() // 2 - 1, thumb.height() // 2)
    assert middle.lightness() > 200  # ... and the white play triangle in the middle
    assert isinstance(cell(model, "t00001", "output", DECORATION), QIcon)  # undecodable: the mark stays
    close_table(model)


@pytest.mark.asyncio
async def test_selection_is_kept_across_retry_in_a_filtered_view(running: App) -> None:
    window = running.window
    running.enqueue(writer_tasks(6, sim_fail="bad_input"))
    await wait_until(lambda: {t.state for t in window.rt.store.tasks()} == {"failed"})
    window.lanes.toggle_pause_all()
    window.text_filter.setText("prompt")
    await window.apply_filter()
    window.model.sort(COL["state"], Qt.SortOrder.AscendingOrder)  # retried rows move
    await window.feed.sorting
    flags = window.table.selectionModel().SelectionFlag
    window.table.selectRow(1)
    window.table.selectionModel().select(window.model.index(4, 0), flags.Select | flags.Rows)
    chosen = sorted(task_id for task_id, _ in window.selected_tasks())
    assert len(chosen) == 2
    window.task_actions[TaskAction.RETRY].trigger()
    await wait_until(lambda: all(window.rt.store.get(t).state == "pending" for t in chosen))
    # sorted by state, "pending" after "failed": the two rows moved to the end
    await wait_until(lambda: {window.feed.task_id_at(4), window.feed.task_id_at(5)} == set(chosen))
    assert sorted(task_id for task_id, _ in window.selected_tasks()) == chosen
    assert {state for _, state in window.selected_tasks()} == {"pending"}


@pytest.mark.asyncio
async def test_a_filter_that_takes_the_selected_row_away_empties_the_detail_and_the_actions(running: App) -> None:
    window = running.window
    window.lanes.toggle_pause_all()  # the tasks stay pending: Cancel is offered for them
    running.enqueue(writer_tasks(3))
    window.feed.refresh_membership()
    window.feed.flush()
    window.table.selectRow(0)
    shown = window.detail.task_id
    assert shown is not None and window.task_actions[TaskAction.CANCEL].isEnabled()
    window.text_filter.setText("no task has this prompt")
    await window.apply_filter()  # a new filter resets the model: the selection is gone
    assert window.model.rowCount() == 0 and not window.table.selectionModel().hasSelection()
    assert window.detail.task_id is None and not window.task_actions[TaskAction.CANCEL].isEnabled()


@pytest.mark.asyncio
async def test_column_chooser_is_remembered_but_never_written_by_a_demo(running: App, ui_settings: QSettings) -> None:
    window = running.window
    # ids are a column chooser away by default (the default set fits a laptop: tests/ui/test_fit.py)
    assert window.table.isColumnHidden(COL["heartbeat"]) and window.table.isColumnHidden(COL["batch"])
    assert not window.table.isColumnHidden(COL["prompt"])
    labels = {a.text(): a.isChecked() for a in window.column_chooser().actions()}
    assert labels["Prompt"] and not labels["Batch"] and not labels["Heartbeat age"]
    window.set_column_shown(COL["batch"], True)
    window.set_column_shown(COL["heartbeat"], True)
    window.set_column_shown(COL["model"], False)
    # the next window (as at the next start) reads the choice back
    again = MainWindow(window.rt, ui_settings, window.translations, use_tray=False)
    try:
        assert not again.table.isColumnHidden(COL["batch"]) and not again.table.isColumnHidden(COL["heartbeat"])
        assert again.table.isColumnHidden(COL["model"])
        again.demo = True  # what --demo sets: the operator's settings stay as they were
        again.set_column_shown(COL["model"], True)
        assert not again.table.isColumnHidden(COL["model"])
        assert "model" in ui_settings.value("window/hidden_columns")
    finally:
        again.shutdown()
        again.close_for_good()
        again.deleteLater()


@pytest.mark.asyncio
async def test_common_actions_have_shortcuts_shown_in_menus(running: App) -> None:
    window = running.window
    for action in (TaskAction.CANCEL, TaskAction.RETRY, TaskAction.DELETE, TaskAction.OPEN_FOLDER):
        assert not window.task_actions[action].shortcut().isEmpty()
    menus = {m.title(): m for m in (a.menu() for a in window.menuBar().actions()) if m is not None}
    shortcuts = {a.text(): a.shortcut().toString() for m in menus.values() for a in m.actions()}
    assert shortcuts["Retry"] == "Ctrl+R" and shortcuts["Find…"] == "Ctrl+F" and shortcuts["&Import…"] == "Ctrl+O"
    every = [a.shortcut().toString() for m in menus.values() for a in m.actions() if not a.shortcut().isEmpty()]
    assert len(every) == len(set(every))  # no shortcut is ambiguous


@pytest.mark.asyncio
async def test_batch_progress_counts_cancelled_and_names_the_login_that_blocks(running: App) -> None:
    window = running.window
    window.lanes.toggle_pause_all()
    running.enqueue(writer_tasks(10), batch="many")
    window.rt.store.cancel([f"t{i:03d}" for i in range(7)])
    window.refresh_stats()
    label = window.batches._rows[0].detail.text()
    assert "7 canceled" in label and "3 waiting" in label and "finished" not in label
    window.rt.store.cancel([f"t{i:03d}" for i in range(7, 10)])
    window.refresh_stats()
    label = window.batches._rows[0].detail.text()
    assert "10 canceled" in label and "finished" in label
    window.rt.store.set_login_state("acct-a", "needs_login")
    running.enqueue(sim_web_tasks(4, prompt="ask"), batch="web-batch")
    window.lanes.toggle_pause_all()  # resumed: only the login blocks now
    window.refresh_stats()
    label = window.batches._rows[0].detail.text()
    assert "4 web tasks wait:" in label and "account acct-a needs login" in label and 'href="accounts"' in label
    window.batches._rows[0].detail.linkActivated.emit("accounts")
    assert window.tabs.currentWidget() is window.accounts


@pytest.mark.asyncio
async def test_enable_it_enables_the_account_with_an_undo(running: App) -> None:
    window = running.window
    window.lanes.set_account_enabled("acct-a", False)
    window.lanes.toggle_pause_all()  # the tasks wait, whatever the account
    running.enqueue(sim_web_tasks(2, prompt="ask"), batch="web-batch")
    window.lanes.toggle_pause_all()
    window.refresh_stats()
    label = window.batches._rows[0].detail.text()
    assert "account acct-a is disabled" in label and 'href="enable:acct-a"' in label
    window.batches._rows[0].detail.linkActivated.emit("enable:acct-a")
    assert window.rt.store.account("acct-a").enabled
    assert window.statusBar().currentMessage() == "Account acct-a enabled"
    assert window.undo_button is not None and window.undo_button.isVisible()
    window.undo_button.click()
    assert not window.rt.store.account("acct-a").enabled and not window.undo_button.isVisibleTo(window)


@pytest.mark.asyncio
async def test_a_10000_row_file_previews_and_imports_while_the_loop_runs(running: App, tmp_path: Path) -> None:
    path = write_csv(tmp_path / "big.csv", [{"task_id": f"big{i:05d}", "model": "writer", "prompt": f"p {i}"}
                                            for i in range(10_000)])
    window = running.window
    window.lanes.toggle_pause_all()
    ticks = 0

    async def count_ticks() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.005)
            ticks += 1

    ticker = asyncio.ensure_future(count_ticks())
    window.open_files([path])
    dialog = window.importer.dialog
    assert dialog is not None and dialog.reading and not dialog.import_button.isEnabled()
    at_open = ticks
    dialog = await previewed(window)
    assert ticks > at_open  # the loop ran while the file was read
    assert dialog.preview is not None and dialog.preview.task_count == 10_000
    assert dialog.good_rows.rowCount() == 200 and dialog.good_rows.item(0, PROMPT_COLUMN).text() == "p 0"
    progress: list[str] = []
    window.importer.progress.connect(progress.append)
    dialog.import_button.click()
    at_click = ticks
    await wait_until(lambda: len(window.jobs) == 0, timeout=60)
    ticker.cancel()
    assert ticks > at_click  # and while it was enqueued in steps
    assert len(progress) > 1 and progress[-1] == "Importing big.csv: 10000 of 10000 tasks…"  # in the status bar
    assert len(window.rt.store.tasks()) == 10_000
    await wait_until(lambda: window.model.rowCount() == 10_000)
    window.feed.set_filter(TaskFilter(text="big0000"))
    assert window.model.rowCount() == 10


@pytest.mark.asyncio
async def test_search_is_read_off_the_loop_and_the_newest_search_wins(running: App) -> None:
    window = running.window
    window.lanes.toggle_pause_all()
    running.enqueue(writer_tasks(50))
    readers: list[str] = []
    seqs = window.feed.queries.seqs

    def recording(*args: object) -> list[int]:
        readers.append(threading.current_thread().name)
        return seqs(*args)  # type: ignore[arg-type]

    window.feed.queries.seqs = recording  # type: ignore[method-assign]
    older = asyncio.ensure_future(window.feed.set_filter_off_loop(TaskFilter(text="prompt 1")))
    newer = asyncio.ensure_future(window.feed.set_filter_off_loop(TaskFilter(text="prompt 22")))
    await asyncio.gather(older, newer)
    assert window.feed.filter == TaskFilter(text="prompt 22") and window.model.rowCount() == 1
    assert readers and all(name.startswith("store-reads") for name in readers)


@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_without_pyav_a_video_cell_says_why_it_has_no_picture(
        qtbot: object, store: Store, tmp_path: Path, without_pyav: None, language: str) -> None:
    Translations().apply(language)
    clip = RESOURCES / "media" / "demo-clip.mp4"
    picture = tmp_path / "out.png"
    picture.write_bytes(png_bytes())
    store.enqueue("b1", api_tasks(2))
    first, second = store.claim("api:sim-api", "me", 2)
    store.finish_success(first, None, [str(clip)])
    store.finish_success(second, None, [str(clip), str(picture)])  # its picture is shown: nothing to explain
    model = table_model(store)
    reason = {"en": "no preview: PyAV not installed", "zh_CN": "无预览：未安装 PyAV"}[language]
    assert isinstance(cell(model, "t00000", "output", DECORATION), QIcon)  # the video mark
    assert cell(model, "t00000", "output", Qt.ItemDataRole.ToolTipRole) == f"{clip}\n{reason}"
    assert reason not in str(cell(model, "t00001", "output", Qt.ItemDataRole.ToolTipRole))
    close_table(model)
