"""Several keys of one provider: each key a lane of its own on the provider's queue, with its own
limit, held across schedulers sharing one store; a rejected key is benched and the others carry
on; a remote task stays with the key that created it. Real scheduler, real httpx, the demo
servers over loopback."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mediaassist.core.clock import Clock
from mediaassist.core.config import AppConfig, parse_config
from mediaassist.core.errors import ConfigError
from mediaassist.core.lanes import lane_specs
from mediaassist.core.store import NewTask, Store
from mediaassist.demo_servers.openai_server import DemoOpenAIServer
from mediaassist.demo_servers.runninghub_server import RunningHubDemoServer
from mediaassist.status import lane_status
from tests.harness import make_scheduler, run_batch, scheduler_running, wait_until, wait_until_sync
from tests.helpers import cli, cli_popen, stored_text, toml_table, write_config, write_csv

KEY_A = "sk-team-a-Hq3nV8xR2mL5pT9w"
KEY_B = "sk-team-b-Wz7cK1yF4jD6sG0e"
DEAD_KEY = "sk-gone-Bn2vX5qM8rT1yL4k"
ROUTE = "api:acme"


@pytest.fixture
def keys_in_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACME_KEY_A", KEY_A)
    monkeypatch.setenv("ACME_KEY_B", KEY_B)
    monkeypatch.setenv("ACME_KEY_DEAD", DEAD_KEY)


@pytest.fixture
def server() -> Iterator[DemoOpenAIServer]:
    # Each key may have 2 requests in flight; a third is answered 429 for that key only.
    with DemoOpenAIServer(keys={KEY_A: 2, KEY_B: 2}, latency_s=(0.15, 0.25), models=("gpt-x",)) as srv:
        yield srv


def keyed_config(base_url: str, keys: list[dict[str, Any]]) -> AppConfig:
    return parse_config({"providers": [{"name": "acme", "kind": "api", "type": "openai", "base_url": base_url,
                                        "keys": keys}],
                         "models": [{"name": "writer", "kind": "api", "provider": "acme", "remote_model": "gpt-x"}]})


TWO_KEYS = [{"env": "ACME_KEY_A", "label": "team-a", "concurrency": 2},
            {"env": "ACME_KEY_B", "label": "team-b", "concurrency": 2}]


def chat_tasks(count: int, prefix: str = "t") -> list[NewTask]:
    return [NewTask(model="writer", model_kind="api", route=ROUTE, prompt=f"slogan {n}", task_id=f"{prefix}{n:03d}")
            for n in range(count)]


# --- config ------------------------------------------------------------------------------------
def test_keys_become_lanes_of_one_queue_with_their_own_settings() -> None:
    config = parse_config({"providers": [{
        "name": "acme", "kind": "api", "type": "openai", "base_url": "https://api.example.com/v1", "concurrency": 3,
        "proxy": "http://127.0.0.1:7890", "keys": [
            {"env": "K1", "label": "team-a", "concurrency": 2},
            {"keyring": "acme-2", "concurrency": "auto", "max_concurrency": 4, "hours": "23:00-07:00"},
            {"env": "K3", "proxy": "socks5://10.0.0.2:1080"}]}]})
    lanes = {spec.name: spec for spec in lane_specs(config)}

    assert list(lanes) == ["api:acme/team-a", "api:acme/acme-2", "api:acme/K3"]  # a label defaults to its source
    assert {spec.route for spec in lanes.values()} == {ROUTE}
    assert [(s.limit, s.adaptive) for s in lanes.values()] == [(2, False), (4, True), (3, False)]
    assert lanes["api:acme/acme-2"].hours and not lanes["api:acme/team-a"].hours
    slots = config.providers[0].slots()
    assert [s.proxy for s in slots] == ["http://127.0.0.1:7890", "http://127.0.0.1:7890", "socks5://10.0.0.2:1080"]
    assert [s.keyring_name for s in slots] == ["acme/team-a", "acme-2", "acme/K3"]
    assert config.model is not None and config.provider("acme") is config.providers[0]


def test_bad_keys_name_every_problem_and_the_fix() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config({"providers": [
            {"name": "acme", "kind": "api", "type": "openai", "base_url": "https://a.example/v1", "api_key_env": "X",
             "keys": [{"env": "K1"}]},
            {"name": "rh", "kind": "poll", "type": "runninghub", "base_url": "https://rh.example", "keys": [
                {"env": "K1", "label": "a", "concurency": 2},
                {"label": "b"},
                {"env": "K2", "keyring": "k2", "label": "c"},
                {"env": "K3", "label": "a b"},
                {"env": "K4", "label": "d", "concurrency": 2}]},
        ]})
    problems = [str(p) for p in caught.value.problems]
    text = "\n".join(problems)
    assert "providers[0].api_key_env: a provider with keys takes its secrets from them" in text
    assert 'providers[1].keys[0].concurency: unknown key; did you mean "concurrency"?' in text
    assert "providers[1].keys[1]: give exactly one of env" in text and "found: none" in text
    assert "providers[1].keys[2]: give exactly one of env" in text and "found: env, keyring" in text
    assert "providers[1].keys[3].label: 'a b' is not allowed" in text
    assert "providers[1].keys[4].concurrency: only for kind = \"api\"" in text


def test_a_label_used_twice_is_refused() -> None:
    with pytest.raises(ConfigError, match="label 'a' is used twice"):
        parse_config({"providers": [{"name": "acme", "kind": "api", "type": "openai", "base_url": "https://a.example",
                                     "keys": [{"env": "K1", "label": "a"}, {"env": "K2", "label": "a"}]}]})


# --- running -----------------------------------------------------------------------------------
@pytest.mark.asyncio
@pytest.mark.sqlite_only
async def test_two_keys_run_at_the_sum_of_their_limits_never_above_either(server, store, data_dir, keys_in_env):
    done = await run_batch(store, keyed_config(server.base_url, TWO_KEYS), data_dir, chat_tasks(16), Clock(speed=1))

    assert {t.state for t in done} == {"success"}
    assert server.key_max_in_flight == {KEY_A: 2, KEY_B: 2}  # each key at its limit, never above
    assert server.max_in_flight == 4  # both keys at once: twice one key's concurrency
    assert not [r for r in server.api_requests() if r.status == 429]
    lanes = [t.lane for t in done]
    assert set(lanes) == {"api:acme/team-a", "api:acme/team-b"}
    assert min(lanes.count("api:acme/team-a"), lanes.count("api:acme/team-b")) >= 4  # the work is shared
    for key in (KEY_A, KEY_B):  # a key's label is all that is ever shown of it
        assert key not in stored_text(store)


@pytest.mark.asyncio
@pytest.mark.sqlite_only
async def test_a_rejected_key_is_benched_and_the_others_carry_its_tasks(server, store, data_dir, keys_in_env):
    keys = [{"env": "ACME_KEY_DEAD", "label": "team-x", "concurrency": 2}, *TWO_KEYS]
    done = await run_batch(store, keyed_config(server.base_url, keys), data_dir, chat_tasks(10), Clock(speed=1))

    assert {t.state for t in done} == {"success"}  # no task paid for the key's fault
    assert {t.lane for t in done} <= {"api:acme/team-a", "api:acme/team-b"}
    assert {t.attempt for t in done} == {1}  # given back unspent, not failed and retried
    reason = store.paused_lane_reasons()["api:acme/team-x"]
    assert "API key rejected (HTTP 401)" in str(reason)
    assert "api:acme/team-a" not in store.paused_lanes() and "api:acme/team-b" not in store.paused_lanes()
    assert "key team-x benched" in stored_text(store)
    assert DEAD_KEY not in stored_text(store) and DEAD_KEY[6:] not in stored_text(store)
    rows = {entry["lane"]: entry for entry in lane_status(keyed_config(server.base_url, keys), store)}
    assert rows["api:acme/team-x"]["key"] == "team-x" and rows["api:acme/team-x"]["paused"]
    assert rows["api:acme/team-a"]["success"] + rows["api:acme/team-b"]["success"] == 10


@pytest.mark.asyncio
async def test_per_key_limits_hold_across_schedulers_on_one_store(server, store_location, data_dir, keys_in_env):
    """Two schedulers, each with its own connection (as two processes or two machines would have):
    a key's limit counts its rows of every process, in the claim's transaction."""
    config = keyed_config(server.base_url, TWO_KEYS)
    first, second = Store(store_location), Store(store_location)
    try:
        ids, _ = first.enqueue("b1", chat_tasks(24))
        async with scheduler_running(first, config, data_dir, 1.0) as one, \
                scheduler_running(second, config, data_dir, 1.0) as two:
            one.wake()
            two.wake()
            await asyncio.wait_for(asyncio.gather(one.wait_for_batches(["b1"]), two.wait_for_batches(["b1"])), 120)
        tasks = first.tasks(["b1"])
    finally:
        first.close()
        second.close()
    assert {t.state for t in tasks} == {"success"} and len(tasks) == len(ids)
    assert server.key_max_in_flight == {KEY_A: 2, KEY_B: 2}
    assert not [r for r in server.api_requests() if r.status == 429]


# --- poll: a remote task stays with the key that created it ----------------------------------------
RH_A, RH_B = "rh-key-a-5Tq9Wm2Xv7", "rh-key-b-3Lp8Nc6Zr1"


def rh_config(url: str, first: str, polling: int | None = 2) -> AppConfig:
    limit = {"max_polling_tasks": polling} if polling is not None else {}
    keys = [{"env": "RH_KEY_A", "label": "a", **limit}, {"env": "RH_KEY_B", "label": "b", **limit}]
    if first == "b":
        keys.reverse()  # the next start lists the other key first: it must not take the first's tasks
    return parse_config({"providers": [{"name": "rh", "kind": "poll", "type": "runninghub", "base_url": url,
                                        "poll_interval_s": 0.5, "keys": keys}],
                         "models": [{"name": "video", "kind": "poll", "provider": "rh",
                                     "workflow_id": "1904136902449209346", "prompt_node_id": "6",
                                     "prompt_field_name": "text"}]})


@pytest.mark.asyncio
@pytest.mark.sqlite_only
async def test_a_remote_task_is_resumed_by_the_key_that_created_it(store, data_dir, monkeypatch):
    monkeypatch.setenv("RH_KEY_A", RH_A)
    monkeypatch.setenv("RH_KEY_B", RH_B)
    server = RunningHubDemoServer({RH_A: 2, RH_B: 2}, queued_s=(0.2, 0.3), run_s=(3.0, 4.0))
    server.start()
    try:
        tasks = [NewTask(model="video", model_kind="poll", route="poll:rh", prompt=f"clip {n}", task_id=f"v{n}")
                 for n in range(4)]
        store.enqueue("b1", tasks)
        sched = make_scheduler(store, rh_config(server.url, "a"), data_dir, 1.0)
        await sched.start()
        try:
            sched.wake()
            await wait_until(lambda: sum(1 for t in store.tasks(["b1"]) if t.remote_id) == 4, 60, "4 remote tasks")
        finally:
            await sched.stop()  # the app quits: the remote tasks run on at the service
        held = {t.task_id: t.account for t in store.tasks(["b1"])}
        assert set(held.values()) == {"a", "b"}  # both keys created tasks, and the rows remember which
        assert {t.state for t in store.tasks(["b1"])} == {"pending"}

        async with scheduler_running(store, rh_config(server.url, "b"), data_dir, 1.0) as again:
            again.wake()
            await asyncio.wait_for(again.wait_for_batches(["b1"]), 90)
        done = store.tasks(["b1"])
        stats = server.fake.stats()
    finally:
        server.stop()
    assert {t.state for t in done} == {"success"}, [(t.task_id, t.error) for t in done]
    assert {t.task_id: t.account for t in done} == held  # each polled to the end with its own key
    assert sum(stats["creates"].values()) == 4  # never created again
    for key in (RH_A, RH_B):
        assert key not in stored_text(store)


# --- real processes ----------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.timeout(240)
def test_two_run_processes_keep_each_keys_limit(server, tmp_path: Path, data_dir: Path):
    """Two ``mediaassist run`` processes on one data dir, each with its own file: per-key limits hold."""
    config = write_config(tmp_path / "config.toml", f"""
[[providers]]
name = "acme"
kind = "api"
type = "openai"
base_url = "{server.base_url}"
keys = [{{ env = "ACME_KEY_A", label = "team-a", concurrency = 2 }},
        {{ env = "ACME_KEY_B", label = "team-b", concurrency = 2 }}]

[[models]]
name = "writer"
kind = "api"
provider = "acme"
remote_model = "gpt-x"
""")
    env = {**os.environ, "ACME_KEY_A": KEY_A, "ACME_KEY_B": KEY_B}
    files = [write_csv(tmp_path / f"part{n}.csv", [{"model": "writer", "prompt": f"copy {n}-{i}"} for i in range(12)])
             for n in range(2)]
    procs = [subprocess.Popen([sys.executable, "-m", "mediaassist", "run", str(f), "--config", str(config),
                               "--data-dir", str(data_dir)], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for f in files]
    outputs = [proc.communicate(timeout=200) for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0], [err for _out, err in outputs]
    assert server.key_max_in_flight == {KEY_A: 2, KEY_B: 2}
    assert server.max_in_flight <= 4
    assert not [r for r in server.api_requests() if r.status == 429]
    assert len([r for r in server.api_requests() if r.status == 200]) == 24
    for out, err in outputs:
        assert KEY_A not in out + err and KEY_B not in out + err


@pytest.mark.asyncio
@pytest.mark.sqlite_only
@pytest.mark.parametrize("given", [None, 4])
async def test_a_poll_key_follows_the_limit_its_service_reports(store, data_dir, monkeypatch, given):
    """No max_polling_tasks in the config: each key polls what RunningHub says it runs at once
    (queue/status concurrentLimit), so no create is refused 421. Written in the config: the
    operator's number stays, and the service refuses what is over its limit."""
    monkeypatch.setenv("RH_KEY_A", RH_A)
    monkeypatch.setenv("RH_KEY_B", RH_B)
    server = RunningHubDemoServer({RH_A: 2, RH_B: 3}, queued_s=(0.1, 0.2), run_s=(0.5, 0.8))
    server.start()
    try:
        config = rh_config(server.url, "a", polling=given)
        async with scheduler_running(store, config, data_dir, 1.0) as sched:
            store.enqueue("b1", [NewTask(model="video", model_kind="poll", route="poll:rh", prompt=f"clip {n}")
                                 for n in range(12)])
            sched.wake()
            await asyncio.wait_for(sched.wait_for_batches(["b1"]), 90)
            limits = {lane.name: lane.limit for lane in sched.lanes.values()}
        stats = server.fake.stats()
    finally:
        server.stop()
    assert {t.state for t in store.tasks(["b1"])} == {"success"}
    if given is None:
        assert limits == {"poll:rh/a": 2, "poll:rh/b": 3}
        assert stats["rejects"].get("421", 0) == 0  # never past a key's limit
    else:
        assert limits == {"poll:rh/a": 4, "poll:rh/b": 4}
        assert stats["rejects"].get("421", 0) > 0  # 4 polled against 2 and 3: the service said no


@pytest.mark.asyncio
@pytest.mark.sqlite_only
async def test_a_short_queue_is_shared_by_the_keys(server, store, data_dir, keys_in_env):
    done = await run_batch(store, keyed_config(server.base_url, TWO_KEYS), data_dir, chat_tasks(2), Clock(speed=1))
    assert sorted(t.lane for t in done) == ["api:acme/team-a", "api:acme/team-b"]  # one each, not both on the first


@pytest.mark.asyncio
@pytest.mark.sqlite_only
async def test_a_key_with_a_proxy_of_its_own_sends_only_its_traffic_through_it(server, store, data_dir, keys_in_env):
    from urllib.parse import urlsplit

    from tests.proxy_server import http_proxy

    with http_proxy() as proxy:
        keys = [{**TWO_KEYS[0], "proxy": proxy.url()}, TWO_KEYS[1]]
        done = await run_batch(store, keyed_config(server.base_url, keys), data_dir, chat_tasks(8), Clock(speed=1))
    assert {t.state for t in done} == {"success"}
    through_a = sum(1 for t in done if t.lane == "api:acme/team-a")
    port = urlsplit(server.base_url).port
    assert port is not None and through_a >= 1
    assert proxy.reached(port) == through_a  # team-a's requests, and none of team-b's
    by_key = {r.key_index for r in server.api_requests()}
    assert by_key == {0, 1}


# --- status: the provider's line over its keys' ------------------------------------------------
def test_status_shows_a_keyed_provider_as_the_sum_of_its_keys(tmp_path: Path) -> None:
    """While tasks wait for a free key, ``status`` has a line for the provider as a whole: running
    is what its keys run, over the sum of their limits (not 0 over a ceiling), and the poll pool
    figures are each key's own and, on the provider's line, the whole provider's."""
    def keyed(provider: str, kind: str, limit_name: str) -> str:
        keys = [{"env": "ACME_KEY_A", "label": "team-a", limit_name: 2},
                {"env": "ACME_KEY_B", "label": "team-b", limit_name: 3}]
        return toml_table("providers", name=provider, kind=kind, type="simulated", min_duration_s=600,
                          max_duration_s=600, keys=keys)
    config = write_config(tmp_path / "c.toml", "".join([
        keyed("sim-api", "api", "concurrency"), keyed("sim-poll", "poll", "max_polling_tasks"),
        toml_table("models", name="writer", kind="api", provider="sim-api"),
        toml_table("models", name="video", kind="poll", provider="sim-poll")]))
    tasks = write_csv(tmp_path / "t.csv", [{"model": model, "prompt": f"p{i}"}
                                           for model in ("writer", "video") for i in range(8)])
    data, keys_env = tmp_path / "d", {"ACME_KEY_A": KEY_A, "ACME_KEY_B": KEY_B}
    common = ("--config", str(config), "--data-dir", str(data))
    run = cli_popen("run", str(tasks), *common, env=keys_env)
    wait_until_sync(lambda: _running(data) == 10, 60, "both providers' keys at their limits")

    english, chinese = (cli("status", *common, "--lang", lang, env=keys_env) for lang in ("en", "zh_CN"))
    as_json = json.loads(cli("status", "--json", *common, env=keys_env).stdout)
    run.kill()
    lines, chinese_lines = ({line.split()[0]: line for line in out.stdout.splitlines()} for out in (english, chinese))
    assert "running 5/5  pending 3  success 0" in lines["api:sim-api"], english.stdout
    assert "running 5/5  pending 3  success 0" in lines["poll:sim-poll"], english.stdout
    assert "running 2/2  pending 0" in lines["poll:sim-poll/team-a"]
    assert "运行中 5/5  排队 3  成功 0" in chinese_lines["api:sim-api"], chinese.stdout
    pools = {lane["lane"]: (lane["maxPollingTasks"], lane["availableSlots"], lane["utilizationRate"])
             for lane in as_json["lanes"] if lane["kind"] == "poll"}
    assert pools == {"poll:sim-poll/team-a": (2, 0, 1.0), "poll:sim-poll/team-b": (3, 0, 1.0),
                     "poll:sim-poll": (5, 0, 1.0)}


def _running(data: Path) -> int:
    """Running tasks in the store of a ``run`` in another process (-1 until it has made the store)."""
    try:
        with sqlite3.connect(data / "mediaassist.sqlite3") as conn:
            count: int = conn.execute("SELECT count(*) FROM task WHERE state = 'running'").fetchone()[0]
            return count
    except sqlite3.OperationalError:
        return -1
