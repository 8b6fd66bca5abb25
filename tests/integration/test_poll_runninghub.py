"""The poll lane end to end: real scheduler, real SQLite, real httpx against the fake RunningHub."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from mediaassist.core.config import AppConfig, ModelConfig, ProviderConfig
from mediaassist.core.store import Store
from mediaassist.demo_servers.runninghub_server import DEMO_API_KEY, RunningHubDemoServer
from tests import poll_helpers
from tests.harness import scheduler_running, task_log, wait_until
from tests.media_helpers import first_frame_size
from tests.poll_helpers import SPEED, states

ROUTE = "poll:rh"


@pytest.fixture
def server() -> Iterator[RunningHubDemoServer]:
    # Server times are real seconds: short enough for fast tests, long enough to overlap.
    with RunningHubDemoServer({DEMO_API_KEY: 100}, queued_s=(0.1, 0.2), run_s=(0.4, 0.8), seed=7) as srv:
        yield srv


def make_config(url: str, *, key: str = DEMO_API_KEY, limit: int = 3, timeout_s: float = 1800.0,
                model_options: dict[str, Any] | None = None) -> AppConfig:
    provider = ProviderConfig(name="rh", kind="poll", type="runninghub", base_url=url, api_key=key,
                              max_polling_tasks=limit, poll_interval_s=5.0, queue_check_interval_s=5.0,
                              timeout_s=timeout_s)
    options = model_options or {"workflow_id": "1904136902449209346", "prompt_node_id": "6",
                                "prompt_field_name": "text"}
    return AppConfig(providers=[provider], models=[ModelConfig(name="video", kind="poll", provider="rh",
                                                               options=options)])


def enqueue(store: Store, prompts: list[str], params: dict[str, Any] | None = None) -> tuple[str, list[str]]:
    return poll_helpers.enqueue(store, prompts, route=ROUTE, params=params)


@pytest.mark.asyncio
async def test_pool_never_exceeds_limit_and_outputs_land_on_disk(server, store, data_dir) -> None:
    prompts = [f"clip {n:02d}" for n in range(10)]
    batch, ids = enqueue(store, prompts)
    async with scheduler_running(store, make_config(server.url, limit=3), data_dir, SPEED) as sched:
        await sched.wait_for_batches([batch])
    stats = server.stats()
    assert states(store, ids) == ["success"] * 10
    assert stats["max_in_flight"] <= 3
    assert stats["creates"] == {p: 1 for p in prompts}
    for task_id in ids:
        task, result = store.get(task_id), store.result(task_id)
        assert task.remote_id and len(task.remote_id) == 19
        assert result.text.startswith(f"RunningHub task {task.remote_id}: 1 output(s)")
        [path] = result.file_list
        assert Path(path).read_bytes().endswith(task.remote_id.encode())
        assert first_frame_size(Path(path)) == (160, 90)  # a real clip, as the gallery shows it


@pytest.mark.asyncio
async def test_fifo_order_kept_under_421_415_1003_back_off(server, store, data_dir) -> None:
    server.fake.api_keys[DEMO_API_KEY] = 2  # the key allows 2; we would poll 5: 421 in between
    server.inject("create", 415, 1003, "1011")
    prompts = [f"shot {n:02d}" for n in range(8)]
    batch, ids = enqueue(store, prompts)
    async with scheduler_running(store, make_config(server.url, limit=5), data_dir, SPEED) as sched:
        await sched.wait_for_batches([batch])
    stats = server.stats()
    assert states(store, ids) == ["success"] * 8
    assert stats["create_order"] == prompts
    assert stats["rejects"].get("421", 0) > 0 and stats["rejects"]["415"] == 1
    assert stats["max_in_flight"] <= 2
    logs = " ".join(line.line for line in store.logs(ids[0]))
    assert "keeping the head of the queue" in logs


@pytest.mark.asyncio
async def test_remote_failure_carries_node_and_message(server, store, data_dir) -> None:
    batch, ids = enqueue(store, ["ok", "broken #fail", "typo #badnode"])
    async with scheduler_running(store, make_config(server.url), data_dir, SPEED) as sched:
        await sched.wait_for_batches([batch])
    ok, failed, bad = (store.get(i) for i in ids)
    assert ok.state == "success"
    assert (failed.state, failed.error_kind, failed.attempt) == ("failed", "provider", 1)
    assert "node SONIC_PreData" in failed.error and "missing 2 required positional" in failed.error
    assert (bad.state, bad.error_kind) == ("failed", "bad_input")
    assert "node 6" in bad.error
    assert server.stats()["creates"] == {"ok": 1, "broken #fail": 1, "typo #badnode": 1}


@pytest.mark.asyncio
async def test_create_reply_lost_is_never_resubmitted(server, store, data_dir) -> None:
    server.inject("create", "lost")
    batch, ids = enqueue(store, ["lost reply", "next one"])
    async with scheduler_running(store, make_config(server.url), data_dir, SPEED) as sched:
        await sched.wait_for_batches([batch])
    lost, nxt = store.get(ids[0]), store.get(ids[1])
    assert (lost.state, lost.error_kind) == ("failed", "network")
    assert "not resubmitted" in lost.error and "call-record" in lost.error
    assert nxt.state == "success"
    assert server.stats()["creates"] == {"lost reply": 1, "next one": 1}


@pytest.mark.asyncio
async def test_poll_tolerates_bad_replies_then_fails_network_and_resumes(server, store, data_dir) -> None:
    batch, ids = enqueue(store, ["flaky"])
    server.inject("status", "nonjson", "reset", "http500", 1000, "slow:0.3")
    async with scheduler_running(store, make_config(server.url), data_dir, SPEED) as sched:
        await sched.wait_for_batches([batch])
    assert store.get(ids[0]).state == "success"
    assert store.get(ids[0]).attempt == 1

    batch, ids = enqueue(store, ["down"])
    server.inject("status", *["nonjson"] * 5)
    server.inject("query", *["nonjson"] * 5)  # the v2 fallback is down too
    async with scheduler_running(store, make_config(server.url), data_dir, SPEED) as sched:
        await wait_until(lambda: store.get(ids[0]).attempt == 2, timeout=120)
        await sched.wait_for_batches([batch])
    task = store.get(ids[0])
    assert task.state == "success" and task.error_kind is None
    assert any("5 polls in a row failed" in line.line for line in store.logs(ids[0]))
    assert any("resuming RunningHub task" in line.line for line in store.logs(ids[0]))
    assert server.stats()["creates"] == {"flaky": 1, "down": 1}


@pytest.mark.asyncio
async def test_restart_resumes_from_remote_id_without_creating_again(server, store, data_dir) -> None:
    server.fake.run_s = (1.5, 2.0)
    prompts = [f"long {n}" for n in range(4)]
    batch, ids = enqueue(store, prompts)
    config = make_config(server.url, limit=4)
    async with scheduler_running(store, config, data_dir, SPEED):
        await wait_until(lambda: all(store.get(i).remote_id for i in ids))
    assert states(store, ids) == ["pending"] * 4  # handed back at shutdown, remote ids kept
    async with scheduler_running(store, config, data_dir, SPEED) as sched:
        await sched.wait_for_batches([batch])
    assert states(store, ids) == ["success"] * 4
    assert server.stats()["creates"] == {p: 1 for p in prompts}
    assert server.stats()["cancels"] == []


@pytest.mark.asyncio
async def test_cancel_calls_the_remote_cancel(server, store, data_dir) -> None:
    server.fake.run_s = (30.0, 30.0)
    batch, ids = enqueue(store, ["to cancel"])
    async with scheduler_running(store, make_config(server.url), data_dir, SPEED) as sched:
        await wait_until(lambda: store.get(ids[0]).remote_id is not None)
        store.cancel(ids)
        sched.wake()
        await sched.wait_for_batches([batch])
    task = store.get(ids[0])
    assert (task.state, task.error_kind) == ("canceled", "canceled")
    assert server.stats()["cancels"] == [task.remote_id]


@pytest.mark.asyncio
async def test_local_timeout_leaves_the_remote_task_alone(server, store, data_dir) -> None:
    server.fake.run_s = (30.0, 30.0)
    batch, ids = enqueue(store, ["slow render"])
    async with scheduler_running(store, make_config(server.url, timeout_s=20.0), data_dir, SPEED) as sched:
        await sched.wait_for_batches([batch])
    task = store.get(ids[0])
    assert (task.state, task.error_kind, task.attempt) == ("failed", "timeout", 1)
    assert "still running remotely" in task.error
    assert f"call-record-detail/{task.remote_id}" in task.error
    stats = server.stats()
    assert stats["cancels"] == [] and stats["creates"] == {"slow render": 1}


@pytest.mark.asyncio
async def test_wrong_key_pauses_the_lane_instead_of_failing_each_task(server, store, data_dir) -> None:
    batch, ids = enqueue(store, [f"t{n}" for n in range(5)])
    config = make_config(server.url, key="not-a-valid-key-0000", limit=5)
    async with scheduler_running(store, config, data_dir, SPEED) as sched:
        await sched.wait_for_batches([batch])
    assert "API key rejected (802" in store.paused_lanes()[ROUTE]
    assert states(store, ids) == ["pending"] * 5  # waiting for the operator, none failed
    assert store.get(ids[0]).error_kind == "login"
    assert server.stats()["calls"]["create"] == 1


@pytest.mark.asyncio
async def test_balance_pause_then_resume_runs_everything_once(server, store, data_dir) -> None:
    server.inject("create", 416)
    prompts = [f"q{n}" for n in range(4)]
    batch, ids = enqueue(store, prompts)
    async with scheduler_running(store, make_config(server.url, limit=4), data_dir, SPEED) as sched:
        await wait_until(lambda: ROUTE in store.paused_lanes())
        assert "balance" in store.paused_lanes()[ROUTE]
        # The operator resumes later, when every back-off has run out (see the report: the
        # tasks behind the head get jittered retry times from the scheduler, not a release).
        await wait_until(lambda: states(store, ids) == ["pending"] * 4
                    and all(store.get(i).not_before < store.now() for i in ids))
        store.resume_lane(ROUTE)
        sched.wake()
        await sched.wait_for_batches([batch])
    assert states(store, ids) == ["success"] * 4
    assert server.stats()["create_order"] == prompts


@pytest.mark.asyncio
async def test_webapp_route_merges_node_info_and_retries_downloads(server, store, data_dir) -> None:
    options = {"webapp_id": "1877265245566922753", "prompt_node_id": 52, "prompt_field_name": "prompt",
               "node_info_list": [{"nodeId": "3", "fieldName": "style", "fieldValue": "ink"},
                                  {"nodeId": "4", "fieldName": "seed", "fieldValue": 7}],
               "instance_type": "plus"}
    server.inject("download", "http500", "reset")
    batch, ids = enqueue(store, ["a cat"], params={
        "node_info_list": [{"nodeId": 3, "fieldName": "style", "fieldValue": "wash"}]})
    async with scheduler_running(store, make_config(server.url, model_options=options), data_dir, SPEED) as sched:
        await sched.wait_for_batches([batch])
    assert store.get(ids[0]).state == "success"
    assert server.stats()["create_order"] == ["wash | a cat"]
    assert len(store.result(ids[0]).file_list) == 1
    assert server.stats()["calls"]["download"] == 3


@pytest.mark.asyncio
async def test_unreadable_reply_quoting_the_key_is_redacted_before_it_is_cut(server, store, data_dir) -> None:
    # The echo page puts the key across the 60-character cut: cut first, and its start survives.
    server.inject("outputs", "echo")
    batch, ids = enqueue(store, ["echoed"])
    async with scheduler_running(store, make_config(server.url), data_dir, SPEED) as sched:
        await sched.wait_for_batches([batch])
    assert store.get(ids[0]).state == "success"
    logs = task_log(store, ids[0])
    assert "502, not JSON" in logs and '"apiKey": "***' in logs
    assert DEMO_API_KEY[:8] not in logs


@pytest.mark.asyncio
async def test_key_with_an_illegal_header_character_is_never_reported_as_a_lost_create(
        server, store, data_dir) -> None:
    broken_key = DEMO_API_KEY[:16] + "\n" + DEMO_API_KEY[16:]  # survives any strip()
    batch, ids = enqueue(store, ["never sent"])
    async with scheduler_running(store, make_config(server.url, key=broken_key), data_dir, SPEED) as sched:
        await sched.wait_for_batches([batch])
    task = store.get(ids[0])
    assert (task.state, task.error_kind) == ("failed", "network")
    assert "reply was lost" not in task.error and "could not be built" in task.error
    assert DEMO_API_KEY[:16] not in task_log(store, ids[0]) + task.error
    assert server.stats()["calls"].get("create", 0) == 0  # nothing reached RunningHub


@pytest.mark.asyncio
@pytest.mark.parametrize("first_replies", [("reset",), (1005,)])
async def test_cancel_tries_the_remote_cancel_again_until_it_is_accepted(server, store, data_dir,
                                                                        first_replies) -> None:
    server.fake.run_s = (30.0, 30.0)
    batch, ids = enqueue(store, ["to cancel"])
    async with scheduler_running(store, make_config(server.url), data_dir, SPEED) as sched:
        await wait_until(lambda: store.get(ids[0]).remote_id is not None)
        server.inject("cancel", *first_replies)
        store.cancel(ids)
        sched.wake()
        await sched.wait_for_batches([batch])
    task = store.get(ids[0])
    assert (task.state, task.error_kind) == ("canceled", "canceled")
    assert server.fake.tasks[task.remote_id].canceled_at is not None
    assert "canceled remotely" in task_log(store, ids[0])


async def cancel_refused_remotely(server: RunningHubDemoServer, store: Store, data_dir: Path) -> str:
    """Cancel a running task while RunningHub refuses every cancel; returns the task id."""
    server.fake.run_s = (30.0, 30.0)
    batch, ids = enqueue(store, ["uncancellable"])
    async with scheduler_running(store, make_config(server.url), data_dir, SPEED) as sched:
        await wait_until(lambda: store.get(ids[0]).remote_id is not None)
        server.inject("cancel", 1005, "reset", 1005)
        store.cancel(ids)
        sched.wake()
        await sched.wait_for_batches([batch])
    return ids[0]


@pytest.mark.asyncio
async def test_cancel_refused_remotely_says_the_remote_task_may_still_run(server, store, data_dir) -> None:
    task_id = await cancel_refused_remotely(server, store, data_dir)
    task = store.get(task_id)
    assert task.state == "canceled"
    assert server.fake.tasks[task.remote_id].canceled_at is None
    assert server.stats()["calls"]["cancel"] == 3
    note = "local cancel only; remote cancel failed (code 1005"
    assert note in task_log(store, task_id) and f"call-record-detail/{task.remote_id}" in task_log(store, task_id)


@pytest.mark.asyncio
async def test_cancel_refused_remotely_shows_in_the_task_error(server, store, data_dir) -> None:
    task_id = await cancel_refused_remotely(server, store, data_dir)
    assert "local cancel only; remote cancel failed (code 1005" in store.get(task_id).error


@pytest.mark.asyncio
async def test_personal_queue_full_814_backs_off_instead_of_failing(server, store, data_dir) -> None:
    server.inject("create", 814, 814)
    prompts = ["a", "b", "c"]
    batch, ids = enqueue(store, prompts)
    async with scheduler_running(store, make_config(server.url, limit=1), data_dir, SPEED) as sched:
        await sched.wait_for_batches([batch])
    assert states(store, ids) == ["success"] * 3
    assert [store.get(i).attempt for i in ids] == [1, 1, 1]
    assert server.stats()["rejects"]["814"] == 2 and server.stats()["create_order"] == prompts
    assert "RunningHub is full (814" in task_log(store, ids[0])


@pytest.mark.asyncio
@pytest.mark.parametrize("code", [1006, 1015])
async def test_poll_code_for_a_failed_remote_task_fails_it_without_retry(server, store, data_dir, code) -> None:
    server.inject("status", code)
    batch, ids = enqueue(store, ["doomed"])
    async with scheduler_running(store, make_config(server.url), data_dir, SPEED) as sched:
        await sched.wait_for_batches([batch])
    task = store.get(ids[0])
    assert (task.state, task.error_kind, task.attempt) == ("failed", "provider", 1)
    assert f"{code} " in task.error and "submit it again" in task.error
    assert server.stats()["creates"] == {"doomed": 1}


@pytest.mark.asyncio
async def test_head_backing_off_stops_creating_once_another_task_pauses_the_lane(
        server, store, data_dir) -> None:
    server.fake.api_keys[DEMO_API_KEY] = 1  # "second" gets 421 while "first" runs remotely
    batch, ids = enqueue(store, ["first", "second"])
    async with scheduler_running(store, make_config(server.url), data_dir, SPEED) as sched:
        await wait_until(lambda: server.stats()["rejects"].get("421", 0) > 0)
        server.inject("status", 802)  # first's next poll: key rejected → the lane pauses
        await wait_until(lambda: ROUTE in store.paused_lanes())
        # Before, "second" kept creating and ran as soon as "first" ended remotely.
        await wait_until(lambda: store.get(ids[1]).state == "pending")
        assert "second" not in server.stats()["creates"]
        assert "lane paused" in task_log(store, ids[1])
        store.resume_lane(ROUTE)
        sched.wake()
        await sched.wait_for_batches([batch])
    assert states(store, ids) == ["success"] * 2
    assert server.stats()["creates"] == {"first": 1, "second": 1}


@pytest.mark.asyncio
async def test_task_canceled_on_the_website_ends_canceled_with_a_note(server, store, data_dir) -> None:
    server.fake.run_s = (1.0, 1.0)
    batch, ids = enqueue(store, ["stopped by hand #sitecancel", "kept"])
    async with scheduler_running(store, make_config(server.url), data_dir, SPEED) as sched:
        await sched.wait_for_batches([batch])
    canceled, kept = store.get(ids[0]), store.get(ids[1])
    assert (canceled.state, canceled.error_kind, canceled.attempt) == ("canceled", "canceled", 1)
    assert f"RunningHub task {canceled.remote_id} was canceled remotely" in canceled.error
    assert kept.state == "success"
    assert server.stats()["calls"]["query"] >= 1 and server.stats()["cancels"] == []


@pytest.mark.asyncio
async def test_v2_query_answers_when_the_legacy_status_keeps_failing(server, store, data_dir) -> None:
    server.fake.run_s = (1.5, 1.5)  # long enough for 5 failing legacy polls, which would fail it
    batch, ids = enqueue(store, ["legacy down"])
    server.inject("status", *["nonjson"] * 8)
    async with scheduler_running(store, make_config(server.url), data_dir, SPEED) as sched:
        await sched.wait_for_batches([batch])
    task = store.get(ids[0])
    assert (task.state, task.attempt) == ("success", 1)  # without the fallback: 5 failures, network
    calls = server.stats()["calls"]
    assert calls["status"] >= 5 and calls["query"] == min(8, calls["status"])  # one per failed legacy poll


@pytest.mark.asyncio
async def test_outputs_come_from_the_v2_query_when_legacy_outputs_keep_saying_running(
        server, store, data_dir) -> None:
    batch, ids = enqueue(store, ["lagging outputs"])
    server.inject("outputs", *[804] * 6)
    async with scheduler_running(store, make_config(server.url), data_dir, SPEED) as sched:
        await sched.wait_for_batches([batch])
    task = store.get(ids[0])
    assert task.state == "success"
    [path] = store.result(ids[0]).file_list
    assert Path(path).read_bytes().endswith(task.remote_id.encode())
    assert "taken from the v2 query" in task_log(store, ids[0])


@pytest.mark.asyncio
async def test_preflight_reads_the_account_and_warns_when_polling_more_than_the_key_runs(
        server, store, data_dir) -> None:
    from mediaassist.core.clock import Clock
    from mediaassist.providers.registry import build_providers

    server.fake.api_keys[DEMO_API_KEY] = 3
    config = make_config(server.url, limit=10)
    provider = build_providers(config, Clock(), data_dir)[ROUTE]
    await provider.start()
    try:
        lines = [str(line) for line in provider.preflight_lines]
    finally:
        await provider.close()
    assert any(line.startswith("account:") and "177814" in line for line in lines)
    assert "queue: the key runs 3 task(s) at once" in lines
    assert any(line.startswith("warning: max_polling_tasks = 10 is above") for line in lines)
    assert server.stats()["calls"]["account"] == 1 and server.stats()["calls"]["queue"] == 1


# --- a remote task is created at most once, whoever runs the row (issue 9 item 3) -------------

@contextmanager
def other_process(data_dir: Path) -> Iterator[sqlite3.Connection]:
    """Another writer on the same database file: its own connection, autocommit."""
    connection = sqlite3.connect(data_dir / "mediaassist.sqlite3", timeout=30, isolation_level=None)
    try:
        yield connection
    finally:
        connection.close()


@pytest.mark.asyncio
async def test_create_that_returns_after_the_row_got_a_remote_id_is_cancelled_at_once(
        server, store, data_dir) -> None:
    """Another attempt (a reaped one's retry, a second process) saves a remote id while our
    create is on the wire: ours is the extra remote task, cancelled at once; the row keeps the
    first id and polls it."""
    other = server.fake.create(DEMO_API_KEY, "raced")[1]["taskId"]
    server.inject("create", "slow:1.0")
    batch, ids = enqueue(store, ["raced"])
    with other_process(data_dir) as rival:
        async with scheduler_running(store, make_config(server.url), data_dir, SPEED) as sched:
            await wait_until(lambda: server.stats()["calls"].get("create", 0) == 1)
            rival.execute("UPDATE task SET remote_id = ? WHERE task_id = ? AND remote_id IS NULL", (other, ids[0]))
            await sched.wait_for_batches([batch])
    task = store.get(ids[0])
    assert (task.state, task.remote_id) == ("success", other)
    [extra] = [tid for tid in server.fake.tasks if tid != other]
    assert server.stats()["cancels"] == [extra]
    assert server.fake.tasks[extra].canceled_at is not None
    logs = task_log(store, ids[0])
    assert f"created RunningHub task {extra}, but the task already had remote id {other}" in logs
    assert "canceled it" in logs


@pytest.mark.asyncio
async def test_remote_id_saved_while_waiting_at_the_gate_is_polled_not_created(server, store, data_dir) -> None:
    """The remote id is read inside the create step (after the gate), not only at the claim."""
    other = server.fake.create(DEMO_API_KEY, "waiting")[1]["taskId"]
    batch, ids = enqueue(store, ["waiting"])
    with other_process(data_dir) as rival:
        # Another process holds the create gate (it is creating) ...
        rival.execute("INSERT INTO gate (name, owner, expires_at, not_before) VALUES (?, 'rival', ?, 0)",
                      (f"create:{ROUTE}", store.now() + 60))
        async with scheduler_running(store, make_config(server.url), data_dir, SPEED) as sched:
            await wait_until(lambda: store.get(ids[0]).state == "running")
            # ... and saves this task's remote id before it lets go of the gate.
            rival.execute("UPDATE task SET remote_id = ? WHERE task_id = ?", (other, ids[0]))
            rival.execute("UPDATE gate SET owner = NULL, expires_at = 0 WHERE name = ?", (f"create:{ROUTE}",))
            await sched.wait_for_batches([batch])
    assert (store.get(ids[0]).state, store.get(ids[0]).remote_id) == ("success", other)
    assert server.stats()["calls"].get("create", 0) == 0 and server.stats()["cancels"] == []
    assert "was created meanwhile; polling it, not creating" in task_log(store, ids[0])


def test_status_shows_the_account_check_and_warns_about_the_limit(server, tmp_path) -> None:
    from tests.helpers import cli, write_config

    server.fake.api_keys[DEMO_API_KEY] = 3
    config = write_config(tmp_path / "config.toml", f"""
[[providers]]
name = "rh"
kind = "poll"
type = "runninghub"
base_url = "{server.url}"
api_key_env = "RH_STATUS_KEY"
max_polling_tasks = 10
""")
    proc = cli("status", "--config", str(config), "--data-dir", str(tmp_path / "data"),
               env={"RH_STATUS_KEY": DEMO_API_KEY})
    assert proc.returncode == 0, proc.stderr
    assert "    account: NORMAL, balance 177814 coins, 0 task(s) running" in proc.stdout
    assert ("    warning: max_polling_tasks = 10 is above what the account runs at once (3)" in proc.stdout)
    assert DEMO_API_KEY not in proc.stdout + proc.stderr
    as_json = cli("status", "--json", "--config", str(config), "--data-dir", str(tmp_path / "data"),
                  env={"RH_STATUS_KEY": DEMO_API_KEY})
    assert '"account_check"' in as_json.stdout and "queue: the key runs 3 task(s) at once" in as_json.stdout
