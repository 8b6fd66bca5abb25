"""The API lane against a server as strict as real ones: a hidden concurrency limit learnt by
``concurrency = "auto"``, probe-first back-off, rate-limit headers, SSE streams, budget errors,
n > 1 and token usage -- real scheduler, real httpx, the demo OpenAI server over loopback."""

from __future__ import annotations

import concurrent.futures
import itertools
import sqlite3
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from mediaassist.core.clock import Clock
from mediaassist.core.config import AppConfig, parse_config
from mediaassist.core.store import NewTask, Store, Task
from mediaassist.demo_servers.openai_server import (
    DemoOpenAIServer,
    Fault,
    RequestRecord,
)
from mediaassist.demo_servers.text import demo_answer
from mediaassist.providers.openai_api import CHOICE_SEPARATOR, parse_duration
from mediaassist.status import lane_status
from tests.harness import run_batch, scheduler_running
from tests.helpers import api_model_toml, cli_popen, openai_provider_toml, write_config, write_csv
from tests.integration.test_api_lane import assert_quiet_after_each_429, chat_tasks

KEY = "sk-test-Adapt9mW3pL0vX7yT2nB5cR9"
LANE = "api:acme"
MODELS = ("gpt-x", "painter")


@pytest.fixture
def server() -> Iterator[DemoOpenAIServer]:
    with DemoOpenAIServer(api_key=KEY, latency_s=(0.01, 0.03), models=MODELS) as srv:
        yield srv


def make_config(base_url: str, *, concurrency: int | str = 3, max_concurrency: int | None = None,
                defaults: dict[str, Any] | None = None) -> AppConfig:
    provider: dict[str, Any] = {"name": "acme", "kind": "api", "type": "openai", "base_url": base_url,
                                "api_key": KEY, "concurrency": concurrency}
    if max_concurrency is not None:
        provider["max_concurrency"] = max_concurrency
    return parse_config({"providers": [provider], "models": [
        {"name": "writer", "kind": "api", "provider": "acme", "remote_model": "gpt-x",
         "defaults": defaults or {}},
        {"name": "painter", "kind": "api", "provider": "acme", "endpoint": "images"},
        {"name": "stranger", "kind": "api", "provider": "acme", "remote_model": "gpt-unknown"},
    ]})


def states(tasks: list[Task]) -> set[tuple[str, str | None]]:
    return {(t.state, t.error_kind) for t in tasks}


def log_lines(store: Store, tasks: list[Task]) -> list[str]:
    return [line.line for t in tasks for line in store.logs(t.task_id)]


def spans_above(requests: list[RequestRecord], level: int) -> list[float]:
    """How long, each time, more than ``level`` requests were in flight at the server."""
    edges = sorted([(r.started, 1) for r in requests] + [(r.finished or r.started, -1) for r in requests])
    spans, in_flight, since = [], 0, None
    for at, step in edges:
        in_flight += step
        if in_flight > level and since is None:
            since = at
        elif in_flight <= level and since is not None:
            spans.append(at - since)
            since = None
    return spans


# --- adaptive concurrency ------------------------------------------------------------------
@pytest.mark.asyncio
async def test_auto_learns_the_hidden_limit_and_holds_near_it(server, store, data_dir, caplog):
    # Answers slow enough that a loaded box's own dispatch delays stay small beside them (the
    # client counts a request in flight a moment before the server does).
    server.configure(latency_s=(0.3, 0.3), concurrency_limit=4)
    config = make_config(server.base_url, concurrency="auto", max_concurrency=10)
    caplog.set_level("INFO", logger="mediaassist.lane")
    async with scheduler_running(store, config, data_dir, Clock(speed=20)) as sched:
        store.enqueue("b1", chat_tasks(100))
        sched.wake()
        await sched.wait_for_batches(["b1"])
    done = store.tasks(["b1"])

    assert states(done) == {("success", None)}
    assert all(t.attempt == 1 for t in done)  # an overshoot's 429 is not a failed attempt
    learned = store.lane_limits()[LANE]
    assert abs(learned - 4) <= 1
    requests = server.api_requests()
    rejected = [r for r in requests if r.status == 429]
    assert len(rejected) / len(requests) <= 0.08
    # Above the limit plus one only in passing: never for a whole round trip (0.3 s).
    assert all(span < 0.3 for span in spans_above(requests, learned + 1))
    assert sched.lanes[LANE].current_limit() == learned
    assert any("learned limit" in r.getMessage() for r in caplog.records)  # the lane log says so
    [entry] = [e for e in lane_status(config, store) if e["lane"] == LANE]
    assert (entry["limit"], entry["max_concurrency"], entry["adaptive"]) == (learned, 10, True)


@pytest.mark.asyncio
async def test_learned_limit_is_kept_across_restarts(server, store, store_location, data_dir):
    server.configure(latency_s=(0.05, 0.05), concurrency_limit=3)
    config = make_config(server.base_url, concurrency="auto")
    await run_batch(store, config, data_dir, chat_tasks(60), Clock(speed=20))
    learned = store.lane_limits()[LANE]
    server.reset()

    reopened = Store(store_location)  # as the next start of the app opens it (SQLite or PostgreSQL)
    try:
        done = await run_batch(reopened, config, data_dir, chat_tasks(3 * learned), Clock(speed=20), batch="b2")
    finally:
        reopened.close()
    assert states(done) == {("success", None)}
    # No slow start from one again: the first round trip already runs at the learned limit.
    first = sorted(server.api_requests(), key=lambda r: r.started)[:learned]
    assert max(r.in_flight for r in first) >= min(learned, 3)


@pytest.mark.asyncio
async def test_a_number_keeps_the_fixed_gate(server, store, data_dir):
    server.configure(latency_s=(0.05, 0.05))
    await run_batch(store, make_config(server.base_url, concurrency=2), data_dir, chat_tasks(10), Clock(speed=20))
    assert server.max_in_flight == 2
    assert store.lane_limits() == {}


# --- good-client back-off --------------------------------------------------------------------
@pytest.mark.asyncio
async def test_header_less_429_sends_one_probe_at_a_time(server, store, data_dir):
    # A closed window with no Retry-After and no x-ratelimit-* (as LiteLLM answers): after the
    # first rejections, one probe goes at a time and the others wait for its answer.
    server.configure(latency_s=(0.05, 0.05))
    server.add_fault(Fault("rate_limit", count=None, for_s=4.0))
    done = await run_batch(store, make_config(server.base_url), data_dir, chat_tasks(6), Clock(speed=5))

    assert states(done) == {("success", None)}
    requests = sorted(server.api_requests(), key=lambda r: r.started)
    rejected = [r for r in requests if r.status == 429]
    first_answer = min(r.responded for r in rejected)
    reopened = min(r.started for r in requests if r.status == 200)
    probes = [r for r in requests if first_answer < r.started <= reopened]
    assert len(probes) >= 2
    for before, after in itertools.pairwise(probes):
        assert after.started >= before.responded  # the next probe only after the last one's answer
    window_end = rejected[0].started + 4.0
    # Probes ~10 % of the wait apart (0.4 s here) find it well within 1 s; doubling delays from
    # the same 0.2 s base (0.2, 0.6, 1.4, 3.0, 6.2 s) would overshoot by 2.2 s.
    assert reopened - window_end <= 1.0
    planned = [float(line.split(" in ")[1].split(" s")[0]) for line in log_lines(store, done) if "one probe" in line]
    assert planned and max(planned) <= 0.1 * 4.0 * 1.1 + 0.01  # what the lane meant to wait, jitter included
    assert any("one probe" in line for line in log_lines(store, done))


@pytest.mark.asyncio
async def test_retry_after_ms_is_honoured(server, store, data_dir):
    server.add_fault(Fault("rate_limit", count=3, retry_after_ms=800, delay_s=0.2))
    done = await run_batch(store, make_config(server.base_url), data_dir, chat_tasks(6), Clock(speed=20))

    assert states(done) == {("success", None)}
    assert_quiet_after_each_429(server.api_requests(), min_wait=0.8)


@pytest.mark.asyncio
async def test_x_ratelimit_headers_pace_requests_before_a_429(store, data_dir):
    # Five requests per 1.5 s window; the lane of three would overrun it without pacing.
    with DemoOpenAIServer(api_key=KEY, latency_s=(0.02, 0.02), models=MODELS, rpm=(5, 1.5)) as server:
        done = await run_batch(store, make_config(server.base_url), data_dir, chat_tasks(12), Clock(speed=20))
        requests = sorted(server.api_requests(), key=lambda r: r.started)
    assert states(done) == {("success", None)}
    for answer in requests:
        if answer.sent_headers.get("x-ratelimit-remaining-requests") == "0":
            reset = parse_duration(answer.sent_headers["x-ratelimit-reset-requests"])
            later = [r.started for r in requests if r.started > answer.responded]
            assert all(t >= answer.responded + reset - 0.01 for t in later)
    assert sum(r.status == 429 for r in requests) <= 1  # at most a clock-edge race, not a storm


@pytest.mark.asyncio
@pytest.mark.parametrize("fault", [Fault("server_error", count=None, should_retry=False),
                                   Fault("rate_limit", count=None, should_retry=False)])
async def test_x_should_retry_false_is_respected(server, store, data_dir, fault):
    server.add_fault(fault)
    [task] = await run_batch(store, make_config(server.base_url), data_dir, chat_tasks(1), Clock(speed=50))

    assert (task.state, task.attempt) == ("failed", 1)
    assert len(server.api_requests()) == 1


# --- streams --------------------------------------------------------------------------------
@pytest.mark.asyncio
async def test_stream_is_read_whole_with_usage_and_partial_text_in_the_log(server, store, data_dir):
    server.configure(latency_s=(1.0, 1.0))
    config = make_config(server.base_url, defaults={"stream": True, "stream_options": {"include_usage": True}})
    [task] = await run_batch(store, config, data_dir, chat_tasks(1), Clock(speed=50))

    assert task.state == "success", task.error
    result = store.result(task.task_id)
    assert result.text == f"[gpt-x] {demo_answer('slogan 0')}"
    assert result.usage_dict["total_tokens"] > 0
    [request] = server.api_requests()
    assert request.stream and request.chunks > 8
    lines = log_lines(store, [task])
    assert any(line.startswith("receiving:") for line in lines)  # the detail pane saw it grow
    assert any("stream read to the end" in line for line in lines)


@pytest.mark.asyncio
async def test_a_broken_stream_is_one_failed_attempt(server, store, data_dir):
    server.add_fault(Fault("stream_break", count=1))
    config = make_config(server.base_url, defaults={"stream": True})
    [task] = await run_batch(store, config, data_dir, chat_tasks(1, params={}), Clock(speed=200))

    assert (task.state, task.attempt) == ("success", 2)
    assert len(server.api_requests()) == 2  # the broken one and the retry: nothing else billed
    assert any("the stream broke" in line for line in log_lines(store, [task]))


# --- errors as real servers send them --------------------------------------------------------
@pytest.mark.asyncio
@pytest.mark.parametrize("status", [400, 422])
async def test_budget_exceeded_pauses_the_lane(server, store, data_dir, status):
    server.add_fault(Fault("budget", count=None, status=status))
    done = await run_batch(store, make_config(server.base_url, concurrency=1), data_dir, chat_tasks(5), Clock(speed=50))

    failed = [t for t in done if t.state == "failed"]
    assert [t.error_kind for t in failed] == ["quota"]
    assert "Budget has been exceeded" in store.paused_lanes()[LANE]
    assert sorted(t.state for t in done).count("pending") == 4
    assert len(server.api_requests()) == 1


@pytest.mark.asyncio
async def test_n_choices_are_all_kept_and_usage_is_summed_per_batch(server, store, data_dir):
    tasks = [*chat_tasks(2, params={"n": 3}),
             NewTask(model="painter", model_kind="api", route=LANE, prompt="a fox", params={"n": 2})]
    done = await run_batch(store, make_config(server.base_url), data_dir, tasks, Clock(speed=50))

    assert states(done) == {("success", None)}
    texts = [store.result(t.task_id).text for t in done if t.model == "writer"]
    assert all(len(text.split(CHOICE_SEPARATOR)) == 3 for text in texts)
    [painted] = [t for t in done if t.model == "painter"]
    assert len(store.result(painted.task_id).file_list) == 2
    per_task = [store.result(t.task_id).usage_dict["total_tokens"] for t in done]
    assert store.batch_usage(["b1"])["total_tokens"] == sum(per_task) > 0


@pytest.mark.asyncio
async def test_unknown_model_and_invalid_params_fail_once_with_the_servers_words(server, store, data_dir):
    tasks = [NewTask(model="stranger", model_kind="api", route=LANE, prompt="hi"),
             *chat_tasks(1, params={"n": "many"})]
    done = await run_batch(store, make_config(server.base_url), data_dir, tasks, Clock(speed=50))

    by_model = {t.model: t for t in done}
    assert (by_model["stranger"].state, by_model["stranger"].error_kind, by_model["stranger"].attempt) == (
        "failed", "bad_input", 1)
    assert "HTTP 404" in by_model["stranger"].error and "model_not_found" in by_model["stranger"].error
    assert (by_model["writer"].error_kind, by_model["writer"].attempt) == ("bad_input", 1)
    assert "HTTP 400" in by_model["writer"].error and "'n'" in by_model["writer"].error


@pytest.mark.asyncio
async def test_image_size_is_honoured(server, store, data_dir):
    tasks = [NewTask(model="painter", model_kind="api", route=LANE, prompt="a fox", params={"size": "256x256"})]
    [task] = await run_batch(store, make_config(server.base_url), data_dir, tasks, Clock(speed=50))

    [path] = store.result(task.task_id).file_list
    width, height = struct.unpack(">II", Path(path).read_bytes()[16:24])  # the PNG's IHDR
    assert (width, height) == (256, 256)


def test_server_lists_its_models_and_rejects_bad_bodies(server):
    auth = {"Authorization": f"Bearer {KEY}"}
    with httpx.Client(base_url=server.base_url, headers=auth) as client:
        assert [m["id"] for m in client.get("/models").json()["data"]] == list(MODELS)
        assert client.get("/models/nope").json()["error"]["code"] == "model_not_found"
        broken = client.post("/chat/completions", content=b"{not json", headers={"Content-Type": "application/json"})
        extra = client.post("/chat/completions", json={"model": "gpt-x", "messages": [{"role": "user", "content": "x"}],
                                                       "temprature": 1})
        no_messages = client.post("/chat/completions", json={"model": "gpt-x", "messages": []})
        bad_size = client.post("/images/generations", json={"model": "painter", "prompt": "x", "size": "7x7"})
        ok = client.post("/chat/completions", json={"model": "gpt-x", "messages": [{"role": "user", "content": "x"}]})
    assert broken.status_code == 400 and broken.json()["error"]["code"] == "invalid_json"
    assert (extra.status_code, extra.json()["error"]["param"]) == (400, "temprature")
    assert (no_messages.status_code, no_messages.json()["error"]["param"]) == (400, "messages")
    assert (bad_size.status_code, bad_size.json()["error"]["param"]) == (400, "size")
    assert ok.status_code == 200
    assert int(ok.headers["x-ratelimit-remaining-requests"]) < int(ok.headers["x-ratelimit-limit-requests"])


def test_hidden_limit_answers_429_without_any_header(server):
    server.configure(latency_s=(0.3, 0.3), concurrency_limit=1)
    body = {"model": "gpt-x", "messages": [{"role": "user", "content": "x"}]}
    auth = {"Authorization": f"Bearer {KEY}"}
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        answers = list(pool.map(lambda _: httpx.post(f"{server.base_url}/chat/completions", json=body,
                                                     headers=auth, timeout=10), range(2)))
    statuses = sorted(a.status_code for a in answers)
    assert statuses == [200, 429]
    [limited] = [a for a in answers if a.status_code == 429]
    assert not any(name.startswith(("retry-after", "x-ratelimit")) for name in limited.headers)


@pytest.mark.parametrize(("value", "seconds"), [("1s", 1.0), ("6m0s", 360.0), ("20ms", 0.02),
                                                ("1h2m3.5s", 3723.5), ("2.5", 2.5), ("soon", None),
                                                (None, None), ("5x", None)])
def test_parse_duration(value, seconds):
    assert parse_duration(value) == seconds


# --- across processes and versions --------------------------------------------------------------
def _auto_config_text(base_url: str) -> str:
    return (openai_provider_toml("acme", base_url, concurrency="auto", max_concurrency=8)
            + api_model_toml("writer", "acme", remote_model="gpt-x"))


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_two_run_processes_learn_and_hold_one_shared_limit(server, tmp_path):
    server.configure(latency_s=(0.2, 0.2), concurrency_limit=3)
    config = write_config(tmp_path / "config.toml", _auto_config_text(server.base_url))
    data = tmp_path / "data"
    files = [write_csv(tmp_path / f"batch-{i}.csv", [{"model": "writer", "prompt": f"ad {i}-{n}"} for n in range(40)])
             for i in range(2)]
    runs = [cli_popen("run", str(f), "--json", "--speed", "20", "--config", str(config), "--data-dir", str(data),
                      env={"ACME_API_KEY": KEY}) for f in files]
    for run_ in runs:
        _stdout, stderr = run_.communicate(timeout=240)
        assert run_.returncode == 0, stderr

    store = Store(data / "mediaassist.sqlite3")
    try:
        learned = store.lane_limits()[LANE]
        assert {t.state for t in store.tasks()} == {"success"}
    finally:
        store.close()
    assert abs(learned - 3) <= 1
    requests = server.api_requests()
    # Both processes claim against the one stored limit: the server is not sent twice its limit.
    assert all(span < 0.2 for span in spans_above(requests, learned + 1))
    assert sum(r.status == 429 for r in requests) / len(requests) <= 0.1


def test_an_old_database_gets_the_usage_and_learned_limit_columns(data_dir):
    path = data_dir / "old.sqlite3"
    Store(path).close()
    raw = sqlite3.connect(path)
    raw.execute("ALTER TABLE result DROP COLUMN usage")
    raw.execute("ALTER TABLE lane_state DROP COLUMN learned_limit")
    raw.execute("DROP TABLE schema_version")  # as a data dir from before schema versions
    raw.commit()
    raw.close()
    store = Store(path)
    try:
        store.save_lane_limit(LANE, 4)
        assert store.lane_limits() == {LANE: 4}
        assert store.batch_usage(["none"]) == {}
    finally:
        store.close()
