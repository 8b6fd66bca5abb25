"""The window on a real runtime (simulated providers, real SQLite) on the qasync loop."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from openpyxl import Workbook, load_workbook
from PySide6.QtCore import QItemSelectionModel, QMimeData, QPoint, QPointF, QSettings, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication

from mediaassist.core.options import RuntimeOptions
from mediaassist.core.queries import TaskFilter
from mediaassist.core.secrets import register_secret
from mediaassist.core.store import NewTask, Store
from mediaassist.ui.actions import TaskAction
from mediaassist.ui.app import run_window
from mediaassist.ui.import_dialog import ImportPreviewDialog
from mediaassist.ui.main_window import MainWindow
from mediaassist.ui.task_actions import ID_CHUNK
from mediaassist.ui.task_model import COL, StateRole
from tests.harness import wait_until
from tests.helpers import import_children, sim_config_text


class App:
    def __init__(self, window: MainWindow, runner: asyncio.Task[int]) -> None:
        self.window = window
        self.runner = runner

    def enqueue(self, tasks: list[NewTask], batch: str = "b1") -> None:
        self.window.rt.store.enqueue(batch, tasks)
        self.window.rt.scheduler.wake()
        self.window.feed.refresh_membership()
        self.window.feed.flush()


async def start_app(tmp_path: Path, settings: QSettings, duration: float = 1.0, speed: float = 20.0,
                    extra_config: str = "", store_url: str | None = None) -> App:
    config = tmp_path / "config.toml"
    config.write_text(sim_config_text(api_concurrency=2, api_s=(duration, duration), poll_limit=3,
                                      poll_s=(duration, duration), accounts=("acct-a",)) + extra_config)
    shown: list[MainWindow] = []
    options = RuntimeOptions(config_path=config, data_dir=tmp_path / "data", speed=speed, store_url=store_url)
    runner = asyncio.ensure_future(run_window([], options, settings, use_tray=False, on_window=shown.append))
    await wait_until(lambda: shown or runner.done())
    if runner.done():
        runner.result()
    shown[0].confirm_destructive = False
    return App(shown[0], runner)


async def stop_app(app: App) -> None:
    if not app.runner.done():
        if not app.window.quit_requested.done():
            app.window.quit_requested.set_result(False)
        await asyncio.wait_for(app.runner, 20)


@pytest_asyncio.fixture
async def app(tmp_path: Path, ui_settings: QSettings) -> AsyncIterator[App]:
    running = await start_app(tmp_path, ui_settings)
    yield running
    await stop_app(running)


def writer_tasks(n: int, prefix: str = "t", **params: object) -> list[NewTask]:
    return [NewTask(model="writer", model_kind="api", route="api:sim-api", prompt=f"prompt {i}",
                    task_id=f"{prefix}{i:03d}", params=dict(params)) for i in range(n)]


async def previewed(window: MainWindow) -> ImportPreviewDialog:
    """The open import dialog once its (off-loop) reading has finished."""
    await wait_until(lambda: window.importer.dialog is not None and not window.importer.dialog.reading)
    assert window.importer.dialog is not None
    return window.importer.dialog


def drop(window: MainWindow, path: Path) -> bool:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    enter = QDragEnterEvent(QPoint(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                            Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(window, enter)
    if not enter.isAccepted():
        return False
    event = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                       Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(window, event)
    return True


def write_task_file(path: Path) -> None:
    rows = [("task_id", "model", "prompt"), ("f1", "writer", "写一句文案"), ("f2", "writer", "第二条"),
            ("f3", "nosuchmodel", "坏的一行")]
    suffix = path.suffix
    if suffix == ".csv":
        path.write_text("\n".join(",".join(r) for r in rows) + "\n", encoding="utf-8")
    elif suffix == ".gb18030":
        path = path.with_suffix(".csv")
    if path.name.endswith("gb.csv"):
        path.write_bytes(("\r\n".join(",".join(r) for r in rows) + "\r\n").encode("gb18030"))
    elif suffix == ".xlsx":
        book = Workbook()
        for row in rows:
            book.active.append(list(row))
        book.save(path)
    elif suffix == ".json":
        path.write_text(json.dumps([dict(zip(rows[0], r, strict=True)) for r in rows[1:]], ensure_ascii=False),
                        encoding="utf-8")
    elif suffix == ".jsonl":
        path.write_text("\n".join(json.dumps(dict(zip(rows[0], r, strict=True)), ensure_ascii=False) for r in rows[1:]),
                        encoding="utf-8")
    elif suffix == ".txt":
        path.write_text("第一条提示\n第二条提示\n", encoding="utf-8")


@pytest.mark.asyncio
@pytest.mark.parametrize("name,good,bad_row", [
    # a table's row number counts its header line; a JSON/JSONL record counts records/lines
    ("tasks.csv", 2, 4), ("tasks-gb.csv", 2, 4), ("tasks.xlsx", 2, 4), ("tasks.json", 2, 3),
    ("tasks.jsonl", 2, 3), ("prompts.txt", 2, None)])
async def test_drop_each_format_previews_then_enqueues_good_rows(app: App, tmp_path: Path, name: str,
                                                                 good: int, bad_row: int | None) -> None:
    path = tmp_path / name
    write_task_file(path)
    app.window.lanes.toggle_pause_all()  # keep rows pending so the counts below are stable
    assert drop(app.window, path)
    dialog = await previewed(app.window)
    assert dialog.preview is not None, dialog.summary.text()
    assert (dialog.preview.task_count, dialog.preview.error_count) == (good, 0 if bad_row is None else 1)
    if bad_row is not None:
        assert dialog.bad_rows.item(0, 0).text() == str(bad_row)
        assert "nosuchmodel" in dialog.bad_rows.item(0, 1).text()
    assert app.window.rt.store.tasks() == []  # nothing before the operator confirms
    dialog.import_button.click()
    await wait_until(lambda: len(app.window.rt.store.tasks()) == good)
    await wait_until(lambda: app.window.model.rowCount() == good)


@pytest.mark.asyncio
async def test_a_second_drop_of_the_same_file_says_its_tasks_are_already_stored(app: App, tmp_path: Path) -> None:
    path = tmp_path / "prompts.txt"
    write_task_file(path)
    app.window.lanes.toggle_pause_all()
    assert drop(app.window, path)
    dialog = await previewed(app.window)
    assert "already" not in dialog.summary.text() and dialog.import_button.text() == "Import 2 tasks"
    dialog.import_button.click()
    await wait_until(lambda: len(app.window.rt.store.tasks()) == 2 and not app.window.jobs)
    batches = {t.batch_id for t in app.window.rt.store.tasks()}
    notices = len(app.window.tray.notices)
    # The same file again: nothing to add, and the dialog says so instead of promising 2 tasks.
    assert drop(app.window, path)
    dialog = await previewed(app.window)
    assert "All 2 of them are in the queue already" in dialog.summary.text()
    assert dialog.import_button.text() == "Nothing new to import" and not dialog.import_button.isEnabled()
    dialog.accept()  # (Enter on the dialog) enqueues nothing
    await wait_until(lambda: app.window.importer.dialog is None and not app.window.jobs)
    assert len(app.window.rt.store.tasks()) == 2 and {t.batch_id for t in app.window.rt.store.tasks()} == batches
    assert not [n for n in app.window.tray.notices[notices:] if n.title == "Imported"]  # no "0 tasks enqueued as …"


@pytest.mark.asyncio
async def test_txt_needs_a_model_and_the_choice_rereads(app: App, tmp_path: Path) -> None:
    path = tmp_path / "p.txt"
    write_task_file(path)
    app.window.open_files([path])
    dialog = await previewed(app.window)
    assert dialog.default_model == "writer"
    dialog.model_box.setCurrentIndex(0)  # "(from the file)": a TXT file has none
    assert not dialog.import_button.isEnabled()  # until the new reading is done, and after
    dialog = await previewed(app.window)
    assert dialog.preview is None and not dialog.import_button.isEnabled()
    assert "TXT" in dialog.summary.text()
    dialog.model_box.setCurrentIndex(dialog.model_box.findData("video"))
    dialog = await previewed(app.window)
    assert dialog.preview is not None and {t.model for t in dialog.preview.tasks} == {"video"}
    dialog.reject()


@pytest.mark.asyncio
async def test_unrelated_drop_is_refused_and_files_queue_one_dialog_at_a_time(app: App, tmp_path: Path) -> None:
    other = tmp_path / "notes.pdf"
    other.write_bytes(b"%PDF")
    assert not drop(app.window, other)
    first, second = tmp_path / "a.csv", tmp_path / "b.jsonl"
    write_task_file(first)
    write_task_file(second)
    app.window.open_files([first, second])
    assert app.window.importer.dialog.path == first
    app.window.importer.dialog.reject()
    await wait_until(lambda: app.window.importer.dialog is not None and app.window.importer.dialog.path == second)
    app.window.importer.dialog.reject()


@pytest.mark.asyncio
async def test_context_menu_follows_selection_states_and_actions_work(app: App) -> None:
    window = app.window
    window.lanes.toggle_pause_all()
    app.enqueue(writer_tasks(3))
    window.rt.store.cancel(["t001"])
    window.feed.mark_dirty(range(1, 4))
    window.feed.flush()
    window.table.selectRow(1)
    labels = [a.text() for a in window.context_menu().actions()]
    assert labels[0] == "Retry" and "Cancel" not in labels
    window.table.selectRow(0)
    assert window.context_menu().actions()[0].text() == "Cancel"
    window.task_actions[TaskAction.CANCEL].trigger()
    await wait_until(lambda: window.rt.store.get("t000").state == "canceled")
    window.table.selectAll()
    await window.tasks.run(TaskAction.RETRY, window.selected_tasks())
    assert {t.state for t in window.rt.store.tasks()} == {"pending"}
    assert window.tasks.run(TaskAction.COPY_ID, window.selected_tasks()) is None  # at once
    assert QApplication.clipboard().text().split("\n") == ["t000", "t001", "t002"]
    await window.tasks.run(TaskAction.CANCEL, window.selected_tasks())
    window.tasks.run(TaskAction.DELETE, window.selected_tasks())  # confirmed at once in tests
    await wait_until(lambda: window.rt.store.tasks() == [] and window.model.rowCount() == 0)


@pytest.mark.asyncio
async def test_failures_show_in_detail_and_bulk_retry_in_view(app: App) -> None:
    window = app.window
    app.enqueue(writer_tasks(2, sim_fail="bad_input"))
    await wait_until(lambda: {t.state for t in window.rt.store.tasks()} == {"failed"})
    window.state_filter.setCurrentIndex(window.state_filter.findData("failed"))
    await wait_until(lambda: window.model.rowCount() == 2)
    window.table.selectRow(0)
    assert "simulated failure" in window.detail.error.text()
    assert "attempt 1 failed" in window.detail.log.toPlainText()
    window.lanes.toggle_pause_all()
    await window.tasks.retry_failed_in_view()
    assert {t.state for t in window.rt.store.tasks()} == {"pending"}
    await wait_until(lambda: window.model.rowCount() == 0)


@pytest.mark.asyncio
async def test_export_csv_and_xlsx_hold_no_secret(app: App, tmp_path: Path) -> None:
    secret = "sk-test-SECRET-123456"
    register_secret(secret)
    app.window.lanes.toggle_pause_all()
    app.enqueue([NewTask(model="writer", model_kind="api", route="api:sim-api", task_id="x1",
                         prompt=f"uses key {secret}")])
    csv_path, xlsx_path = tmp_path / "out.csv", tmp_path / "out.xlsx"
    assert await app.window.tasks.export_to(csv_path) == 1
    assert await app.window.tasks.export_to(xlsx_path) == 1
    text = csv_path.read_text(encoding="utf-8-sig")
    assert "x1" in text and secret not in text and "***" in text
    cells = [c for row in load_workbook(xlsx_path).active.iter_rows(values_only=True) for c in row]
    assert "x1" in cells and not any(secret in str(c) for c in cells)


@pytest.mark.asyncio
async def test_settings_refuse_out_of_range_and_apply_limits_live(app: App, ui_settings: QSettings) -> None:
    window = app.window
    window.open_settings()
    dialog = window.settings_dialog
    assert dialog is not None
    dialog.edits[("sim-api", "concurrency")].setText("9")
    dialog.try_apply()
    assert "1..5" in dialog.errors.text() and dialog.isVisible()
    assert window.rt.scheduler.lanes["api:sim-api"].limit == 2
    dialog.edits[("sim-api", "concurrency")].setText("4")
    dialog.edits[("sim-poll", "max_polling_tasks")].setText("7")
    dialog.try_apply()
    assert window.rt.scheduler.lanes["api:sim-api"].limit == 4
    assert window.rt.scheduler.lanes["poll:sim-poll"].limit == 7
    assert int(ui_settings.value("limits/sim-api/concurrency")) == 4


@pytest.mark.asyncio
async def test_language_switch_to_chinese_rebuilds_the_ui(app: App, ui_settings: QSettings) -> None:
    window = app.window
    window.open_settings()
    dialog = window.settings_dialog
    dialog.language.setCurrentIndex(dialog.language.findData("zh_CN"))
    dialog.try_apply()
    assert window.menuBar().actions()[0].text() == "文件(&F)"
    assert window.tabs.tabText(1) == "账号"
    window.translations.apply("en")


@pytest.mark.asyncio
async def test_trayless_app_pauses_notifies_and_shows_counts(app: App) -> None:
    window = app.window
    assert not window.tray.available
    window.lanes.toggle_pause_all()
    assert set(window.rt.store.paused_lanes()) == set(window.rt.scheduler.lanes)
    app.enqueue(writer_tasks(2))
    window.refresh_stats()
    assert "2 waiting" in window.windowTitle() and "Paused" in window.windowTitle()
    window.lanes.toggle_pause_all()
    await wait_until(lambda: all(t.state == "success" for t in window.rt.store.tasks()))
    await wait_until(lambda: any(n.title == "Batch finished" for n in window.tray.notices), timeout=15)
    assert "Batch finished" in window.statusBar().currentMessage() or window.tray.notices


@pytest.mark.asyncio
async def test_the_quit_question_counts_what_the_title_counts(tmp_path: Path, ui_settings: QSettings) -> None:
    app = await start_app(tmp_path, ui_settings, duration=600.0, speed=1.0)
    window = app.window
    app.enqueue(writer_tasks(4))
    # another process (a `run`) runs a poll task: the title counts it, the quit does not stop it
    app.enqueue([NewTask(model="video", model_kind="poll", route="poll:sim-poll", task_id="v1")], batch="b2")
    window.lanes.toggle_lane("poll:sim-poll")
    assert window.rt.store.claim("poll:sim-poll", "host:1:2:other", limit=1)
    await wait_until(lambda: window.running_count() == 2)
    window.request_quit()
    assert window.quit_box is not None
    assert "mediaassist: 3 running" in window.windowTitle()
    assert window.quit_box.text().startswith("3 tasks are running.")
    assert "1 of them are run by another process" in window.quit_box.text()
    window.quit_leave.click()
    await asyncio.wait_for(app.runner, 20)


@pytest.mark.asyncio
@pytest.mark.parametrize("stop_them", [False, True])
async def test_quit_during_a_run_loses_nothing(tmp_path: Path, ui_settings: QSettings, stop_them: bool) -> None:
    app = await start_app(tmp_path, ui_settings, duration=600.0, speed=1.0)
    window = app.window
    app.enqueue(writer_tasks(5))
    await wait_until(lambda: window.running_count() == 2)
    window.close()  # the window's close button asks too
    await wait_until(lambda: window.quit_box is not None)
    (window.quit_stop if stop_them else window.quit_leave).click()
    await asyncio.wait_for(app.runner, 20)
    # What a restart finds: the rows as written to the file, read by a fresh store.
    store = Store(tmp_path / "data" / "mediaassist.sqlite3")
    states = sorted(t.state for t in store.tasks())
    store.close()
    assert len(states) == 5
    assert states == (["canceled"] * 2 + ["pending"] * 3 if stop_them else ["pending"] * 5)
    assert all(not lane.active for lane in window.rt.scheduler.lanes.values())


@pytest.mark.asyncio
async def test_quit_with_nothing_running_does_not_ask(app: App) -> None:
    app.window.request_quit()
    assert app.window.quit_box is None
    await asyncio.wait_for(app.runner, 20)


@pytest.mark.asyncio
async def test_model_filter_by_lane_and_batch(app: App) -> None:
    app.window.lanes.toggle_pause_all()
    app.enqueue(writer_tasks(3))
    app.enqueue([NewTask(model="video", model_kind="poll", route="poll:sim-poll", task_id="v1")], batch="b2")
    app.window.feed.set_filter(TaskFilter(lane="poll:sim-poll"))
    assert app.window.model.rowCount() == 1
    app.window.feed.set_filter(TaskFilter(batch="b1"))
    assert app.window.model.rowCount() == 3


# --- review fixes ------------------------------------------------------------------------------
async def switch_language(window: MainWindow, language: str) -> None:
    window.open_settings()
    dialog = window.settings_dialog
    dialog.language.setCurrentIndex(dialog.language.findData(language))
    dialog.try_apply()


@pytest.mark.asyncio
async def test_language_switch_keeps_the_filter_and_its_widgets_in_step(app: App) -> None:
    window = app.window
    window.lanes.toggle_pause_all()
    app.enqueue(writer_tasks(5))
    app.enqueue([NewTask(model="writer", model_kind="api", route="api:sim-api", task_id="c1")], batch="b2")
    window.rt.store.cancel(["t001", "t002", "c1"])
    window.refresh_stats()  # the batch combo learns b1/b2
    window.state_filter.setCurrentIndex(window.state_filter.findData("canceled"))
    window.batch_filter.setCurrentIndex(window.batch_filter.findData("b1"))
    window.text_filter.setText("prompt")
    await window.apply_filter()
    assert window.model.rowCount() == 2
    try:
        await switch_language(window, "zh_CN")
        assert window.state_filter.currentData() == "canceled"
        assert window.batch_filter.currentData() == "b1"
        assert window.text_filter.text() == "prompt"
        await window.apply_filter()  # what any later widget change does: the same filter, same rows
        assert window.model.rowCount() == 2
        tray = window.tray
        assert [tray.pause_all.text(), tray.resume_all.text()] == ["全部暂停", "全部继续"]
        assert not tray.pause_all.isEnabled() and tray.resume_all.isEnabled()  # all paused
        assert tray.count_actions["api"].text() == "API 通道：0 运行中 · 3 等待中 · 0 失败"
    finally:
        window.translations.apply("en")


@pytest.mark.asyncio
async def test_actions_follow_a_selected_task_changed_elsewhere(app: App) -> None:
    window = app.window
    window.lanes.toggle_pause_all()
    app.enqueue(writer_tasks(2))
    window.table.selectRow(0)
    assert window.task_actions[TaskAction.CANCEL].isEnabled()
    assert not window.task_actions[TaskAction.RETRY].isEnabled()
    window.rt.store.cancel(["t000"])  # the CLI, or the task failing on its own
    window.refresh_stats()
    assert window.task_actions[TaskAction.RETRY].isEnabled()
    assert not window.task_actions[TaskAction.CANCEL].isEnabled()
    assert "Retry" in [a.text() for a in window.context_menu().actions()]


@pytest.mark.asyncio
async def test_selection_is_read_from_ranges_and_multi_selection_shows_no_detail(app: App) -> None:
    window = app.window
    window.lanes.toggle_pause_all()
    app.enqueue(writer_tasks(6))
    window.rt.store.cancel(["t004"])
    window.table.selectAll()
    model, selection = window.model, window.table.selectionModel()
    selection.select(model.index(2, 0), selection.SelectionFlag.Deselect | selection.SelectionFlag.Rows)
    assert [task_id for task_id, _ in window.selected_tasks()] == ["t000", "t001", "t003", "t004", "t005"]
    assert dict(window.selected_tasks())["t004"] == "canceled"
    assert window.task_actions[TaskAction.RETRY].isEnabled() and window.task_actions[TaskAction.CANCEL].isEnabled()
    assert not window.task_actions[TaskAction.COPY_ERROR].isEnabled()
    assert window.detail.task_id is None


@pytest.mark.asyncio
async def test_detail_pane_keeps_scroll_and_selection_across_refreshes(app: App) -> None:
    from PySide6.QtGui import QTextCursor

    window = app.window
    window.lanes.toggle_pause_all()
    app.enqueue(writer_tasks(1))
    for i in range(300):
        window.rt.store.log("t000", f"log line {i}")
    window.resize(1366, 768)  # a laptop: the log lines fit the pane unwrapped
    window.table.selectRow(0)
    await asyncio.sleep(0.05)  # layout: the log box gets its scroll range
    bar = window.detail.log.verticalScrollBar()
    assert bar.maximum() > 100
    bar.setValue(bar.maximum() // 2)
    middle = bar.value()
    cursor = window.detail.prompt.textCursor()
    cursor.select(QTextCursor.SelectionType.Document)
    window.detail.prompt.setTextCursor(cursor)
    window.rt.store.log("t000", "a new line")
    window.refresh_stats()
    assert bar.value() == middle
    assert window.detail.prompt.textCursor().selectedText() == "prompt 0"
    assert window.detail.log.toPlainText().endswith("a new line")
    assert window.detail.log.toPlainText().count("log line 1\n") == 1  # appended, not rewritten twice


@pytest.mark.asyncio
async def test_registered_key_in_a_prompt_is_masked_in_table_detail_and_copy(app: App) -> None:
    secret = "sk-test-TABLE-987654"
    register_secret(secret)
    window = app.window
    window.lanes.toggle_pause_all()
    app.enqueue([NewTask(model="writer", model_kind="api", route="api:sim-api", task_id="k1",
                         prompt=f"uses key {secret}")])
    window.table.selectRow(0)
    shown = [window.model.index(0, c).data() for c in range(window.model.columnCount())]
    assert not any(secret in str(s) for s in shown) and "uses key ***" in shown
    assert secret not in window.detail.prompt.toPlainText()
    window.tasks.run(TaskAction.COPY_PROMPT, window.selected_tasks())
    assert QApplication.clipboard().text() == "uses key ***"


@pytest.mark.asyncio
async def test_detail_shows_markup_in_ids_and_errors_as_text(app: App) -> None:
    from mediaassist.core.store import Task

    window = app.window
    window.lanes.toggle_pause_all()
    app.enqueue([NewTask(model="writer", model_kind="api", route="api:sim-api", task_id="a<b>c")])
    page = "<html><h1>502 Bad Gateway</h1></html>"
    Task.update(state="failed", error_kind="server", error=page).where(Task.task_id == "a<b>c").execute()
    window.table.selectRow(0)
    assert window.detail.header.textFormat() == Qt.TextFormat.PlainText
    assert window.detail.error.textFormat() == Qt.TextFormat.PlainText
    assert window.detail.header.text().startswith("a<b>c · ")
    assert page in window.detail.error.text()


@pytest.mark.asyncio
async def test_a_reader_process_that_dies_shows_as_an_error_and_the_window_goes_on(app: App, tmp_path: Path) -> None:
    """The file is read by a child process; one killed mid-read (the OOM killer, say) is an
    error in the preview, not a hang, and the next drop reads again."""
    tasks = tmp_path / "big.csv"
    tasks.write_text("model,prompt\n" + "".join(f"writer,prompt {i}\n" for i in range(200_000)))
    assert drop(app.window, tasks)
    await wait_until(lambda: bool(import_children()))
    for child in import_children():
        child.kill()
    dialog = await previewed(app.window)
    assert dialog.preview is None and not dialog.import_button.isEnabled()
    assert "Cannot read" in dialog.summary.text() and "ended early" in dialog.summary.text()
    dialog.reject()
    small = tmp_path / "small.csv"
    small.write_text("model,prompt\nwriter,one\n")
    assert drop(app.window, small)
    dialog = await previewed(app.window)
    assert dialog.preview is not None and dialog.preview.task_count == 1
    dialog.reject()
    await wait_until(lambda: not import_children())  # a closed preview leaves no process


@pytest.mark.asyncio
async def test_quit_finishes_a_running_export_and_cancels_a_login(tmp_path: Path, ui_settings: QSettings) -> None:
    app = await start_app(tmp_path, ui_settings)
    window = app.window
    window.lanes.toggle_pause_all()
    app.enqueue(writer_tasks(300))
    login = asyncio.Event()  # stands in for a login browser: it only ends when cancelled
    job = window.jobs.spawn(login.wait(), lambda exc: None, finish_on_quit=False)
    out = tmp_path / "during-quit.xlsx"
    window.tasks.start_export(str(out))
    window.request_quit()  # nothing is running: quits at once
    await asyncio.wait_for(app.runner, 20)
    rows = list(load_workbook(out).active.iter_rows(values_only=True))
    assert len(rows) == 301
    assert job.cancelled()
    assert any("Finishing the export" in n.text for n in window.tray.notices)


@pytest.mark.asyncio
async def test_a_large_selection_is_read_off_the_loop_for_its_actions_and_its_bulk_action(app: App) -> None:
    """Over ID_CHUNK selected rows the selection's states (which actions apply) and its
    (id, state) pairs (what a bulk action acts on) are read in the table's reader thread."""
    window = app.window
    window.lanes.toggle_pause_all()
    app.enqueue(writer_tasks(ID_CHUNK + 100))
    await wait_until(lambda: window.model.rowCount() == ID_CHUNK + 100)
    left_out = window.feed.tasks_of(window.feed.seqs_in([(0, 0)]))[0][0]  # row 0, deselected below
    readers: set[int] = set()
    for name in ("states_of", "tasks_of"):
        original = getattr(window.feed, name)

        def recorded(seqs: list[int], original: Callable[[list[int]], Any] = original) -> Any:
            readers.add(threading.get_ident())
            return original(seqs)

        setattr(window.feed, name, recorded)
    window.table.selectAll()
    window.table.selectionModel().select(window.model.index(0, 0), QItemSelectionModel.SelectionFlag.Deselect
                                         | QItemSelectionModel.SelectionFlag.Rows)  # not "everything in view"
    await wait_until(lambda: window.task_actions[TaskAction.CANCEL].isEnabled())
    assert not window.task_actions[TaskAction.RETRY].isEnabled()
    job = window.tasks.run_on_selection(TaskAction.CANCEL)
    assert job is not None
    await asyncio.wait_for(job, 30)
    assert {t.state for t in window.rt.store.tasks() if t.task_id != left_out} == {"canceled"}
    assert window.rt.store.get(left_out).state == "pending"  # the row left out of the selection
    assert readers and threading.get_ident() not in readers


@pytest.mark.asyncio
async def test_a_task_that_succeeded_leaves_the_running_filter_at_once(app: App) -> None:
    window = app.window
    window.state_filter.setCurrentIndex(window.state_filter.findData("running"))
    app.enqueue(writer_tasks(4, sim_duration_s=20))
    await wait_until(lambda: window.model.rowCount() == 2, timeout=30)
    seen: set[str] = set()

    def shown_states() -> bool:
        seen.update(window.model.index(r, 0).data(StateRole) for r in range(window.model.rowCount()))
        return all(t.state == "success" for t in window.rt.store.tasks()) and window.model.rowCount() == 0
    await wait_until(shown_states, timeout=60)
    assert seen == {"running"}, seen  # a finished row was never shown under "running"


PRICED = """
[budget]
per_batch = { CNY = 1 }

[[models]]
name = "copy"
kind = "api"
provider = "sim-api"
price = { currency = "CNY", per_task = 0.4 }
"""


@pytest.mark.asyncio
async def test_an_estimate_before_import_then_costs_and_a_batch_budget_in_the_window(
        tmp_path: Path, ui_settings: QSettings) -> None:
    app = await start_app(tmp_path, ui_settings, extra_config=PRICED)
    try:
        path = tmp_path / "copy.csv"
        path.write_text("model,prompt\n" + "".join(f"copy,line {i}\n" for i in range(4)), encoding="utf-8")
        assert drop(app.window, path)
        dialog = await previewed(app.window)
        assert "Estimated cost: about ¥1.60" in dialog.summary.text()
        assert "copy: 4 task(s), about ¥1.60" in dialog.summary.text()
        dialog.import_button.click()
        store = app.window.rt.store
        await wait_until(lambda: sorted(t.state for t in store.tasks()) == ["pending", "pending", "success", "success"]
                         and not any(lane.active for lane in app.window.rt.scheduler.lanes.values()), timeout=60)
        model = app.window.model
        await wait_until(lambda: sorted(model.index(r, COL["cost"]).data() or "" for r in range(model.rowCount()))
                         == ["", "", "¥0.40", "¥0.40"])
        done = next(t.task_id for t in store.tasks() if t.state == "success")
        app.window.detail.show_task(done)
        assert app.window.detail.cost.text() == "Cost: ¥0.40 (price table) · Estimated: ¥0.40"
        [batch] = {t.batch_id for t in store.tasks()}
        await wait_until(lambda: any(f"budget: ¥0.80 of ¥1.00 spent on batch {batch}" in label.text()
                                     for label in (row.detail for row in app.window.batches._rows)))
    finally:
        await stop_app(app)
