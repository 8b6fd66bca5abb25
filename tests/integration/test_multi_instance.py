"""Three machines, one queue: ``mediaassist run`` processes on one PostgreSQL store (issue 10).

Each process stands in for a machine: its own data dir and its own host identity
(MEDIAASSIST_HOST_ID). They run the same task file against the demo servers, which count what
really reached them. One machine is killed with SIGKILL mid-batch; the others must finish its
work: its running rows are judged by heartbeat age (never by a PID that means nothing on another
machine), its remote tasks are polled again, never created again.
"""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from mediaassist.demo_servers.openai_server import DemoOpenAIServer
from mediaassist.demo_servers.runninghub_server import DEMO_API_KEY, RunningHubDemoServer
from tests.harness import wait_until_sync
from tests.helpers import PG_URL, cli_popen, fresh_pg_database, write_config, write_csv
from tests.integration import test_multi_process
from tests.integration.test_multi_process import OPENAI_KEY
from tests.process_helpers import DEMO_LANES_CONFIG

servers = test_multi_process.servers  # the demo servers fixture, shared with the multi-process test

pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    not PG_URL, reason="set MEDIAASSIST_TEST_PG to a postgresql:// server URL (CI starts one)")]

API_LIMIT, POLL_LIMIT = 3, 3
API_TASKS, POLL_TASKS, WEB_TASKS, BOB_TASKS = 30, 8, 8, 3
MACHINES = ("machine-1", "machine-2", "machine-3")
ACCOUNT_HOSTS = {"alice": "machine-1", "bob": "machine-2", "carol": "machine-3"}
VICTIM = "machine-3"
# The one-data-dir test's providers and models (demo OpenAI and RunningHub), plus a web model.
WEB_MODEL = """
[[models]]
name = "reasoner"
kind = "web"
site = "simulated"
"""


@pytest.fixture
def shared_url() -> Iterator[str]:
    with fresh_pg_database(PG_URL) as url:  # type: ignore[arg-type]
        yield url


def _config_text(openai: DemoOpenAIServer, runninghub: RunningHubDemoServer) -> str:
    accounts = "".join(f'[[accounts]]\nname = "{name}"\nsite = "simulated"\nhost = "{host}"\n\n'
                       for name, host in ACCOUNT_HOSTS.items())
    return DEMO_LANES_CONFIG.format(openai=openai.base_url, runninghub=runninghub.url, api_limit=API_LIMIT,
                         poll_limit=POLL_LIMIT) + WEB_MODEL + "\n" + accounts


def _task_file(folder: Path) -> Path:
    web_s = json.dumps({"sim_duration_s": 30})  # nominal; 1.5 s at --speed 20
    rows = ([{"model": "writer", "prompt": f"ad copy {n}", "account": "", "params": ""} for n in range(API_TASKS)]
            + [{"model": "video", "prompt": f"video {n}", "account": "", "params": ""} for n in range(POLL_TASKS)]
            + [{"model": "reasoner", "prompt": f"question {n}", "account": "", "params": web_s}
               for n in range(WEB_TASKS)]
            + [{"model": "reasoner", "prompt": f"for bob {n}", "account": "bob", "params": web_s}
               for n in range(BOB_TASKS)])
    return write_csv(folder / "team-batch.csv", rows)


def _rows(url: str, sql: str, args: tuple = ()) -> list[tuple]:
    import psycopg2

    with psycopg2.connect(url) as conn, conn.cursor() as cursor:
        cursor.execute(sql, args)
        rows = cursor.fetchall()
    conn.close()
    return rows


@pytest.mark.timeout(300)
def test_three_machines_on_one_postgresql_are_one_queue_and_survive_a_sigkill(
        tmp_path: Path, servers: tuple[DemoOpenAIServer, RunningHubDemoServer], shared_url: str) -> None:
    openai, runninghub = servers
    config = write_config(tmp_path / "config.toml", _config_text(openai, runninghub))
    batch = _task_file(tmp_path)
    total = API_TASKS + POLL_TASKS + WEB_TASKS + BOB_TASKS
    runs = {}

    def start(machine: str) -> None:
        env = {"ACME_API_KEY": OPENAI_KEY, "RH_API_KEY": DEMO_API_KEY, "MEDIAASSIST_HOST_ID": machine}
        runs[machine] = cli_popen("run", str(batch), "--json", "--speed", "20", "--config", str(config),
                                  "--data-dir", str(tmp_path / machine), "--store", shared_url, env=env)

    def running_on(machine: str, remote: bool = False) -> bool:
        if not _rows(shared_url, "SELECT to_regclass('task')")[0][0]:
            return False  # the schema is not created yet
        return bool(_rows(shared_url, "SELECT 1 FROM task WHERE state = 'running' AND owner LIKE %s"
                                      + (" AND remote_id IS NOT NULL" if remote else ""), (f"{machine}:%",)))

    # The victim starts first (on a loaded box the others could otherwise finish everything before
    # it runs anything) and is killed once the others work beside it and it holds a RunningHub task.
    start(VICTIM)
    wait_until_sync(lambda: running_on(VICTIM, remote=True), 120, f"{VICTIM} to run a RunningHub task")
    for machine in MACHINES:
        if machine != VICTIM:
            start(machine)
    wait_until_sync(lambda: all(running_on(m) for m in MACHINES if m != VICTIM), 120, "the others to take work")
    wait_until_sync(lambda: running_on(VICTIM), 60, f"{VICTIM} to still run a task")
    runs[VICTIM].send_signal(signal.SIGKILL)
    runs[VICTIM].communicate(timeout=30)
    assert runs[VICTIM].returncode == -signal.SIGKILL
    # What the dead machine left running: exactly these rows may run a second time.
    left = _rows(shared_url, "SELECT task_id, prompt, remote_id FROM task WHERE state = 'running' AND owner LIKE %s",
                 (f"{VICTIM}:%",))
    orphaned = {task_id for task_id, _prompt, _remote in left}
    assert orphaned
    # A create the dead machine had sent but whose reply it never stored cannot be known to
    # anyone (RunningHub has no idempotency key): only such a video may be created again.
    unsaved_creates = {prompt for _id, prompt, remote in left if prompt.startswith("video") and remote is None}

    for machine in MACHINES:
        if machine == VICTIM:
            continue
        stdout, stderr = runs[machine].communicate(timeout=240)
        assert runs[machine].returncode == 0, stderr
        summary = json.loads(stdout)
        assert (summary["total"], summary["success"]) == (total, total), stderr

    # Nothing lost, each result once.
    assert _rows(shared_url, "SELECT state, COUNT(*) FROM task GROUP BY state") == [("success", total)]
    assert _rows(shared_url, "SELECT COUNT(*) FROM result")[0][0] == total
    # No task claimed twice: one attempt each, except the dead machine's orphans (one retry each).
    starts = dict(_rows(shared_url, "SELECT task_id, COUNT(*) FROM task_log WHERE line LIKE 'attempt %% started on %%' "
                                    "GROUP BY task_id"))
    assert {task_id for task_id, n in starts.items() if n > 1} <= orphaned
    assert all(starts[task_id] == 2 for task_id in orphaned)
    # A RunningHub task is created once per video, even the ones the dead machine had submitted.
    assert len(runninghub.fake.creates) == POLL_TASKS
    assert {prompt for prompt, n in runninghub.fake.creates.items() if n > 1} <= unsaved_creates
    assert all(n <= 2 for n in runninghub.fake.creates.values())
    # The global limits held at the servers, across all three machines.
    assert openai.max_in_flight <= API_LIMIT and runninghub.fake.max_in_flight <= POLL_LIMIT
    assert openai.max_in_flight == API_LIMIT  # the lane really was loaded
    # Web tasks ran only on their account's machine; bob's pinned ones on bob's machine.
    web = _rows(shared_url, "SELECT task_id, account, host, account_pinned FROM task WHERE model_kind = 'web'")
    assert all(host == ACCOUNT_HOSTS[account] for _id, account, host, _pinned in web)
    assert {account for _id, account, _host, pinned in web if pinned} == {"bob"}
    # The machines really shared the queue: the two survivors both worked.
    assert {host for (host,) in _rows(shared_url, "SELECT DISTINCT host FROM task")} >= {"machine-1", "machine-2"}
