"""kill -9 in the middle of a poll batch, then run again: every task is created exactly once --
on RunningHub and on both shipped task-API profiles.

The fake RunningHub runs in its own process and the CLI in another, so nothing but the SQLite
file and the remote ids in it survive the kill.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mediaassist.core.store import Store
from mediaassist.demo_servers.runninghub_server import DEMO_API_KEY
from mediaassist.demo_servers.video_tasks_server import DEMO_VIDEO_KEY
from tests.harness import wait_until_sync

PROMPTS = [f"restart clip {n}" for n in range(8)]
TIMING = ["--port", "0", "--limit", "100", "--queued", "0.1", "0.3", "--run", "2.0", "3.0"]
SERVERS = {
    "runninghub": (["mediaassist.demo_servers.runninghub_server"], DEMO_API_KEY,
                   'type = "runninghub"', 'workflow_id = "1904136902449209346"\nprompt_node_id = "6"\n'
                                          'prompt_field_name = "text"'),
    "openai-videos": (["mediaassist.demo_servers.video_tasks_server", "openai-videos"], DEMO_VIDEO_KEY,
                      'type = "task_api"\nprofile = "openai-videos"', 'remote_model = "sora-2"'),
    "newapi-video": (["mediaassist.demo_servers.video_tasks_server", "newapi-video"], DEMO_VIDEO_KEY,
                     'type = "task_api"\nprofile = "newapi-video"', 'remote_model = "sora-2"'),
}


@pytest.fixture(params=list(SERVERS))
def service(request: pytest.FixtureRequest) -> Iterator[tuple[str, str, str, str]]:
    """(base URL, key, provider lines, model lines) of a demo server in its own process."""
    module, key, provider, model = SERVERS[request.param]
    proc = subprocess.Popen([sys.executable, "-m", *module, *TIMING], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().strip(), key, provider, model
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()


def _stats(url: str) -> dict:
    import httpx

    return httpx.get(f"{url.removesuffix('/v1')}/_demo/stats", timeout=10).json()


def _cli(tmp_path: Path, data_dir: Path) -> list[str]:
    return [sys.executable, "-m", "mediaassist", "run", str(tmp_path / "tasks.txt"), "--model", "video",
            "--config", str(tmp_path / "config.toml"), "--data-dir", str(data_dir), "--speed", "10", "--json"]


def _remote_ids(db: Path) -> int:
    store = Store(db)
    try:
        return sum(1 for t in store.tasks() if t.remote_id)
    finally:
        store.close()


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_kill_9_and_restart_never_creates_twice(service: tuple[str, str, str, str], tmp_path: Path,
                                                data_dir: Path) -> None:
    server_url, key, provider_lines, model_lines = service
    (tmp_path / "tasks.txt").write_text("\n".join(PROMPTS) + "\n", encoding="utf-8")
    config = tmp_path / "config.toml"
    config.write_text(f"""
[[providers]]
name = "rh"
kind = "poll"
{provider_lines}
base_url = "{server_url}"
api_key_env = "RH_TEST_KEY"
max_polling_tasks = 3

[[models]]
name = "video"
kind = "poll"
provider = "rh"
{model_lines}
""", encoding="utf-8")
    env = {**os.environ, "RH_TEST_KEY": key}

    first = subprocess.Popen(_cli(tmp_path, data_dir), env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    db = data_dir / "mediaassist.sqlite3"

    def three_remote_ids() -> bool:
        assert first.poll() is None, "the run ended before the kill"
        return db.exists() and _remote_ids(db) >= 3
    wait_until_sync(three_remote_ids, 60, "3 remote ids before the kill")
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=10)
    killed_with = _remote_ids(db)
    assert 3 <= killed_with < len(PROMPTS)

    second = subprocess.run(_cli(tmp_path, data_dir), env=env, capture_output=True, text=True, timeout=150)
    summary = json.loads(second.stdout)
    assert second.returncode == 0, second.stderr
    assert summary["success"] == len(PROMPTS)
    stats = _stats(server_url)
    assert stats["creates"] == {p: 1 for p in PROMPTS}
    assert stats["max_in_flight"] <= 3
    assert key not in second.stdout + second.stderr
