"""Gallery, media strip, preview and the system opener (issue 11 item 5), on real files."""

from __future__ import annotations

import os
import stat
import wave
from pathlib import Path

import pytest
from PySide6.QtCore import QItemSelectionModel, Qt
from PySide6.QtGui import QColor, QImage, QPixmap
from PySide6.QtWidgets import QWidget

from mediaassist.core.media_items import (
    INPUT,
    OUTPUT,
    MediaItem,
    iter_media,
    media_kind,
)
from mediaassist.core.paths import RESOURCES, output_dir
from mediaassist.core.store import NewTask, Store
from mediaassist.ui import disk_thumbnails as thumbnails_module
from mediaassist.ui import gallery as gallery_module
from mediaassist.ui.actions import TaskAction
from mediaassist.ui.disk_thumbnails import DiskThumbnails
from mediaassist.ui.gallery import MediaActions, MediaModel, PreviewDialog
from mediaassist.ui.i18n import Translations
from mediaassist.ui.opener import open_externally
from mediaassist.ui.thumbnails import first_frame
from tests.harness import wait_until

from ..media_helpers import write_mp4
from .conftest import api_tasks
from .test_window import App, app, start_app, stop_app  # noqa: F401  (the app fixture)

VIDEO_BYTES = b"\x00\x00\x00\x18ftypmp42" + b"\x00" * 64  # an MP4's first box, and no video after it
CLIP_RGB = (200, 40, 40)


def near(color: QColor, rgb: tuple[int, int, int], slack: int = 12) -> bool:
    """H.264 stores YUV 4:2:0: a decoded colour comes back within a few steps of the original."""
    return all(abs(a - b) <= slack for a, b in zip((color.red(), color.green(), color.blue()), rgb, strict=True))


def write_png(path: Path, width: int = 640, height: int = 360, color: str = "#3f51b5") -> Path:
    image = QImage(width, height, QImage.Format.Format_RGB32)
    image.fill(QColor(color))
    path.parent.mkdir(parents=True, exist_ok=True)
    assert image.save(str(path), "PNG")
    return path


def image_items(folder: Path, n: int) -> list[MediaItem]:
    return [MediaItem(f"t{i}", OUTPUT, "image", f"{i}.png", path=str(write_png(folder / f"{i}.png", 320, 180)))
            for i in range(n)]


def paint_all(model: MediaModel) -> list[object]:
    """What a view does when every cell is on screen: ask each for its picture."""
    return [model.data(model.index(row), Qt.ItemDataRole.DecorationRole) for row in range(model.rowCount())]


@pytest.fixture
def cache(tmp_path: Path) -> DiskThumbnails:
    made = DiskThumbnails(tmp_path / "thumbs")
    yield made
    made.close()


def test_media_kind_by_name() -> None:
    assert media_kind("/x/a.PNG") == "image" and media_kind("ComfyUI_00001.mp4") == "video"
    assert media_kind("https://h/a.webp?sig=1") == "image" and media_kind("notes.txt") == "other"


@pytest.mark.asyncio
async def test_thumbnails_are_made_in_the_worker_process_cached_on_disk_and_reused(
        qtbot: object, tmp_path: Path, cache: DiskThumbnails, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_decoding_here(path: Path, box: int) -> QImage | None:
        raise AssertionError(f"the window's process decoded {path}")

    # The worker is a separate process with its own, unpatched module: if a thumbnail
    # comes back, it was decoded there, never on the loop's process.
    monkeypatch.setattr(thumbnails_module, "read_scaled", no_decoding_here)
    model = MediaModel(cache, cache.size)
    model.set_items(image_items(tmp_path / "out", 12))
    paint_all(model)
    await wait_until(lambda: model.made == 12 and not model.loading, timeout=30)
    cached = sorted((tmp_path / "thumbs").rglob("*.png"))
    assert len(cached) == 12
    thumb = QImage(str(cached[0]))
    assert (thumb.width(), thumb.height()) == (cache.size, cache.size)  # every cell the same shape
    assert thumb.pixelColor(80, 80) == QColor("#3f51b5")  # 320x180 scaled to 160x90, centred
    assert thumb.pixelColor(80, 20).alpha() == 0  # above the picture: transparent
    # Another window (a fresh cache on the same folder) starts no worker: the disk cache answers.
    again = DiskThumbnails(tmp_path / "thumbs")
    second = MediaModel(again, again.size)
    second.set_items(model.items)
    paint_all(second)
    await wait_until(lambda: second.made == 12)
    assert again.worker._child is None
    again.close()
    model.close()
    second.close()


@pytest.mark.asyncio
async def test_a_worker_process_that_died_is_replaced(qtbot: object, tmp_path: Path, cache: DiskThumbnails) -> None:
    assert await cache.thumbnail(write_png(tmp_path / "a.png")) is not None
    first = cache.worker._child
    assert first is not None
    first.kill()  # a decoder crash on a broken file looks like this
    first.wait()
    assert await cache.thumbnail(write_png(tmp_path / "b.png")) is not None  # a new worker serves it
    assert cache.worker._child is not None and cache.worker._child.pid != first.pid


@pytest.mark.asyncio
async def test_an_edited_file_gets_a_new_thumbnail(qtbot: object, tmp_path: Path, cache: DiskThumbnails) -> None:
    path = write_png(tmp_path / "a.png", color="#ff0000")
    first = cache.cache_file(path)
    assert (await cache.thumbnail(path)).pixelColor(80, 80) == QColor("#ff0000")
    write_png(path, 500, 500, color="#00ff00")
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))
    assert cache.cache_file(path) != first
    assert (await cache.thumbnail(path)).pixelColor(80, 80) == QColor("#00ff00")


@pytest.mark.asyncio
async def test_a_video_thumbnail_is_its_first_frame_with_a_play_mark(qtbot: object, tmp_path: Path,
                                                                    cache: DiskThumbnails) -> None:
    clip = write_mp4(tmp_path / "clip.mp4", CLIP_RGB, width=320, height=180)
    thumb = await cache.thumbnail(clip)
    assert thumb is not None and (thumb.width(), thumb.height()) == (cache.size, cache.size)
    assert near(thumb.pixelColor(20, 80), CLIP_RGB)  # the frame, scaled to 160x90 and centred
    assert thumb.pixelColor(20, 20).alpha() == 0  # above the frame: transparent
    centre = thumb.pixelColor(80, 80)
    assert centre.red() > 200 and centre.green() > 200 and centre.blue() > 200  # the white play triangle
    assert cache.cache_file(clip).exists()


@pytest.mark.asyncio
async def test_a_broken_video_gets_the_video_placeholder_and_the_worker_lives_on(
        qtbot: object, tmp_path: Path, cache: DiskThumbnails) -> None:
    truncated = tmp_path / "truncated.mp4"
    truncated.write_bytes(write_mp4(tmp_path / "whole.mp4", CLIP_RGB).read_bytes()[:300])
    items = [MediaItem("t1", OUTPUT, "video", name, path=str(tmp_path / name))
             for name in ("truncated.mp4", "whole.mp4")]
    (tmp_path / "header-only.mp4").write_bytes(VIDEO_BYTES)
    items.append(MediaItem("t2", OUTPUT, "video", "header-only.mp4", path=str(tmp_path / "header-only.mp4")))
    model = MediaModel(cache, cache.size)
    model.set_items(items)
    paint_all(model)
    await wait_until(lambda: not model.loading, timeout=30)
    pictures = paint_all(model)
    video = model._placeholder("video").cacheKey()
    assert pictures[0].cacheKey() == pictures[2].cacheKey() == video
    assert pictures[1].cacheKey() != video and model.made == 1  # the good clip beside them is shown
    assert near(pictures[1].toImage().pixelColor(40, 80), CLIP_RGB)
    model.close()


NO_PYAV = {"en": "no preview: PyAV not installed", "zh_CN": "无预览：未安装 PyAV"}


def label_pixels(tile: QPixmap) -> int:
    """Pixels of a placeholder's label in its bottom third (the symbol sits above it)."""
    image = tile.toImage()
    return sum(image.pixelColor(x, y).lightness() < 150
               for x in range(image.width()) for y in range(image.height() * 2 // 3, image.height()))


@pytest.mark.asyncio
@pytest.mark.parametrize("language", ["en", "zh_CN"])
async def test_without_pyav_a_video_tile_says_why_it_has_no_picture(
        qtbot: object, tmp_path: Path, cache: DiskThumbnails, without_pyav: None, language: str) -> None:
    Translations().apply(language)
    clip = RESOURCES / "media" / "demo-clip.mp4"  # a real clip: with PyAV it would get its first frame
    items = [MediaItem("t1", OUTPUT, "video", "clip.mp4", path=str(clip)),
             MediaItem("t2", OUTPUT, "image", "frame.png", path=str(write_png(tmp_path / "frame.png")))]
    model = MediaModel(cache, cache.size)
    model.set_items(items)
    paint_all(model)
    await wait_until(lambda: not model.loading)
    video_tile, picture = paint_all(model)
    assert isinstance(video_tile, QPixmap) and isinstance(picture, QPixmap)
    assert model.made == 1  # the image only: no worker is asked for a clip it cannot decode
    assert video_tile.cacheKey() == model._placeholder("video", NO_PYAV[language]).cacheKey()
    assert label_pixels(video_tile) > 20 and label_pixels(model._placeholder("video")) == 0  # the label shows
    tooltips = [model.data(model.index(row), Qt.ItemDataRole.ToolTipRole) for row in range(2)]
    assert tooltips[0].endswith("\n" + NO_PYAV[language]) and NO_PYAV[language] not in tooltips[1]
    assert picture.cacheKey() != model._placeholder("loading").cacheKey()
    model.close()


@pytest.mark.asyncio
async def test_videos_missing_files_and_links_get_placeholders_without_decoding(
        qtbot: object, tmp_path: Path, cache: DiskThumbnails) -> None:
    video = tmp_path / "clip.mp4"
    video.write_bytes(VIDEO_BYTES)
    not_an_image = tmp_path / "broken.png"
    not_an_image.write_bytes(b"not a png at all")
    items = [MediaItem("t1", OUTPUT, "video", "clip.mp4", path=str(video)),
             MediaItem("t1", INPUT, "image", "first_frame", url="https://example.com/a.png"),
             MediaItem("t2", OUTPUT, "image", "broken.png", path=str(not_an_image)),
             MediaItem("t3", OUTPUT, "image", "gone.png", path=str(tmp_path / "gone.png"))]
    model = MediaModel(cache, cache.size)
    model.set_items(items)
    paint_all(model)
    await wait_until(lambda: not model.loading)
    pictures = paint_all(model)
    assert model.made == 0
    assert pictures[0].cacheKey() == model._placeholder("video").cacheKey()
    assert pictures[1].cacheKey() == model._placeholder("link").cacheKey()
    assert pictures[2].cacheKey() == pictures[3].cacheKey() == model._placeholder("missing").cacheKey()
    assert "first_frame" in model.data(model.index(1), Qt.ItemDataRole.ToolTipRole)
    model.close()


def test_media_of_tasks_lists_outputs_in_the_given_order(store: Store, tmp_path: Path) -> None:
    store.enqueue("b1", api_tasks(3))
    claimed = store.claim("api:sim-api", "me", limit=3)
    by_id = {t.task_id: t for t in claimed}
    store.finish_success(by_id["t00000"], "ok", [str(tmp_path / "a.png"), str(tmp_path / "b.mp4")])
    store.finish_success(by_id["t00002"], "ok", [str(tmp_path / "c.png")])
    chunks = list(iter_media(["t00002", "t00001", "t00000", "nope"]))
    items = [i for chunk in chunks for i in chunk]
    assert [(i.task_id, i.media, i.name) for i in items] == [
        ("t00002", "image", "c.png"), ("t00000", "image", "a.png"), ("t00000", "video", "b.mp4")]
    assert [i for chunk in iter_media(["t00000"], roles=(INPUT,)) for i in chunk] == []


@pytest.mark.asyncio
async def test_preview_scales_an_image_and_offers_the_folder(qtbot: object, tmp_path: Path,
                                                             cache: DiskThumbnails) -> None:
    path = write_png(tmp_path / "big.png", 1600, 900)
    actions = MediaActions(None, cache)  # type: ignore[arg-type]
    dialog = PreviewDialog(MediaItem("t1", OUTPUT, "image", "big.png", path=str(path)), actions)
    dialog.show()
    await dialog.loaded
    assert dialog.image is not None and dialog.image.width() == 1600
    shown = dialog.picture.pixmap()
    assert shown.width() <= dialog.picture.width() and shown.height() <= dialog.picture.height()
    assert "1600×900" in dialog.note.text()
    assert dialog.folder_button is not None and dialog.open_button.text() == "Open with the system viewer"
    dialog.close()


@pytest.mark.asyncio
async def test_preview_of_a_video_shows_its_first_frame_and_hands_it_to_the_system_player(
        qtbot: object, tmp_path: Path, cache: DiskThumbnails, monkeypatch: pytest.MonkeyPatch) -> None:
    # a build without Qt Multimedia (PySide6-Essentials alone); with it, the clip plays
    # (tests/ui/test_outputs_window.py)
    monkeypatch.setattr(gallery_module, "playback_available", lambda: False)
    video = write_mp4(tmp_path / "clip.mp4", CLIP_RGB, width=320, height=180)
    actions = MediaActions(None, cache)  # type: ignore[arg-type]
    dialog = PreviewDialog(MediaItem("t1", OUTPUT, "video", "clip.mp4", path=str(video)), actions)
    dialog.show()
    await dialog.loaded
    assert dialog.image is not None and (dialog.image.width(), dialog.image.height()) == (320, 180)
    assert near(dialog.image.toImage().pixelColor(160, 90), CLIP_RGB)  # the frame itself, no play mark
    assert "first frame (320×180 pixels)" in dialog.note.text() and "system player" in dialog.note.text()
    assert dialog.open_button is not None and dialog.open_button.text() == "Open with the system player"
    broken = tmp_path / "broken.mp4"
    broken.write_bytes(VIDEO_BYTES)
    unplayable = PreviewDialog(MediaItem("t1", OUTPUT, "video", "broken.mp4", path=str(broken)), actions)
    await unplayable.loaded
    assert unplayable.image is None and "no frame" in unplayable.note.text()
    assert "system player" in unplayable.note.text() and unplayable.open_button is not None  # it may manage
    dialog.close()  # the last (closing a shown window quits an app that has no other)
    gone = PreviewDialog(MediaItem("t1", OUTPUT, "video", "x.mp4", path=str(tmp_path / "x.mp4")), actions)
    assert gone.open_button is None and gone.folder_button is None  # nothing to open
    assert "gone" in gone.note.text()


def test_a_sound_saved_as_mp4_has_no_first_frame(tmp_path: Path) -> None:
    """No video stream at all: PyAV's decode(video=0) raised IndexError, which failed the preview."""
    sound = tmp_path / "voice.mp4"
    with wave.open(str(sound), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(8000)
        out.writeframes(b"\0\0" * 800)
    assert first_frame(sound, 160) is None


def fake_xdg_open(folder: Path, body: str) -> None:
    folder.mkdir(exist_ok=True)
    script = folder / "xdg-open"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)


@pytest.mark.asyncio
async def test_opener_reports_a_desktop_without_a_file_manager(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    fake_xdg_open(bin_dir, "exit 3")  # xdg-open's "a required tool could not be found"
    monkeypatch.setenv("PATH", str(bin_dir))
    reason = await open_externally(tmp_path)
    assert reason is not None and "code 3" in reason and str(tmp_path) in reason
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    reason = await open_externally(tmp_path)
    assert reason is not None and "xdg-utils" in reason


@pytest.mark.asyncio
async def test_opener_hands_the_path_to_xdg_open(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    fake_xdg_open(bin_dir, f'echo "$1" > {tmp_path / "opened.txt"}')
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    assert await open_externally(tmp_path / "out") is None
    assert (tmp_path / "opened.txt").read_text().strip() == str(tmp_path / "out")


@pytest.mark.asyncio
async def test_open_folder_of_a_missing_file_says_so(qtbot: object, tmp_path: Path, cache: DiskThumbnails) -> None:
    parent = QWidget()
    actions = MediaActions(parent, cache)
    await actions.open_file(MediaItem("t1", OUTPUT, "image", "gone.png", path=str(tmp_path / "gone.png")))
    assert "gone" in actions.last_message


# --- in the window: the gallery tab and the detail pane show inputs beside outputs ----------


def finish_with_outputs(window: object, tmp_path: Path, task_ids: list[str]) -> None:
    store = window.rt.store  # type: ignore[attr-defined]
    claimed = {t.task_id: t for t in store.claim("poll:sim-poll", "test", limit=len(task_ids))}
    for task_id in task_ids:
        out = tmp_path / "outputs" / task_id
        out.mkdir(parents=True, exist_ok=True)
        files = [str(write_png(out / "frame.png", 320, 180)), str(write_mp4(out / "clip.mp4", CLIP_RGB))]
        store.finish_success(claimed[task_id], None, files)


@pytest.mark.asyncio
async def test_gallery_tab_and_detail_pane_show_inputs_beside_outputs(app: App, tmp_path: Path) -> None:  # noqa: F811
    window = app.window
    window.lanes.pause_all()
    first_frame = write_png(tmp_path / "in" / "first.png", 200, 200, color="#ff9800")
    inputs = {"first_frame": [{"path": str(first_frame), "size": first_frame.stat().st_size, "sha256": "x",
                               "mime": "image/png", "media": "image"}],
              "last_frame": [{"url": "https://example.com/last.png", "media": "image"}]}
    app.enqueue([NewTask(model="video", model_kind="poll", route="poll:sim-poll", task_id=f"v{i}", inputs=inputs)
                 for i in range(3)])
    finish_with_outputs(window, tmp_path, ["v0", "v1", "v2"])
    window.feed.refresh_membership()
    window.feed.flush()
    window.tabs.setCurrentWidget(window.gallery)
    await wait_until(lambda: window.gallery.model.rowCount() == 12)
    rows = [window.gallery.model.items[i] for i in range(4)]
    assert [(i.role, i.name, i.media) for i in rows] == [
        ("input", "first_frame", "image"), ("input", "last_frame", "image"),
        ("output", "frame.png", "image"), ("output", "clip.mp4", "video")]
    assert "12 media files of 3 tasks" in window.gallery.summary.text()
    paint_all(window.gallery.model)
    await wait_until(lambda: window.gallery.model.made >= 2 and not window.gallery.model.loading)
    clip = window.gallery.model.data(window.gallery.model.index(3), Qt.ItemDataRole.DecorationRole)
    assert clip.cacheKey() != window.gallery.model._placeholder("video").cacheKey()  # its first frame
    window.gallery.roles.setCurrentIndex(window.gallery.roles.findText("Inputs"))
    await wait_until(lambda: window.gallery.model.rowCount() == 6)
    assert "Follows the Queue tab's filter" not in window.gallery.summary.text()
    # The gallery follows the table's filter, and says so.
    window.text_filter.setText("v1")
    window.apply_filter()
    await wait_until(lambda: window.gallery.model.rowCount() == 2)
    await wait_until(lambda: "media files" in window.gallery.summary.text())
    assert window.gallery.summary.text().startswith("Follows the Queue tab's filter (“v1”); clear it there")
    window.state_filter.setCurrentIndex(window.state_filter.findData("pending"))  # nothing pending has media
    await wait_until(lambda: "No images or videos" in window.gallery.summary.text())
    assert window.gallery.summary.text().startswith("Follows the Queue tab's filter (State: pending · “v1”)")
    window.state_filter.setCurrentIndex(0)
    await wait_until(lambda: window.gallery.model.rowCount() == 2)
    # Double-click a cell: the preview of the input picture.
    index = window.gallery.model.index(0)
    window.gallery.view.doubleClicked.emit(index)
    preview = window.gallery.media_actions.preview
    assert preview is not None and preview.item.name == "first_frame"
    await preview.loaded
    assert preview.image is not None and preview.image.width() == 200
    preview.reject()
    # The detail pane of one task: its inputs, then its outputs (no empty media box before).
    window.tabs.setCurrentIndex(0)
    assert not window.detail.media.isVisibleTo(window.detail)
    window.table.selectionModel().select(window.model.index(0, 0), QItemSelectionModel.SelectionFlag.ClearAndSelect
                                         | QItemSelectionModel.SelectionFlag.Rows)
    strip = window.detail.media.model
    assert [i.role for i in strip.items] == ["input", "input", "output", "output"]
    assert window.detail.media.isVisibleTo(window.detail)


@pytest.mark.asyncio
async def test_open_folder_is_offered_only_with_outputs_and_a_missing_file_manager_is_told(
        app: App, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    window = app.window
    window.lanes.pause_all()
    app.enqueue([NewTask(model="video", model_kind="poll", route="poll:sim-poll", task_id=f"v{i}") for i in range(2)])
    claimed = {t.task_id: t for t in window.rt.store.claim("poll:sim-poll", "test", limit=2)}
    window.rt.store.finish_success(claimed["v0"], "no files", [])
    folder = output_dir(window.rt.outputs_root, "b1", "v1")
    window.rt.store.finish_success(claimed["v1"], None, [str(write_png(folder / "frame.png"))])
    window.feed.refresh_membership()
    window.feed.flush()
    messages: list[tuple[str, str]] = []
    window.tasks.message.connect(lambda title, text: messages.append((title, text)))

    def select(task_id: str) -> None:
        row = window.feed.rows_of([claimed[task_id].seq])[0]
        window.table.selectionModel().select(window.model.index(row, 0),
                                             QItemSelectionModel.SelectionFlag.ClearAndSelect
                                             | QItemSelectionModel.SelectionFlag.Rows)

    select("v0")
    assert TaskAction.OPEN_FOLDER not in window.tasks.offered()[0]
    assert not window.task_actions[TaskAction.OPEN_FOLDER].isEnabled()
    select("v1")
    assert TaskAction.OPEN_FOLDER in window.tasks.offered()[0]
    fake_xdg_open(tmp_path / "bin", "exit 3")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    await window.tasks.open_folder("v1")
    assert messages and str(folder) in messages[0][1] and "code 3" in messages[0][1]


I2V_MODEL = """
[[models]]
name = "i2v"
kind = "poll"
provider = "sim-poll"
inputs = ["first_frame", "last_frame"]
"""


@pytest.mark.asyncio
async def test_import_preview_shows_input_thumbnails_and_file_errors_by_row(tmp_path: Path,
                                                                            ui_settings: object) -> None:
    running = await start_app(tmp_path, ui_settings, extra_config=I2V_MODEL)  # type: ignore[arg-type]
    try:
        window = running.window
        frames = tmp_path / "batch" / "frames"
        write_png(frames / "dawn.png", 320, 180, "#ff9800")
        write_png(frames / "day.png", 320, 180, "#03a9f4")
        (frames / "notes.png").write_text("not a picture")
        batch = tmp_path / "batch" / "i2v.csv"
        batch.write_text("model,prompt,first_frame,last_frame\n"
                         "i2v,harbour,frames/dawn.png,frames/day.png\n"
                         "i2v,gone,frames/missing.png,frames/day.png\n"
                         "i2v,text,frames/notes.png,https://example.com/last.png\n")
        window.open_files([batch])
        await wait_until(lambda: window.importer.dialog is not None and window.importer.dialog.preview is not None)
        dialog = window.importer.dialog
        assert dialog.good_rows.rowCount() == 1 and not dialog.good_rows.isColumnHidden(2)
        assert dialog.good_rows.item(0, 2).text() == "first_frame: dawn.png · last_frame: day.png"
        errors = {dialog.bad_rows.item(i, 0).text(): dialog.bad_rows.item(i, 1).text()
                  for i in range(dialog.bad_rows.rowCount())}
        assert set(errors) == {"3", "4"}  # the header is row 1
        assert "first_frame" in errors["3"] and "missing.png" in errors["3"]
        assert "first_frame" in errors["4"] and "notes.png" in errors["4"]
        strip = dialog.inputs.model
        assert [(i.name, i.media) for i in strip.items] == [("first_frame", "image"), ("last_frame", "image")]
        assert not dialog.inputs.isHidden() and "1" in dialog.inputs_label.text()
        paint_all(strip)
        await wait_until(lambda: strip.made == 2 and not strip.loading)
        dialog.reject()
    finally:
        await stop_app(running)
