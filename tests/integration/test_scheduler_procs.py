"""The scheduler among other real processes: dead owners, the crash budget, a profile held by
another process (issue 9, items 1, 4 and 6)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mediaassist.core.clock import Clock
from mediaassist.core.scheduler import Scheduler
from mediaassist.core.store import AUTO_RETRIES, CRASH_RETRIES, NewTask, Store
from mediaassist.providers.web.browser import profile_dir
from tests.harness import make_scheduler, run_batch, scheduler_running, sim_api_tasks, task_log, wait_until
from tests.helpers import sim_config
from tests.web_helpers import WEB_SPEED, demo_site, log_in, needs_chromium, web_config, web_task

ROOT = Path(__file__).resolve().parents[2]

# Claims the one task as this process's scheduler would, then dies (or stays alive on "live").
CLAIM_AND_DIE = """
    import os, signal, sys
    from mediaassist.core.owners import new_owner
    from mediaassist.core.store import Store
    store = Store(sys.argv[1])
    claimed = store.claim("api:sim-api", str(new_owner()), limit=1, lane_limit=3)
    print(len(claimed), flush=True)
    if sys.argv[2] == "live":
        sys.stdin.readline()
    else:
        os.kill(os.getpid(), signal.SIGKILL)
"""


def _claimer(path: Path | str, mode: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(CLAIM_AND_DIE), str(path), mode],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})


def _scheduler(store: Store, data_dir: Path) -> Scheduler:
    return make_scheduler(store, sim_config(), data_dir, Clock(speed=100))


def _api_task() -> NewTask:
    return NewTask(model="writer", model_kind="api", route="api:sim-api", prompt="p", task_id="crashy")


def test_a_live_process_keeps_its_rows_and_a_dead_ones_rows_use_the_crash_budget(store: Store, store_location: str,
                                                                                  data_dir: Path) -> None:
    store.enqueue("b", [_api_task()])
    sched = _scheduler(store, data_dir)
    live = _claimer(store_location, "live")
    try:
        assert live.stdout.readline().strip() == "1"  # type: ignore[union-attr]
        assert sched.recover_dead_owners() == 0  # alive: its attempt is left alone
        assert store.get("crashy").state == "running"
    finally:
        live.kill()
        live.communicate(timeout=10)
    assert sched.recover_dead_owners() == 1  # killed: found at once, not after 90 s
    row = store.get("crashy")
    assert (row.state, row.attempt, row.retries_left, row.crash_retries_left) == (
        "pending", 2, AUTO_RETRIES, CRASH_RETRIES - 1)
    assert f"the process running it (process {live.pid} on" in row.error


def test_a_task_that_keeps_killing_its_process_fails_when_the_crash_budget_is_spent(
        store: Store, store_location: str, data_dir: Path) -> None:
    store.enqueue("b", [_api_task()])
    sched = _scheduler(store, data_dir)
    for lost in range(1, CRASH_RETRIES + 2):
        victim = _claimer(store_location, "die")
        assert victim.communicate(timeout=30)[0].strip() == "1"
        assert sched.recover_dead_owners() == 1
        row = store.get("crashy")
        if lost <= CRASH_RETRIES:
            assert (row.state, row.crash_retries_left, row.retries_left) == (
                "pending", CRASH_RETRIES - lost, AUTO_RETRIES)
    assert (row.state, row.error_kind, row.attempt) == ("failed", "stalled", CRASH_RETRIES + 1)
    assert f"died {CRASH_RETRIES + 1} times" in row.error and "may be what kills it" in row.error


# Holds one account's profile lock, as another mediaassist process with its browser open would.
HOLD_PROFILE = """
    import sys
    from pathlib import Path
    from mediaassist.providers.web.oslock import ProfileLock
    lock = ProfileLock(Path(sys.argv[1]))
    lock.acquire()
    print("held", flush=True)
    sys.stdin.readline()
"""


@pytest.mark.browser
@needs_chromium
@pytest.mark.asyncio
async def test_a_profile_held_by_another_process_requeues_and_leaves_the_login_alone(
        store: Store, data_dir: Path) -> None:
    config = web_config(accounts=("acct-a", "acct-b"))
    with demo_site(data_dir) as site:
        await log_in(config, data_dir, site)
        store.sync_accounts(config.accounts)
        store.set_login_state("acct-a", "ok")
        holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(HOLD_PROFILE),
                                   str(profile_dir(data_dir, "acct-a"))], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
        try:
            assert holder.stdout.readline().strip() == "held"  # type: ignore[union-attr]
            tasks = await run_batch(store, config, data_dir, [web_task(f"question {i}") for i in range(3)], WEB_SPEED)
        finally:
            holder.kill()
            holder.communicate(timeout=10)
    assert {(t.state, t.account, t.attempt) for t in tasks} == {("success", "acct-b", 1)}
    assert store.account("acct-a").login_state == "ok"  # busy is not logged out
    logs = "\n".join(task_log(store, t.task_id) for t in tasks)
    assert f"in use by another program: process {holder.pid}" in logs and "back in the queue" in logs


@pytest.mark.asyncio
async def test_drain_lets_started_tasks_finish_and_takes_no_new_ones(store: Store, data_dir: Path) -> None:
    """What ``run --all`` does at its end: nothing it started is handed back half-done."""
    store.enqueue("late", sim_api_tasks(6, "late", id_digits=1, prompt="p"))
    async with scheduler_running(store, sim_config(), data_dir, Clock(speed=100)) as sched:
        await wait_until(lambda: len(sched.lanes["api:sim-api"].active) == 3)
        await sched.drain()
    states = sorted(t.state for t in store.tasks())
    assert states == ["pending"] * 3 + ["success"] * 3
    assert all(t.attempt == 1 and t.started_at is None for t in store.tasks() if t.state == "pending")
