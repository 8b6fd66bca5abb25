"""The API lane end to end: real scheduler, real httpx, the demo OpenAI server over loopback."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from mediaassist.core.clock import Clock
from mediaassist.core.config import AppConfig, parse_config
from mediaassist.core.secrets import SecretFilter
from mediaassist.core.store import NewTask, Task
from mediaassist.demo import DEMO_API_MODEL, DEMO_IMAGE_MODEL, DemoEnvironment
from mediaassist.demo_servers.openai_server import DemoOpenAIServer, Fault, RequestRecord
from mediaassist.demo_servers.text import demo_answer
from mediaassist.providers.openai_api import parse_retry_after
from tests.harness import run_batch, scheduler_running, wait_until
from tests.helpers import stored_text

KEY = "sk-test-Zq8mW3pL0vX7yT2nB5cR9dF4"
LANE = "api:acme"
MODELS = ("gpt-x", "reasoner", "painter")  # the remote names the config below sends


@pytest.fixture
def server() -> Iterator[DemoOpenAIServer]:
    # echo_key: a 401 shows the whole key, as some gateways do -- the worst case for redaction
    with DemoOpenAIServer(api_key=KEY, latency_s=(0.01, 0.03), models=MODELS, echo_key=True) as srv:
        yield srv


def make_config(base_url: str, *, concurrency: int = 3, timeout_s: float | None = None,
                key: dict[str, str] | None = None) -> AppConfig:
    provider: dict[str, Any] = {"name": "acme", "kind": "api", "type": "openai", "base_url": base_url,
                                "concurrency": concurrency, **(key if key is not None else {"api_key": KEY})}
    if timeout_s is not None:
        provider["timeout_s"] = timeout_s
    return parse_config({"providers": [provider], "models": [
        {"name": "writer", "kind": "api", "provider": "acme", "endpoint": "chat", "remote_model": "gpt-x",
         "system_prompt": "You write ad copy.", "defaults": {"temperature": 0.2}},
        {"name": "reasoner", "kind": "api", "provider": "acme", "need_empty_prompt": True,
         "system_prompt": "ignored"},
        {"name": "painter", "kind": "api", "provider": "acme", "endpoint": "images"},
    ]})


def chat_tasks(count: int, model: str = "writer", **extra: Any) -> list[NewTask]:
    return [NewTask(model=model, model_kind="api", route=LANE, prompt=f"slogan {i}", **extra)
            for i in range(count)]


def states(tasks: list[Task]) -> list[tuple[str, str | None]]:
    return sorted({(t.state, t.error_kind) for t in tasks})


# --- happy paths ---------------------------------------------------------------------------
@pytest.mark.asyncio
async def test_chat_sends_model_params_and_system_prompt_rules(server, store, data_dir, fast_clock):
    tasks = chat_tasks(1, params={"max_tokens": 50}) + chat_tasks(1, model="reasoner")
    done = await run_batch(store, make_config(server.base_url), data_dir, tasks, fast_clock)

    assert states(done) == [("success", None)]
    assert store.result(done[0].task_id).text == f"[gpt-x] {demo_answer('slogan 0')}"
    by_model = {r.model: r for r in server.api_requests()}
    assert by_model["gpt-x"].has_system and by_model["gpt-x"].auth_ok
    assert {"temperature", "max_tokens"} <= set(by_model["gpt-x"].body_keys)
    assert not by_model["reasoner"].has_system  # need_empty_prompt: user content only


@pytest.mark.asyncio
@pytest.mark.parametrize("response_format", ["b64_json", "url"])
async def test_images_are_saved_as_files(server, store, data_dir, fast_clock, response_format):
    tasks = [NewTask(model="painter", model_kind="api", route=LANE, prompt="a red fox",
                     params={"n": 2, "response_format": response_format})]
    [task] = await run_batch(store, make_config(server.base_url), data_dir, tasks, fast_clock)

    assert (task.state, task.error_kind) == ("success", None)
    files = [Path(f) for f in store.result(task.task_id).file_list]
    assert [f.name for f in files] == ["image-1.png", "image-2.png"]
    assert all(f.read_bytes().startswith(b"\x89PNG") and f.is_relative_to(data_dir) for f in files)
    downloads = [r for r in server.requests if r.path.startswith("/files/")]
    assert len(downloads) == (2 if response_format == "url" else 0)
    assert not any(r.has_auth for r in downloads)  # the key goes to the API only, never to a file host


def image_task(**params: Any) -> NewTask:
    return NewTask(model="painter", model_kind="api", route=LANE, prompt="a red fox",
                   params={"response_format": "url", **params})


@pytest.mark.asyncio
@pytest.mark.parametrize("download_faults", [("redirect", "redirect"), ("server_error", "drop")])
async def test_image_download_follows_redirects_and_retries_without_generating_again(
        server, store, data_dir, fast_clock, download_faults):
    for kind in download_faults:
        server.add_fault(Fault(kind, target="files"))
    [task] = await run_batch(store, make_config(server.base_url), data_dir, [image_task(n=2)], fast_clock)

    assert (task.state, task.error_kind, task.attempt) == ("success", None, 1)
    assert len(server.api_requests()) == 1  # generated (and paid for) once
    assert len(store.result(task.task_id).file_list) == 2
    downloads = [r for r in server.requests if r.path.startswith("/files/")]
    assert [r.fault for r in downloads[:2]] == list(download_faults)
    assert not any(r.has_auth for r in downloads)


@pytest.mark.asyncio
async def test_image_that_cannot_be_downloaded_fails_without_paying_again(server, store, data_dir, fast_clock):
    server.add_fault(Fault("server_error", count=None, target="files"))
    [task] = await run_batch(store, make_config(server.base_url), data_dir, [image_task()], fast_clock)

    assert (task.state, task.error_kind, task.attempt) == ("failed", "download", 1)
    assert "generated (and billed) but its download failed 3 times (HTTP 500)" in task.error
    assert len(server.api_requests()) == 1
    assert len([r for r in server.requests if r.path.startswith("/files/")]) == 3


# --- the concurrency gate ------------------------------------------------------------------
@pytest.mark.asyncio
@pytest.mark.parametrize("concurrency", [1, 3, 5])
async def test_in_flight_never_exceeds_concurrency(server, store, data_dir, fast_clock, concurrency):
    # Answers slow enough that a loaded box fills every slot before the first one frees.
    server.configure(latency_s=(0.25, 0.35))
    done = await run_batch(store, make_config(server.base_url, concurrency=concurrency), data_dir,
                           chat_tasks(4 * concurrency), fast_clock)

    assert states(done) == [("success", None)]
    assert server.max_in_flight == concurrency  # reached, never exceeded


@pytest.mark.asyncio
async def test_gate_holds_while_back_off_timers_run(server, store, data_dir):
    server.configure(latency_s=(0.02, 0.05))
    server.add_fault(Fault("rate_limit", count=4))  # no Retry-After: growing delays with jitter
    done = await run_batch(store, make_config(server.base_url), data_dir, chat_tasks(12), Clock(speed=50))

    assert states(done) == [("success", None)]
    assert server.max_in_flight <= 3
    assert all(t.attempt == 1 for t in done)  # a plain rate limit is not a failed attempt


# --- Retry-After -----------------------------------------------------------------------------
def assert_quiet_after_each_429(requests: list[RequestRecord], min_wait: float) -> None:
    limited = [r for r in requests if r.status in (429, 503)]
    assert limited
    for rejected in limited:
        later = [r.started for r in requests if r.started > rejected.responded]
        assert all(t >= rejected.responded + min_wait for t in later), (rejected, later)


@pytest.mark.asyncio
@pytest.mark.parametrize("kind", ["rate_limit", "unavailable"])
async def test_retry_after_seconds_stops_every_request_to_the_provider(server, store, data_dir, kind):
    # All three slots are in flight when the 429/503s come back, then nothing may reach the
    # server for the full second -- not the three waiting attempts, not the next queued tasks.
    server.add_fault(Fault(kind, count=3, retry_after=1, delay_s=0.3))
    done = await run_batch(store, make_config(server.base_url), data_dir, chat_tasks(9), Clock(speed=20))

    assert states(done) == [("success", None)]
    assert all(t.attempt == 1 for t in done)
    assert_quiet_after_each_429(server.api_requests(), min_wait=1.0)
    assert server.max_in_flight <= 3
    assert any("rate limited" in line.line for t in done for line in store.logs(t.task_id))


@pytest.mark.asyncio
async def test_retry_after_http_date_is_honoured(server, store, data_dir):
    server.add_fault(Fault("rate_limit", count=1, retry_after=2, retry_after_date=True))
    done = await run_batch(store, make_config(server.base_url, concurrency=1), data_dir, chat_tasks(2), Clock(speed=20))

    assert states(done) == [("success", None)]
    assert server.api_requests()[0].retry_after.endswith("GMT")
    # The date has one-second resolution: "now + 2 s" is always more than 1 s away.
    assert_quiet_after_each_429(server.api_requests(), min_wait=1.0)


@pytest.mark.parametrize(("value", "expected"), [
    ("3", 3.0), ("1.5", 1.5), ("-4", 0.0), ("999999", 3600.0), ("soon", None), (None, None), ("", None),
    ("Wed, 21 Oct 2015 07:28:10 GMT", 10.0),
])
def test_parse_retry_after(value, expected):
    now = 1445412480.0  # 2015-10-21 07:28:00 UTC
    assert parse_retry_after(value, now) == expected


# --- faults ----------------------------------------------------------------------------------
@pytest.mark.asyncio
@pytest.mark.parametrize(("fault", "state", "kind", "attempts"), [
    (Fault("server_error", count=None), "failed", "provider", 3),
    (Fault("drop", count=None), "failed", "network", 3),
    (Fault("not_json", count=None), "failed", "provider", 3),
    (Fault("bad_shape", count=None), "failed", "provider", 3),
    (Fault("slow", count=None, delay_s=8), "failed", "timeout", 3),
    (Fault("bad_request", count=None), "failed", "bad_input", 1),
    (Fault("server_error", count=1), "success", None, 2),
    (Fault("slow", count=1, delay_s=8), "success", None, 2),
])
async def test_each_fault_ends_with_its_state_and_kind(server, store, data_dir, fast_clock, fault, state, kind,
                                                       attempts):
    server.add_fault(fault)
    # 1.5 s at speed 100: far above a loaded CI box's answer time, far below the slow fault's 8 s
    config = make_config(server.base_url, timeout_s=150)
    [task] = await run_batch(store, config, data_dir, chat_tasks(1), fast_clock)

    assert (task.state, task.error_kind, task.attempt) == (state, kind, attempts)
    assert len(server.api_requests()) == attempts
    assert store.paused_lanes() == {}


@pytest.mark.asyncio
async def test_timed_out_request_is_dropped_at_the_server(server, store, data_dir, fast_clock):
    server.add_fault(Fault("slow", count=1, delay_s=3))
    [task] = await run_batch(store, make_config(server.base_url, timeout_s=20), data_dir, chat_tasks(1), fast_clock)

    assert task.state == "success"
    first = server.api_requests()[0]
    await wait_until(lambda: first.finished is not None)
    assert first.aborted and first.status is None


@pytest.mark.asyncio
@pytest.mark.parametrize(("fault", "kind", "reason"), [
    (Fault("quota", count=None, delay_s=0.2), "quota", "quota exhausted: You exceeded your current quota"),
    (Fault("unauthorized", count=None, delay_s=0.2), "login", "API key rejected (HTTP 401)"),
    (Fault("forbidden", count=None, delay_s=0.2), "login", "API key rejected (HTTP 403)"),
])
async def test_quota_and_login_pause_the_provider_and_leave_the_rest_untouched(
        server, store, data_dir, fast_clock, fault, kind, reason):
    server.add_fault(fault)
    config = make_config(server.base_url)
    done = await run_batch(store, config, data_dir, chat_tasks(10), fast_clock)

    assert store.paused_lanes()[LANE].startswith(reason)
    failed = [t for t in done if t.state == "failed"]
    untouched = [t for t in done if t.state == "pending"]
    assert 1 <= len(failed) <= 3 and all(t.error_kind == kind and t.attempt == 1 for t in failed)
    assert len(failed) + len(untouched) == 10
    assert all((t.attempt, t.error_kind, t.started_at) == (1, None, None) for t in untouched)
    assert len(server.api_requests()) == len(failed)  # nothing was sent after the pause

    # The operator tops up / fixes the key and resumes: the untouched rest runs normally.
    server.clear_faults()
    store.resume_lane(LANE)
    rest = await run_batch(store, config, data_dir, [], fast_clock)
    assert sorted(t.state for t in rest) == ["failed"] * len(failed) + ["success"] * len(untouched)


@pytest.mark.asyncio
async def test_missing_key_pauses_with_a_clear_reason(server, store, data_dir, fast_clock, monkeypatch):
    monkeypatch.delenv("ACME_KEY_UNSET", raising=False)
    config = make_config(server.base_url, key={"api_key_env": "ACME_KEY_UNSET"})
    done = await run_batch(store, config, data_dir, chat_tasks(6), fast_clock)

    assert "ACME_KEY_UNSET" in store.paused_lanes()[LANE]
    # Nothing was tried, so nothing failed: every task waits, untouched, for the key.
    assert [(t.state, t.attempt, t.error_kind) for t in done] == [("pending", 1, None)] * 6
    assert server.api_requests() == []


# --- cancel ----------------------------------------------------------------------------------
@pytest.mark.asyncio
async def test_cancel_drops_the_request_in_flight(server, store, data_dir, fast_clock):
    server.add_fault(Fault("slow", count=1, delay_s=30))
    config = make_config(server.base_url)
    [slow_id], _ = store.enqueue("b1", chat_tasks(1))
    async with scheduler_running(store, config, data_dir, fast_clock) as sched:
        await wait_until(lambda: server.in_flight == 1)
        store.cancel([slow_id])
        sched.wake()
        await sched.wait_for_batches(["b1"])
        assert (store.get(slow_id).state, store.get(slow_id).error_kind) == ("canceled", "canceled")
        await wait_until(lambda: server.in_flight == 0)
        assert server.api_requests()[0].aborted

        store.enqueue("b2", chat_tasks(2))  # the shared client is still healthy
        sched.wake()
        await sched.wait_for_batches(["b2"])
        assert states(store.tasks(["b2"])) == [("success", None)]


# --- keys --------------------------------------------------------------------------------------
@pytest.mark.asyncio
async def test_key_never_reaches_logs_store_or_outputs(server, store, data_dir, fast_clock, monkeypatch):
    """The 401 body echoes the key in full (as some gateways do); nothing we write may keep it."""
    monkeypatch.setenv("ACME_KEY", KEY)
    log_file = data_dir / "run.log"
    handler = logging.FileHandler(log_file, encoding="utf-8")
    handler.addFilter(SecretFilter())
    handler.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)  # httpx/httpcore debug lines included
    try:
        server.add_fault(Fault("server_error", count=1))
        server.add_fault(Fault("unauthorized", count=None))
        tasks = [*chat_tasks(3), NewTask(model="painter", model_kind="api", route=LANE, prompt="fox")]
        config = make_config(server.base_url, key={"api_key_env": "ACME_KEY"})
        done = await run_batch(store, config, data_dir, tasks, fast_clock)
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)
        handler.close()

    failed = [t for t in done if t.error_kind == "login"]
    assert failed and all("Incorrect API key provided: ***" in t.error for t in failed)
    assert all(r.auth_ok for r in server.api_requests())  # the key did go where it belongs
    assert KEY not in stored_text(store)  # every row of every table (the file below, or a server)
    store.close()
    written = [p for p in data_dir.rglob("*") if p.is_file()]
    assert log_file in written and (store.shared or any(p.suffix == ".sqlite3" for p in written))
    for path in written:
        assert KEY.encode() not in path.read_bytes(), path


@pytest.mark.asyncio
async def test_long_key_echoed_by_a_401_is_redacted_before_the_detail_is_cut(server, store, data_dir,
                                                                             fast_clock):
    long_key = "eyJhbGciOiJIUzI1NiJ9." + "A" * 200 + "Zq" + "B" * 150  # gateway tokens run 300-600 chars
    config = make_config(server.base_url, key={"api_key": long_key})  # not the server's key: 401
    done = await run_batch(store, config, data_dir, chat_tasks(1), fast_clock)

    [failed] = [t for t in done if t.state == "failed"]
    reason = store.paused_lanes()[LANE]
    assert "Incorrect API key provided: ***" in failed.error and "Incorrect API key provided: ***" in reason
    assert long_key[:40] not in failed.error + reason
    assert not any(long_key[:40] in line.line for line in store.logs(failed.task_id))


# --- the server's HTTP control plane and the demo environment -------------------------------
def test_faults_can_be_set_over_http(server):
    with httpx.Client(base_url=server.root_url) as client:
        assert client.post("/_demo/faults", json={"faults": [{"kind": "quota", "count": 1}]}).status_code == 200
        assert client.post("/_demo/faults", json={"kind": "nonsense"}).status_code == 400
        auth = {"Authorization": f"Bearer {KEY}"}
        body = {"model": "gpt-x", "messages": [{"role": "user", "content": "hi"}]}
        first = client.post("/v1/chat/completions", json=body, headers=auth)
        second = client.post("/v1/chat/completions", json=body, headers=auth)
        stats = client.get("/_demo/stats").json()
    assert (first.status_code, first.json()["error"]["code"]) == (429, "insufficient_quota")
    assert second.status_code == 200
    assert [r["status"] for r in stats["requests"]] == [429, 200]
    assert stats["max_in_flight"] == 1 and stats["in_flight"] == 0


@pytest.mark.asyncio
async def test_demo_environment_runs_writer_and_illustrator_over_http(store, data_dir):
    clock = Clock(speed=400)  # 8-30 s nominal -> 20-75 ms
    async with DemoEnvironment(clock, data_dir, log_in=False) as demo:  # API only: no browser logins
        api_only = AppConfig(providers=[p for p in demo.providers if p.kind == "api"],
                             models=[m for m in demo.models if m.kind == "api"])
        [provider] = api_only.providers
        assert (provider.type, provider.concurrency) == ("openai", 3)
        tasks = [NewTask(model=DEMO_API_MODEL, model_kind="api", route="api:demo-openai", prompt="copy"),
                 NewTask(model=DEMO_IMAGE_MODEL, model_kind="api", route="api:demo-openai", prompt="fox")]
        done = await run_batch(store, api_only, data_dir, tasks, clock)
    assert states(done) == [("success", None)]
    image = Path(store.result(done[1].task_id).file_list[0])
    assert image.read_bytes().startswith(b"\x89PNG")


@pytest.mark.asyncio
async def test_a_demo_answer_slowed_by_a_busy_machine_is_not_a_time_out_at_high_speed(store, data_dir):
    """--speed 1000 once scaled the demo API's 120 s time-out to 0.12 s: on a loaded box nearly
    every request of a 10,000-row run timed out. An answer half a real second late still counts."""
    clock = Clock(speed=1000)
    async with DemoEnvironment(clock, data_dir, log_in=False) as demo:
        api_only = AppConfig(providers=[p for p in demo.providers if p.kind == "api"],
                             models=[m for m in demo.models if m.kind == "api"])
        root_url = api_only.providers[0].base_url.removesuffix("/v1")
        late = {"kind": "slow", "count": None, "delay_s": 0.5 * clock.speed}  # nominal: 0.5 s real
        assert httpx.post(f"{root_url}/_demo/faults", json=late).status_code == 200
        task = NewTask(model=DEMO_API_MODEL, model_kind="api", route="api:demo-openai", prompt="copy")
        done = await run_batch(store, api_only, data_dir, [task], clock)
    assert states(done) == [("success", None)]
