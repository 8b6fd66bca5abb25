"""The seven makers' own video APIs, each a shipped profile run end to end against its demo
format (real HTTP, the real scheduler, SQLite): good tasks, content refusals, throttling, an
empty balance, Kling's JWT renewal, the key kept off the storage host and out of every log --
and an eighth service written as a TOML file in the test itself."""

from __future__ import annotations

import base64
import json
import logging
import threading
import time
import tomllib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from mediaassist.core.config import AppConfig, InputSpec, parse_config
from mediaassist.core.media import check_local_input
from mediaassist.core.store import NewTask, Store
from mediaassist.core.task_profiles import shipped_profiles
from mediaassist.demo_servers import DemoServer, LoopbackServer, demo_video, read_json_body
from mediaassist.demo_servers.native_video_server import DEFAULT_MODELS, SERVICES, NativeVideoDemoServer
from mediaassist.providers.poll.auth import sign_hs256
from tests.harness import scheduler_running, task_log, wait_until
from tests.helpers import cli
from tests.media_helpers import write_png
from tests.poll_helpers import SPEED, states

ROUTE = "poll:native"
KEY = "native-key-7c0ffee5e5e5e5e5"
SECRET = "native-secret-b16b00b5b16b00b5"
# Parameters each service takes as they are (Kling's duration is a string).
DEFAULTS = {"kling": {"duration": "5"}, "minimax-hailuo": {"duration": 6}, "runway": {"duration": 5},
            "gemini-veo": {"durationSeconds": 8}, "dashscope-wan": {"duration": 5}}
# The route a text-to-video create must reach, and an image-to-video one (where they differ).
I2V_ROUTES = {"kling": ("text2video", "image2video"), "vidu": ("text2video", "img2video"),
              "runway": ("text_to_video", "image_to_video")}
# The service's own words when it refuses a prompt's content.
REFUSALS = {"kling": "Failure to pass the risk control system",
            "volcengine-seedance": "input text may contain sensitive information",
            "minimax-hailuo": "input new_sensitive", "dashscope-wan": "Input data may contain inappropriate content",
            "vidu": "AuditSubmitIllegal", "runway": "flagged by our content moderation",
            "gemini-veo": "blocked by the safety filter"}
USAGE = {"volcengine-seedance": {"completion_tokens": 108900, "total_tokens": 108900},
         "dashscope-wan": {"video_duration": 5, "video_count": 1}, "vidu": {"credits": 20}}


def config_for(server: NativeVideoDemoServer, service: str, limit: int = 4) -> AppConfig:
    t2v, i2v = DEFAULT_MODELS[service][0], DEFAULT_MODELS[service][-1]
    defaults = "{ " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in DEFAULTS.get(service, {}).items()) + " }"
    text = f"""
[[providers]]
name = "native"
kind = "poll"
type = "task_api"
profile = "{service}"
base_url = "{server.base_url}"
api_key_env = "NATIVE_KEY"
{'secret_key_env = "NATIVE_SECRET"' if service == "kling" else ""}
max_polling_tasks = {limit}
poll_interval_s = 5

[[models]]
name = "video"
kind = "poll"
provider = "native"
remote_model = "{t2v}"
defaults = {defaults}

[[models]]
name = "i2v"
kind = "poll"
provider = "native"
remote_model = "{i2v}"
defaults = {defaults}
inputs.image = {{}}
"""
    return parse_config(tomllib.loads(text))


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NATIVE_KEY", KEY)
    monkeypatch.setenv("NATIVE_SECRET", SECRET)


@pytest.fixture(params=SERVICES)
def service(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def server(service: str) -> Iterator[NativeVideoDemoServer]:
    with NativeVideoDemoServer(service, api_key=KEY, secret_key=SECRET, seed=28) as srv:
        yield srv


def enqueue(store: Store, prompts: list[str], image: dict[str, Any] | None = None) -> tuple[str, list[str]]:
    batch = f"b{time.monotonic_ns()}"
    tasks = [NewTask(model="i2v" if image else "video", model_kind="poll", route=ROUTE, prompt=p,
                     inputs={"image": [image]} if image else {}) for p in prompts]
    ids, _ = store.enqueue(batch, tasks)
    return batch, ids


def picture(tmp_path: Path) -> dict[str, Any]:
    return check_local_input(str(write_png(tmp_path / "first.png", width=8)), tmp_path, InputSpec("image"), None)


async def run(store: Store, config: AppConfig, data_dir: Path, batches: list[str]) -> None:
    async with scheduler_running(store, config, data_dir, SPEED) as sched:
        await sched.wait_for_batches(batches)


def written_everywhere(store: Store, ids: list[str], data_dir: Path, caplog: pytest.LogCaptureFixture) -> str:
    """Every text the app wrote about the tasks: task logs, errors, results, the lane log, the database."""
    parts = [task_log(store, i) + (store.get(i).error or "") for i in ids]
    for task_id in ids:
        result = store.result(task_id)
        if result is not None:
            parts.append(f"{result.text} {result.usage} {result.files}")
    parts.append(caplog.text)
    parts.append((data_dir / "mediaassist.sqlite3").read_bytes().decode("latin-1"))
    return "\n".join(parts)


def test_the_seven_services_ship_as_profiles() -> None:
    assert set(SERVICES) <= set(shipped_profiles())


@pytest.mark.asyncio
async def test_good_tasks_succeed_with_the_whole_file_and_one_create_each(
        service, server, store, data_dir, tmp_path, caplog) -> None:
    caplog.set_level(logging.DEBUG, logger="mediaassist")
    text_batch, text_ids = enqueue(store, ["harbour at dawn", "rain on a tin roof"])
    image_batch, image_ids = enqueue(store, ["the picture comes alive"], picture(tmp_path))
    await run(store, config_for(server, service), data_dir, [text_batch, image_batch])
    ids = text_ids + image_ids
    assert states(store, ids) == ["success"] * 3, [store.get(i).error for i in ids]
    stats = server.stats()
    assert stats["creates"] == {"harbour at dawn": 1, "rain on a tin roof": 1, "the picture comes alive": 1}
    for task_id in ids:
        [path] = store.result(task_id).file_list
        assert Path(path).read_bytes() == demo_video(store.get(task_id).remote_id)  # the whole file
    if service in I2V_ROUTES:  # the image task went to its own route, and was polled there
        assert sorted(stats["create_routes"]) == sorted([I2V_ROUTES[service][0]] * 2 + [I2V_ROUTES[service][1]])
    assert store.result(ids[0]).usage_dict == USAGE.get(service, {})
    assert stats["downloads"] == 3 and stats["storage_keyed"] == 0  # the storage host never saw a key
    written = written_everywhere(store, ids, data_dir, caplog)
    assert KEY not in written and SECRET not in written
    assert not any(token in written for token in server.fake.tokens)  # nor Kling's signed tokens


@pytest.mark.asyncio
async def test_a_refused_prompt_fails_as_provider_with_the_services_message(service, server, store, data_dir) -> None:
    batch, ids = enqueue(store, ["something #refuse", "a calm lake"])
    await run(store, config_for(server, service), data_dir, [batch])
    refused, fine = store.get(ids[0]), store.get(ids[1])
    assert (refused.state, refused.error_kind, refused.attempt) == ("failed", "provider", 1)
    assert REFUSALS[service] in refused.error
    assert fine.state == "success"
    assert server.stats()["creates"].get("something #refuse", 0) <= 1  # never sent again


@pytest.mark.asyncio
async def test_a_throttle_answer_waits_and_retries(service, server, store, data_dir) -> None:
    server.inject("create", "throttle", "throttle")
    batch, ids = enqueue(store, ["patience"])
    await run(store, config_for(server, service), data_dir, [batch])
    assert states(store, ids) == ["success"]
    assert server.stats()["creates"] == {"patience": 1} and server.stats()["calls"]["create"] == 3
    assert f"{service} is full" in task_log(store, ids[0])


@pytest.mark.asyncio
async def test_past_the_services_job_limit_the_head_waits_and_the_order_holds(service, store, data_dir) -> None:
    with NativeVideoDemoServer(service, api_key=KEY, secret_key=SECRET, job_limit=1, seed=6) as server:
        prompts = ["first", "second", "third"]
        batch, ids = enqueue(store, prompts)
        await run(store, config_for(server, service, limit=3), data_dir, [batch])
        assert states(store, ids) == ["success"] * 3
        assert list(server.stats()["creates"]) == prompts and set(server.stats()["creates"].values()) == {1}
        assert server.stats()["calls"]["create"] > 3  # the busy answers, waited out in order


@pytest.mark.asyncio
async def test_a_quota_answer_pauses_the_lane(service, server, store, data_dir) -> None:
    server.inject("create", "quota")
    batch, ids = enqueue(store, ["one", "two"])
    await run(store, config_for(server, service), data_dir, [batch])
    assert "balance or quota exhausted" in store.paused_lanes()[ROUTE]
    assert states(store, ids) == ["pending", "pending"]
    assert server.stats()["creates"] == {} and server.stats()["calls"]["create"] == 1


@pytest.mark.asyncio
async def test_a_wrong_key_pauses_the_lane_with_the_reason(service, server, store, data_dir, monkeypatch) -> None:
    monkeypatch.setenv("NATIVE_KEY", "not-the-key-0123456789")
    batch, ids = enqueue(store, ["one", "two"])
    await run(store, config_for(server, service), data_dir, [batch])
    assert "API key rejected" in store.paused_lanes()[ROUTE]
    assert states(store, ids) == ["pending", "pending"] and server.stats()["calls"]["create"] == 1


@pytest.mark.asyncio
async def test_a_throttled_or_failing_poll_is_asked_again(service, server, store, data_dir) -> None:
    server.inject("status", "throttle", "http500")
    batch, ids = enqueue(store, ["steady"])
    await run(store, config_for(server, service), data_dir, [batch])
    assert states(store, ids) == ["success"] and server.stats()["creates"] == {"steady": 1}


@pytest.mark.asyncio
async def test_minimax_result_request_that_fails_is_asked_again_never_created_again(store, data_dir) -> None:
    with NativeVideoDemoServer("minimax-hailuo", api_key=KEY, seed=4) as server:
        server.inject("result", "http500", "throttle")  # the third step: a 500, then 1002 inside a 200
        batch, ids = enqueue(store, ["three steps"])
        await run(store, config_for(server, "minimax-hailuo"), data_dir, [batch])
        task = store.get(ids[0])
        assert (task.state, task.attempt) == ("success", 1)
        assert server.stats()["creates"] == {"three steps": 1} and server.stats()["calls"]["result"] == 3
        assert "could not be fetched (HTTP 200 rate limit exceeded(RPM) (code 1002)); try 3 soon" in \
            task_log(store, ids[0])


@pytest.mark.asyncio
@pytest.mark.parametrize("native", ["runway", "gemini-veo", "volcengine-seedance"])
async def test_operator_cancel_reaches_the_services_own_cancel_route(native, store, data_dir) -> None:
    # Long queues: Ark cancels only a queued task.
    with NativeVideoDemoServer(native, api_key=KEY, queued_s=(30.0, 30.0), run_s=(30.0, 30.0), seed=5) as server:
        batch, ids = enqueue(store, ["never mind"])
        async with scheduler_running(store, config_for(server, native), data_dir, SPEED) as sched:
            await wait_until(lambda: store.get(ids[0]).remote_id is not None)
            store.cancel(ids)
            sched.wake()
            await sched.wait_for_batches([batch])
        task = store.get(ids[0])
        assert (task.state, task.error) == ("canceled", "canceled by operator")
        assert server.stats()["cancels"] == [task.remote_id]
        assert "canceled remotely (verified)" in task_log(store, ids[0])


# --- Kling's JWT ---------------------------------------------------------------------------------------

@pytest.mark.asyncio
async def test_kling_token_the_service_calls_expired_is_renewed_never_a_failed_task(store, data_dir) -> None:
    # The service's clock runs 1798 s ahead: a token (exp = now + 1800 s) is expired for it two
    # seconds after it was signed, mid-job. The adapter signs a new one and asks again.
    with NativeVideoDemoServer("kling", api_key=KEY, secret_key=SECRET, run_s=(4.0, 4.0), seed=1) as server:
        server.fake.clock_offset_s = 1798.0
        batch, ids = enqueue(store, ["long take"])
        await run(store, config_for(server, "kling"), data_dir, [batch])
        assert states(store, ids) == ["success"]
        assert server.stats()["refusals"].get("1004", 0) >= 1  # expired, refused with Kling's code
        assert server.stats()["creates"] == {"long take": 1} and len(server.fake.tokens) >= 2
        assert ROUTE not in store.paused_lanes()


@pytest.mark.asyncio
async def test_kling_token_not_yet_valid_pauses_the_lane_naming_the_clock(store, data_dir) -> None:
    with NativeVideoDemoServer("kling", api_key=KEY, secret_key=SECRET, seed=2) as server:
        server.fake.clock_offset_s = -120.0  # this computer's clock is 2 minutes ahead of Kling's
        batch, ids = enqueue(store, ["too early"])
        await run(store, config_for(server, "kling"), data_dir, [batch])
        assert "API key rejected (HTTP 401 Authorization is not yet valid)" in store.paused_lanes()[ROUTE]
        assert states(store, ids) == ["pending"] and server.stats()["jobs"] == 0


@pytest.mark.asyncio
async def test_kling_without_a_secret_key_pauses_the_lane_naming_the_setting(store, data_dir, monkeypatch) -> None:
    monkeypatch.delenv("NATIVE_SECRET")
    with NativeVideoDemoServer("kling", api_key=KEY, secret_key=SECRET, seed=3) as server:
        batch, ids = enqueue(store, ["no secret"])
        await run(store, config_for(server, "kling"), data_dir, [batch])
        assert "secret_key_env = 'NATIVE_SECRET' is empty" in store.paused_lanes()[ROUTE]
        assert states(store, ids) == ["pending"]
        assert server.stats()["calls"].get("create", 0) == 0


def test_kling_demo_refuses_bad_tokens_with_klings_codes() -> None:
    import httpx

    with NativeVideoDemoServer("kling", api_key=KEY, secret_key=SECRET) as server:
        now = int(time.time())
        cases = {"1004": sign_hs256({"iss": KEY, "exp": now - 10, "nbf": now - 100}, SECRET),
                 "1003": sign_hs256({"iss": KEY, "exp": now + 1800, "nbf": now + 600}, SECRET),
                 "1002": sign_hs256({"iss": KEY, "exp": now + 1800, "nbf": now - 5}, "wrong-secret")}
        for code, token in cases.items():
            answer = httpx.get(f"{server.base_url}/v1/videos/text2video/1",
                               headers={"Authorization": f"Bearer {token}"})
            assert (answer.status_code, str(answer.json()["code"])) == (401, code)


def test_dashscope_demo_refuses_a_create_without_the_async_header() -> None:
    import httpx

    with NativeVideoDemoServer("dashscope-wan", api_key=KEY) as server:
        answer = httpx.post(f"{server.base_url}/api/v1/services/aigc/video-generation/video-synthesis",
                            headers={"Authorization": f"Bearer {KEY}"},
                            json={"model": "wan2.6-t2v", "input": {"prompt": "x"}})
        assert answer.status_code == 403
        assert answer.json()["message"] == "current user api does not support synchronous calls"


# --- an eighth service: only a TOML file ----------------------------------------------------------------

EIGHTH_PROFILE = """
# A made-up service: a token in its own header, the prompt deep in a list, results in a list of
# objects, a 0..1 progress, errors as {"fault": {"kind", "text"}}, a finished job told by a flag.
name = "reelsmith"
[auth]
scheme = "header"
header = "X-Reel-Token"
prefix = "rs1 "
[headers]
"X-Reel-Client" = "mediaassist"
[create]
path = "/api/jobs"
remote_id = "ticket.ref"
params_into = "settings"
[create.fields]
engine = "{remote_model}"
shots = [{ kind = "text", say = "{prompt}" }, { kind = "still", src = "{input.image}" }]
[status]
path = "/api/jobs/{id}"
state = "job.phase"
progress = "job.done_fraction"
progress_scale = 1
error = "job.why"
[status.present]
failed = "job.why"
[status.states]
queued = ["WAIT"]
running = ["WORK"]
success = ["OK"]
[result]
urls = "job.assets[*].href"
suffix = ".mp4"
[result.usage]
reel_seconds = "job.bill.seconds"
[errors]
message = "fault.text"
code = "fault.kind"
[errors.codes]
"slow-down" = "backoff"
"no-credit" = "quota"
"not-allowed" = "refused"
"""


class _Reelsmith(BaseHTTPRequestHandler):
    """The made-up service, as strict as it is simple."""

    server: LoopbackServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, body: Any) -> None:
        raw = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def _allowed(self) -> bool:
        if self.headers.get("X-Reel-Token") != f"rs1 {KEY}" or self.headers.get("X-Reel-Client") != "mediaassist":
            self._send(401, {"fault": {"kind": "who-are-you", "text": "unknown token"}})
            return False
        return True

    def do_POST(self) -> None:
        body = read_json_body(self)
        if not self._allowed():
            return
        shots = body.get("shots")
        if body.get("engine") != "reel-1" or not isinstance(shots, list) or shots[0].get("kind") != "text":
            self._send(400, {"fault": {"kind": "bad-request", "text": "engine reel-1 and a text shot first"}})
            return
        state = self.server.fake
        with state["lock"]:
            ref = f"R{len(state['jobs']) + 1}"
            state["jobs"][ref] = {"t0": time.time(), "prompt": shots[0]["say"], "body": body}
        self._send(200, {"ticket": {"ref": ref}})

    def do_GET(self) -> None:
        state = self.server.fake
        if self.path.startswith("/files/"):
            state["keyed"] += "X-Reel-Token" in self.headers
            self.send_response(200)
            data = demo_video(self.path.split("/")[-1].removesuffix(".mp4"))
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        if not self._allowed():
            return
        ref = self.path.split("/")[-1]
        job = state["jobs"][ref]
        age = time.time() - job["t0"]
        if "#nope" in job["prompt"]:
            self._send(200, {"job": {"phase": "WORK", "why": "the engine declined this prompt"}})
        elif age < 0.3:
            self._send(200, {"job": {"phase": "WAIT"}})
        elif age < 0.8:
            self._send(200, {"job": {"phase": "WORK", "done_fraction": round(age - 0.3, 2)}})
        else:
            url = f"http://127.0.0.1:{self.server.server_address[1]}/files/{ref}.mp4"
            self._send(200, {"job": {"phase": "OK", "assets": [{"href": url}], "bill": {"seconds": 4}}})


class ReelsmithServer(DemoServer):
    def __init__(self) -> None:
        self.fake = {"lock": threading.Lock(), "jobs": {}, "keyed": 0}
        self._httpd = LoopbackServer(("127.0.0.1", 0), _Reelsmith, self.fake)
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"


@pytest.mark.asyncio
async def test_an_eighth_service_is_only_a_toml_file(store, data_dir, tmp_path) -> None:
    (tmp_path / "reelsmith.toml").write_text(EIGHTH_PROFILE, encoding="utf-8")
    with ReelsmithServer() as server:
        config = parse_config(tomllib.loads(f"""
[[providers]]
name = "native"
kind = "poll"
type = "task_api"
profile = "reelsmith.toml"
base_url = "{server.url}"
api_key_env = "NATIVE_KEY"
poll_interval_s = 5
[[models]]
name = "video"
kind = "poll"
provider = "native"
remote_model = "reel-1"
defaults = {{ fps = 24 }}
[[models]]
name = "i2v"
kind = "poll"
provider = "native"
remote_model = "reel-1"
inputs.image = {{}}
"""), tmp_path)
        text_batch, (good, declined) = enqueue(store, ["a paper plane", "a #nope"])
        image_batch, (still,) = enqueue(store, ["the still moves"], picture(tmp_path))
        await run(store, config, data_dir, [text_batch, image_batch])
        jobs = server.fake["jobs"]
        assert store.get(good).state == "success" and store.result(good).usage_dict == {"reel_seconds": 4}
        [path] = store.result(good).file_list
        assert Path(path).read_bytes() == demo_video(store.get(good).remote_id)
        assert (store.get(declined).state, store.get(declined).error_kind) == ("failed", "provider")
        assert "the engine declined this prompt" in store.get(declined).error
        assert jobs["R1"]["body"] == {"engine": "reel-1", "shots": [{"kind": "text", "say": "a paper plane"}],
                                      "settings": {"fps": 24}}
        [image_body] = [j["body"] for j in jobs.values() if j["prompt"] == "the still moves"]
        assert store.get(still).state == "success"
        assert image_body["shots"][1]["src"] == "data:image/png;base64," + base64.b64encode(
            (tmp_path / "first.png").read_bytes()).decode()
        assert server.fake["keyed"] == 0


# --- profiles check ---------------------------------------------------------------------------------------

def test_profiles_check_shows_the_requests_with_secrets_masked(tmp_path) -> None:
    shown = cli("profiles", "check", "kling", "--base-url", "http://kling.example")
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    assert "POST http://kling.example/v1/videos/text2video" in out
    assert "GET http://kling.example/v1/videos/image2video/<id>" in out  # the status route follows the create
    assert '"image": "<input image: url_or_base64>"' in out
    assert "Authorization: Bearer <JWT HS256" in out
    (tmp_path / "reelsmith.toml").write_text(EIGHTH_PROFILE, encoding="utf-8")
    mine = cli("profiles", "check", str(tmp_path / "reelsmith.toml"), "--base-url", "http://reel.example")
    assert mine.returncode == 0, mine.stderr
    assert "X-Reel-Token: rs1 ***" in mine.stdout and "X-Reel-Client: mediaassist" in mine.stdout
    assert "GET http://reel.example/api/jobs/<id>" in mine.stdout


def test_profiles_check_names_the_key_of_a_broken_profile(tmp_path) -> None:
    (tmp_path / "broken.toml").write_text(EIGHTH_PROFILE.replace('"no-credit" = "quota"', '"no-credit" = "pause"'),
                                          encoding="utf-8")
    shown = cli("profiles", "check", str(tmp_path / "broken.toml"))
    assert shown.returncode == 2
    assert "errors.codes.no-credit: 'pause' is not allowed (allowed: backoff, quota, login, refused" in shown.stderr


# --- --demo -----------------------------------------------------------------------------------------------

@pytest.mark.timeout(300)
def test_the_demo_runs_every_native_profile_end_to_end(tmp_path) -> None:
    examples = Path(__file__).resolve().parents[2] / "resources" / "examples"
    proc = cli("run", str(examples / "native-video-services.csv"), "--demo", "--speed", "200", "--json",
               "--data-dir", str(tmp_path / "d"), timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert (out["total"], out["success"]) == (7, 7)
    assert {t["model"] for t in out["tasks"]} == {f"demo-native-{s}" for s in SERVICES}
