"""Notices reach a real webhook on 127.0.0.1 once per event: from one run, from three processes on
one store, through a webhook that fails at first, and for lane pauses and logins as episodes."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from mediaassist.core.config import AccountConfig, NotifyConfig
from mediaassist.core.notices import Notifier
from mediaassist.core.store import NewTask, Store
from tests.harness import wait_until
from tests.helpers import cli, cli_popen, sim_config_text, write_config, write_csv
from tests.webhook_receiver import Receiver, webhook_receiver

HOOK_KEY = "SECRET-HOOK-KEY-123"


def _config(tmp_path: Path, receiver: Receiver, fmt: str = "json", api_s: tuple[float, float] = (2, 4)) -> Path:
    hook = f'\n[[notify]]\nname = "ops"\nurl = "{receiver.url}"\nformat = "{fmt}"\n'
    return write_config(tmp_path / "config.toml", sim_config_text(api_s=api_s) + hook)


def _rows(n: int, prefix: str) -> list[dict[str, str]]:
    return [{"task_id": f"{prefix}-{i}", "model": "writer", "prompt": f"line {i}"} for i in range(n)]


def test_a_finished_batch_is_announced_once_with_its_counts(tmp_path: Path) -> None:
    with webhook_receiver() as receiver:
        config = _config(tmp_path, receiver)
        tasks = write_csv(tmp_path / "tasks.csv", _rows(5, "n"))
        run = cli("run", str(tasks), "--json", "--speed", "50", "--config", str(config),
                  "--data-dir", str(tmp_path / "data"), "-v")
        assert run.returncode == 0, run.stderr[-2000:]
        [notice] = receiver.bodies("batch_finished")
        batch_id = json.loads(run.stdout)["batch_ids"][0]
        assert notice["data"] == {"batch_id": batch_id, "total": 5, "success": 5, "failed": 0, "canceled": 0}
        assert notice["title"] == f"Batch {batch_id} finished"
        assert receiver.paths == ["/hook?key=" + HOOK_KEY]
    assert "notice batch_finished sent to ops (127.0.0.1)" in run.stderr
    assert HOOK_KEY not in run.stderr + run.stdout


def test_three_processes_finishing_one_batch_send_one_notice(tmp_path: Path) -> None:
    with webhook_receiver() as receiver:
        config = _config(tmp_path, receiver, api_s=(1, 2))
        data = tmp_path / "data"
        store = Store(data / "mediaassist.sqlite3")
        store.enqueue("shared-batch", [NewTask(task_id=f"s-{i}", model="writer", model_kind="api",
                                               route="api:sim-api", prompt=f"p{i}") for i in range(24)])
        store.close()
        runs = [cli_popen("run", "--all", "--speed", "20", "--config", str(config), "--data-dir", str(data))
                for _ in range(3)]
        for proc in runs:
            _out, err = proc.communicate(timeout=300)
            assert proc.returncode == 0, err[-2000:]
        finished = receiver.bodies("batch_finished")
        assert [n["data"]["batch_id"] for n in finished] == ["shared-batch"]
        assert finished[0]["data"]["success"] == 24


def test_a_failing_webhook_is_retried_and_never_fails_the_work(tmp_path: Path) -> None:
    with webhook_receiver() as receiver:
        receiver.fail_first = 2
        config = _config(tmp_path, receiver, fmt="wecom")
        run = cli("run", str(write_csv(tmp_path / "t.csv", _rows(2, "f"))), "--speed", "50",
                  "--config", str(config), "--data-dir", str(tmp_path / "data"))
        assert run.returncode == 0, run.stderr[-2000:]
        assert receiver.requests == 3
        [body] = receiver.received
        assert body["msgtype"] == "text" and "2 succeeded, 0 failed, 0 canceled of 2" in body["text"]["content"]


def test_a_webhook_that_refuses_is_logged_by_host_and_the_run_succeeds(tmp_path: Path) -> None:
    with webhook_receiver() as receiver:
        receiver.answer = {"errcode": 93000, "errmsg": "invalid webhook url"}
        config = _config(tmp_path, receiver, fmt="wecom")
        run = cli("run", str(write_csv(tmp_path / "t.csv", _rows(1, "r"))), "--speed", "50",
                  "--config", str(config), "--data-dir", str(tmp_path / "data"), timeout=180)
        assert run.returncode == 0, run.stderr[-2000:]
        assert receiver.requests == 4
    assert "notice batch_finished not sent to ops (127.0.0.1) after 4 attempts: error 93000 invalid webhook url" \
        in run.stderr
    assert HOOK_KEY not in run.stderr


@pytest.mark.asyncio
async def test_pauses_and_logins_are_episodes_announced_once_each(store: Store) -> None:
    with webhook_receiver() as receiver:
        hook = NotifyConfig(name="ops", url=receiver.url)
        first, second = Notifier(store, [hook], "owner-1"), Notifier(store, [hook], "owner-2")
        store.pause_lane("api:acme", "quota: insufficient_quota")
        for notifier in (first, second, first):
            notifier.sweep()
        await wait_until(lambda: receiver.bodies("lane_paused"), 10, "the pause notice")
        store.pause_lane("api:acme", "quota: insufficient_quota")  # paused again while paused: no news
        second.sweep()
        store.resume_lane("api:acme")
        first.sweep()
        store.pause_lane("api:acme", "429 rate limit")
        second.sweep()
        await wait_until(lambda: len(receiver.bodies("lane_paused")) == 2, 10, "the second pause notice")
        await asyncio.gather(first.aclose(), second.aclose())
        assert [n["text"] for n in receiver.bodies("lane_paused")] == ["quota: insufficient_quota", "429 rate limit"]
        assert {n["data"]["lane"] for n in receiver.bodies("lane_paused")} == {"api:acme"}


@pytest.mark.asyncio
async def test_needs_login_is_announced_once_per_episode(store: Store) -> None:
    with webhook_receiver() as receiver:
        notifier = Notifier(store, [NotifyConfig(name="ops", url=receiver.url, events=("needs_login",))], "owner-1")
        store.sync_accounts([AccountConfig(name="alice", site="demochat")])
        for _ in range(2):
            store.set_login_state("alice", "needs_login", "the page shows the login form")
            notifier.sweep()
        store.pause_lane("api:acme", "quota")  # not an event this hook takes
        notifier.sweep()
        await notifier.aclose()
        received = receiver.received
    assert [(n["event"], n["data"]["account"]) for n in received] == [("needs_login", "alice")]
