"""Several ``mediaassist run`` processes on one data dir against the demo servers (issue 9).

The servers count what really reached them: in-flight maxima (the limits must hold across the
processes, not per process), creates per prompt (a RunningHub task is paid for once), and the
store says how many attempts each task took and that every result is its one attempt's.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from mediaassist.demo_servers.openai_server import DemoOpenAIServer
from mediaassist.demo_servers.runninghub_server import DEMO_API_KEY, RunningHubDemoServer
from tests.helpers import cli_popen, write_config, write_csv

OPENAI_KEY = "sk-multi-process-test-key-0001"
API_LIMIT, POLL_LIMIT = 3, 3
API_TASKS, POLL_TASKS = 12, 4  # per file (one file per process)

CONFIG = """
[[providers]]
name = "acme"
kind = "api"
type = "openai"
base_url = "{openai}"
api_key_env = "ACME_API_KEY"
concurrency = {api_limit}

[[providers]]
name = "rh"
kind = "poll"
type = "runninghub"
base_url = "{runninghub}"
api_key_env = "RH_API_KEY"
max_polling_tasks = {poll_limit}

[[models]]
name = "writer"
kind = "api"
provider = "acme"
endpoint = "chat"

[[models]]
name = "video"
kind = "poll"
provider = "rh"
workflow_id = "1904136902449209346"
prompt_node_id = "6"
prompt_field_name = "text"
"""


@pytest.fixture
def servers() -> Iterator[tuple[DemoOpenAIServer, RunningHubDemoServer]]:
    # Real seconds at the servers: long enough that the processes' work overlaps.
    with DemoOpenAIServer(api_key=OPENAI_KEY, latency_s=(0.3, 0.6)) as openai, \
            RunningHubDemoServer({DEMO_API_KEY: 100}, queued_s=(0.1, 0.2), run_s=(0.6, 1.2), seed=3) as runninghub:
        yield openai, runninghub


def _task_file(folder: Path, index: int) -> Path:
    rows = ([{"model": "writer", "prompt": f"ad copy {index}-{n}"} for n in range(API_TASKS)]
            + [{"model": "video", "prompt": f"video {index}-{n}"} for n in range(POLL_TASKS)])
    return write_csv(folder / f"batch-{index}.csv", rows)


def _rows(data: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(data / "mediaassist.sqlite3") as conn:
        return conn.execute(sql).fetchall()


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("processes", [2, 3])
def test_runs_on_one_data_dir_share_the_limits_and_never_double_work(
        tmp_path: Path, servers: tuple[DemoOpenAIServer, RunningHubDemoServer], processes: int) -> None:
    openai, runninghub = servers
    config = write_config(tmp_path / "config.toml", CONFIG.format(
        openai=openai.base_url, runninghub=runninghub.url, api_limit=API_LIMIT, poll_limit=POLL_LIMIT))
    data = tmp_path / "data"
    env = {"ACME_API_KEY": OPENAI_KEY, "RH_API_KEY": DEMO_API_KEY}
    runs = [cli_popen("run", str(_task_file(tmp_path, i)), "--json", "--speed", "20", "--config", str(config),
                      "--data-dir", str(data), env=env) for i in range(processes)]
    outputs = [run.communicate(timeout=240) for run in runs]
    for run, (stdout, stderr) in zip(runs, outputs):
        assert run.returncode == 0, stderr
        summary = json.loads(stdout)
        # Each run reports its own file's tasks, and all of them ended well.
        assert (summary["total"], summary["success"]) == (API_TASKS + POLL_TASKS,) * 2
        assert "died" not in stderr and "stalled" not in stderr

    # The servers never saw more than one limit's worth, whichever process sent it.
    assert openai.max_in_flight <= API_LIMIT
    assert runninghub.fake.max_in_flight <= POLL_LIMIT
    assert openai.max_in_flight == API_LIMIT  # the test really loaded the lane
    # Work done once: one chat request per API task, one remote create per video.
    chats = [r for r in openai.requests if r.path.endswith("/chat/completions")]
    assert len(chats) == processes * API_TASKS
    assert len(runninghub.fake.creates) == processes * POLL_TASKS
    assert set(runninghub.fake.creates.values()) == {1}
    # One attempt per task, and the result is that attempt's.
    assert _rows(data, "SELECT DISTINCT state, attempt FROM task") == [("success", 1)]
    started = _rows(data, "SELECT task_id, COUNT(*) FROM task_log WHERE line LIKE 'attempt % started on %' "
                          "GROUP BY task_id")
    assert len(started) == processes * (API_TASKS + POLL_TASKS) and {n for _id, n in started} == {1}
    assert _rows(data, "SELECT COUNT(*) FROM result")[0][0] == processes * (API_TASKS + POLL_TASKS)
