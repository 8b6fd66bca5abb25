"""Outputs as the operator's product, against the demo video server over real HTTP with real files:
names by template, the manifest, downloads that never cost a second generation, fan-out, reruns
and remixes with lineage, pick and deliver."""

from __future__ import annotations

import csv
import hashlib
import json
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from mediaassist.core.config import AppConfig, parse_config
from mediaassist.core.delivery import DeliveryError, deliver, known_batch, rebuild_manifest, rerun
from mediaassist.core.importer import derive_missing_ids, read_task_file
from mediaassist.core.messages import msg, render
from mediaassist.core.outputs import batch_folder, outputs_root
from mediaassist.core.store import SCHEMA_VERSION, NewTask, Store
from mediaassist.demo_servers.video_tasks_server import DEMO_VIDEO_KEY, VideoTaskDemoServer
from tests.harness import scheduler_running, task_log
from tests.helpers import SIM_CONFIG, write_csv
from tests.media_helpers import first_frame_size
from tests.poll_helpers import SPEED

ROUTE = "poll:gateway"


def video_config(base_url: str, outputs: str = "") -> AppConfig:
    return parse_config(tomllib.loads(f"""
[[providers]]
name = "gateway"
kind = "poll"
type = "task_api"
profile = "openai-videos"
base_url = "{base_url}"
api_key = "{DEMO_VIDEO_KEY}"
max_polling_tasks = 4
poll_interval_s = 5

[[models]]
name = "video"
kind = "poll"
provider = "gateway"
remote_model = "sora-2"
{outputs}
"""))


@pytest.fixture
def sora() -> Iterator[VideoTaskDemoServer]:
    with VideoTaskDemoServer("openai-videos", job_limit=4, seed=11) as server:
        yield server


def video_task(prompt: str, task_id: str, row: int, cells: dict[str, str] | None = None,
               **params: object) -> NewTask:
    return NewTask(model="video", model_kind="poll", route=ROUTE, prompt=prompt, task_id=task_id, row=row,
                   group=f"row-{row}", cells=cells or {}, params=dict(params))


async def run(store: Store, config: AppConfig, data_dir: Path, batch: str, tasks: list[NewTask]) -> None:
    store.enqueue(batch, tasks)
    async with scheduler_running(store, config, data_dir, SPEED) as sched:
        await sched.wait_for_batches([batch])


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def manifest(folder: Path) -> tuple[list[dict[str, object]], list[dict[str, str]]]:
    entries = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))["files"]
    with (folder / "manifest.csv").open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.DictReader(handle))
    return entries, rows


@pytest.mark.asyncio
async def test_files_land_where_the_template_says_with_a_manifest_that_matches_them(sora, store, data_dir,
                                                                                    tmp_path) -> None:
    out = tmp_path / "deliveries"
    config = video_config(sora.base_url, f"""
[outputs]
folder = "{out}"
naming = "{{col:shot}}/{{row:03}}_{{model}}_{{n}}{{ext}}"
""")
    batch = "shots-20260101T000000Z-0a1b2c3d"
    await run(store, config, data_dir, batch, [
        video_task("dawn", "t1", 2, {"shot": "镜头一"}),
        video_task("dusk", "t2", 2, {"shot": "镜头一"}),  # the same name: a -2, never an overwrite
        video_task("night", "t3", 4, {"shot": "CON"}),  # a Windows device name
        video_task("rain", "t4", 5, {"shot": "a:b?"}, seconds="8", size="1280x720"),
    ])
    folder = batch_folder(out, batch)
    first, second = (Path(store.result(i).file_list[0]) for i in ("t1", "t2"))
    assert {first, second} == {folder / "镜头一" / "002_video_1.mp4", folder / "镜头一" / "002_video_1-2.mp4"}
    assert Path(store.result("t3").file_list[0]) == folder / "_CON" / "004_video_1.mp4"
    assert Path(store.result("t4").file_list[0]) == folder / "a_b_" / "005_video_1.mp4"
    assert not (folder / "t1").exists()  # the task's download folder is gone once its files moved
    for task_id in ("t1", "t2", "t3", "t4"):
        path = Path(store.result(task_id).file_list[0])
        assert path.read_bytes().endswith(store.get(task_id).remote_id.encode())
    entries, rows = manifest(folder)
    assert len(entries) == len(rows) == 4
    for entry, row in zip(entries, rows, strict=True):
        path = folder / str(entry["file"])
        assert entry["bytes"] == path.stat().st_size and entry["sha256"] == sha256(path)
        assert row["sha256"] == entry["sha256"] and row["file"] == entry["file"]
        assert (entry["media"], entry["width"], entry["height"]) == ("video", 160, 90)
        assert entry["duration_s"] and 0.5 < float(entry["duration_s"]) < 2  # type: ignore[arg-type]
        assert entry["provider"] == "gateway" and entry["picked"] is False and entry["started_at"]
    rain = next(e for e in entries if e["task_id"] == "t4")
    assert rain["params"] == {"seconds": "8", "size": "1280x720"} and rain["row"] == 5 and rain["group"] == "row-5"
    assert sora.fake.create_bodies[-1]["seconds"] == "8"
    assert DEMO_VIDEO_KEY not in (folder / "manifest.json").read_text() + (folder / "manifest.csv").read_text()


@pytest.mark.asyncio
async def test_a_download_that_fails_twice_then_succeeds_costs_one_create(sora, store, data_dir) -> None:
    sora.inject("content", "http500", "cut")
    await run(store, video_config(sora.base_url), data_dir, "b1", [video_task("once", "d1", 2)])
    task = store.get("d1")
    assert task.state == "success"
    assert sora.stats()["creates"] == {"once": 1} and sora.stats()["calls"]["content"] == 3
    [path] = store.result("d1").file_list
    assert first_frame_size(Path(path)) == (160, 90)
    assert not list(Path(path).parent.glob("*.part"))
    log = task_log(store, "d1")
    assert "fetching it again (try 2 of 4)" in log and "fetching it again (try 3 of 4)" in log
    assert "expires in" in log  # expires_at on /v1/videos: the time left is said


@pytest.mark.asyncio
async def test_a_truncated_download_is_never_accepted_and_retry_fetches_without_generating(sora, store,
                                                                                           data_dir) -> None:
    sora.inject("content", *["short"] * 4)
    config = video_config(sora.base_url)
    await run(store, config, data_dir, "b1", [video_task("cut", "s1", 2)])
    task = store.get("s1")
    assert (task.state, task.error_kind) == ("failed", "download")
    assert task.remote_id and "remote id is kept" in task.error
    assert "cut short" in task_log(store, "s1")
    assert store.result("s1") is None and not list(data_dir.rglob("*.mp4"))  # no half file under any name
    assert store.retry(["s1"]) == 1
    await run(store, config, data_dir, "b1", [])
    task = store.get("s1")
    assert task.state == "success" and sora.stats()["creates"] == {"cut": 1}
    assert Path(store.result("s1").file_list[0]).read_bytes().endswith(task.remote_id.encode())


@pytest.mark.asyncio
async def test_an_expired_result_is_not_fetched_and_says_so(store, data_dir) -> None:
    with VideoTaskDemoServer("openai-videos", seed=12, result_ttl_s=0.0) as server:
        await run(store, video_config(server.base_url), data_dir, "b1", [video_task("late", "e1", 2)])
        downloads = server.stats()["downloads"]
    task = store.get("e1")
    assert (task.state, task.error_kind) == ("failed", "provider")
    assert "expired" in task.error and "run the task again" in task.error
    assert downloads == 0


@pytest.mark.asyncio
async def test_a_row_fans_out_to_three_lanes_sharing_its_group(store, data_dir, tmp_path) -> None:
    config = parse_config(tomllib.loads(SIM_CONFIG))
    path = write_csv(tmp_path / "fan.csv", [{"prompt": "a cat", "models": "writer|video|reasoner"},
                                            {"prompt": "a dog", "models": ""}])
    report = read_task_file(path, config, fan_out=["writer", "video"])
    derive_missing_ids(report)
    assert [(t.model, t.row, t.group) for t in report.tasks] == [
        ("writer", 2, "row-2"), ("video", 2, "row-2"), ("reasoner", 2, "row-2"),
        ("writer", 3, "row-3"), ("video", 3, "row-3")]
    assert len({t.task_id for t in report.tasks}) == 5
    store.enqueue("fan", report.tasks)
    async with scheduler_running(store, config, data_dir, 200.0) as sched:
        await sched.wait_for_batches(["fan"])
    tasks = store.tasks(["fan"])
    assert {t.route for t in tasks if t.group_key == "row-2"} == {"api:sim-api", "poll:sim-poll", "web:simulated"}
    assert all(t.state == "success" for t in tasks)


def test_a_file_with_only_a_models_column_fans_out_without_a_default_model(tmp_path) -> None:
    config = parse_config(tomllib.loads(SIM_CONFIG))
    report = read_task_file(write_csv(tmp_path / "fan.csv", [{"models": "writer|reasoner", "prompt": "a cat"}]), config)
    assert [(t.model, t.group) for t in report.tasks] == [("writer", "row-2"), ("reasoner", "row-2")]


def test_a_bad_model_in_a_fan_out_row_names_the_row_and_good_rows_still_import(tmp_path) -> None:
    config = parse_config(tomllib.loads(SIM_CONFIG))
    path = write_csv(tmp_path / "fan.csv", [{"prompt": "x", "models": "writer|nope"}, {"prompt": "y", "models": ""}])
    report = read_task_file(path, config, default_model="writer")
    assert [str(e) for e in report.errors] == ["row 2: unknown model 'nope' (known models: writer, video, reasoner)"]
    assert [t.model for t in report.tasks] == ["writer"]


@pytest.mark.asyncio
async def test_rerun_and_remix_keep_lineage_and_a_remix_never_creates(sora, store, data_dir) -> None:
    config = video_config(sora.base_url)
    await run(store, config, data_dir, "b1", [video_task("a fox", "p1", 3)])
    parent = store.get("p1")
    remix_id = rerun(store, config, "p1", prompt="the fox at night", remix=True)
    again_id = rerun(store, config, "p1", params={"seconds": "8"})
    await run(store, config, data_dir, "b1", [])
    remix, again = store.get(remix_id), store.get(again_id)
    assert (remix_id, again_id) == ("p1-r2", "p1-r3")
    assert (remix.parent_id, remix.group_key, remix.source_row, remix.state) == ("p1", "row-3", 3, "success")
    assert again.parent_id == "p1" and again.params_dict == {"seconds": "8"} and again.state == "success"
    stats = sora.stats()
    assert stats["remixes"] == [parent.remote_id]  # one remix call
    assert stats["creates"] == {"a fox": 2}  # the parent's create and the plain rerun's: the remix made none
    remixed = sora.fake.jobs[remix.remote_id]
    assert (remixed.remixed_from, remixed.prompt) == (parent.remote_id, "the fox at night")
    assert Path(store.result("p1").file_list[0]).exists()  # the parent's files stay
    with pytest.raises(DeliveryError, match="only a succeeded video can be remixed"):
        store.enqueue("b1", [video_task("no", "f1", 9)])
        rerun(store, config, "f1", remix=True)


@pytest.mark.asyncio
async def test_pick_and_deliver_copy_only_the_picked_files_with_their_own_manifest(sora, store, data_dir,
                                                                                   tmp_path) -> None:
    config = video_config(sora.base_url, '[outputs]\nnaming = "{row:02}_{task_id}{ext}"\n')
    await run(store, config, data_dir, "b1", [video_task("one", "k1", 2), video_task("two", "k2", 3)])
    root = outputs_root(config, data_dir)
    with pytest.raises(DeliveryError, match="no picked outputs"):
        deliver(store, config, root, "b1", tmp_path / "to", picked_only=True)
    assert store.set_picked("k2", None, True) == 1
    rebuild_manifest(store, config, root, "b1")
    entries, _rows = manifest(batch_folder(root, "b1"))
    assert [(e["task_id"], e["picked"]) for e in entries] == [("k1", False), ("k2", True)]
    first = deliver(store, config, root, "b1", tmp_path / "to", picked_only=True)
    second = deliver(store, config, root, "b1", tmp_path / "to", picked_only=True)
    assert [p.name for p in first.files + second.files] == ["03_k2.mp4", "03_k2-2.mp4"]  # never over a file
    entries, rows = manifest(tmp_path / "to")
    assert [e["file"] for e in entries] == ["03_k2-2.mp4"] and rows[0]["picked"] == "True"
    delivered = sha256(tmp_path / "to" / "03_k2-2.mp4")
    assert entries[0]["sha256"] == delivered == sha256(Path(store.result("k2").file_list[0]))
    with pytest.raises(DeliveryError, match="no batch 'nope'"):
        deliver(store, config, root, "nope", tmp_path / "to", picked_only=False)


def test_a_mistyped_batch_is_answered_with_the_batches_it_may_have_meant(store) -> None:
    """`outputs deliver shots` (the file's name, not the batch's id) once pointed at `status`,
    which lists lanes, not batches."""
    with pytest.raises(DeliveryError, match=r"holds no batch yet .*add --demo"):
        known_batch(store, "shots")
    shots, other = "shots-20261202T100000Z-0a1b2c3d", "other-20261202T110000Z-4e5f6a7b"
    store.enqueue(shots, [video_task("a", "s1", 2)])
    store.enqueue(other, [video_task("b", "o1", 2)])
    with pytest.raises(DeliveryError) as typed:
        known_batch(store, "shots")
    assert render(typed.value.message, "en") == f"no batch 'shots' (batches in this store, latest first: {shots})"
    with pytest.raises(DeliveryError) as unrelated:
        known_batch(store, "nope")
    latest_first = f"{other}, {shots}"
    assert render(unrelated.value.message, "zh_CN") == f"没有批次 'nope'（此存储中的批次，最新的在前：{latest_first}）"


def test_a_delivery_reads_in_chinese_without_a_space_before_its_verb() -> None:
    done = msg("{files} delivered to {folder} (with manifest.json and manifest.csv)",
               files=msg("{n} files", n=2), folder="/tmp/client")
    assert render(done, "zh_CN") == "2 个文件已交付到 /tmp/client（附 manifest.json 和 manifest.csv）"


def test_a_version_2_store_gets_the_outputs_columns_and_table(store_location: str) -> None:
    old = Store(store_location)
    old.enqueue("b", [video_task("before", "o1", 2)])
    for column in ("source_row", "group_key", "parent_id", "remix_of", "cells"):  # as the previous release made it
        old.db.execute_sql(f'ALTER TABLE "task" DROP COLUMN "{column}"')
    old.db.execute_sql('DROP TABLE "output"')
    old.db.execute_sql("UPDATE schema_version SET version = 2")
    old.close()
    store = Store(store_location)
    try:
        task = store.get("o1")
        assert (task.source_row, task.group_key, task.parent_id, task.cells_dict) == (None, None, None, {})
        [claimed] = store.claim(ROUTE, "test", 1)
        assert store.finish_success(claimed, None, ["/x/a.mp4"], None, [])
        assert store.outputs_of(["o1"]) == {} and store.set_picked("o1", None, True) == 0
        assert store.db.execute_sql("SELECT version FROM schema_version").fetchone()[0] == SCHEMA_VERSION
    finally:
        store.close()
