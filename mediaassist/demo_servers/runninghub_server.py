"""A fake RunningHub on 127.0.0.1: the legacy OpenAPI routes, with the real shapes and codes.

For ``--demo`` and the tests (over real HTTP). Tasks go QUEUED → RUNNING → SUCCESS/FAILED on
a timetable drawn at create; each API key has a concurrency limit past which create answers
421. Faults are queued per route and consumed one per request, switchable from Python
(``inject``) or over HTTP (``POST /_demo/faults``) so a test can steer a server that a
``mediaassist run`` subprocess talks to. Counters (``GET /_demo/stats``) let tests check what
the client really did: creates per prompt, create times, the most tasks ever in flight.

Markers in a prompt script a task: ``#fail`` ends FAILED with a ``failedReason``,
``#badnode`` fails validation at create (``node_errors``), ``#sitecancel`` is cancelled on the
website once it runs. A cancelled task reads ``FAILED`` (805) on the legacy routes and ``CANCEL``
in the v2 query, as documented. v2 routes (query, queue/status) take the key as Bearer only.

Uploads: legacy ``POST /task/openapi/upload`` (multipart ``apiKey``, ``fileType``, ``file``) and
v2 ``POST /openapi/v2/media/upload/binary`` (Bearer, multipart ``file``) return realistic
``fileName``s (``api/<hex>.png``, ``openapi/<hex>.png``) and refuse files over ``max_upload_bytes``
(809 legacy, 1008 v2). A create whose image/video/audio node value is not a name this key
uploaded is refused with 803 ``APIKEY_INVALID_NODE_INFO`` -- a local path never gets through.
An upload is read as it streams in (``multipart.read_multipart``): only its name, size and
SHA-256 are kept, so the tests can count uploads per file content.

The ``hold`` fault keeps a request open until ``release()`` (or ``POST /_demo/release``), then
drops the connection: a create is held *before* it creates anything, an upload *after* it was
stored (its reply is what gets lost). ``held`` in the stats counts requests being held, so a test
knows its client is inside that window -- the moment to kill it.

Run alone: ``python -m mediaassist.demo_servers.runninghub_server --port 0`` prints its URL.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import threading
import time
from collections import Counter, deque
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from mediaassist.demo_servers import DemoServer, LoopbackServer, demo_video, read_json_body, reset_connection
from mediaassist.demo_servers.multipart import MultipartError, Writer, read_multipart

DEMO_API_KEY = "demo-runninghub-key-0123456789ab"
ROUTES = ("create", "status", "outputs", "cancel", "account", "download", "query", "queue", "upload")
MEDIA_FIELDS = ("image", "video", "audio")  # node fields whose value must be an uploaded fileName
DEFAULT_MAX_UPLOAD = 30 * 1024 * 1024  # the legacy route's documented limit
DEFAULT_BALANCE = 177814  # coins on a key, as accountStatus's documented example
DEFAULT_COINS_PER_TASK = 17  # what one task costs, as the documented outputs example
# A fault is an int (answer with that business code), "nonjson", "reset" (TCP RST, no reply),
# "http500", "echo" (a non-JSON error page quoting the request, key included, as some gateways
# do), "slow:<seconds>" (then answer normally), for create "lost" (create, then reset), for
# create and upload "hold" (see the module docstring).
HOLD_MAX_S = 120.0  # a held request is dropped by then even if nobody releases it

_CODE_MSG = {
    301: "PARAMS_INVALID", 415: "TASK_INSTANCE_MAXED", 416: "TASK_CREATE_FAILED_BY_NOT_ENOUGH_WALLET",
    421: "TASK_QUEUE_MAXED", 433: "VALIDATE_PROMPT_FAILED", 500: "UNKNOWN_ERROR",
    801: "APIKEY_UNSUPPORTED_FREE_USER", 802: "APIKEY_UNAUTHORIZED", 803: "APIKEY_INVALID_NODE_INFO",
    804: "APIKEY_TASK_IS_RUNNING", 805: "APIKEY_TASK_STATUS_ERROR", 807: "APIKEY_TASK_NOT_FOUND",
    812: "CORPAPIKEY_INSUFFICIENT_FUNDS", 813: "APIKEY_TASK_IS_QUEUED", 814: "PERSONAL_QUEUE_COUNT_LIMIT",
    808: "APIKEY_UPLOAD_FAILED", 809: "APIKEY_FILE_SIZE_EXCEEDED",
    1003: "Rate limit exceeded, please slow down requests", 1005: "Internal server error, retry later",
    1006: "Task execution timed out, retry", 1011: "System is currently busy",
    1015: "Generation failed, please try again",
}


@dataclass
class ReceivedFile:
    """The ``file`` part of an upload as it streams in: its name, size and SHA-256, never its bytes."""

    name: str | None = None
    size: int = 0
    digest: Any = field(default_factory=hashlib.sha256)

    def open(self, field_name: str, file_name: str) -> Writer:
        if field_name != "file":
            return lambda _data: None  # another file part: not what the route reads
        if self.name is not None:
            raise MultipartError("two parts named 'file'")
        self.name = file_name
        return self._write

    def _write(self, data: bytes) -> None:
        self.size += len(data)
        self.digest.update(data)


@dataclass
class FakeTask:
    task_id: str
    api_key: str
    prompt: str
    created: float
    queued_s: float
    run_s: float
    fail: bool
    canceled_at: float | None = None
    files: list[str] = field(default_factory=list)

    def state(self, now: float) -> str:
        """As the legacy routes say it: a cancelled task is FAILED there."""
        v2 = self.v2_state(now)
        return "FAILED" if v2 == "CANCEL" else v2

    def v2_state(self, now: float) -> str:
        if self.canceled_at is not None and now >= self.canceled_at:
            return "CANCEL"
        elapsed = now - self.created
        if elapsed < self.queued_s:
            return "QUEUED"
        if elapsed < self.queued_s + self.run_s:
            return "RUNNING"
        return "FAILED" if self.fail else "SUCCESS"


class RunningHubFake:
    """The server's state; all access under one lock (handlers run on many threads)."""

    def __init__(self, api_keys: dict[str, int] | None = None, queued_s: tuple[float, float] = (0.2, 0.5),
                 run_s: tuple[float, float] = (1.0, 2.0), speed: float = 1.0, files_per_task: int = 1,
                 seed: int | None = None, state_file: Path | None = None,
                 max_upload_bytes: int = DEFAULT_MAX_UPLOAD, balance: int = DEFAULT_BALANCE,
                 coins_per_task: int = DEFAULT_COINS_PER_TASK) -> None:
        self.api_keys = dict(api_keys or {DEMO_API_KEY: 3})  # key → concurrent limit
        # Coins left per key: a create is charged up front (and refused with 416 when the key
        # cannot pay), like the real plan that deducts points before it submits.
        self.balances = dict.fromkeys(self.api_keys, balance)
        self.coins_per_task = coins_per_task
        self.max_upload_bytes = max_upload_bytes
        self.uploaded: dict[str, str] = {}  # fileName → the key that uploaded it
        # Like the real service, the tasks outlive our client: with a state file they also
        # outlive this server (the demo resumes polling them after a crash or Ctrl-C).
        self.state_file = state_file
        self.queued_s, self.run_s, self.speed = queued_s, run_s, speed
        self.files_per_task = files_per_task
        self.lock = threading.Lock()
        self.released = threading.Event()  # lets "hold" requests go
        self.tasks: dict[str, FakeTask] = {}
        self.faults: dict[str, deque[Any]] = {route: deque() for route in ROUTES}
        self.rng = random.Random(seed)
        self.base_url = ""
        self.reset_counters()
        if state_file is not None and state_file.exists():
            saved = json.loads(state_file.read_text(encoding="utf-8"))
            self.tasks = {t["task_id"]: FakeTask(**t) for t in saved["tasks"]}
            self.uploaded = dict(saved.get("uploaded", {}))
            self.balances.update({k: v for k, v in saved.get("balances", {}).items() if k in self.api_keys})

    @staticmethod
    def saved_key(state_file: Path) -> str | None:
        """The key of the tasks a state file holds (the demo reuses it to reach them)."""
        if not state_file.exists():
            return None
        key: str | None = json.loads(state_file.read_text(encoding="utf-8")).get("api_key")
        return key

    def _save(self) -> None:
        """Write the tasks out (caller holds the lock); small, and only for the demo."""
        if self.state_file is None:
            return
        keys = list(self.api_keys)
        data = {"api_key": keys[0] if keys else None, "tasks": [asdict(t) for t in self.tasks.values()],
                "uploaded": self.uploaded, "balances": self.balances}
        partial = self.state_file.with_suffix(".part")
        partial.write_text(json.dumps(data), encoding="utf-8")
        partial.replace(self.state_file)

    def reset_counters(self) -> None:
        with self.lock:
            self.creates: Counter[str] = Counter()  # prompt → accepted creates
            self.create_order: list[str] = []  # prompts in accepted-create order
            self.create_times: list[float] = []  # epoch of each accepted create
            self.create_calls = 0  # every create request, rejected ones included
            self.rejects: Counter[int] = Counter()
            self.cancels: list[str] = []
            self.calls: Counter[str] = Counter()
            self.max_in_flight = 0
            self.downloads = 0
            self.uploads: list[dict[str, Any]] = []  # {route, name, size, sha256, file_name, file_type}
            self.held = 0  # requests held by the "hold" fault so far
            self.create_nodes: list[list[dict[str, Any]]] = []  # nodeInfoList of each accepted create

    # --- faults ----------------------------------------------------------------------------
    def inject(self, route: str, *faults: Any) -> None:
        if route not in ROUTES:
            raise ValueError(f"unknown route {route!r} (allowed: {', '.join(ROUTES)})")
        with self.lock:
            self.faults[route].extend(faults)

    def clear_faults(self) -> None:
        with self.lock:
            for queue in self.faults.values():
                queue.clear()

    def next_fault(self, route: str) -> Any:
        """Count the call and take the route's next queued fault, if any."""
        with self.lock:
            self.calls[route] += 1
            queue = self.faults[route]
            return queue.popleft() if queue else None

    # --- state -----------------------------------------------------------------------------
    def in_flight(self, api_key: str, now: float) -> int:
        return sum(1 for t in self.tasks.values()
                   if t.api_key == api_key and t.state(now) in ("QUEUED", "RUNNING"))

    def create(self, api_key: str, prompt: str, nodes: list[Any] | None = None) -> tuple[int, Any]:
        now = time.time()
        with self.lock:
            self.create_calls += 1
            if self.in_flight(api_key, now) >= self.api_keys[api_key]:
                self.rejects[421] += 1
                return 421, None
            if self.balances[api_key] < self.coins_per_task:
                self.rejects[416] += 1
                return 416, None
            self.balances[api_key] -= self.coins_per_task
            task = FakeTask(
                task_id=str(self.rng.randrange(10**18, 10**19)), api_key=api_key, prompt=prompt,
                created=now, queued_s=self.rng.uniform(*self.queued_s) / self.speed,
                run_s=self.rng.uniform(*self.run_s) / self.speed, fail="#fail" in prompt)
            if "#sitecancel" in prompt:  # the operator cancels it on the website once it runs
                task.canceled_at = now + task.queued_s + task.run_s / 2
            task.files = [f"ComfyUI_{i:05d}_{task.task_id[-6:]}.mp4" for i in range(self.files_per_task)]
            self.tasks[task.task_id] = task
            self._save()
            self.creates[prompt] += 1
            self.create_nodes.append(list(nodes or []))
            self.create_order.append(prompt)
            self.create_times.append(now)
            self.max_in_flight = max(self.max_in_flight, self.in_flight(api_key, now))
        node_errors = {"6": {"errors": [{"message": "Prompt outputs failed validation"}],
                             "class_type": "CLIPTextEncode"}} if "#badnode" in prompt else {}
        tips = {"result": not node_errors, "error": None, "outputs_to_execute": ["9"],
                "node_errors": node_errors}
        return 0, {"netWssUrl": None, "taskId": task.task_id, "clientId": f"{self.rng.getrandbits(128):032x}",
                   "taskStatus": "FAILED" if node_errors else "QUEUED",
                   "promptTips": json.dumps(tips)}

    def upload(self, api_key: str, route: str, received: ReceivedFile, file_type: str | None) -> str:
        """Keep the upload (by name only) and return its fileName, as the real routes name them."""
        file_name = received.name or "file"
        suffix = Path(file_name).suffix.lower() or ".bin"
        with self.lock:
            name = f"{'api' if route == 'legacy' else 'openapi'}/{self.rng.getrandbits(128):032x}{suffix}"
            self.uploaded[name] = api_key
            self.uploads.append({"route": route, "name": name, "size": received.size,
                                 "sha256": received.digest.hexdigest(), "file_name": file_name,
                                 "file_type": file_type})
            self._save()
        return name

    def hold(self) -> None:
        """Keep the calling request open until ``release`` (counted in ``held`` meanwhile)."""
        with self.lock:
            self.held += 1
        self.released.wait(HOLD_MAX_S)

    def release(self) -> None:
        """Let every held request go (and the ones held from now on pass at once)."""
        self.released.set()

    def bad_media_node(self, api_key: str, nodes: list[Any]) -> str | None:
        """The first image/video/audio node whose value is not a file this key uploaded."""
        with self.lock:
            for node in nodes:
                if (isinstance(node, dict) and node.get("fieldName") in MEDIA_FIELDS
                        and self.uploaded.get(str(node.get("fieldValue"))) != api_key):
                    return f"node {node.get('nodeId')}: {node.get('fieldValue')!r} is not an uploaded file"
        return None

    def find(self, api_key: str, task_id: Any) -> FakeTask | None:
        task = self.tasks.get(str(task_id))
        return task if task is not None and task.api_key == api_key else None

    def outputs(self, task: FakeTask) -> tuple[int, Any]:
        state = task.state(time.time())
        if state == "QUEUED":
            return 813, None
        if state == "RUNNING":
            return 804, {"netWssUrl": f"wss://127.0.0.1/ws/c_instance?t={task.task_id}"}
        if state == "FAILED":
            return 805, {"failedReason": self.failed_reason(task)}
        cost = f"{task.run_s * self.speed:.0f}"
        return 0, [{"fileUrl": f"{self.base_url}/files/{task.task_id}/{name}", "fileType": "mp4",
                    "taskCostTime": cost, "nodeId": "12", "thirdPartyConsumeMoney": None,
                    "consumeMoney": None, "consumeCoins": str(self.coins_per_task)} for name in task.files]

    @staticmethod
    def failed_reason(task: FakeTask) -> dict[str, str]:
        if task.canceled_at is not None and time.time() >= task.canceled_at:
            return {"node_name": "", "node_id": "", "exception_type": "Canceled",
                    "exception_message": "task canceled by API call", "traceback": "[]",
                    "current_inputs": "{}", "current_outputs": "{}"}
        return {"current_outputs": "{}", "exception_type": "TypeError", "node_name": "SONIC_PreData",
                "current_inputs": "{}", "traceback": "[]", "node_id": "276",
                "exception_message": "SONIC_PreData.sampler_main() missing 2 required positional "
                                     "arguments: 'clip_vision' and 'vae'"}

    def stats(self) -> dict[str, Any]:
        now = time.time()
        with self.lock:
            return {
                "creates": dict(self.creates), "create_order": list(self.create_order),
                "create_times": list(self.create_times), "create_calls": self.create_calls,
                "rejects": {str(k): v for k, v in self.rejects.items()}, "cancels": list(self.cancels),
                "calls": dict(self.calls), "max_in_flight": self.max_in_flight,
                "in_flight": {key: self.in_flight(key, now) for key in self.api_keys},
                "downloads": self.downloads, "tasks": len(self.tasks), "uploads": list(self.uploads),
                "create_nodes": list(self.create_nodes), "held": self.held, "balances": dict(self.balances),
            }


class _Handler(BaseHTTPRequestHandler):
    server: LoopbackServer
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out as two writes: no 40 ms ACK stall

    def log_message(self, format: str, *args: Any) -> None:
        pass

    @property
    def fake(self) -> RunningHubFake:
        fake: RunningHubFake = self.server.fake
        return fake

    # --- plumbing --------------------------------------------------------------------------

    def _send(self, status: int, body: bytes, ctype: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _envelope(self, code: int, data: Any = None, msg: str | None = None) -> None:
        text = msg if msg is not None else ("success" if code == 0 else _CODE_MSG.get(code, "ERROR"))
        self._send(200, json.dumps({"code": code, "msg": text, "data": data}).encode())

    def _apply_fault(self, fault: Any, body: dict[str, Any]) -> bool:
        """Answer with the fault; True when the request is done. ``lost`` is handled by create."""
        if fault is None or fault in ("lost", "hold"):
            return False
        if isinstance(fault, str) and fault.startswith("slow:"):
            time.sleep(float(fault.split(":", 1)[1]))
            return False
        if fault == "nonjson":
            self._send(200, b"<html><body>502 Bad Gateway</body></html>", "text/html")
        elif fault == "reset":
            reset_connection(self)
        elif fault == "http500":
            self._send(500, b"Internal Server Error", "text/plain")
        elif fault == "echo":
            page = f"<html><body>502 Bad Gateway <pre>{json.dumps(body)}</pre></body></html>"
            self._send(502, page.encode(), "text/html")
        else:
            self._envelope(int(fault))
        return True

    # --- routes ----------------------------------------------------------------------------
    def do_GET(self) -> None:
        if self.path == "/_demo/stats":
            self._send(200, json.dumps(self.fake.stats()).encode())
        elif self.path == "/openapi/v2/queue/status":
            self._queue_status()
        elif self.path.startswith("/files/"):
            self._download()
        else:
            self._send(404, b"not found", "text/plain")

    def do_POST(self) -> None:
        if self.path in ("/task/openapi/upload", "/openapi/v2/media/upload/binary"):
            self._upload()
            return
        body = read_json_body(self)
        routes = {
            "/task/openapi/create": self._create, "/task/openapi/ai-app/run": self._create,
            "/task/openapi/status": self._status, "/task/openapi/outputs": self._outputs,
            "/task/openapi/cancel": self._cancel, "/uc/openapi/accountStatus": self._account,
            "/openapi/v2/query": self._query,
            "/_demo/faults": self._faults, "/_demo/reset": self._reset_counters,
            "/_demo/release": self._release,
        }
        handler = routes.get(self.path)
        if handler is None:
            self._envelope(412, msg="TOKEN_INVALID")
            return
        handler(body)

    def _authorised(self, body: dict[str, Any], field_name: str = "apiKey") -> str | None:
        key = body.get(field_name)
        if not key:
            self._envelope(1601 if field_name == "apikey" else 301,
                           msg="param apiKey is required")
            return None
        if key not in self.fake.api_keys:
            self._envelope(802)
            return None
        return str(key)

    def _create(self, body: dict[str, Any]) -> None:
        fault = self.fake.next_fault("create")
        if self._apply_fault(fault, body):
            if isinstance(fault, int):
                with self.fake.lock:
                    self.fake.create_calls += 1
                    self.fake.rejects[fault] += 1
            return
        key = self._authorised(body)
        if key is None:
            return
        if not (body.get("workflowId") or body.get("webappId") or body.get("workflow")):
            self._envelope(301)
            return
        if fault == "hold":  # the client dies while this create is on the wire: nothing is created
            self.fake.hold()
            reset_connection(self)
            return
        nodes = body.get("nodeInfoList") or []
        bad_node = self.fake.bad_media_node(key, nodes)
        if bad_node is not None:
            with self.fake.lock:
                self.fake.create_calls += 1
                self.fake.rejects[803] += 1
            self._envelope(803, msg=f"APIKEY_INVALID_NODE_INFO: {bad_node}")
            return
        prompt = " | ".join(str(n.get("fieldValue")) for n in nodes if isinstance(n, dict)
                            and isinstance(n.get("fieldValue"), str) and n.get("fieldName") not in MEDIA_FIELDS)
        code, data = self.fake.create(key, prompt, nodes)
        if fault == "lost" and code == 0:
            reset_connection(self)
            return
        self._envelope(code, data)

    def _task_or_error(self, body: dict[str, Any], route: str) -> FakeTask | None:
        if self._apply_fault(self.fake.next_fault(route), body):
            return None
        key = self._authorised(body)
        if key is None:
            return None
        task = self.fake.find(key, body.get("taskId"))
        if task is None:
            self._envelope(807)
        return task

    def _status(self, body: dict[str, Any]) -> None:
        task = self._task_or_error(body, "status")
        if task is not None:
            self._envelope(0, task.state(time.time()), msg="")

    def _outputs(self, body: dict[str, Any]) -> None:
        task = self._task_or_error(body, "outputs")
        if task is not None:
            self._envelope(*self.fake.outputs(task))

    def _cancel(self, body: dict[str, Any]) -> None:
        task = self._task_or_error(body, "cancel")
        if task is None:
            return
        with self.fake.lock:
            if task.canceled_at is None and task.state(time.time()) in ("QUEUED", "RUNNING"):
                task.canceled_at = time.time()
                self.fake._save()
            self.fake.cancels.append(task.task_id)
        self._envelope(0)

    def _account(self, body: dict[str, Any]) -> None:
        if self._apply_fault(self.fake.next_fault("account"), body):
            return
        key = self._authorised(body, "apikey")
        if key is None:
            return
        with self.fake.lock:
            running = self.fake.in_flight(key, time.time())
            balance = self.fake.balances[key]
        self._envelope(0, {"remainCoins": str(balance), "currentTaskCounts": str(running),
                           "remainMoney": None, "currency": None, "apiType": "NORMAL"})

    def _upload(self) -> None:
        legacy = self.path == "/task/openapi/upload"
        received = ReceivedFile()
        try:
            fields = read_multipart(self.headers.get("Content-Type", ""), self.rfile,
                                    int(self.headers.get("Content-Length") or 0), received.open)
        except (MultipartError, ValueError) as exc:
            self.close_connection = True  # the unread rest of the body would be taken for a request
            self._upload_error(legacy, (301, f"PARAMS_INVALID: {exc}"), (301, f"PARAMS_INVALID: {exc}"))
            return
        fault = self.fake.next_fault("upload")
        if self._apply_fault(fault, {}):
            return
        key = self._authorised(fields) if legacy else self._bearer_key()
        if key is None:
            if not legacy:
                self._v2_envelope(401, "ApiKey verification failed: API Key不存在")
            return
        if received.name is None:
            self._upload_error(legacy, (301, None), (301, "PARAMS_INVALID: file is required"))
            return
        if received.size > self.fake.max_upload_bytes:
            self._upload_error(legacy, (809, None), (1008, "File size limit exceeded"))
            return
        name = self.fake.upload(key, "legacy" if legacy else "v2", received, fields.get("fileType"))
        if fault == "hold":  # stored; the client dies before the reply reaches it
            self.fake.hold()
            reset_connection(self)
        elif legacy:
            self._envelope(0, {"fileName": name, "fileType": fields.get("fileType") or "input"})
        else:
            self._v2_envelope(0, "success", {"type": "image", "download_url": f"{self.fake.base_url}/input/{name}",
                                             "fileName": name, "size": str(received.size)})

    def _upload_error(self, legacy: bool, legacy_reply: tuple[int, str | None], v2_reply: tuple[int, str]) -> None:
        """The refusal in the route's own envelope: ``{code, msg}`` legacy, ``{code, message}`` v2."""
        if legacy:
            code, msg = legacy_reply
            self._envelope(code, msg=msg)
        else:
            self._v2_envelope(*v2_reply)

    def _v2_envelope(self, code: int, message: str, data: Any = None) -> None:
        self._send(200, json.dumps({"code": code, "message": message, "data": data}).encode())

    # --- v2 (Bearer only) -------------------------------------------------------------------
    def _bearer_key(self) -> str | None:
        auth = self.headers.get("Authorization", "")
        key = auth.removeprefix("Bearer ").strip() if auth.startswith("Bearer ") else ""
        return key if key in self.fake.api_keys else None

    def _v2_object(self, **values: Any) -> None:
        obj: dict[str, Any] = {
            "taskId": "", "status": "", "errorCode": "", "errorMessage": "", "results": None, "clientId": "",
            "promptTips": "", "failedReason": {}, "usage": None, "parentTaskId": None, "taskUsageList": None}
        obj.update(values)
        self._send(200, json.dumps(obj).encode())

    def _query(self, body: dict[str, Any]) -> None:
        if self._apply_fault(self.fake.next_fault("query"), body):
            return
        key = self._bearer_key()
        if key is None:
            self._v2_object(errorCode="1002", errorMessage="Invalid API Key")
            return
        if not body.get("taskId"):
            self._v2_object(errorCode="1007", errorMessage="failed to parse request body")
            return
        task = self.fake.find(key, body["taskId"])
        if task is None:
            self._v2_object(errorCode="1004", errorMessage="Task not found or expired")
            return
        state = task.v2_state(time.time())
        values: dict[str, Any] = {"taskId": task.task_id, "status": state}
        if state == "SUCCESS":
            values["results"] = [{"url": item["fileUrl"], "nodeId": "12", "outputType": "mp4", "text": None}
                                 for item in self.fake.outputs(task)[1]]
            values["usage"] = {"consumeMoney": None, "consumeCoins": str(self.fake.coins_per_task),
                               "taskCostTime": f"{task.run_s * self.fake.speed:.0f}", "thirdPartyConsumeMoney": None}
        elif state == "CANCEL":
            values.update(errorCode="", errorMessage="task canceled")
        elif state == "FAILED":
            values.update(errorCode="1000", errorMessage="unknown error", failedReason=self.fake.failed_reason(task))
        self._v2_object(**values)

    def _queue_status(self) -> None:
        if self._apply_fault(self.fake.next_fault("queue"), {}):
            return
        key = self._bearer_key()
        if key is None:
            self._send(200, json.dumps({"code": 401, "message": "ApiKey verification failed", "data": None}).encode())
            return
        now = time.time()
        with self.fake.lock:
            mine = [t for t in self.fake.tasks.values() if t.api_key == key]
            running = sum(1 for t in mine if t.v2_state(now) == "RUNNING")
            queued = sum(1 for t in mine if t.v2_state(now) == "QUEUED")
        data = {"apiKeyType": "SHARED", "concurrentLimit": str(self.fake.api_keys[key]),
                "runningCount": str(running), "queuedCount": str(queued), "totalCurrentTasks": str(running + queued)}
        self._send(200, json.dumps({"code": 0, "msg": "success", "data": data}).encode())

    def _download(self) -> None:
        if self._apply_fault(self.fake.next_fault("download"), {}):
            return
        parts = self.path.split("/")
        task = self.fake.tasks.get(parts[2]) if len(parts) == 4 else None
        if task is None or parts[3] not in task.files:
            self._send(404, b"no such file", "text/plain")
            return
        with self.fake.lock:
            self.fake.downloads += 1
        self._send(200, demo_video(task.task_id), "video/mp4")

    def _faults(self, body: dict[str, Any]) -> None:
        try:
            for route, faults in body.items():
                self.fake.inject(route, *faults)
        except (ValueError, TypeError) as exc:
            self._send(400, json.dumps({"error": str(exc)}).encode())
            return
        self._send(200, b"{}")

    def _release(self, body: dict[str, Any]) -> None:
        self.fake.release()
        self._send(200, b"{}")

    def _reset_counters(self, body: dict[str, Any]) -> None:
        self.fake.clear_faults()
        self.fake.reset_counters()
        self._send(200, b"{}")


class RunningHubDemoServer(DemoServer):
    """``with RunningHubDemoServer(...) as server:`` -- serves on ``server.url`` meanwhile.

    ``queued_s``/``run_s`` are nominal (min, max) seconds, divided by ``speed``.
    """

    def __init__(self, api_keys: dict[str, int] | None = None, *, queued_s: tuple[float, float] = (0.2, 0.5),
                 run_s: tuple[float, float] = (1.0, 2.0), speed: float = 1.0, files_per_task: int = 1,
                 port: int = 0, seed: int | None = None, state_file: Path | None = None,
                 max_upload_bytes: int = DEFAULT_MAX_UPLOAD, balance: int = DEFAULT_BALANCE,
                 coins_per_task: int = DEFAULT_COINS_PER_TASK) -> None:
        self.fake = RunningHubFake(api_keys, queued_s, run_s, speed, files_per_task, seed, state_file,
                                   max_upload_bytes, balance, coins_per_task)
        self._httpd = LoopbackServer(("127.0.0.1", port), _Handler, self.fake)
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self.fake.base_url = self.url

    def stop(self) -> None:
        self.fake.release()  # a held request's thread ends now, not HOLD_MAX_S later
        super().stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Fake RunningHub OpenAPI on 127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--api-key", default=DEMO_API_KEY)
    parser.add_argument("--limit", type=int, default=3, help="concurrent tasks per key (then 421)")
    parser.add_argument("--queued", type=float, nargs=2, default=(0.2, 0.5), metavar=("MIN", "MAX"))
    parser.add_argument("--run", type=float, nargs=2, default=(1.0, 2.0), metavar=("MIN", "MAX"))
    parser.add_argument("--speed", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--max-upload-bytes", type=int, default=DEFAULT_MAX_UPLOAD)
    parser.add_argument("--balance", type=int, default=DEFAULT_BALANCE, help="coins on the key (then 416)")
    parser.add_argument("--coins-per-task", type=int, default=DEFAULT_COINS_PER_TASK)
    args = parser.parse_args(argv)
    server = RunningHubDemoServer({args.api_key: args.limit}, queued_s=tuple(args.queued),
                                  run_s=tuple(args.run), speed=args.speed, port=args.port, seed=args.seed,
                                  max_upload_bytes=args.max_upload_bytes, balance=args.balance,
                                  coins_per_task=args.coins_per_task)
    server.serve_until_interrupted(server.url)


if __name__ == "__main__":
    main()
