"""Task-API profiles on the poll lane: both shipped profiles against their demo servers over real
HTTP, with the real scheduler and SQLite; and profile validation (config errors naming the key)."""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mediaassist.core.config import AppConfig, parse_config
from mediaassist.core.errors import ConfigError
from mediaassist.core.store import Store
from mediaassist.demo_servers.video_tasks_server import DEMO_VIDEO_KEY, VideoTaskDemoServer
from tests import poll_helpers
from tests.harness import scheduler_running, task_log, wait_until
from tests.helpers import MINIMAL_TASK_PROFILE
from tests.media_helpers import first_frame_size
from tests.poll_helpers import SPEED, states

ROUTE = "poll:gateway"


def config_for(base_url: str, profile: str, *, key: str = DEMO_VIDEO_KEY, limit: int = 4,
               defaults: str = "", extra: str = "") -> AppConfig:
    text = f"""
[[providers]]
name = "gateway"
kind = "poll"
type = "task_api"
profile = "{profile}"
base_url = "{base_url}"
api_key = "{key}"
max_polling_tasks = {limit}
poll_interval_s = 5
{extra}

[[models]]
name = "video"
kind = "poll"
provider = "gateway"
remote_model = "sora-2"
{defaults}
"""
    return parse_config(tomllib.loads(text))


def enqueue(store: Store, prompts: list[str], params: dict[str, Any] | None = None) -> tuple[str, list[str]]:
    return poll_helpers.enqueue(store, prompts, route=ROUTE, params=params)


@pytest.fixture
def sora() -> Iterator[VideoTaskDemoServer]:
    with VideoTaskDemoServer("openai-videos", job_limit=2, seed=3) as server:
        yield server


@pytest.fixture(params=["newapi", "newapi-alt", "huawei"])
def newapi(request: pytest.FixtureRequest) -> Iterator[VideoTaskDemoServer]:
    with VideoTaskDemoServer("newapi-video", words=request.param, job_limit=3, seed=5) as server:
        yield server


@pytest.mark.asyncio
async def test_openai_videos_fifo_under_job_limit_429_and_content_download(sora, store, data_dir) -> None:
    prompts = [f"scene {n}" for n in range(6)]
    batch, ids = enqueue(store, prompts)
    config = config_for(sora.base_url, "openai-videos", defaults='defaults = { seconds = "4", size = "1280x720" }')
    async with scheduler_running(store, config, data_dir, SPEED) as sched:
        await sched.wait_for_batches([batch])
    stats = sora.stats()
    assert states(store, ids) == ["success"] * 6
    assert stats["create_order"] == prompts  # FIFO kept while the head backed off on 429
    assert stats["rejects"]["429"] > 0 and stats["max_in_flight"] <= 2
    assert sora.fake.create_bodies[0] == {"model": "sora-2", "prompt": "scene 0", "seconds": "4", "size": "1280x720"}
    for task_id in ids:
        task = store.get(task_id)
        [path] = store.result(task_id).file_list
        assert Path(path).name == "00_content.mp4"
        assert Path(path).read_bytes().endswith(task.remote_id.encode())  # fetched with the key
        assert first_frame_size(Path(path)) == (160, 90)  # a real clip, as the gallery shows it
    assert "openai-videos is full (HTTP 429" in task_log(store, ids[2]) + task_log(store, ids[3])


@pytest.mark.asyncio
async def test_429_without_retry_after_backs_off_with_the_profile_delay(store, data_dir) -> None:
    with VideoTaskDemoServer("openai-videos", job_limit=1, retry_after=False, seed=4) as server:
        batch, ids = enqueue(store, ["one", "two", "three"])
        async with scheduler_running(store, config_for(server.base_url, "openai-videos"), data_dir, SPEED) as sched:
            await sched.wait_for_batches([batch])
        assert states(store, ids) == ["success"] * 3
        assert server.stats()["rejects"]["429"] > 0 and server.stats()["max_in_flight"] == 1
        assert server.stats()["creates"] == {"one": 1, "two": 1, "three": 1}


@pytest.mark.asyncio
async def test_newapi_video_maps_every_status_word_and_downloads_without_the_key(newapi, store, data_dir) -> None:
    batch, ids = enqueue(store, [f"clip {n}" for n in range(4)], params={"duration": 5})
    async with scheduler_running(store, config_for(newapi.base_url, "newapi-video"), data_dir, SPEED) as sched:
        await sched.wait_for_batches([batch])
    assert states(store, ids) == ["success"] * 4
    stats = newapi.stats()
    assert stats["downloads"] == 4 and stats["files_with_key"] == 0  # a storage host never sees the key
    assert newapi.fake.create_bodies[0] == {"model": "sora-2", "prompt": "clip 0", "duration": 5}
    for task_id in ids:
        [path] = store.result(task_id).file_list
        assert Path(path).read_bytes().endswith(store.get(task_id).remote_id.encode())


@pytest.mark.asyncio
async def test_failed_canceled_and_expired_jobs_end_as_such(store, data_dir) -> None:
    with VideoTaskDemoServer("newapi-video", seed=6) as server:
        batch, ids = enqueue(store, ["bad #fail", "stopped #cancel", "late #expire", "fine"])
        async with scheduler_running(store, config_for(server.base_url, "newapi-video"), data_dir, SPEED) as sched:
            await sched.wait_for_batches([batch])
    failed, canceled, expired, fine = (store.get(i) for i in ids)
    assert (failed.state, failed.error_kind, failed.attempt) == ("failed", "provider", 1)
    assert "generation failed (demo)" in failed.error
    assert (canceled.state, canceled.error_kind) == ("canceled", "canceled")
    assert "was canceled remotely" in canceled.error
    assert (expired.state, expired.error_kind) == ("failed", "provider") and "expired" in expired.error
    assert fine.state == "success"


async def cancel_a_running_job(profile: str, store: Store, data_dir: Path) -> tuple[str, dict[str, Any]]:
    """Start one long job on the profile's demo server, cancel it; (task id, server stats)."""
    with VideoTaskDemoServer(profile, run_s=(30.0, 30.0), seed=7) as server:
        batch, ids = enqueue(store, ["long one"])
        async with scheduler_running(store, config_for(server.base_url, profile), data_dir, SPEED) as sched:
            await wait_until(lambda: store.get(ids[0]).remote_id is not None)
            store.cancel(ids)
            sched.wake()
            await sched.wait_for_batches([batch])
        return ids[0], server.stats()


@pytest.mark.asyncio
async def test_operator_cancel_deletes_the_job_and_verifies_it_is_gone(store, data_dir) -> None:
    task_id, stats = await cancel_a_running_job("openai-videos", store, data_dir)
    task = store.get(task_id)
    assert (task.state, task.error) == ("canceled", "canceled by operator")
    assert stats["cancels"] == [task.remote_id]
    assert "canceled remotely (verified)" in task_log(store, task_id)


@pytest.mark.asyncio
async def test_cancel_on_a_profile_without_a_cancel_request_says_the_job_may_still_run(store, data_dir) -> None:
    task_id, _stats = await cancel_a_running_job("newapi-video", store, data_dir)
    task = store.get(task_id)
    assert task.state == "canceled"
    assert "local cancel only; remote cancel failed (newapi-video has no cancel request)" in task.error
    assert f"/video/generations/{task.remote_id}" in task.error


@pytest.mark.asyncio
async def test_wrong_key_pauses_the_lane_after_one_create(sora, store, data_dir) -> None:
    batch, ids = enqueue(store, ["a", "b", "c"])
    config = config_for(sora.base_url, "openai-videos", key="sk-wrong-0123456789")
    async with scheduler_running(store, config, data_dir, SPEED) as sched:
        await sched.wait_for_batches([batch])
    assert "API key rejected (HTTP 401 Incorrect API key provided.)" in store.paused_lanes()[ROUTE]
    assert states(store, ids) == ["pending"] * 3
    assert sora.stats()["calls"]["create"] == 1


@pytest.mark.asyncio
async def test_invalid_create_is_bad_input_with_the_service_message(sora, store, data_dir) -> None:
    batch, ids = enqueue(store, ["five seconds"], params={"seconds": "5"})
    async with scheduler_running(store, config_for(sora.base_url, "openai-videos"), data_dir, SPEED) as sched:
        await sched.wait_for_batches([batch])
    task = store.get(ids[0])
    assert (task.state, task.error_kind, task.attempt) == ("failed", "bad_input", 1)
    assert "HTTP 400 Invalid value for 'seconds': '5'" in task.error
    assert sora.stats()["jobs"] == 0


@pytest.mark.asyncio
async def test_lost_create_reply_is_never_resubmitted(sora, store, data_dir) -> None:
    sora.inject("create", "lost")
    batch, ids = enqueue(store, ["lost", "next"])
    async with scheduler_running(store, config_for(sora.base_url, "openai-videos"), data_dir, SPEED) as sched:
        await sched.wait_for_batches([batch])
    lost, nxt = store.get(ids[0]), store.get(ids[1])
    assert (lost.state, lost.error_kind) == ("failed", "network")
    assert "not resubmitted automatically" in lost.error
    assert nxt.state == "success"
    assert sora.stats()["creates"] == {"lost": 1, "next": 1}


@pytest.mark.asyncio
async def test_poll_faults_are_tolerated_and_progress_is_logged_in_steps(store, data_dir) -> None:
    with VideoTaskDemoServer("openai-videos", run_s=(1.5, 1.5), seed=9) as server:
        server.inject("status", "http500", "reset", "nonjson", "429", "slow:0.3")
        server.inject("content", "http500")
        batch, ids = enqueue(store, ["bumpy"])
        async with scheduler_running(store, config_for(server.base_url, "openai-videos"), data_dir, SPEED) as sched:
            await sched.wait_for_batches([batch])
        task = store.get(ids[0])
        assert (task.state, task.attempt) == ("success", 1)
        assert server.stats()["creates"] == {"bumpy": 1} and server.stats()["calls"]["content"] == 2
        logs = task_log(store, ids[0])
        assert "in_progress" in logs and "completed" in logs
        progress_lines = [line for line in logs.splitlines() if line.endswith(" %")]
        assert 1 <= len(progress_lines) <= 5  # in steps, not a store write per poll


@pytest.mark.asyncio
async def test_the_key_is_never_written_anywhere(sora, store, data_dir) -> None:
    sora.inject("create", "http500")  # a 5xx on create: the reply is unusable, not resubmitted
    batch, ids = enqueue(store, ["first", "second"])
    async with scheduler_running(store, config_for(sora.base_url, "openai-videos"), data_dir, SPEED) as sched:
        await sched.wait_for_batches([batch])
    written = "".join(task_log(store, i) + (store.get(i).error or "") + (store.result(i).text if store.result(i)
                                                                          else "") for i in ids)
    assert DEMO_VIDEO_KEY not in written and DEMO_VIDEO_KEY[:12] not in written
    assert DEMO_VIDEO_KEY.encode() not in (data_dir / "mediaassist.sqlite3").read_bytes()


# --- profile validation: config errors name the key --------------------------------------------

def provider_table(profile: str) -> str:
    return f"""
[[providers]]
name = "gw"
kind = "poll"
type = "task_api"
profile = "{profile}"
base_url = "http://127.0.0.1:9/v1"
"""


@pytest.mark.parametrize("change, key, reason", [
    (("[create]\npath = \"/jobs\"", "[create]\npath = \"jobs\""), "create.path", "must start with /"),
    (("path = \"/jobs/{id}\"", "path = \"/jobs\""), "status.path", "must contain {id}"),
    (("success = [\"DONE\"]", "sucess = [\"DONE\"]"), "status.states.sucess", "unknown state"),
    (("failed = [\"ERR\"]", "failed = [\"DONE\"]"), "status.states.failed", "already mapped to success"),
    (("prompt = \"{prompt}\"", "prompt = \"{text}\""), "create.fields.prompt", "unknown placeholder"),
    (("remote_id = \"job.id\"", "remote_id = 7"), "create.remote_id", "dotted path"),
    (("urls = \"job.outputs[0].url\"", "urlz = \"job.outputs[0].url\""), "result.urlz", "unknown key"),
])
def test_invalid_operator_profile_is_a_config_error_naming_the_key(tmp_path, change, key, reason) -> None:
    profile = tmp_path / "mine.toml"
    assert change[0] in MINIMAL_TASK_PROFILE
    profile.write_text(MINIMAL_TASK_PROFILE.replace(*change), encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        parse_config(tomllib.loads(provider_table(str(profile))))
    message = str(caught.value)
    assert message.startswith(f"providers[0].profile (mine.toml): {key}: ")
    assert reason in message


def test_operator_profile_path_is_relative_to_the_config_and_loads(tmp_path) -> None:
    (tmp_path / "mine.toml").write_text(MINIMAL_TASK_PROFILE, encoding="utf-8")
    config = parse_config(tomllib.loads(provider_table("mine.toml")), tmp_path)
    profile = config.providers[0].task_profile
    assert profile is not None and profile.name == "mine" and profile.states == {"done": "success", "err": "failed"}


@pytest.mark.parametrize("profile, expected", [
    ("sora-videos", "no shipped profile 'sora-videos' (shipped: dashscope-wan, gemini-veo, kling, minimax-hailuo, "
                    "newapi-video, openai-videos, runway, vidu, volcengine-seedance;"),
    ("./missing.toml", "profile file"),
])
def test_unknown_profile_names_what_exists(tmp_path, profile, expected) -> None:
    with pytest.raises(ConfigError, match=r"providers\[0\]\.profile") as caught:
        parse_config(tomllib.loads(provider_table(profile)), tmp_path)
    assert expected in str(caught.value)


def test_profile_is_only_for_task_api_providers() -> None:
    text = provider_table("openai-videos").replace('type = "task_api"', 'type = "runninghub"')
    with pytest.raises(ConfigError, match=r"providers\[0\]\.profile: only for type = \"task_api\""):
        parse_config(tomllib.loads(text))
