"""In Chinese the window shows no English (issue 11 item 6): the window is driven through running,
failed, paused, needs-login and cancelled tasks, and every text a visible widget shows -- labels,
buttons, tabs, menus, table cells and headers, the detail pane, the tray, tooltips excepted -- is
searched for English words. Names (of the product, protocols, formats, services) are allowed, and
so are identifiers (anything with a digit, ``-``, ``_``, ``:`` or ``.`` in it: ids, lanes, paths)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QItemSelectionModel, QModelIndex, QSettings, Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QComboBox,
    QGroupBox,
    QLabel,
    QLineEdit,
    QListView,
    QPlainTextEdit,
    QProgressBar,
    QTabWidget,
    QWidget,
)

from mediaassist.core.location import host_id
from mediaassist.core.store import NewTask
from mediaassist.demo_servers.video_tasks_server import DEMO_VIDEO_KEY, VideoTaskDemoServer
from mediaassist.ui.main_window import MainWindow
from tests.harness import wait_until

from .test_window import App, start_app, stop_app

# Names that stay as they are in a Chinese UI.
NAMES = {"mediaassist", "API", "HTTP", "CSV", "XLSX", "Excel", "JSON", "JSONL", "TXT", "ID", "URL", "ETA",
         "Chromium", "RunningHub", "Qt", "Multimedia", "PySide6", "Essentials", "README", "demo",
         "English",  # the language's own name in the language chooser
         "P",  # the pick key's name
         # the simulated config's names (models, site, accounts, providers)
         "writer", "video", "reasoner", "simulated"}
# The machine's name (the Machine column, an account's host) is a name too; read when a text is
# checked, as a test may stand in for another machine with MEDIAASSIST_HOST_ID.
WORD = re.compile(r"[^\s,;，。；：、（）()\[\]{}<>«»“”\"'·…|=+*!?？！]+")
IDENTIFIER = re.compile(r"[\d\-_:.@%/\\]")  # ids, lanes, paths
TAGS = re.compile(r"<[^>]+>")
QUOTED = re.compile(r"'[^']*'")  # a value quoted in a message is data (a model's name, a task id)
# What a remote service answered is shown as it said it (the window cannot translate it): the
# video demo's refusal, inside the app's own (translated) failure text.
SERVICE_WORDS = "The request was rejected by the safety system (demo)."


def english_words(text: str) -> Iterator[str]:
    for token in WORD.findall(QUOTED.sub(" ", TAGS.sub(" ", text.replace(SERVICE_WORDS, " ")))):
        if IDENTIFIER.search(token) or token in NAMES or token == host_id():
            continue
        if re.fullmatch(r"&[A-Z]", token):  # a mnemonic: 文件(&F)
            continue
        if re.fullmatch(r"&?[A-Za-z&]+", token) and token.strip("&"):  # "s" and "h" are units too
            yield token


def shown_texts(widget: QWidget) -> Iterator[tuple[str, str]]:
    """(where, text) for what the operator can read in ``widget`` right now."""
    for child in [widget, *widget.findChildren(QWidget)]:
        if not child.isVisible():
            continue
        where = type(child).__name__
        if isinstance(child, (QLabel, QAbstractButton)):
            yield where, child.text()
        elif isinstance(child, QGroupBox):
            yield where, child.title()
        elif isinstance(child, QTabWidget):
            yield from ((where, child.tabText(i)) for i in range(child.count()))
        elif isinstance(child, QComboBox):
            yield from ((where, child.itemText(i)) for i in range(child.count()))
        elif isinstance(child, QLineEdit):
            yield where, child.placeholderText()
        elif isinstance(child, QPlainTextEdit):
            yield where, child.toPlainText()
        elif isinstance(child, QProgressBar):
            yield where, child.text()
        elif isinstance(child, QAbstractItemView) and child.model() is not None:
            yield from view_texts(child)
        for action in child.actions():
            if action.isVisible():
                yield f"{where} action", action.text()


def view_texts(view: QAbstractItemView) -> Iterator[tuple[str, str]]:
    model = view.model()
    columns = 1 if isinstance(view, QListView) else model.columnCount(QModelIndex())
    for column in range(columns):
        header = model.headerData(column, Qt.Orientation.Horizontal, Qt.ItemDataRole.DisplayRole)
        if header:
            yield "header", str(header)
    for row in range(min(model.rowCount(QModelIndex()), 50)):
        for column in range(columns):
            value = model.index(row, column).data(Qt.ItemDataRole.DisplayRole)
            if isinstance(value, str):
                yield f"cell {row},{column}", value


def english_in(window: QWidget) -> list[str]:
    found = []
    for where, text in shown_texts(window):
        words = sorted(set(english_words(text)))
        if words:
            found.append(f"{where}: {words} in {text[:120]!r}")
    return found


def chinese_tasks(n: int, prefix: str, **params: object) -> list[NewTask]:
    return [NewTask(model="writer", model_kind="api", route="api:sim-api", prompt=f"写一句广告语 {i}",
                    task_id=f"{prefix}{i:03d}", params=dict(params)) for i in range(n)]


VIDEO_KEY_ENV = "MEDIAASSIST_SWEEP_VIDEO_KEY"  # a key in the config file would need chmod 600


def video_config(base_url: str) -> str:
    """A video model on the openai-videos task API (its demo server): real provider texts."""
    return f"""
[[providers]]
name = "videos-api"
kind = "poll"
type = "task_api"
profile = "openai-videos"
base_url = "{base_url}"
api_key_env = "{VIDEO_KEY_ENV}"
poll_interval_s = 0.2

[[models]]
name = "sora-2"
kind = "poll"
provider = "videos-api"
remote_model = "sora-2"
"""


def select_task(window: MainWindow, task_id: str) -> None:
    task = window.rt.store.get(task_id)
    assert task is not None
    row = window.feed.rows_of([task.seq])[0]
    window.table.selectionModel().select(window.model.index(row, 0),
                                         QItemSelectionModel.SelectionFlag.ClearAndSelect
                                         | QItemSelectionModel.SelectionFlag.Rows)
    window.refresh_stats()


@pytest.mark.asyncio
@pytest.mark.timeout(120)
async def test_chinese_window_shows_no_english_in_any_state(tmp_path, ui_settings: QSettings,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    ui_settings.setValue("app/language", "zh_CN")
    monkeypatch.setenv(VIDEO_KEY_ENV, DEMO_VIDEO_KEY)
    with VideoTaskDemoServer("openai-videos", seed=7) as videos:
        app: App = await start_app(tmp_path, ui_settings, duration=600.0, speed=1.0,
                                   extra_config=video_config(videos.base_url))
        try:
            await sweep_every_state(app, tmp_path)
        finally:
            app.window.translations.apply("en")
            await stop_app(app)


async def sweep_every_state(app: App, tmp_path: Path) -> None:
    window = app.window
    app.enqueue(chinese_tasks(3, "bad", sim_fail="bad_input", sim_duration_s=0.01), batch="b2")
    await wait_until(lambda: sum(t.state == "failed" for t in window.rt.store.tasks()) == 3, timeout=30)
    app.enqueue(chinese_tasks(2, "run"))  # running (600 s)
    app.enqueue(chinese_tasks(2, "stop"), batch="b3")
    app.enqueue([NewTask(model="reasoner", model_kind="web", route="web:simulated", task_id=f"web{i}",
                         prompt="推理一下") for i in range(2)], batch="b4")
    window.rt.store.set_login_state("acct-a", "needs_login", "账号已退出登录")
    window.rt.store.cancel(["stop000", "stop001"])
    await wait_until(lambda: sum(t.state == "failed" for t in window.rt.store.tasks()) == 3
                     and sum(t.state == "running" for t in window.rt.store.tasks()) == 2, timeout=60)
    window.lanes.toggle_lane("poll:sim-poll")  # paused by the operator
    app.enqueue([NewTask(model="video", model_kind="poll", route="poll:sim-poll", task_id="vid0",
                         prompt="视频")], batch="b5")
    window.refresh_stats()
    states = {t.state for t in window.rt.store.tasks()}
    assert {"running", "failed", "canceled", "pending"} <= states
    app.enqueue([NewTask(model="sora-2", model_kind="poll", route="poll:videos-api", task_id=task_id,
                         prompt=prompt) for task_id, prompt in (("clip-ok", "海边日落"), ("clip-bad", "海边 #fail"))],
                batch="b6")
    await wait_until(lambda: {window.rt.store.get(t).state for t in ("clip-ok", "clip-bad")} == {"success", "failed"},
                     timeout=60)
    problems = []
    for task_id in ("clip-ok", "clip-bad"):  # a video's result and a provider's failure, with their logs
        select_task(window, task_id)
        assert window.detail.log.toPlainText()
        problems += [f"{task_id}: {p}" for p in english_in(window)]
    failed = next(t for t in window.rt.store.tasks() if t.state == "failed")
    select_task(window, failed.task_id)
    assert window.detail.log.toPlainText()  # the failure's log lines are shown (in Chinese)
    for index in range(window.tabs.count()):
        window.tabs.setCurrentIndex(index)
        await wait_until(lambda: not window.gallery.model.loading)
        problems += [f"tab {index}: {p}" for p in english_in(window)]
    problems += [f"tray: {p}" for a in window.tray.menu.actions() for p in english_words(a.text())]
    problems += [f"title: {w}" for w in english_words(window.windowTitle())]
    window.open_settings()
    problems += [f"settings: {p}" for p in english_in(window.settings_dialog)]
    window.settings_dialog.reject()
    batch = tmp_path / "batch.csv"
    batch.write_text("model,prompt\nwriter,写点什么\nnosuchmodel,写点什么\nwriter,\n", encoding="utf-8")
    window.open_files([batch])
    await wait_until(lambda: window.importer.dialog is not None and window.importer.dialog.preview is not None)
    dialog = window.importer.dialog
    for tab in range(dialog.tabs.count()):
        dialog.tabs.setCurrentIndex(tab)
        problems += [f"import preview: {p}" for p in english_in(dialog)]
    dialog.reject()
    assert problems == [], "\n".join(problems)


def test_the_sweep_finds_english_and_lets_names_and_ids_pass() -> None:
    assert list(english_words("3 个任务 waiting · 2 运行中")) == ["waiting"]
    assert list(english_words("<b>web:acct-a</b> API 通道 t001 mediaassist api_key")) == []
    assert list(english_words("文件(&F) &Quit 22 min 05 s")) == ["&Quit", "min", "s"]
