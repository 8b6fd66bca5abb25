"""Media inputs on the poll lane: RunningHub uploads (both routes) before the create, the fileName
in the node (never a local path), no second upload on retry or restart while fresh, re-upload
once stale; task-API profiles send inputs as multipart parts. Real HTTP, real SQLite."""

from __future__ import annotations

import hashlib
import json
import shutil
import signal
import sqlite3
import time
import tomllib
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mediaassist.core.config import AppConfig, parse_config
from mediaassist.core.importer import new_batch_id, read_task_file
from mediaassist.core.media import UPLOAD_FRESH_S
from mediaassist.core.options import DB_NAME
from mediaassist.core.paths import RESOURCES
from mediaassist.core.store import Store, Task, Upload
from mediaassist.demo_servers.runninghub_server import DEMO_API_KEY, RunningHubDemoServer
from mediaassist.demo_servers.video_tasks_server import DEMO_VIDEO_KEY, VideoTaskDemoServer
from tests import poll_helpers
from tests.harness import scheduler_running, task_log, wait_until
from tests.helpers import cli, cli_popen, write_config
from tests.poll_helpers import SPEED, states

FRAMES = RESOURCES / "examples" / "frames"


@pytest.fixture
def server() -> Iterator[RunningHubDemoServer]:
    with RunningHubDemoServer({DEMO_API_KEY: 100}, queued_s=(0.1, 0.2), run_s=(0.3, 0.5), seed=11) as srv:
        yield srv


@pytest.fixture
def batch_file(tmp_path: Path) -> Path:
    """The shipped image-to-video example, copied with its frames (tests may change a frame)."""
    shutil.copytree(FRAMES, tmp_path / "frames")
    target = tmp_path / "image-to-video.csv"
    shutil.copy(RESOURCES / "examples" / "image-to-video.csv", target)
    return target


def rh_config_text(url: str, upload_api: str | None = None, key: str = DEMO_API_KEY) -> str:
    """The image-to-video test config on the demo RunningHub (``upload_api`` left at its default if None)."""
    upload_line = f'upload_api = "{upload_api}"\n' if upload_api else ""
    return f"""
[[providers]]
name = "rh"
kind = "poll"
type = "runninghub"
base_url = "{url}"
api_key = "{key}"
{upload_line}max_polling_tasks = 3

[[models]]
name = "demo-i2v"
kind = "poll"
provider = "rh"
workflow_id = "1904136902449209347"
prompt_node_id = "6"
inputs.first_frame = {{ nodeId = "39", fieldName = "image" }}
inputs.last_frame = {{ nodeId = "40", fieldName = "image" }}
"""


def rh_config(url: str, upload_api: str = "v2", key: str = DEMO_API_KEY) -> AppConfig:
    return parse_config(tomllib.loads(rh_config_text(url, upload_api, key)))


def import_batch(store: Store, path: Path, config: AppConfig) -> tuple[str, list[str]]:
    report = read_task_file(path, config)
    assert report.errors == [] and len(report.tasks) == 3
    batch = new_batch_id(path)
    ids, _ = store.enqueue(batch, report.tasks)
    return batch, ids


@pytest.mark.asyncio
@pytest.mark.parametrize("upload_api, route", [("v2", "v2"), ("legacy", "legacy")])
async def test_image_to_video_uploads_each_frame_once_and_sends_the_file_names(
        server, store, data_dir, batch_file, upload_api, route) -> None:
    config = rh_config(server.url, upload_api)
    batch, ids = import_batch(store, batch_file, config)
    async with scheduler_running(store, config, data_dir, SPEED) as sched:
        await sched.wait_for_batches([batch])
    assert states(store, ids) == ["success"] * 3
    stats = server.stats()
    assert len(stats["uploads"]) == 6 and {u["route"] for u in stats["uploads"]} == {route}
    if route == "legacy":
        assert {u["file_type"] for u in stats["uploads"]} == {"input"}
    uploaded = {u["name"] for u in stats["uploads"]}
    for nodes in stats["create_nodes"]:
        frames = {n["nodeId"]: n["fieldValue"] for n in nodes if n["fieldName"] == "image"}
        assert set(frames) == {"39", "40"} and set(frames.values()) <= uploaded  # never a local path
    task = store.get(ids[0])
    assert len(task.uploads_dict) == 2
    logs = task_log(store, ids[0])
    assert logs.index("uploaded harbor-dawn.png as ") < logs.index("created RunningHub task")


@pytest.mark.asyncio
async def test_a_retry_reuses_the_fresh_uploads_and_a_stale_one_is_uploaded_again(
        server, store, data_dir, batch_file) -> None:
    config = rh_config(server.url)
    batch, ids = import_batch(store, batch_file, config)
    # The first task's create fails 4 times with "nothing created": its attempt ends, a retry follows.
    server.inject("create", 1005, 1005, 1005, 1005)
    async with scheduler_running(store, config, data_dir, SPEED) as sched:
        await sched.wait_for_batches([batch])
    first = store.get(ids[0])
    assert (first.state, first.attempt) == ("success", 2)
    assert len(server.stats()["uploads"]) == 6  # the retry uploaded nothing again
    assert "was uploaded as " in task_log(store, ids[0])

    # Expire one of the saved uploads, then run that task again: only that frame goes up again.
    uploads = first.uploads_dict
    stale_key = sorted(uploads)[0]
    uploads[stale_key]["at"] -= UPLOAD_FRESH_S + 60
    Task.update(uploads=json.dumps(uploads)).where(Task.task_id == ids[0]).execute()
    Upload.update(uploaded_at=uploads[stale_key]["at"]).where(Upload.key == stale_key).execute()  # the same upload
    assert store.retry([ids[0]]) == 1
    async with scheduler_running(store, config, data_dir, SPEED) as sched:
        await sched.wait_for_batches([batch])
    assert store.get(ids[0]).state == "success"
    assert len(server.stats()["uploads"]) == 7


@pytest.mark.asyncio
async def test_restart_while_backing_off_after_the_upload_never_uploads_again(
        server, store, data_dir, batch_file) -> None:
    config = rh_config(server.url)
    batch, ids = import_batch(store, batch_file, config)
    server.inject("create", *[421] * 50)  # "full": the head waits after its uploads
    async with scheduler_running(store, config, data_dir, SPEED):
        await wait_until(lambda: len(store.get(ids[0]).uploads_dict) == 2 and server.stats()["rejects"].get("421"))
    assert store.get(ids[0]).state == "pending" and store.get(ids[0]).remote_id is None
    server.fake.clear_faults()
    async with scheduler_running(store, config, data_dir, SPEED) as sched:
        await sched.wait_for_batches([batch])
    assert states(store, ids) == ["success"] * 3
    assert len(server.stats()["uploads"]) == 6


@pytest.mark.asyncio
async def test_a_frame_changed_after_import_fails_before_any_upload(server, store, data_dir, batch_file) -> None:
    config = rh_config(server.url)
    batch, ids = import_batch(store, batch_file, config)
    frame = batch_file.parent / "frames" / "harbor-dawn.png"
    frame.write_bytes(frame.read_bytes() + b"edited")
    async with scheduler_running(store, config, data_dir, SPEED) as sched:
        await sched.wait_for_batches([batch])
    task = store.get(ids[0])
    assert (task.state, task.error_kind) == ("failed", "bad_input")
    assert "harbor-dawn.png changed since import" in task.error
    assert not any(u["file_name"] == "harbor-dawn.png" for u in server.stats()["uploads"])
    assert states(store, ids[1:]) == ["success"] * 2


@pytest.mark.asyncio
async def test_upload_over_the_size_limit_is_bad_input_and_upload_full_backs_off(
        store, data_dir, batch_file) -> None:
    with RunningHubDemoServer({DEMO_API_KEY: 100}, queued_s=(0.1, 0.1), run_s=(0.3, 0.3),
                              max_upload_bytes=600) as server:  # city-night.png is 1020 bytes
        server.inject("upload", 421)
        config = rh_config(server.url)
        batch, ids = import_batch(store, batch_file, config)
        async with scheduler_running(store, config, data_dir, SPEED) as sched:
            await sched.wait_for_batches([batch])
        harbor, cat, city = (store.get(i) for i in ids)
        assert harbor.state == cat.state == "success"
        assert (city.state, city.error_kind) == ("failed", "bad_input")
        assert "upload of city-night.png: 1008 File size limit exceeded (too large for RunningHub)" in city.error
        assert "RunningHub is full (upload: 421" in task_log(store, ids[0])
        assert server.stats()["creates"].keys() == {harbor.prompt, cat.prompt}


@pytest.mark.asyncio
async def test_a_create_naming_a_local_path_is_refused_by_the_demo_server(server, store, data_dir) -> None:
    """The demo RunningHub keeps the client honest: a path in an image node is 803."""
    config = rh_config(server.url)
    config.models[0].inputs = {}
    batch, ids = poll_helpers.enqueue(store, ["raw path"], route="poll:rh", model="demo-i2v", params={
        "node_info_list": [{"nodeId": "39", "fieldName": "image", "fieldValue": str(FRAMES / "cat-left.png")}]})
    async with scheduler_running(store, config, data_dir, SPEED) as sched:
        await sched.wait_for_batches([batch])
    task = store.get(ids[0])
    assert (task.state, task.error_kind) == ("failed", "bad_input") and "803" in task.error
    assert server.stats()["rejects"]["803"] == 1


@pytest.mark.asyncio
async def test_openai_videos_sends_the_first_frame_as_input_reference(store, data_dir, batch_file) -> None:
    with VideoTaskDemoServer("openai-videos", job_limit=3, seed=2) as server:
        config = parse_config(tomllib.loads(f"""
[[providers]]
name = "gw"
kind = "poll"
type = "task_api"
profile = "openai-videos"
base_url = "{server.base_url}"
api_key = "{DEMO_VIDEO_KEY}"

[[models]]
name = "demo-i2v"
kind = "poll"
provider = "gw"
remote_model = "sora-2"
inputs.first_frame = {{ field = "input_reference" }}
inputs.last_frame = {{ required = false, field = "input_reference" }}
"""))
        path = batch_file.parent / "one.csv"
        path.write_text("prompt,model,first_frame\nharbor at dawn,demo-i2v,frames/harbor-dawn.png\n", encoding="utf-8")
        report = read_task_file(path, config)
        assert report.errors == []
        ids, _ = store.enqueue("b1", report.tasks)
        async with scheduler_running(store, config, data_dir, SPEED) as sched:
            await sched.wait_for_batches(["b1"])
        assert states(store, ids) == ["success"]
        size = (FRAMES / "harbor-dawn.png").stat().st_size
        assert server.fake.create_bodies == [{"model": "sora-2", "prompt": "harbor at dawn",
                                              "input_reference": f"<file harbor-dawn.png {size} bytes>"}]


# --- kill -9 of a real `mediaassist run` inside the upload/create window ----------------------

def _run_args(server: RunningHubDemoServer, batch_file: Path, tmp_path: Path) -> tuple[str, ...]:
    config = write_config(tmp_path / "rh.toml", rh_config_text(server.url))
    return ("run", str(batch_file), "--config", str(config), "--data-dir", str(tmp_path / "data"),
            "--speed", "50", "--json")


def _killed_while_held(server: RunningHubDemoServer, args: tuple[str, ...]) -> None:
    """Start a run, SIGKILL it while the server holds one of its requests, then let the request go."""
    first = cli_popen(*args)
    try:
        deadline = time.monotonic() + 60
        while server.stats()["held"] == 0:
            assert first.poll() is None, first.communicate()
            assert time.monotonic() < deadline, "the run never reached the held request"
            time.sleep(0.02)
    finally:
        first.send_signal(signal.SIGKILL)
        first.communicate(timeout=30)
    server.fake.release()  # the held request is dropped without an answer


def _saved_uploads(data: Path) -> dict[str, tuple[dict[str, Any], str | None]]:
    with sqlite3.connect(data / DB_NAME) as db:
        rows = db.execute("select task_id, uploads, remote_id from task").fetchall()
    return {task_id: (json.loads(uploads), remote_id) for task_id, uploads, remote_id in rows}


def _frame_hashes(batch_file: Path) -> Counter[str]:
    return Counter(hashlib.sha256(p.read_bytes()).hexdigest() for p in (batch_file.parent / "frames").glob("*.png"))


def _finish(args: tuple[str, ...], server: RunningHubDemoServer) -> dict[str, Any]:
    second = cli(*args)
    assert second.returncode == 0, second.stderr
    summary: dict[str, Any] = json.loads(second.stdout)
    assert (summary["success"], summary["total"]) == (3, 3)
    stats = server.stats()
    assert sorted(stats["creates"].values()) == [1, 1, 1]  # exactly one create per task
    uploaded = {u["name"] for u in stats["uploads"]}
    for nodes in stats["create_nodes"]:
        assert {n["fieldValue"] for n in nodes if n["fieldName"] == "image"} <= uploaded
    return stats


def test_kill_between_upload_and_create_never_uploads_again(server, batch_file, tmp_path) -> None:
    args = _run_args(server, batch_file, tmp_path)
    server.inject("create", "hold")  # the first create is on the wire when the run dies
    _killed_while_held(server, args)
    saved = _saved_uploads(tmp_path / "data")
    head = [task for task, (uploads, _remote) in saved.items() if uploads]
    assert head == ["i2v-001"] and saved["i2v-001"][1] is None  # both frames saved, nothing created
    assert {u["name"] for u in server.stats()["uploads"]} == {r["name"] for r in saved["i2v-001"][0].values()}
    assert server.stats()["creates"] == {}

    # Its reply never came: the service may have made (and billed) it, so the next run does not
    # send it again by itself -- it says where to look. The other tasks run.
    second = cli(*args)
    assert second.returncode == 1, second.stderr
    assert json.loads(second.stdout)["success"] == 2 and sorted(server.stats()["creates"].values()) == [1, 1]
    with sqlite3.connect(tmp_path / "data" / DB_NAME) as db:
        (error,) = db.execute("select error from task where task_id = 'i2v-001'").fetchone()
    assert "may have created the task" in error and "check" in error
    # The operator looked and asks for it again: created once, with the frames uploaded before.
    assert cli("retry", "i2v-001", *args[2:6]).returncode == 0
    stats = _finish(args, server)
    assert Counter(u["sha256"] for u in stats["uploads"]) == _frame_hashes(batch_file)  # each frame once
    assert _saved_uploads(tmp_path / "data")["i2v-001"][0] == saved["i2v-001"][0]  # the same names reused


def test_kill_during_an_upload_uploads_that_file_once_more_and_nothing_else(server, batch_file, tmp_path) -> None:
    args = _run_args(server, batch_file, tmp_path)
    server.inject("upload", "hold")  # the server has the first frame, its reply never arrives
    _killed_while_held(server, args)
    lost = server.stats()["uploads"]
    assert len(lost) == 1 and lost[0]["file_name"] == "harbor-dawn.png"
    assert _saved_uploads(tmp_path / "data")["i2v-001"] == ({}, None)  # the name never reached the task

    stats = _finish(args, server)
    # The design: an upload whose reply was lost is repeated (it costs nothing remotely); the
    # name it got is never used, and every other frame goes up exactly once.
    expected = _frame_hashes(batch_file) + Counter([lost[0]["sha256"]])
    assert Counter(u["sha256"] for u in stats["uploads"]) == expected
    assert lost[0]["name"] not in {n["fieldValue"] for nodes in stats["create_nodes"] for n in nodes}


@pytest.mark.asyncio
async def test_a_file_named_by_several_tasks_is_uploaded_once_per_provider_while_fresh(
        server, store, data_dir, batch_file) -> None:
    """Every row names the same two frames: two uploads in all, not two per task; an upload past
    its freshness goes up again, once."""
    rows = batch_file.read_text(encoding="utf-8").splitlines()
    same = [rows[0]] + [f"shared-{n},demo-i2v,the same two frames {n},frames/cat-left.png,frames/cat-right.png"
                        for n in range(4)]
    batch_file.write_text("\n".join(same) + "\n", encoding="utf-8")
    config = rh_config(server.url)
    report = read_task_file(batch_file, config)
    assert report.errors == [] and len(report.tasks) == 4
    ids, _ = store.enqueue("b", report.tasks)
    async with scheduler_running(store, config, data_dir, SPEED) as sched:
        await sched.wait_for_batches(["b"])
    assert states(store, ids) == ["success"] * 4
    stats = server.stats()
    assert len(stats["uploads"]) == 2  # one per file, counted at the service
    names = {frozenset(n["fieldValue"] for n in nodes if n["fieldName"] == "image") for nodes in stats["create_nodes"]}
    assert len(names) == 1  # every create sent the same two uploaded names
    assert any("for another task; not uploading it again" in task_log(store, i) for i in ids)

    # A day on, the uploads have expired at the service: the next task uploads them again, once.
    Upload.update(uploaded_at=Upload.uploaded_at - UPLOAD_FRESH_S - 60).execute()
    more = read_task_file(batch_file, config).tasks
    for n, task in enumerate(more):
        task.task_id = f"later-{n}"
    later, _ = store.enqueue("b2", more)
    async with scheduler_running(store, config, data_dir, SPEED) as sched:
        await sched.wait_for_batches(["b2"])
    assert states(store, later) == ["success"] * 4
    assert len(server.stats()["uploads"]) == 4
