"""The Runtime as the window's façade: its commands and queries on a real store and scheduler."""

from __future__ import annotations

from pathlib import Path

import pytest

from mediaassist.core.errors import ConfigError
from mediaassist.core.importer import read_task_file
from mediaassist.core.options import RuntimeOptions
from mediaassist.runtime import LaneView, Runtime
from tests.harness import wait_until
from tests.helpers import sim_config_text, write_config, write_csv

pytestmark = pytest.mark.asyncio


def options(tmp_path: Path) -> RuntimeOptions:
    config = write_config(tmp_path / "config.toml", sim_config_text(api_concurrency=2, api_s=(0.5, 0.6),
                                                                    poll_limit=3))
    return RuntimeOptions(config_path=config, data_dir=tmp_path / "data", speed=20)


def tasks_file(tmp_path: Path, n: int) -> Path:
    return write_csv(tmp_path / "tasks.csv", [{"model": "writer", "prompt": f"ad {i}"} for i in range(n)])


async def test_lane_views_are_plain_snapshots_of_every_lane(tmp_path: Path) -> None:
    async with Runtime(options(tmp_path)) as rt:
        views = {view.name: view for view in rt.lane_views()}
        assert set(views) == {"api:sim-api", "poll:sim-poll", "web:alice", "web:bob"} == set(rt.lane_names())
        assert views["api:sim-api"] == LaneView(name="api:sim-api", kind="api", route="api:sim-api", account=None,
                                                limit=2, current_limit=2, running=0)
        assert (views["web:bob"].route, views["web:bob"].account, views["web:bob"].current_limit) == (
            "web:simulated", "bob", 1)
        with pytest.raises(AttributeError):
            views["api:sim-api"].running = 5  # type: ignore[misc]  # a view, not the scheduler's lane


async def test_one_enqueue_path_runs_the_file_and_a_second_enqueue_resumes_it(tmp_path: Path) -> None:
    async with Runtime(options(tmp_path)) as rt:
        await rt.start()
        try:
            path = tasks_file(tmp_path, 5)
            progress: list[int] = []
            first = rt.enqueue(read_task_file(path, rt.config), progress.append)
            assert (first.inserted, first.skipped) == (5, 0) and progress[-1] == 5
            again = rt.enqueue(read_task_file(path, rt.config))  # the same file: its derived ids are known
            assert (again.inserted, again.skipped) == (0, 5)
            ids = [t.task_id for t in rt.store.tasks([first.batch_id])]
            await wait_until(lambda: all(rt.task(i).state == "success" for i in ids), timeout=60)
            assert rt.result(ids[0]) is not None and rt.logs(ids[0])
            assert rt.running_count() == 0
        finally:
            await rt.stop()


async def test_pause_resume_cancel_and_retry_through_the_facade(tmp_path: Path) -> None:
    async with Runtime(options(tmp_path)) as rt:
        await rt.start()
        try:
            rt.pause_all("paused by operator")
            assert rt.all_paused() and str(rt.blocked_lanes()["api:sim-api"]) == "paused by operator"
            batch = rt.enqueue(read_task_file(tasks_file(tmp_path, 3), rt.config))
            ids = [t.task_id for t in rt.store.tasks([batch.batch_id])]
            assert rt.cancel(ids[:1])["canceled"] == 1
            assert rt.task(ids[0]).state == "canceled"
            assert rt.retry(ids[:1]) == 1 and rt.task(ids[0]).state == "pending"
            rt.resume_lane("api:sim-api")
            assert "api:sim-api" not in rt.paused_lanes() and not rt.all_paused()
            await wait_until(lambda: all(rt.task(i).state == "success" for i in ids), timeout=60)
            assert rt.delete(ids) == 3 and rt.task(ids[0]) is None
        finally:
            await rt.stop()


async def test_set_limit_checks_the_range_and_reaches_the_running_lane(tmp_path: Path) -> None:
    async with Runtime(options(tmp_path)) as rt:
        rt.set_limit("sim-api", "concurrency", 4)
        assert {v.name: v.current_limit for v in rt.lane_views()}["api:sim-api"] == 4
        assert rt.config.provider("sim-api").concurrency == 4
        with pytest.raises(ConfigError, match="concurrency"):
            rt.set_limit("sim-api", "concurrency", 0)
        assert {v.name: v.current_limit for v in rt.lane_views()}["api:sim-api"] == 4  # a refused value changes nothing


async def test_a_simulated_account_needs_no_login_and_an_unknown_one_is_refused(tmp_path: Path) -> None:
    async with Runtime(options(tmp_path)) as rt:
        rt.store.sync_accounts(rt.config.accounts)
        assert rt.log_in("alice") is None
        assert {a.name: a.login_state for a in rt.accounts()}["alice"] == "ok"
        with pytest.raises(KeyError):
            rt.log_in("nobody")
        rt.set_account_enabled("bob", False)
        assert str(rt.blocked_lanes()["web:bob"]) == "account disabled"
