"""Outputs in the window (issue 24 item 6), on the real demo video server and real files: pick with
P and the star, deliver the picked ones, edit and run again, compare a row, play the demo clip."""

from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from PySide6.QtCore import QEvent, QItemSelectionModel, QSettings, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QApplication, QWidget

from mediaassist.core.media_items import OUTPUT, MediaItem
from mediaassist.core.paths import RESOURCES
from mediaassist.core.store import NewTask
from mediaassist.demo_servers.video_tasks_server import DEMO_VIDEO_KEY, VideoTaskDemoServer
from mediaassist.ui.gallery import MediaActions, PreviewDialog
from mediaassist.ui.outputs_ui import CompareDialog, RerunDialog
from mediaassist.ui.player import MediaPlayer, PlaybackGroup, playback_available
from mediaassist.ui.task_model import COL
from tests.harness import wait_until
from tests.media_helpers import write_mp4

from .test_window import App, start_app, stop_app

VIDEO_CONFIG = """
[[providers]]
name = "gateway"
kind = "poll"
type = "task_api"
profile = "openai-videos"
base_url = "{base_url}"
api_key_env = "GATEWAY_TEST_KEY"
poll_interval_s = 5

[[models]]
name = "clip"
kind = "poll"
provider = "gateway"
remote_model = "sora-2"

[outputs]
naming = "{{row:02}}_{{model}}_{{n}}{{ext}}"
"""


class VideoApp(App):
    server: VideoTaskDemoServer


@pytest_asyncio.fixture
async def video_app(tmp_path: Path, ui_settings: QSettings,
                    monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[VideoApp]:
    monkeypatch.setenv("GATEWAY_TEST_KEY", DEMO_VIDEO_KEY)
    with VideoTaskDemoServer("openai-videos", job_limit=4, seed=31) as server:
        running = await start_app(tmp_path, ui_settings, extra_config=VIDEO_CONFIG.format(base_url=server.base_url))
        app = VideoApp(running.window, running.runner)
        app.server = server
        yield app
        await stop_app(app)


def clip_task(task_id: str, row: int, prompt: str) -> NewTask:
    return NewTask(model="clip", model_kind="poll", route="poll:gateway", prompt=prompt, task_id=task_id, row=row,
                   group=f"row-{row}")


def press_p(widget: QWidget) -> None:
    """The P key, delivered at once (qtbot's clicks would run Qt's events inside this coroutine)."""
    for kind in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease):
        QApplication.sendEvent(widget, QKeyEvent(kind, Qt.Key.Key_P, Qt.KeyboardModifier.NoModifier, "p"))


async def finished(app: App, ids: list[str]) -> None:
    await wait_until(lambda: all(app.window.rt.store.get(i).state == "success" for i in ids), timeout=60,
                     what=f"{ids} succeeded")


async def gallery_of_outputs(app: App) -> None:
    window = app.window
    window.feed.refresh_membership()
    window.feed.flush()
    window.tabs.setCurrentWidget(window.gallery)
    window.gallery.roles.setCurrentIndex(1)  # outputs only
    await window.gallery.reload()


@pytest.mark.asyncio
async def test_pick_with_p_then_deliver_picked_from_the_window(video_app: VideoApp, tmp_path: Path) -> None:
    window = video_app.window
    video_app.enqueue([clip_task("c1", 2, "a red kite over the sea"), clip_task("c2", 3, "两只猫在雨中")])
    await finished(video_app, ["c1", "c2"])
    await gallery_of_outputs(video_app)
    gallery = window.gallery
    assert gallery.model.rowCount() == 2
    captions = [gallery.model.data(gallery.model.index(r), Qt.ItemDataRole.DisplayRole) for r in range(2)]
    assert captions == ["row 2 · clip · a red kite over the sea", "row 3 · clip · 两只猫在雨中"]
    gallery.view.selectionModel().select(gallery.model.index(1), QItemSelectionModel.SelectionFlag.ClearAndSelect)
    press_p(gallery.view)
    assert gallery.model.data(gallery.model.index(1), Qt.ItemDataRole.DisplayRole).startswith("★ row 3")
    assert [o.picked for o in window.rt.store.outputs_of(["c2"])["c2"]] == [True]
    window.feed.mark_changed_since(0)
    window.feed.flush()
    await wait_until(lambda: window.model.data(window.model.index(window.feed.rows_of(
        [window.rt.store.get("c2").seq])[0], COL["prompt"])) == "★ 两只猫在雨中", what="the table's star")
    folder = Path(window.rt.store.result("c2").file_list[0]).parent
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))["files"]
    assert [(e["task_id"], e["picked"]) for e in manifest] == [("c1", False), ("c2", True)]
    window.model.sort(COL["task_id"], Qt.SortOrder.DescendingOrder)
    await window.feed.sorting
    await gallery.reload()
    assert [i.row for i in gallery.model.items] == [3, 2]  # the gallery follows the table's order...
    gallery.grouping.setCurrentIndex(1)
    await gallery.reload()
    assert [i.row for i in gallery.model.items] == [2, 3]  # ...or groups by batch and row
    gallery.picked_only.setChecked(True)
    await gallery.reload()
    assert [i.task_id for i in gallery.model.items] == ["c2"] and "filtered here too" in gallery.summary.text()
    gallery.picked_only.setChecked(False)
    await gallery.reload()
    assert [gallery.models.itemData(i) for i in range(gallery.models.count())] == ["", "clip"]
    gallery.kinds.setCurrentIndex(gallery.kinds.findData("image"))
    await gallery.reload()
    assert gallery.model.items == [] and gallery.models.currentData() == ""  # no pictures: the clips are videos
    gallery.kinds.setCurrentIndex(0)

    assert window.deliver_action.text() == "Deliver picked…"
    deliveries = window.outputs.deliver_picked_to(tmp_path / "client")
    assert [p.name for d in deliveries for p in d.files] == ["03_clip_1.mp4"]
    delivered = json.loads((tmp_path / "client" / "manifest.json").read_text(encoding="utf-8"))["files"]
    assert [e["task_id"] for e in delivered] == ["c2"]
    original = Path(window.rt.store.result("c2").file_list[0])
    assert (tmp_path / "client" / "03_clip_1.mp4").read_bytes() == original.read_bytes()

    window.rt.store.set_picked("c2", None, False)
    messages: list[tuple[str, str]] = []
    window.outputs.message.connect(lambda title, text: messages.append((title, text)))
    assert window.outputs.deliver_picked_to(tmp_path / "again") == []
    assert messages and "Nothing picked among these tasks" in messages[0][1]


@pytest.mark.asyncio
async def test_edit_and_run_again_then_compare_the_row_side_by_side(video_app: VideoApp) -> None:
    window = video_app.window
    video_app.enqueue([clip_task("k1", 4, "a lighthouse")])
    await finished(video_app, ["k1"])
    window.feed.flush()
    row = window.feed.rows_of([window.rt.store.get("k1").seq])[0]
    window.table.selectionModel().select(window.model.index(row, 0), QItemSelectionModel.SelectionFlag.ClearAndSelect
                                         | QItemSelectionModel.SelectionFlag.Rows)
    assert window.rerun_action.isEnabled()
    window.rerun_action.trigger()
    dialog = window.outputs.dialog
    assert isinstance(dialog, RerunDialog) and dialog.prompt.toPlainText() == "a lighthouse"
    assert dialog.remix.isEnabled()  # a succeeded /v1/videos task: its service can remix it
    dialog.params.setPlainText("{not json")
    assert dialog.run_again() is None and "not valid JSON" in dialog.problem.text()
    dialog.params.setPlainText("{}")
    dialog.prompt.setPlainText("a lighthouse in a storm")
    dialog.remix.setChecked(True)
    new_id = dialog.run_again()
    assert new_id == "k1-r2"
    await finished(video_app, ["k1-r2"])
    child = window.rt.store.get("k1-r2")
    assert (child.parent_id, child.group_key, child.prompt) == ("k1", "row-4", "a lighthouse in a storm")
    assert video_app.server.stats()["remixes"] == [window.rt.store.get("k1").remote_id]
    assert video_app.server.stats()["creates"] == {"a lighthouse": 1}

    window.compare_action.trigger()
    compare = window.outputs.dialog
    assert isinstance(compare, CompareDialog)
    assert [t.item.task_id for t in compare.tiles] == ["k1", "k1-r2"]
    assert [t.label.text() for t in compare.tiles] == ["row 4 · clip · a lighthouse",
                                                       "row 4 · clip ↻ · a lighthouse in a storm"]
    compare.tiles[1].star.click()
    assert compare.tiles[1].star.text() == "★"
    assert [o.picked for o in window.rt.store.outputs_of(["k1-r2"])["k1-r2"]] == [True]
    compare.tiles[0].setFocus()
    press_p(compare)
    assert [o.picked for o in window.rt.store.outputs_of(["k1"])["k1"]] == [True]
    compare.close()


@pytest.mark.asyncio
async def test_the_demo_clip_plays_inside_the_window(qtbot, tmp_path: Path) -> None:
    if not playback_available():
        pytest.skip("Qt Multimedia has no playback backend on this machine (PySide6-Addons missing or no FFmpeg)")
    clip = shutil.copy(RESOURCES / "media" / "demo-clip.mp4", tmp_path / "clip.mp4")
    item = MediaItem("t1", OUTPUT, "video", "clip.mp4", path=str(clip))
    host = QWidget()
    qtbot.addWidget(host)
    preview = PreviewDialog(item, MediaActions(host, None), host)  # type: ignore[arg-type]  # no thumbnails needed
    preview.show()
    assert preview.player is not None and preview.open_button is not None  # the system player stays an action
    await wait_until(lambda: preview.player.frames > 0, timeout=30, what="a frame of the demo clip on screen")
    preview.close()


@pytest.mark.asyncio
async def test_compared_clips_stay_in_step_and_pause_together(qtbot, tmp_path: Path) -> None:
    if not playback_available():
        pytest.skip("Qt Multimedia has no playback backend on this machine (PySide6-Addons missing or no FFmpeg)")
    host = QWidget()
    qtbot.addWidget(host)
    players = [MediaPlayer(write_mp4(tmp_path / f"{n}.mp4", (40 * n, 90, 160), frames=360), True, host)
               for n in range(2)]  # 30 s each: neither ends while the test looks
    group = PlaybackGroup(players, host)
    changes: list[bool] = []
    group.playing_changed.connect(changes.append)
    await wait_until(lambda: all(p.frames > 0 for p in players), timeout=30, what="both posters")
    group.play_from_start()
    await wait_until(lambda: players[0].player.position() > 300, timeout=30, what="the first clip playing")
    players[1].player.setPosition(players[0].player.position() + 3000)  # one decoder ran ahead
    await wait_until(lambda: players[1].player.position() > players[0].player.position() + 2000, timeout=10,
                     what="the drift")
    await wait_until(lambda: abs(players[1].player.position() - players[0].player.position()) < 400, timeout=5,
                     what="the clips back in step")
    assert all(p.player.isPlaying() for p in players) and players[0].player.position() < 15000
    group.toggle()  # Pause all
    await wait_until(lambda: not any(p.player.isPlaying() for p in players), timeout=10, what="both paused")
    assert changes == [True, False] and not group.playing
