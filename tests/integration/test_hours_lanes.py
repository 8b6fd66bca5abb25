"""A lane outside its hours takes no work, says when it opens, and starts on time by itself --
in the scheduler and in a ``run`` process, which waits for it instead of giving up."""

from __future__ import annotations

import json
import subprocess
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from mediaassist.core.config import parse_config
from mediaassist.core.scheduler import Scheduler
from mediaassist.core.store import Store
from tests.harness import run_batch, sim_api_tasks, wait_until
from tests.helpers import cli, cli_popen, sim_config_text, write_config, write_csv

OPENS_IN_S = 4.0


def _hours_from(opens_at: datetime) -> str:
    closes = opens_at + timedelta(hours=1)
    return f"{opens_at:%H:%M:%S}-{closes:%H:%M:%S}"


def _config_text(opens_at: datetime) -> str:
    text = sim_config_text(api_s=(1, 2))
    return text.replace('name = "sim-api"\n', f'name = "sim-api"\nhours = "{_hours_from(opens_at)}"\n', 1)


@pytest.mark.asyncio
async def test_a_lane_rests_until_its_hours_begin_then_runs(store: Store, data_dir: Path) -> None:
    import tomllib

    opens_at = datetime.now().replace(microsecond=0) + timedelta(seconds=OPENS_IN_S + 1)
    if opens_at.second == 0:  # a whole minute is written without its seconds ("13:15", not "13:15:00")
        opens_at += timedelta(seconds=1)
    config = parse_config(tomllib.loads(_config_text(opens_at)))
    reasons: list[str] = []

    async def while_closed(sched: Scheduler, ids: list[str]) -> None:
        await wait_until(lambda: "api:sim-api" in sched.blocked_lanes(), 5, "the lane to rest")
        reasons.append(sched.blocked_lanes()["api:sim-api"])
        assert all(store.get(i).state == "pending" for i in ids)

    tasks = await run_batch(store, config, data_dir, sim_api_tasks(3), 20.0, during=while_closed)
    assert [t.state for t in tasks] == ["success"] * 3
    assert all(t.started_at is not None and t.started_at >= opens_at.timestamp() for t in tasks)
    expected = f"outside its hours {_hours_from(opens_at)}; opens at {opens_at:%H:%M:%S}"
    assert [str(reason) for reason in reasons] == [expected]


def test_run_waits_for_the_hours_and_status_says_why(tmp_path: Path) -> None:
    """``status`` and a waiting ``run`` are two processes that must both look before the lane
    opens; a process that started late under load looked after it and the try tells nothing, so it
    is made again with twice the lead. The normal case is one try, status and run side by side."""
    for tries, lead_s in enumerate((OPENS_IN_S + 2, 2 * OPENS_IN_S + 4, 4 * OPENS_IN_S + 8), start=1):
        opens_at, status, run = _status_and_run_before_the_hours(tmp_path / f"try-{tries}", lead_s)
        assert run.returncode == 0, run.stderr[-2000:]
        summary = json.loads(run.stdout)
        enqueued_at = min(datetime.fromisoformat(t["created_at"]).timestamp() for t in summary["tasks"])
        if max(status.returned_at, enqueued_at) < opens_at.timestamp():
            break
    else:
        pytest.fail(f"status or run came up after the lane opened in each of {tries} tries: a box too loaded")
    assert f"RESTING: outside its hours {_hours_from(opens_at)}; opens at {opens_at:%H:%M:%S}" in status.stdout
    assert summary["success"] == 2
    assert all(datetime.fromisoformat(t["started_at"]).timestamp() >= opens_at.timestamp() - 0.001
               for t in summary["tasks"])


@dataclass
class _Status:
    stdout: str
    returned_at: float  # epoch seconds: the process looked at its hours before this


def _status_and_run_before_the_hours(folder: Path, lead_s: float,
                                     ) -> tuple[datetime, _Status, subprocess.CompletedProcess[str]]:
    """A ``run`` of two tasks on a lane that opens ``lead_s`` from now, and ``status`` beside it."""
    folder.mkdir()
    opens_at = datetime.now().replace(microsecond=0) + timedelta(seconds=lead_s)
    config = write_config(folder / "config.toml", _config_text(opens_at))
    tasks = write_csv(folder / "t.csv", [{"task_id": f"h-{i}", "model": "writer", "prompt": f"p{i}"}
                                         for i in range(2)])
    common = ("--config", str(config), "--data-dir", str(folder / "data"))
    running = cli_popen("run", str(tasks), "--json", "--speed", "20", *common)
    status = cli("status", *common)
    status_seen = _Status(status.stdout, time.time())
    stdout, stderr = running.communicate(timeout=120 + lead_s)
    return opens_at, status_seen, subprocess.CompletedProcess(running.args, running.returncode, stdout, stderr)


def test_run_not_before_holds_the_files_tasks_until_then(tmp_path: Path) -> None:
    start_at = datetime.now().replace(microsecond=0) + timedelta(seconds=OPENS_IN_S)
    config = write_config(tmp_path / "config.toml", sim_config_text(api_s=(1, 2)))
    tasks = write_csv(tmp_path / "t.csv", [{"task_id": f"nb-{i}", "model": "writer", "prompt": f"p{i}"}
                                           for i in range(2)])
    run = cli("run", str(tasks), "--json", "--speed", "20", "--not-before", f"{start_at:%Y-%m-%d %H:%M:%S}",
              "--config", str(config), "--data-dir", str(tmp_path / "data"))
    assert run.returncode == 0, run.stderr[-2000:]
    summary = json.loads(run.stdout)
    assert summary["success"] == 2
    assert all(datetime.fromisoformat(t["started_at"]).timestamp() >= start_at.timestamp() for t in summary["tasks"])


def test_run_not_before_that_is_no_time_is_one_line_and_exit_2(tmp_path: Path) -> None:
    run = cli("run", "whatever.csv", "--not-before", "tonight", "--data-dir", str(tmp_path / "data"))
    assert run.returncode == 2
    assert "argument --not-before: 'tonight' is not a time" in run.stderr and "Traceback" not in run.stderr


# --- daily limits ------------------------------------------------------------------------------
@pytest.mark.asyncio
async def test_a_lane_at_its_daily_limit_rests_until_the_day_turns(store: Store, data_dir: Path) -> None:
    import tomllib

    from mediaassist.core.store import Task

    text = sim_config_text(api_s=(1, 2)).replace('name = "sim-api"\n', 'name = "sim-api"\ndaily_limit = 3\n', 1)
    config = parse_config(tomllib.loads(text + '\n[budget]\ndaily_reset = "04:30"\n'))
    seen: list[str] = []

    async def at_the_limit(sched: Scheduler, ids: list[str]) -> None:
        await wait_until(lambda: "api:sim-api" in sched.blocked_lanes()
                         and not any(lane.active for lane in sched.lanes.values()), 30, "the daily limit")
        seen.append(str(sched.blocked_lanes()["api:sim-api"]))
        states = sorted(store.get(i).state for i in ids)
        assert states == ["pending"] * 2 + ["success"] * 3  # three started today, no more
        # The day turns: today's starts become yesterday's (as after 04:30 tomorrow).
        Task.update(started_at=Task.started_at - 86400).where(Task.state == "success").execute()
        sched.wake()

    tasks = await run_batch(store, config, data_dir, sim_api_tasks(5), 20.0, during=at_the_limit)
    assert [t.state for t in tasks] == ["success"] * 5
    assert seen == ["daily limit of 3 tasks reached; starts again at 04:30"]


def test_daily_limits_are_read_for_providers_keys_and_accounts() -> None:
    config = parse_config({
        "providers": [{"name": "acme", "kind": "api", "type": "openai", "base_url": "https://a.example/v1",
                       "daily_limit": 500, "keys": [{"env": "K1", "label": "a"}, {"env": "K2", "label": "b",
                                                                                   "daily_limit": 100}]}],
        "accounts": [{"name": "acct", "site": "simulated", "daily_limit": 40}]})
    from mediaassist.core.lanes import lane_specs

    assert {s.name: s.daily_limit for s in lane_specs(config)} == {"api:acme/a": 500, "api:acme/b": 100,
                                                                   "web:acct": 40}
    with pytest.raises(Exception, match=r"accounts\[0\].daily_limit: 0 is out of range"):
        parse_config({"accounts": [{"name": "acct", "site": "simulated", "daily_limit": 0}]})
