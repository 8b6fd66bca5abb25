"""Media inputs: sniffing by content, per-file checks, verify_unchanged, uploads in the store, and
the importer's input columns (row errors name row, column and reason; good rows still import)."""

from __future__ import annotations

import hashlib
import json
import logging
import multiprocessing
import multiprocessing.synchronize
import os
from pathlib import Path

import pytest

from mediaassist.core.clock import Clock
from mediaassist.core.config import AppConfig, InputSpec, ModelConfig, parse_config
from mediaassist.core.errors import ErrorKind, TaskError
from mediaassist.core.importer import new_batch_id, read_task_file
from mediaassist.core.media import (
    MIB,
    MediaCache,
    MediaInputError,
    check_input_value,
    check_local_input,
    fresh_upload_name,
    iter_file_chunks,
    sniff_media,
    split_cell,
    upload_key,
    verify_unchanged,
)
from mediaassist.core.paths import RESOURCES
from mediaassist.core.store import NewTask, Store, Task
from mediaassist.providers.base import TaskContext
from tests.media_helpers import MAGIC, png_bytes, write_png

IMAGE = InputSpec(name="image")
FRAMES = InputSpec(name="frames", multiple=True)
CLIP = InputSpec(name="clip", media=("video",))


# --- sniffing ------------------------------------------------------------------------------

@pytest.mark.parametrize("mime", sorted(MAGIC))
def test_every_documented_format_is_recognised_by_its_magic_bytes(tmp_path: Path, mime: str) -> None:
    path = tmp_path / "no-extension"
    path.write_bytes(MAGIC[mime])
    sniffed = sniff_media(path)
    assert sniffed is not None and sniffed[1] == mime
    assert sniffed[0] == mime.split("/")[0]


@pytest.mark.parametrize("content", [b"", b"hello, I am text", b"BM but not a bitmap at all........",
                                     b"%PDF-1.7\n" + bytes(40), b"PK\x03\x04" + bytes(40)])
def test_other_content_is_not_media(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "x.png"
    path.write_bytes(content)
    assert sniff_media(path) is None


# --- one local file --------------------------------------------------------------------------

def test_a_good_png_is_described_by_path_size_hash_and_mime(tmp_path: Path) -> None:
    path = write_png(tmp_path / "frame.png")
    entry = check_local_input(str(path), tmp_path, IMAGE, None)
    assert entry == {"path": str(path.resolve()), "size": path.stat().st_size,
                     "mtime_ns": path.stat().st_mtime_ns, "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
                     "mime": "image/png", "media": "image"}


def test_relative_paths_resolve_against_the_task_files_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_png(tmp_path / "batch" / "frames" / "a.png")
    monkeypatch.chdir(tmp_path)  # the working directory must not matter
    entry = check_local_input("frames/a.png", tmp_path / "batch", IMAGE, None)
    assert entry["path"] == str((tmp_path / "batch" / "frames" / "a.png").resolve())
    with pytest.raises(MediaInputError, match="file not found"):
        check_local_input("batch/frames/missing.png", tmp_path, IMAGE, None)


@pytest.mark.parametrize(("setup", "reason"), [
    ("missing", "file not found: "),
    ("folder", "is a folder"),
    ("fifo", "is not a regular file"),
    ("under-a-file", "cannot read "),
    ("text-as-png", "x.png is not an image file by its content"),
    ("video-for-image", "x.png is a video (video/mp4), but image takes an image"),
])
def test_bad_local_files_raise_a_short_reason(tmp_path: Path, setup: str, reason: str) -> None:
    target = tmp_path / "x.png"
    if setup == "folder":
        target.mkdir()
    elif setup == "fifo":
        os.mkfifo(target)
    elif setup == "under-a-file":
        (tmp_path / "file").write_text("x")
        target = tmp_path / "file" / "x.png"
    elif setup == "text-as-png":
        target.write_text("model,prompt\nthis is not a picture\n")
    elif setup == "video-for-image":
        target.write_bytes(MAGIC["video/mp4"])
    with pytest.raises(MediaInputError) as caught:
        check_local_input(str(target), tmp_path, IMAGE, None)
    assert reason in str(caught.value)


@pytest.mark.skipif(not Path("/proc/self/mem").exists(), reason="needs Linux /proc")
def test_a_regular_file_whose_read_fails_is_named(tmp_path: Path) -> None:
    # /proc/self/mem is a regular file that cannot be read from offset 0, even by root
    with pytest.raises(MediaInputError, match=r"cannot read /proc/\d+/mem: Input/output error"):
        check_local_input("/proc/self/mem", tmp_path, IMAGE, None)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_an_unreadable_file_is_named(tmp_path: Path) -> None:
    path = write_png(tmp_path / "secret.png")
    path.chmod(0)
    with pytest.raises(MediaInputError, match=r"cannot read .*secret\.png: Permission denied"):
        check_local_input(str(path), tmp_path, IMAGE, None)


def test_size_limit_is_the_providers_or_the_kinds_default(tmp_path: Path) -> None:
    small = write_png(tmp_path / "small.png")
    with pytest.raises(MediaInputError, match=r"small.png is \d+ bytes, over the 10 bytes limit for an image"):
        check_local_input(str(small), tmp_path, IMAGE, max_bytes=10)
    assert check_local_input(str(small), tmp_path, IMAGE, max_bytes=small.stat().st_size)["size"] > 10
    big = tmp_path / "big.png"
    with big.open("wb") as handle:  # 10 MiB + 1 byte: one over the image default
        handle.write(png_bytes())
        handle.truncate(10 * MIB + 1)
    with pytest.raises(MediaInputError, match=r"big.png is 10.0 MiB \(10,485,761 bytes\), over the 10 MiB limit "
                                              "for an image"):
        check_local_input(str(big), tmp_path, IMAGE, None)
    video = tmp_path / "clip.mp4"
    with video.open("wb") as handle:  # the same size is fine for a video (100 MiB default)
        handle.write(MAGIC["video/mp4"])
        handle.truncate(10 * MIB + 1)
    assert check_local_input(str(video), tmp_path, CLIP, None)["media"] == "video"


def test_urls_are_syntax_checked_not_fetched() -> None:
    assert check_input_value("https://cdn.example.com/a/frame.PNG?x=1", Path("/"), IMAGE, None) == \
        {"url": "https://cdn.example.com/a/frame.PNG?x=1", "media": "image"}
    assert check_input_value("http://127.0.0.1:9/no-suffix", Path("/"), CLIP, None)["media"] == "video"
    for bad, reason in [("http://", "not a valid http(s) URL"), ("https://host:99999/a.png", "not a valid URL"),
                        ("https://exa mple.com/a.png", "not a valid http(s) URL"),
                        ("https://example.com/a.mp4", "looks like a video by its name, but image takes an image")]:
        with pytest.raises(MediaInputError) as caught:
            check_input_value(bad, Path("/"), IMAGE, None)
        assert reason in str(caught.value)


def test_bar_separated_lists_only_where_the_input_takes_several() -> None:
    assert split_cell(" a.png | b.png ", FRAMES) == ["a.png", "b.png"]
    with pytest.raises(MediaInputError, match=r"several files given \(\|\) but image takes one"):
        split_cell("a.png|b.png", IMAGE)
    with pytest.raises(MediaInputError, match="empty file name"):
        split_cell("a.png||b.png", FRAMES)
    assert split_cell("https://example.com/a.png?q=a|b", IMAGE) == ["https://example.com/a.png?q=a|b"]


def test_the_cache_reads_a_file_once_however_many_rows_name_it(tmp_path: Path) -> None:
    path = write_png(tmp_path / "a.png")
    cache = MediaCache()
    entries = [check_local_input("a.png", tmp_path, IMAGE, None, cache) for _ in range(50)]
    assert len(cache.digests) == 1 and len({e["sha256"] for e in entries}) == 1
    write_png(path, shade=9)  # changed on disk: a new stamp, read again
    os.utime(path, ns=(1, 1))
    assert check_local_input("a.png", tmp_path, IMAGE, None, cache)["sha256"] != entries[0]["sha256"]


def test_chunks_stream_the_file_in_pieces(tmp_path: Path) -> None:
    path = tmp_path / "data.bin"
    path.write_bytes(bytes(range(256)) * 10)
    chunks = list(iter_file_chunks(path, chunk=1000))
    assert [len(c) for c in chunks] == [1000, 1000, 560] and b"".join(chunks) == path.read_bytes()


# --- verify_unchanged -------------------------------------------------------------------------

def test_verify_unchanged_accepts_the_same_file_even_touched(tmp_path: Path) -> None:
    path = write_png(tmp_path / "a.png")
    entry = check_local_input(str(path), tmp_path, IMAGE, None)
    verify_unchanged(entry)
    os.utime(path, ns=(10**18, 10**18))  # touched, same bytes: the hash proves it unchanged
    verify_unchanged(entry)
    verify_unchanged({"url": "https://example.com/a.png", "media": "image"})


@pytest.mark.parametrize(("change", "message"), [
    ("same-size-edit", "changed since import (size/hash differ)"),
    ("grown", "changed since import (size/hash differ)"),
    ("deleted", "is gone"),
])
def test_verify_unchanged_detects_edits_and_deletions(tmp_path: Path, change: str, message: str) -> None:
    path = write_png(tmp_path / "a.png")
    entry = check_local_input(str(path), tmp_path, IMAGE, None)
    if change == "same-size-edit":
        write_png(path, shade=77)
        assert path.stat().st_size == entry["size"]
    elif change == "grown":
        write_png(path, width=8)
    else:
        path.unlink()
    with pytest.raises(TaskError) as caught:
        verify_unchanged(entry)
    assert caught.value.kind is ErrorKind.BAD_INPUT and not caught.value.retry
    assert message in str(caught.value.message) and str(path) in str(caught.value.message)


# --- store: inputs, uploads, migration ---------------------------------------------------------

def _stored(store: Store, task_id: str) -> Task:
    task = store.get(task_id)
    assert task is not None, f"no task {task_id!r} in the store"
    return task


def _task_with_inputs(tmp_path: Path) -> NewTask:
    entry = check_local_input(str(write_png(tmp_path / "first.png")), tmp_path, IMAGE, None)
    return NewTask(model="i2v", model_kind="poll", route="poll:rh", task_id="m1",
                   inputs={"first_frame": [entry]})


def test_inputs_and_uploads_are_stored_and_an_upload_survives_a_reaped_attempt(
        tmp_path: Path, store: Store) -> None:
    new = _task_with_inputs(tmp_path)
    store.enqueue("b", [new])
    task = store.claim("poll:rh", "me")[0]
    assert task.inputs_dict == new.inputs and task.uploads_dict == {}
    key = upload_key("rh", new.inputs["first_frame"][0])
    store.save_upload(task, key, "api/abc.png")
    store.finish_failure(task, ErrorKind.STALLED, "reaped", retry_at=0.0)  # the row moved on
    store.save_upload(task, "rh:other", "api/def.png")  # the late upload is still recorded
    saved = store.get("m1").uploads_dict
    assert saved[key]["name"] == "api/abc.png" and set(saved) == {key, "rh:other"}
    assert task.uploads_dict == saved
    assert fresh_upload_name(saved, key, now=saved[key]["at"] + 3600) == "api/abc.png"
    assert fresh_upload_name(saved, key, now=saved[key]["at"] + 20 * 3600) is None  # expired: upload again
    assert fresh_upload_name(saved, "rh:never", now=0) is None


def _save_uploads(location: str, prefix: str, count: int, start: multiprocessing.synchronize.Event) -> None:
    store = Store(location)
    task = _stored(store, "m1")
    start.wait()
    for i in range(count):
        store.save_upload(task, f"{prefix}:{i}", f"name-{prefix}-{i}")
    store.close()


def test_uploads_saved_by_two_processes_at_once_are_all_kept(tmp_path: Path, store: Store,
                                                              store_location: str) -> None:
    store.enqueue("b", [_task_with_inputs(tmp_path)])
    location = store_location
    start = multiprocessing.get_context("spawn").Event()
    procs = [multiprocessing.get_context("spawn").Process(target=_save_uploads, args=(location, name, 25, start))
             for name in ("p1", "p2")]
    for proc in procs:
        proc.start()
    start.set()
    for proc in procs:
        proc.join(timeout=120)
        assert proc.exitcode == 0
    saved = store.get("m1").uploads_dict
    assert set(saved) == {f"{p}:{i}" for p in ("p1", "p2") for i in range(25)}  # no merge lost a record


def test_an_old_database_gets_the_new_columns(tmp_path: Path, store: Store, store_location: str) -> None:
    store.enqueue("b", [NewTask(model="w", model_kind="api", route="api:x", task_id="old-1")])
    for column in ("inputs", "uploads"):  # the table as the previous release made it
        store.db.execute_sql(f'ALTER TABLE "task" DROP COLUMN "{column}"')
    store.db.execute_sql('DROP TABLE "schema_version"')  # ...from before schema versions
    assert "inputs" not in {c.name for c in store.db.get_columns("task")}
    location = store_location
    store.close()
    migrated = Store(location)
    try:
        old = _stored(migrated, "old-1")
        assert (old.inputs_dict, old.uploads_dict) == ({}, {})
        migrated.enqueue("b2", [_task_with_inputs(tmp_path)])
        assert _stored(migrated, "m1").inputs_dict["first_frame"][0]["mime"] == "image/png"
    finally:
        migrated.close()
    again = Store(location)  # opening a migrated database changes nothing
    try:
        assert _stored(again, "m1").inputs_dict["first_frame"][0]["mime"] == "image/png"
    finally:
        again.close()


def test_task_context_logs_the_file_name_of_an_upload(tmp_path: Path, store: Store,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    new = _task_with_inputs(tmp_path)
    store.enqueue("b", [new])
    task = store.claim("poll:rh", "me")[0]
    ctx = TaskContext(task=task, model=ModelConfig(name="i2v", kind="poll", provider="rh"), clock=Clock(),
                      store=store, output_dir=tmp_path / "out",
                      logger=logging.LoggerAdapter(logging.getLogger("mediaassist.test")))
    key = upload_key("rh", new.inputs["first_frame"][0])
    ctx.save_upload(key, "api/xyz.png")
    assert [log.line for log in store.logs("m1")] == ["attempt 1 started on poll:rh",  # the claim's line
                                                      "uploaded first.png as api/xyz.png"]
    assert _stored(store, "m1").uploads_dict[key]["name"] == "api/xyz.png"


# --- the importer's input columns ---------------------------------------------------------------

@pytest.fixture
def config() -> AppConfig:
    return parse_config({
        "providers": [{"name": "rh", "kind": "poll", "type": "runninghub", "base_url": "http://127.0.0.1:9",
                       "max_upload_bytes": 2000},
                      {"name": "sim", "kind": "api", "type": "simulated"}],
        "models": [
            {"name": "i2v", "kind": "poll", "provider": "rh", "workflow_id": "1",
             "inputs": {"first_frame": {"nodeId": "39", "fieldName": "image"},
                        "last_frame": {"nodeId": "40", "fieldName": "image", "required": False}}},
            {"name": "edit", "kind": "api", "provider": "sim",
             "inputs": {"image": {"multiple": True}, "mask": {"required": False}}},
            {"name": "writer", "kind": "api", "provider": "sim"},
        ],
    })


def test_input_columns_import_with_row_column_and_reason_errors(tmp_path: Path, config: AppConfig) -> None:
    write_png(tmp_path / "frames" / "a.png")
    write_png(tmp_path / "frames" / "b.png", shade=3)
    (tmp_path / "frames" / "fake.png").write_text("not an image")
    big = tmp_path / "frames" / "big.png"
    big.write_bytes(png_bytes(width=300))  # over the provider's 2000 bytes
    path = tmp_path / "batch.csv"
    path.write_text("\n".join([
        "task_id,model,prompt,first_frame,last_frame,image",
        "ok-1,i2v,,frames/a.png,frames/b.png,",                    # 2
        "ok-2,i2v,,https://cdn.example.com/f.jpg,,",               # 3 URL, optional last frame
        "bad-1,i2v,,frames/missing.png,,",                         # 4
        "bad-2,i2v,,frames/fake.png,,",                            # 5
        "bad-3,i2v,,frames/big.png,,",                             # 6
        "bad-4,i2v,,,frames/a.png,",                               # 7 required input empty
        "bad-5,i2v,,frames/a.png|frames/b.png,,",                  # 8 one file only
        "ok-3,edit,make it blue,,,frames/a.png|frames/b.png",      # 9 several where multiple
        "bad-6,writer,hello,frames/a.png,,",                       # 10 model takes no inputs
    ]) + "\n", encoding="utf-8")
    report = read_task_file(path, config)
    assert [t.task_id for t in report.tasks] == ["ok-1", "ok-2", "ok-3"]
    assert report.warnings == []
    errors = {e.row: e.reason for e in report.errors}
    frames = (tmp_path / "frames").resolve()
    assert errors == {
        4: f"column first_frame: file not found: {frames / 'missing.png'}",
        5: "column first_frame: fake.png is not an image file by its content (known: PNG, JPEG, GIF, WEBP, BMP, "
           "MP4, MOV, WEBM, MKV, MP3, WAV, M4A, AAC, OGG, FLAC)",
        6: f"column first_frame: big.png is {big.stat().st_size:,} bytes, over the 2,000 bytes limit for an image",
        7: "column first_frame: required by model 'i2v' (a file path or URL)",
        8: "column first_frame: several files given (|) but first_frame takes one",
        10: "column first_frame: model 'writer' takes no input 'first_frame' (its inputs: none)",
    }
    ok1, ok2, ok3 = report.tasks
    assert [e["path"] for e in ok1.inputs["first_frame"] + ok1.inputs["last_frame"]] == \
        [str(frames / "a.png"), str(frames / "b.png")]
    assert ok2.inputs == {"first_frame": [{"url": "https://cdn.example.com/f.jpg", "media": "image"}]}
    assert [Path(e["path"]).name for e in ok3.inputs["image"]] == ["a.png", "b.png"] and "mask" not in ok3.inputs


def test_json_input_values_may_be_lists_where_multiple(tmp_path: Path, config: AppConfig) -> None:
    write_png(tmp_path / "a.png")
    items = [{"model": "edit", "prompt": "x", "image": ["a.png", "a.png"]},
             {"model": "edit", "prompt": "x", "image": {"path": "a.png"}},
             {"model": "i2v", "first_frame": ["a.png"]}]
    path = tmp_path / "t.json"
    path.write_text(json.dumps(items))
    report = read_task_file(path, config)
    assert len(report.tasks) == 1 and len(report.tasks[0].inputs["image"]) == 2
    assert {e.row: e.reason for e in report.errors} == {
        2: "column image: must be a file path or URL, not an object",
        3: "column first_frame: must be a file path or URL, not a list"}


def test_the_image_to_video_example_imports_and_enqueues(store: Store) -> None:
    demo = parse_config({
        "providers": [{"name": "demo-runninghub", "kind": "poll", "type": "runninghub",
                       "base_url": "http://127.0.0.1:9"}],
        "models": [{"name": "demo-i2v", "kind": "poll", "provider": "demo-runninghub", "workflow_id": "1",
                    "prompt_node_id": "6",
                    "inputs": {"first_frame": {"nodeId": "39", "fieldName": "image"},
                               "last_frame": {"nodeId": "40", "fieldName": "image"}}}],
    })
    example = RESOURCES / "examples" / "image-to-video.csv"
    report = read_task_file(example, demo)
    assert (report.errors, report.warnings, len(report.tasks)) == ([], [], 3)
    store.enqueue(new_batch_id(example), report.tasks)
    for task in store.tasks():
        for name in ("first_frame", "last_frame"):
            (entry,) = task.inputs_dict[name]
            assert Path(entry["path"]).parent == (RESOURCES / "examples" / "frames").resolve()
            assert entry["mime"] == "image/png"


def test_ten_thousand_rows_naming_the_same_frames_read_each_file_once(tmp_path: Path, config: AppConfig,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    write_png(tmp_path / "a.png")
    write_png(tmp_path / "b.png", shade=5)
    path = tmp_path / "big.csv"
    path.write_text("model,first_frame,last_frame\n" + "i2v,a.png,b.png\n" * 10_000)
    from mediaassist.core import media
    reads: list[bytes] = []  # every file is sniffed (and hashed) in the one pass that opens it
    real_sniff = media.sniff_bytes

    def recording_sniff(head: bytes) -> tuple[str, str] | None:
        reads.append(head)
        return real_sniff(head)

    monkeypatch.setattr(media, "sniff_bytes", recording_sniff)
    report = read_task_file(path, config)
    assert len(report.tasks) == 10_000 and report.errors == []
    assert len(reads) == 2
    assert {e["sha256"] for t in report.tasks for e in t.inputs["first_frame"] + t.inputs["last_frame"]} == \
        {media.file_sha256(tmp_path / "a.png"), media.file_sha256(tmp_path / "b.png")}
