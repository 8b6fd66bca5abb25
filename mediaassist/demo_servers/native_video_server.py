"""The makers' own video APIs on 127.0.0.1: Kling, Volcengine Ark (Seedance), MiniMax Hailuo,
DashScope (Wan), Vidu, Runway and Gemini (Veo), each in its own shape (routes, fields, status
words, error envelopes, auth), as ``shared/reference/native-video-apis.md`` records them.

Strict where the services are: Kling verifies its JWT (HS256 with the secret key, ``iss`` =
access key; expired → 401 code 1004, not yet valid → 1003); DashScope refuses a create without
``X-DashScope-Async: enable``; Runway wants ``X-Runway-Version`` on every call; MiniMax answers
errors inside HTTP 200 and gives the video only through a third request (file id → download
URL); Veo's operation name is a path with slashes, its state is ``done`` + ``error``/``response``
and its file needs the key on Google's own host, then redirects to storage. Result files live
on a separate storage server (another port, like a CDN) that counts every request carrying a
key -- there must be none.

Prompt markers: ``#refuse`` is refused for its content the way the service does it (at create,
or as a failed task), ``#fail`` ends failed. Faults per route (``inject``): "throttle" and
"quota" answer the service's own rate-limit / out-of-balance errors, "http500" a server error.
Past ``job_limit`` jobs at once a create answers the service's throttle error.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import hashlib
import hmac
import json
import random
import re
import threading
import time
import uuid
from collections import Counter, deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from mediaassist.demo_servers import DemoServer, LoopbackServer, demo_video, read_json_body

SERVICES = ("kling", "volcengine-seedance", "minimax-hailuo", "dashscope-wan", "vidu", "runway", "gemini-veo")
# The base_url of each, relative to the server's root (what a provider's base_url ends with).
BASE_PATHS = {"volcengine-seedance": "/api/v3", "gemini-veo": "/v1beta"}
DEFAULT_MODELS = {"kling": ("kling-v2-master",), "volcengine-seedance": ("doubao-seedance-1-0-pro-250528",),
                  "minimax-hailuo": ("MiniMax-Hailuo-02",), "dashscope-wan": ("wan2.6-t2v", "wan2.6-i2v"),
                  "vidu": ("viduq2",), "runway": ("gen4_turbo",), "gemini-veo": ("veo-3.1-generate-preview",)}
ROUTES = ("create", "status", "result")
RUNWAY_VERSION = "2024-11-06"


@dataclass
class Job:
    job_id: str
    route: str  # the create route (Kling's status route must be the same)
    model: str
    prompt: str
    created: float
    queued_s: float
    run_s: float
    outcome: str  # success | failed | refused
    canceled: bool = False
    file_id: str = ""

    def phase(self, now: float) -> str:
        if self.canceled:
            return "canceled"
        elapsed = now - self.created
        if elapsed < self.queued_s:
            return "queued" if elapsed < self.queued_s / 2 else "queued2"
        if elapsed < self.queued_s + self.run_s:
            return "running"
        return self.outcome

    def fraction(self, now: float) -> float:
        return max(0.0, min(1.0, (now - self.created - self.queued_s) / self.run_s)) if self.run_s else 1.0


class Refused(Exception):
    """An answer instead of the normal one: (HTTP status, body)."""

    def __init__(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        super().__init__(status)
        self.status, self.body, self.headers = status, body, headers or {}


# --- the storage host ---------------------------------------------------------------------------

class StorageFake:
    def __init__(self, secrets: tuple[str, ...]) -> None:
        self.secrets = secrets
        self.lock = threading.Lock()
        self.files: dict[str, bytes] = {}
        self.downloads = 0
        self.keyed = 0  # requests that carried a key or a token: must stay 0

    def put(self, name: str, data: bytes) -> None:
        with self.lock:
            self.files[name] = data


class _StorageHandler(BaseHTTPRequestHandler):
    server: LoopbackServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        fake: StorageFake = self.server.fake
        carried = any(name.lower() in ("authorization", "x-goog-api-key") or any(s in value for s in fake.secrets)
                      for name, value in self.headers.items())
        name = urlsplit(self.path).path.removeprefix("/files/")
        with fake.lock:
            fake.keyed += carried
            data = fake.files.get(name)
            fake.downloads += data is not None
        if data is None:
            body = b"<?xml version='1.0'?><Error><Code>NoSuchKey</Code></Error>"
            self.send_response(404)
            self.send_header("Content-Type", "application/xml")
        else:
            body = data
            self.send_response(200)
            self.send_header("Content-Type", "video/mp4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class StorageServer(DemoServer):
    """Result files on their own port (a CDN / object store): no key may ever arrive here."""

    def __init__(self, secrets: tuple[str, ...]) -> None:
        self.fake = StorageFake(secrets)
        self._httpd = LoopbackServer(("127.0.0.1", 0), _StorageHandler, self.fake)
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def file_url(self, name: str, data: bytes, signed: bool = False) -> str:
        self.fake.put(name, data)
        query = f"?Expires={int(time.time()) + 86400}&Signature={uuid.uuid4().hex}" if signed else ""
        return f"{self.url}/files/{name}{query}"


# --- the services ---------------------------------------------------------------------------------

class NativeVideoFake:
    def __init__(self, service: str, api_key: str, secret_key: str, models: tuple[str, ...], job_limit: int,
                 queued_s: tuple[float, float], run_s: tuple[float, float], storage: StorageServer,
                 seed: int | None) -> None:
        if service not in SERVICES:
            raise ValueError(f"unknown service {service!r} (allowed: {', '.join(SERVICES)})")
        self.service, self.api_key, self.secret_key, self.models = service, api_key, secret_key, models
        self.job_limit, self.queued_s, self.run_s, self.storage = job_limit, queued_s, run_s, storage
        self.clock_offset_s = 0.0  # the service's clock against ours (Kling checks exp/nbf by it)
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.jobs: dict[str, Job] = {}
        self.faults: dict[str, deque[str]] = {route: deque() for route in ROUTES}
        self.url = ""
        self.reset_counters()

    def reset_counters(self) -> None:
        with self.lock:
            self.creates: Counter[str] = Counter()
            self.create_bodies: list[dict[str, Any]] = []
            self.create_routes: list[str] = []
            self.calls: Counter[str] = Counter()
            self.refusals: Counter[str] = Counter()  # by the code answered
            self.cancels: list[str] = []
            self.tokens: set[str] = set()

    def inject(self, route: str, *faults: str) -> None:
        if route not in ROUTES:
            raise ValueError(f"unknown route {route!r} (allowed: {', '.join(ROUTES)})")
        with self.lock:
            self.faults[route].extend(faults)

    def next_fault(self, route: str) -> str | None:
        with self.lock:
            self.calls[route] += 1
            queue = self.faults[route]
            return queue.popleft() if queue else None

    def add_job(self, route: str, model: str, prompt: str, body: dict[str, Any], refuse_later: bool) -> Job | None:
        now = time.time()
        with self.lock:
            if sum(1 for j in self.jobs.values() if j.phase(now).startswith(("queued", "running"))) >= self.job_limit:
                return None
            outcome = "refused" if refuse_later and "#refuse" in prompt else \
                "failed" if "#fail" in prompt else "success"
            job = Job(self.new_id(), route, model, prompt, now, self.rng.uniform(*self.queued_s),
                      self.rng.uniform(*self.run_s), outcome, file_id=str(self.rng.getrandbits(60)))
            self.jobs[job.job_id] = job
            self.creates[prompt] += 1
            self.create_bodies.append(body)
            self.create_routes.append(route)
            return job

    def new_id(self) -> str:
        if self.service == "volcengine-seedance":
            return f"cgt-{time.strftime('%Y%m%d%H%M%S')}-{self.rng.getrandbits(20):05x}"
        if self.service in ("kling", "minimax-hailuo"):
            return str(self.rng.getrandbits(60))
        if self.service == "vidu":
            return str(self.rng.getrandbits(62))
        return str(uuid.UUID(int=self.rng.getrandbits(128)))

    def job(self, job_id: str) -> Job | None:
        with self.lock:
            return self.jobs.get(job_id)

    def result_url(self, job: Job) -> str:
        """The job's file on the storage host (Veo's: on the service itself, with the key)."""
        if self.service == "gemini-veo":
            return f"{self.url}/v1beta/files/{job.file_id}:download?alt=media"
        signed = self.service in ("volcengine-seedance", "dashscope-wan", "minimax-hailuo")
        return self.storage.file_url(f"{job.job_id.replace('/', '_')}.mp4", demo_video(job.job_id), signed)

    def stats(self) -> dict[str, Any]:
        with self.lock:
            return {"creates": dict(self.creates), "create_routes": list(self.create_routes),
                    "calls": dict(self.calls), "refusals": dict(self.refusals), "cancels": list(self.cancels),
                    "jobs": len(self.jobs), "downloads": self.storage.fake.downloads,
                    "storage_keyed": self.storage.fake.keyed}


def _is_image_ref(value: Any, data_uri: bool = True, raw_base64: bool = False) -> bool:
    if not isinstance(value, str):
        return False
    if value.startswith(("http://", "https://")):
        return True
    if value.startswith("data:image/") and ";base64," in value:
        return data_uri and _b64_ok(value.split(",", 1)[1])
    return raw_base64 and _b64_ok(value)


def _b64_ok(text: str) -> bool:
    try:
        return len(base64.b64decode(text, validate=True)) > 8
    except (binascii.Error, ValueError):
        return False


def _b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class _Handler(BaseHTTPRequestHandler):
    server: LoopbackServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    @property
    def fake(self) -> NativeVideoFake:
        fake: NativeVideoFake = self.server.fake
        return fake

    def _answer(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        raw = b"" if status == 204 else json.dumps(body).encode()
        self.send_response(status)
        if status != 204:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(raw)

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    def _dispatch(self, method: str) -> None:
        service = SERVICE_FORMATS[self.fake.service]
        path = urlsplit(self.path).path
        query = {k: v[0] for k, v in parse_qs(urlsplit(self.path).query).items()}
        body = read_json_body(self) if method == "POST" else {}
        try:
            for route_method, pattern, route, action in service.routes:
                match = re.fullmatch(pattern, path)
                if route_method == method and match:
                    fault = self.fake.next_fault(route) if route in ROUTES else None
                    if fault == "http500":
                        raise Refused(500, service.error(self.fake, "server", "internal error (demo)"))
                    if fault in ("throttle", "quota"):
                        service.authorise(self.fake, self.headers, route)
                        raise service.refusal(self.fake, fault)
                    service.authorise(self.fake, self.headers, route)
                    status, answer, extra = action(service, self.fake, match, body, query, self.headers)
                    self._answer(status, answer, extra)
                    return
            raise Refused(404, service.error(self.fake, "not_found", f"no route {method} {path}"))
        except Refused as refused:
            with self.fake.lock:
                self.fake.refusals[str(_code_of(refused.body))] += 1
            self._answer(refused.status, refused.body, refused.headers)


def _code_of(body: Any) -> Any:
    for path in (("code",), ("error", "code"), ("base_resp", "status_code"), ("reason",), ("error",)):
        value = body
        for part in path:
            value = value.get(part) if isinstance(value, dict) else None
        if value not in (None, 0, ""):
            return value if not isinstance(value, dict) else value.get("status")
    return "?"


Answer = tuple[int, Any, dict[str, str] | None]


class ServiceFormat:
    """One service's shapes. ``routes``: (method, path regex, route kind, handler)."""

    routes: list[tuple[str, str, str, Any]]
    refused_later = False  # the content refusal shows as a failed task, not at create
    unknown_model_status = 400

    def error(self, fake: NativeVideoFake, kind: str, message: str) -> Any:
        raise NotImplementedError

    def refusal(self, fake: NativeVideoFake, kind: str) -> Refused:
        """The service's answer for kind: throttle | quota | refused | auth."""
        raise NotImplementedError

    def authorise(self, fake: NativeVideoFake, headers: Any, route: str) -> None:
        if headers.get("Authorization") != f"Bearer {fake.api_key}":
            raise self.refusal(fake, "auth")

    def new_job(self, fake: NativeVideoFake, route: str, model: str, prompt: str, body: dict[str, Any]) -> Job:
        if model not in fake.models:
            raise Refused(self.unknown_model_status, self.error(fake, "bad", f"model {model!r} does not exist"))
        if "#refuse" in prompt and not self.refused_later:
            raise self.refusal(fake, "refused")
        job = fake.add_job(route, model, prompt, body, self.refused_later)
        if job is None:
            raise self.busy(fake)
        return job

    def busy(self, fake: NativeVideoFake) -> Refused:
        """Past the account's jobs at once: the service's rate-limit answer, unless it has its own."""
        return self.refusal(fake, "throttle")

    def known(self, fake: NativeVideoFake, job_id: str) -> Job:
        job = fake.job(job_id)
        if job is None:
            raise Refused(404, self.error(fake, "not_found", f"task {job_id} not found"))
        return job

    def mark_canceled(self, fake: NativeVideoFake, job_id: str) -> None:
        """The known job ``job_id`` canceled at the operator's request (and counted in ``cancels``)."""
        job = self.known(fake, job_id)
        with fake.lock:
            job.canceled = True
            fake.cancels.append(job.job_id)


class Kling(ServiceFormat):
    def __init__(self) -> None:
        self.routes = [("POST", r"/v1/videos/(text2video|image2video)", "create", Kling.create),
                       ("GET", r"/v1/videos/(text2video|image2video)/(\d+)", "status", Kling.status)]

    def error(self, fake: NativeVideoFake, kind: str, message: str) -> Any:
        code = {"bad": 1201, "not_found": 1203, "server": 5000}.get(kind, 1200)
        return {"code": code, "message": message, "request_id": uuid.uuid4().hex}

    def refusal(self, fake: NativeVideoFake, kind: str, code: int = 1002) -> Refused:
        status, code, message = {
            "throttle": (429, 1302, "The API request is too fast, please slow down the request frequency"),
            "quota": (429, 1102, "The resource pack has been used up or has expired"),
            "refused": (400, 1301, "Failure to pass the risk control system: the prompt may contain sensitive "
                                   "information"),
            "auth": (401, code, {1001: "Authorization is empty", 1002: "Authorization is invalid",
                                 1003: "Authorization is not yet valid", 1004: "Authorization has expired"}
                     .get(code, "Authentication failed")),
        }[kind]
        return Refused(status, {"code": code, "message": message, "request_id": uuid.uuid4().hex})

    def busy(self, fake: NativeVideoFake) -> Refused:
        return Refused(429, {"code": 1303, "message": "Parallel task over resource pack limit",
                             "request_id": uuid.uuid4().hex})

    def authorise(self, fake: NativeVideoFake, headers: Any, route: str) -> None:
        auth = headers.get("Authorization") or ""
        if not auth:
            raise self.refusal(fake, "auth", 1001)
        token = auth.removeprefix("Bearer ")
        try:
            head, payload, signature = token.split(".")
            expected = hmac.new(fake.secret_key.encode(), f"{head}.{payload}".encode(), hashlib.sha256).digest()
            claims = json.loads(_b64url_decode(payload))
            header = json.loads(_b64url_decode(head))
            valid = (auth.startswith("Bearer ") and header.get("alg") == "HS256"
                     and hmac.compare_digest(expected, _b64url_decode(signature)) and claims.get("iss") == fake.api_key)
        except (ValueError, binascii.Error, AttributeError):
            valid = False
        if not valid:
            raise self.refusal(fake, "auth", 1002)
        now = time.time() + fake.clock_offset_s
        if claims.get("nbf", 0) > now:
            raise self.refusal(fake, "auth", 1003)
        if claims.get("exp", 0) <= now:
            raise self.refusal(fake, "auth", 1004)
        with fake.lock:
            fake.tokens.add(token)

    def create(self, fake: NativeVideoFake, match: Any, body: Any, query: Any, headers: Any) -> Answer:
        route = match.group(1)
        model, prompt = body.get("model_name", "kling-v1"), body.get("prompt", "")
        if route == "text2video" and (not isinstance(prompt, str) or not prompt.strip()):
            raise Refused(400, self.error(fake, "bad", "prompt is required"))
        if route == "image2video":
            image = body.get("image")
            if isinstance(image, str) and image.startswith("data:"):
                raise Refused(400, self.error(fake, "bad", "image: Base64 must not include a data: prefix"))
            if not _is_image_ref(image, data_uri=False, raw_base64=True):
                raise Refused(400, self.error(fake, "bad", "image is required (a URL or Base64)"))
        if "duration" in body and body["duration"] not in ("5", "10"):
            raise Refused(400, self.error(fake, "bad", "duration must be the string \"5\" or \"10\""))
        if body.get("mode", "std") not in ("std", "pro"):
            raise Refused(400, self.error(fake, "bad", "mode must be std or pro"))
        job = self.new_job(fake, route, str(model), str(prompt), body)
        now = int(job.created * 1000)
        return 200, {"code": 0, "message": "SUCCEED", "request_id": uuid.uuid4().hex,
                     "data": {"task_id": job.job_id, "task_status": "submitted", "task_info": {},
                              "created_at": now, "updated_at": now}}, None

    def status(self, fake: NativeVideoFake, match: Any, body: Any, query: Any, headers: Any) -> Answer:
        job = self.known(fake, match.group(2))
        if job.route != match.group(1):  # queried on the other route: Kling does not know it there
            raise Refused(404, self.error(fake, "not_found", f"task {job.job_id} not found"))
        phase = job.phase(time.time())
        word = {"queued": "submitted", "queued2": "submitted", "running": "processing", "success": "succeed"}
        data: dict[str, Any] = {"task_id": job.job_id, "task_status": word.get(phase, "failed"),
                                "created_at": int(job.created * 1000), "updated_at": int(time.time() * 1000)}
        if phase == "success":
            data["task_result"] = {"videos": [{"id": job.file_id, "url": fake.result_url(job), "duration": "5"}]}
        if phase == "failed":
            data["task_status_msg"] = "Video generation failed (demo)"
        return 200, {"code": 0, "message": "SUCCEED", "request_id": uuid.uuid4().hex, "data": data}, None


class Seedance(ServiceFormat):
    def __init__(self) -> None:
        self.routes = [("POST", r"/api/v3/contents/generations/tasks", "create", Seedance.create),
                       ("GET", r"/api/v3/contents/generations/tasks/([\w-]+)", "status", Seedance.status),
                       ("DELETE", r"/api/v3/contents/generations/tasks/([\w-]+)", "cancel", Seedance.cancel)]

    def error(self, fake: NativeVideoFake, kind: str, message: str) -> Any:
        code = {"bad": "InvalidParameter", "not_found": "ResourceNotFound", "server": "InternalServiceError"}[kind]
        return {"error": {"code": code, "message": f"{message} Request id: {uuid.uuid4().hex}", "param": "",
                          "type": "BadRequest"}}

    def refusal(self, fake: NativeVideoFake, kind: str) -> Refused:
        status, code, message, kind_name = {
            "throttle": (429, "RateLimitExceeded.EndpointRPMExceeded",
                         "The request has exceeded the rate limit (RPM) of the endpoint.", "TooManyRequests"),
            "quota": (403, "AccountOverdueError", "The request failed because your account has an overdue "
                                                  "balance.", "Forbidden"),
            "refused": (400, "InputTextSensitiveContentDetected", "The request failed because the input text may "
                                                                  "contain sensitive information.", "BadRequest"),
            "auth": (401, "AuthenticationError", "The API key in the request is missing or invalid.",
                     "Unauthorized"),
        }[kind]
        return Refused(status, {"error": {"code": code, "message": f"{message} Request id: {uuid.uuid4().hex}",
                                          "param": "", "type": kind_name}})

    def create(self, fake: NativeVideoFake, match: Any, body: Any, query: Any, headers: Any) -> Answer:
        content = body.get("content")
        if not isinstance(content, list) or not content:
            raise Refused(400, self.error(fake, "bad", "The parameter `content` specified in the request is not "
                                                       "valid."))
        texts = [i.get("text") for i in content if isinstance(i, dict) and i.get("type") == "text"]
        images = [i for i in content if isinstance(i, dict) and i.get("type") == "image_url"]
        if len(texts) + len(images) != len(content) or len(texts) > 1:
            raise Refused(400, self.error(fake, "bad", "The parameter `content.type` specified in the request is "
                                                       "not valid."))
        for item in images:
            if not _is_image_ref((item.get("image_url") or {}).get("url")) or \
                    item.get("role", "first_frame") not in ("first_frame", "last_frame", "reference_image"):
                raise Refused(400, self.error(fake, "bad", "The parameter `content.image_url` specified in the "
                                                           "request is not valid."))
        if not texts and not images:
            raise Refused(400, self.error(fake, "bad", "The parameter `content` must hold a text or an image."))
        job = self.new_job(fake, "tasks", str(body.get("model")), str(texts[0] if texts else ""), body)
        return 200, {"id": job.job_id}, None

    def status(self, fake: NativeVideoFake, match: Any, body: Any, query: Any, headers: Any) -> Answer:
        job = self.known(fake, match.group(1))
        phase = job.phase(time.time())
        word = {"queued": "queued", "queued2": "queued", "running": "running", "success": "succeeded",
                "canceled": "cancelled"}.get(phase, "failed")
        answer: dict[str, Any] = {"id": job.job_id, "model": job.model, "status": word, "error": None,
                                  "created_at": int(job.created), "updated_at": int(time.time())}
        if phase == "success":
            answer["content"] = {"video_url": fake.result_url(job)}
            answer["usage"] = {"completion_tokens": 108900, "total_tokens": 108900}
        if phase == "failed":
            answer["error"] = {"code": "OutputVideoSensitiveContentDetected",
                               "message": "The request failed because the output video may contain sensitive "
                                          "information."}
        return 200, answer, None

    def cancel(self, fake: NativeVideoFake, match: Any, body: Any, query: Any, headers: Any) -> Answer:
        job = self.known(fake, match.group(1))
        with fake.lock:
            if job.phase(time.time()) == "running":
                raise Refused(400, self.error(fake, "bad", "Only queued tasks can be cancelled."))
            job.canceled = True
            fake.cancels.append(job.job_id)
        return 200, {}, None


class MiniMax(ServiceFormat):
    def __init__(self) -> None:
        self.routes = [("POST", r"/v1/video_generation", "create", MiniMax.create),
                       ("GET", r"/v1/query/video_generation", "status", MiniMax.status),
                       ("GET", r"/v1/files/retrieve", "result", MiniMax.retrieve)]

    @staticmethod
    def base(code: int = 0, message: str = "success") -> dict[str, Any]:
        return {"status_code": code, "status_msg": message}

    def error(self, fake: NativeVideoFake, kind: str, message: str) -> Any:
        return {"base_resp": self.base({"bad": 2013, "not_found": 2013, "server": 1000}[kind], message)}

    def refusal(self, fake: NativeVideoFake, kind: str) -> Refused:
        code, message = {"throttle": (1002, "rate limit exceeded(RPM)"), "quota": (1008, "insufficient balance"),
                         "refused": (1026, "input new_sensitive"),
                         "auth": (1004, "login fail: Please carry the API secret key in the 'Authorization' "
                                        "field of the request header")}[kind]
        return Refused(200, {"task_id": "", "base_resp": self.base(code, message)})  # errors inside HTTP 200

    def create(self, fake: NativeVideoFake, match: Any, body: Any, query: Any, headers: Any) -> Answer:
        prompt = body.get("prompt")
        first = body.get("first_frame_image")
        if (not isinstance(prompt, str) or not prompt.strip()) and first is None:
            raise Refused(200, self.error(fake, "bad", "invalid params, prompt is required"))
        for name in ("first_frame_image", "last_frame_image"):
            if name in body and not _is_image_ref(body[name]):
                raise Refused(200, self.error(fake, "bad", f"invalid params, {name} must be a URL or a data URL"))
        if "duration" in body and body["duration"] not in (6, 10):
            raise Refused(200, self.error(fake, "bad", "invalid params, duration must be 6 or 10"))
        job = self.new_job(fake, "video_generation", str(body.get("model")), str(prompt or ""), body)
        return 200, {"task_id": job.job_id, "base_resp": self.base()}, None

    def status(self, fake: NativeVideoFake, match: Any, body: Any, query: Any, headers: Any) -> Answer:
        job = fake.job(query.get("task_id", ""))
        if job is None:
            raise Refused(200, self.error(fake, "not_found", "invalid params, task_id not found"))
        phase = job.phase(time.time())
        word = {"queued": "Preparing", "queued2": "Queueing", "running": "Processing", "success": "Success"}
        answer: dict[str, Any] = {"task_id": job.job_id, "status": word.get(phase, "Fail"),
                                  "base_resp": self.base()}
        if phase == "success":
            answer.update(file_id=job.file_id, video_width=1366, video_height=768)
        return 200, answer, None

    def retrieve(self, fake: NativeVideoFake, match: Any, body: Any, query: Any, headers: Any) -> Answer:
        with fake.lock:
            job = next((j for j in fake.jobs.values() if j.file_id == query.get("file_id")), None)
        if job is None or job.phase(time.time()) != "success":
            raise Refused(200, self.error(fake, "not_found", "invalid params, file_id not found"))
        return 200, {"file": {"file_id": int(job.file_id), "bytes": len(demo_video(job.job_id)),
                              "created_at": int(job.created), "filename": "output.mp4",
                              "purpose": "video_generation", "download_url": fake.result_url(job)},
                     "base_resp": self.base()}, None


class DashScope(ServiceFormat):
    def __init__(self) -> None:
        self.routes = [("POST", r"/api/v1/services/aigc/video-generation/video-synthesis", "create",
                        DashScope.create),
                       ("GET", r"/api/v1/tasks/([\w-]+)", "status", DashScope.status)]

    def error(self, fake: NativeVideoFake, kind: str, message: str) -> Any:
        code = {"bad": "InvalidParameter", "not_found": "InvalidParameter", "server": "InternalError"}[kind]
        return {"code": code, "message": message, "request_id": str(uuid.uuid4())}

    def refusal(self, fake: NativeVideoFake, kind: str) -> Refused:
        status, code, message = {
            "throttle": (429, "Throttling.RateQuota", "Requests rate limit exceeded, please try again later."),
            "quota": (400, "Arrearage", "Access denied, please make sure your account is in good standing."),
            "refused": (400, "DataInspectionFailed", "Input data may contain inappropriate content."),
            "auth": (401, "InvalidApiKey", "Invalid API-key provided."),
        }[kind]
        return Refused(status, {"code": code, "message": message, "request_id": str(uuid.uuid4())})

    def create(self, fake: NativeVideoFake, match: Any, body: Any, query: Any, headers: Any) -> Answer:
        if headers.get("X-DashScope-Async") != "enable":
            raise Refused(403, {"code": "AccessDenied", "request_id": str(uuid.uuid4()),
                                "message": "current user api does not support synchronous calls"})
        model, data = str(body.get("model")), body.get("input")
        if not isinstance(data, dict):
            raise Refused(400, self.error(fake, "bad", "Field required: input"))
        if "i2v" in model and not _is_image_ref(data.get("img_url")):
            raise Refused(400, self.error(fake, "bad", "Field required: input.img_url (a URL or a data URL)"))
        if "t2v" in model and (not isinstance(data.get("prompt"), str) or not data["prompt"].strip()):
            raise Refused(400, self.error(fake, "bad", "Field required: input.prompt"))
        parameters = body.get("parameters", {})
        if not isinstance(parameters, dict) or not isinstance(parameters.get("duration", 5), int):
            raise Refused(400, self.error(fake, "bad", "parameters.duration must be an integer"))
        job = self.new_job(fake, "video-synthesis", model, str(data.get("prompt", "")), body)
        return 200, {"output": {"task_status": "PENDING", "task_id": job.job_id}, "request_id": str(uuid.uuid4())}, None

    def status(self, fake: NativeVideoFake, match: Any, body: Any, query: Any, headers: Any) -> Answer:
        job = fake.job(match.group(1))
        if job is None:  # DashScope answers an unknown or expired task with UNKNOWN
            return 200, {"request_id": str(uuid.uuid4()), "output": {"task_id": match.group(1),
                                                                     "task_status": "UNKNOWN"}}, None
        phase = job.phase(time.time())
        word = {"queued": "PENDING", "queued2": "PENDING", "running": "RUNNING", "success": "SUCCEEDED"}
        output: dict[str, Any] = {"task_id": job.job_id, "task_status": word.get(phase, "FAILED"),
                                  "submit_time": time.strftime("%Y-%m-%d %H:%M:%S.000")}
        answer: dict[str, Any] = {"request_id": str(uuid.uuid4()), "output": output}
        if phase == "success":
            output["video_url"] = fake.result_url(job)
            answer["usage"] = {"video_duration": 5, "video_count": 1, "SR": 720}
        if phase == "failed":
            output.update(code="InternalError.Algo", message="Video generation failed (demo)")
        return 200, answer, None


class Vidu(ServiceFormat):
    refused_later = True  # Vidu's audit fails the task (err_code), no text

    def __init__(self) -> None:
        self.routes = [("POST", r"/ent/v2/(text2video|img2video)", "create", Vidu.create),
                       ("GET", r"/ent/v2/tasks/(\d+)/creations", "status", Vidu.status)]

    def error(self, fake: NativeVideoFake, kind: str, message: str) -> Any:
        status = {"bad": 400, "not_found": 404, "server": 500}[kind]
        reason = {"bad": "BadRequest", "not_found": "NotFound", "server": "InternalError"}[kind]
        return {"code": status, "reason": reason, "message": message, "metadata": {}}

    def refusal(self, fake: NativeVideoFake, kind: str) -> Refused:
        status, reason, message = {"throttle": (429, "TooManyRequests", "too many requests, retry later"),
                                   "quota": (400, "CreditInsufficient", "credit is insufficient"),
                                   "refused": (400, "AuditSubmitIllegal", "the prompt did not pass the audit"),
                                   "auth": (401, "Unauthorized", "invalid token")}[kind]
        return Refused(status, {"code": status, "reason": reason, "message": message, "metadata": {}})

    def authorise(self, fake: NativeVideoFake, headers: Any, route: str) -> None:
        if headers.get("Authorization") != f"Token {fake.api_key}":  # "Bearer <key>" is refused
            raise self.refusal(fake, "auth")

    def create(self, fake: NativeVideoFake, match: Any, body: Any, query: Any, headers: Any) -> Answer:
        route, prompt = match.group(1), body.get("prompt", "")
        if route == "text2video" and (not isinstance(prompt, str) or not prompt.strip()):
            raise Refused(400, self.error(fake, "bad", "prompt is required"))
        if route == "img2video":
            images = body.get("images")
            if not isinstance(images, list) or len(images) != 1 or not _is_image_ref(images[0]):
                raise Refused(400, self.error(fake, "bad", "images must hold one image (a URL or Base64)"))
        job = self.new_job(fake, route, str(body.get("model")), str(prompt), body)
        return 200, {"task_id": job.job_id, "state": "created", "model": job.model, "prompt": job.prompt,
                     "duration": body.get("duration", 5), "credits": 20,
                     "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ")}, None

    def status(self, fake: NativeVideoFake, match: Any, body: Any, query: Any, headers: Any) -> Answer:
        job = self.known(fake, match.group(1))
        phase = job.phase(time.time())
        word = {"queued": "created", "queued2": "queueing", "running": "processing", "success": "success"}
        answer: dict[str, Any] = {"id": job.job_id, "state": word.get(phase, "failed"), "err_code": "",
                                  "credits": 20, "payload": "", "creations": []}
        if phase == "success":
            answer["creations"] = [{"id": job.file_id, "url": fake.result_url(job),
                                    "cover_url": f"{fake.storage.url}/files/{job.job_id}.jpg"}]
        if phase in ("failed", "refused"):
            answer["err_code"] = "AuditSubmitIllegal" if phase == "refused" else "CreationFailed"
        return 200, answer, None


class Runway(ServiceFormat):
    refused_later = True  # moderation fails the task with failureCode SAFETY.INPUT.TEXT

    def __init__(self) -> None:
        self.routes = [("POST", r"/v1/(text_to_video|image_to_video)", "create", Runway.create),
                       ("GET", r"/v1/tasks/([\w-]+)", "status", Runway.status),
                       ("DELETE", r"/v1/tasks/([\w-]+)", "cancel", Runway.cancel)]

    def error(self, fake: NativeVideoFake, kind: str, message: str) -> Any:
        return {"error": message}

    def refusal(self, fake: NativeVideoFake, kind: str) -> Refused:
        status, message = {"throttle": (429, "You have exceeded the rate limit. Please try again later."),
                           "quota": (400, "You do not have enough credits to run this task."),
                           "refused": (400, "Your prompt was flagged by our content moderation."),
                           "auth": (401, "The API key you provided is incorrect.")}[kind]
        return Refused(status, {"error": message})

    def authorise(self, fake: NativeVideoFake, headers: Any, route: str) -> None:
        super().authorise(fake, headers, route)
        if headers.get("X-Runway-Version") != RUNWAY_VERSION:
            raise Refused(400, {"error": f"The X-Runway-Version header is required (e.g. {RUNWAY_VERSION})."})

    def create(self, fake: NativeVideoFake, match: Any, body: Any, query: Any, headers: Any) -> Answer:
        route, prompt = match.group(1), body.get("promptText", "")
        if route == "text_to_video" and (not isinstance(prompt, str) or not prompt.strip()):
            raise Refused(400, {"error": "Validation of body failed", "issues": [{"path": ["promptText"],
                                                                                 "message": "Required"}]})
        if route == "image_to_video" and not _is_image_ref(body.get("promptImage")):
            raise Refused(400, {"error": "Validation of body failed", "issues": [{"path": ["promptImage"],
                                                                                 "message": "Invalid url"}]})
        if "duration" in body and body["duration"] not in (5, 10):
            raise Refused(400, {"error": "Validation of body failed", "issues": [{"path": ["duration"],
                                                                                 "message": "Expected 5 | 10"}]})
        job = self.new_job(fake, route, str(body.get("model")), str(prompt), body)
        return 200, {"id": job.job_id}, None

    def status(self, fake: NativeVideoFake, match: Any, body: Any, query: Any, headers: Any) -> Answer:
        job = fake.job(match.group(1))
        if job is None or job.canceled:
            raise Refused(404, {"error": "Task not found."})
        now = time.time()
        phase = job.phase(now)
        word = {"queued": "THROTTLED", "queued2": "PENDING", "running": "RUNNING", "success": "SUCCEEDED"}
        answer: dict[str, Any] = {"id": job.job_id, "status": word.get(phase, "FAILED"),
                                  "createdAt": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(job.created))}
        if phase == "running":
            answer["progress"] = round(job.fraction(now), 2)
        if phase == "success":
            answer["output"] = [fake.result_url(job)]
        if phase == "refused":
            answer.update(failure="Your prompt was flagged by our content moderation.",
                          failureCode="SAFETY.INPUT.TEXT")
        if phase == "failed":
            answer.update(failure="An unexpected error occurred (demo).", failureCode="INTERNAL")
        return 200, answer, None

    def cancel(self, fake: NativeVideoFake, match: Any, body: Any, query: Any, headers: Any) -> Answer:
        self.mark_canceled(fake, match.group(1))
        return 204, None, None


class Veo(ServiceFormat):
    refused_later = True  # filtered output: done, a response without samples, and the reason
    unknown_model_status = 404

    def __init__(self) -> None:
        self.routes = [("POST", r"/v1beta/models/([\w.-]+):predictLongRunning", "create", Veo.create),
                       ("GET", r"/v1beta/(models/[\w.-]+/operations/\w+)", "status", Veo.status),
                       ("POST", r"/v1beta/(models/[\w.-]+/operations/\w+):cancel", "cancel", Veo.cancel),
                       ("GET", r"/v1beta/files/(\d+):download", "download", Veo.download)]

    @staticmethod
    def google_error(code: int, status: str, message: str, details: list[Any] | None = None) -> Any:
        return {"error": {"code": code, "message": message, "status": status, "details": details or []}}

    def error(self, fake: NativeVideoFake, kind: str, message: str) -> Any:
        code, status = {"bad": (400, "INVALID_ARGUMENT"), "not_found": (404, "NOT_FOUND"),
                        "server": (500, "INTERNAL")}[kind]
        return self.google_error(code, status, message)

    def refusal(self, fake: NativeVideoFake, kind: str) -> Refused:
        if kind in ("throttle", "quota"):
            quota_id = "PredictLongRunningRequestsPerDayPerProjectPerModel" if kind == "quota" else \
                "PredictLongRunningRequestsPerMinutePerProjectPerModel"
            details = [{"@type": "type.googleapis.com/google.rpc.QuotaFailure",
                        "violations": [{"quotaMetric": "generativelanguage.googleapis.com/predict_long_running",
                                        "quotaId": quota_id}]},
                       {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "1s"}]
            return Refused(429, self.google_error(429, "RESOURCE_EXHAUSTED", "You exceeded your current quota, "
                                                  "please check your plan and billing details.", details))
        if kind == "auth":
            return Refused(400, self.google_error(400, "INVALID_ARGUMENT", "API key not valid. Please pass a "
                                                  "valid API key.", [{"@type": "type.googleapis.com/google.rpc."
                                                                      "ErrorInfo", "reason": "API_KEY_INVALID",
                                                                      "domain": "googleapis.com"}]))
        raise AssertionError(kind)

    def authorise(self, fake: NativeVideoFake, headers: Any, route: str) -> None:
        if headers.get("x-goog-api-key") != fake.api_key:
            raise self.refusal(fake, "auth")

    def create(self, fake: NativeVideoFake, match: Any, body: Any, query: Any, headers: Any) -> Answer:
        instances = body.get("instances")
        if not isinstance(instances, list) or len(instances) != 1 or not isinstance(instances[0], dict):
            raise Refused(400, self.error(fake, "bad", "instances must hold exactly one instance"))
        instance = instances[0]
        image = instance.get("image")
        if image is not None and (not isinstance(image, dict) or not _b64_ok(str(image.get("bytesBase64Encoded")))
                                  or image.get("mimeType") not in ("image/png", "image/jpeg", "image/webp")):
            raise Refused(400, self.error(fake, "bad", "instances[0].image: bytesBase64Encoded and mimeType "
                                                       "(image/png, image/jpeg) are required"))
        parameters = body.get("parameters", {})
        if not isinstance(parameters, dict) or parameters.get("durationSeconds", 8) not in (4, 6, 8):
            raise Refused(400, self.error(fake, "bad", "parameters.durationSeconds must be 4, 6 or 8"))
        job = self.new_job(fake, "predictLongRunning", match.group(1), str(instance.get("prompt", "")), body)
        with fake.lock:  # the operation's name is its id: a path with slashes
            del fake.jobs[job.job_id]
            job.job_id = f"models/{job.model}/operations/{job.job_id.replace('-', '')[:12]}"
            fake.jobs[job.job_id] = job
        return 200, {"name": job.job_id}, None

    def status(self, fake: NativeVideoFake, match: Any, body: Any, query: Any, headers: Any) -> Answer:
        job = self.known(fake, match.group(1))
        now = time.time()
        phase = job.phase(now)
        answer: dict[str, Any] = {"name": job.job_id}  # `done` is left out while false
        if phase == "running":
            answer["metadata"] = {"progressPercent": int(100 * job.fraction(now))}
        elif phase in ("success", "refused"):
            answer["done"] = True
            video = {"generatedSamples": [{"video": {"uri": fake.result_url(job)}}]} if phase == "success" else \
                {"raiMediaFilteredCount": 1, "raiMediaFilteredReasons": [
                    "Your prompt may violate our usage guidelines and was blocked by the safety filter."]}
            answer["response"] = {"@type": "type.googleapis.com/google.ai.generativelanguage.v1beta."
                                           "PredictLongRunningResponse", "generateVideoResponse": video}
        elif phase in ("failed", "canceled"):
            answer.update(done=True, error={"code": 13 if phase == "failed" else 1,
                                            "message": "Video generation failed (demo)." if phase == "failed"
                                            else "Operation was cancelled."})
        return 200, answer, None

    def cancel(self, fake: NativeVideoFake, match: Any, body: Any, query: Any, headers: Any) -> Answer:
        self.mark_canceled(fake, match.group(1))
        return 200, {}, None

    def download(self, fake: NativeVideoFake, match: Any, body: Any, query: Any, headers: Any) -> Answer:
        """The key was checked (Google's own host); the bytes are on storage: a redirect there."""
        with fake.lock:
            job = next((j for j in fake.jobs.values() if j.file_id == match.group(1)), None)
        if job is None:
            raise Refused(404, self.error(fake, "not_found", "File not found."))
        location = fake.storage.file_url(f"{job.file_id}.mp4", demo_video(job.job_id), signed=True)
        return 302, {}, {"Location": location}


KLING, SEEDANCE, MINIMAX, DASHSCOPE, VIDU, RUNWAY, VEO = Kling(), Seedance(), MiniMax(), DashScope(), Vidu(), \
    Runway(), Veo()
SERVICE_FORMATS: dict[str, ServiceFormat] = {
    "kling": KLING, "volcengine-seedance": SEEDANCE, "minimax-hailuo": MINIMAX, "dashscope-wan": DASHSCOPE,
    "vidu": VIDU, "runway": RUNWAY, "gemini-veo": VEO}


class NativeVideoDemoServer(DemoServer):
    """``with NativeVideoDemoServer("kling") as server:`` -- ``server.base_url`` is what a provider's
    base_url is for the service (``/api/v3`` for Ark, ``/v1beta`` for Gemini); its result files
    are on ``server.storage`` (another port). ``secret_key``: Kling's, for its JWT."""

    def __init__(self, service: str, *, api_key: str = "demo-native-key-0123456789",
                 secret_key: str = "demo-native-secret-0123456789", models: tuple[str, ...] | None = None,
                 job_limit: int = 4, queued_s: tuple[float, float] = (0.1, 0.3),
                 run_s: tuple[float, float] = (0.4, 0.8), port: int = 0, seed: int | None = None) -> None:
        self.storage = StorageServer((api_key, secret_key))
        self.fake = NativeVideoFake(service, api_key, secret_key, models or DEFAULT_MODELS[service], job_limit,
                                    queued_s, run_s, self.storage, seed)
        self._httpd = LoopbackServer(("127.0.0.1", port), _Handler, self.fake)
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self.base_url = self.url + BASE_PATHS.get(service, "")
        self.fake.url = self.url

    def start(self) -> NativeVideoDemoServer:
        self.storage.start()
        return super().start()

    def stop(self) -> None:
        super().stop()
        self.storage.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="A maker's own video API on 127.0.0.1 (and its storage host)")
    parser.add_argument("service", choices=SERVICES)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--api-key", default="demo-native-key-0123456789")
    parser.add_argument("--secret-key", default="demo-native-secret-0123456789", help="Kling's secret key")
    parser.add_argument("--model", action="append", default=None)
    parser.add_argument("--limit", type=int, default=4, help="jobs at once (then the service's throttle answer)")
    parser.add_argument("--run", type=float, nargs=2, default=(5.0, 20.0), metavar=("MIN", "MAX"))
    args = parser.parse_args(argv)
    server = NativeVideoDemoServer(args.service, api_key=args.api_key, secret_key=args.secret_key,
                                   models=tuple(args.model) if args.model else None, job_limit=args.limit,
                                   run_s=tuple(args.run), port=args.port)
    server.storage.start()
    server.serve_until_interrupted(server.base_url)


if __name__ == "__main__":
    main()
