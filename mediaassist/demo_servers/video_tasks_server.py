"""A fake video task API on 127.0.0.1, faithful to the shipped task-API profiles' public shapes.

Flavours:
- ``openai-videos``: the /v1/videos "Sora format" -- ``POST /v1/videos`` (JSON, or multipart with
  ``input_reference``) → a job object ``{id, object: "video", model, status, progress, ...}``,
  ``status`` ``queued → in_progress → completed | failed`` with ``error {code, message}``;
  ``GET /v1/videos/{id}``, ``GET /v1/videos/{id}/content`` (the MP4, an error before it is
  ready), ``DELETE /v1/videos/{id}``; errors in the OpenAI envelope.
- ``newapi-video``: New API's unified format -- ``POST /v1/video/generations`` → ``{task_id}``,
  ``GET /v1/video/generations/{task_id}`` → ``{task_id, status, url, format, error}``, with the
  status words of ``words``: ``newapi`` (queued/in_progress/completed/failed), ``newapi-alt``
  (processing/succeeded/failed) or ``huawei`` (queued/running/succeeded/failed, the result in
  ``content.result_url``). Results are downloaded from ``/files/...`` like a storage host: the
  server counts any request that carries a key there.

Both enforce a Bearer key, validate the create strictly (400 with the real error shapes), answer
429 past the job limit (with ``Retry-After`` unless ``retry_after=False``), and take faults per
route (``inject``: "http500", "reset", "nonjson", "429", "slow:<s>", "lost" for create:
created, then the connection is reset; "short" and "cut" for content/files: half the MP4 with a
matching length, or announced whole and cut off). ``/v1/videos`` also serves ``GET /v1/videos``
(the jobs) and ``POST /v1/videos/{id}/remix`` (a new job from a completed one, with
``remixed_from_video_id``); a completed video's content expires ``result_ttl_s`` after it
finished (``expires_at``), then answers 404. Prompt markers: ``#fail`` ends failed, ``#cancel`` is
cancelled remotely (newapi words only), ``#expire`` ends "expired" (newapi words).
"""

from __future__ import annotations

import argparse
import json
import random
import threading
import time
from collections import Counter, deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any

from mediaassist.demo_servers import DemoServer, LoopbackServer, demo_video, reset_connection
from mediaassist.demo_servers.multipart import MultipartError, parse_multipart

DEMO_VIDEO_KEY = "demo-video-key-0123456789abcdef"
FLAVOURS = ("openai-videos", "newapi-video")
WORDS = {
    "newapi": {"queued": "queued", "running": "in_progress", "success": "completed", "failed": "failed"},
    "newapi-alt": {"queued": "processing", "running": "processing", "success": "succeeded", "failed": "failed"},
    "huawei": {"queued": "queued", "running": "running", "success": "succeeded", "failed": "failed"},
}
OPENAI_SECONDS = ("4", "8", "12")
OPENAI_SIZES = ("720x1280", "1280x720", "1024x1792", "1792x1024")
ROUTES = ("create", "status", "content", "cancel", "files", "remix", "list")
IMAGE_MAGIC = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"RIFF")
MAX_INPUT_BYTES = 20 * 1024 * 1024


@dataclass
class Job:
    job_id: str
    model: str
    prompt: str
    created: float
    queued_s: float
    run_s: float
    outcome: str  # success | failed | canceled | expired
    deleted: bool = False
    seconds: str = "4"
    size: str = "720x1280"
    remixed_from: str | None = None
    billed_s: int = 4  # the video's length in whole seconds: what the service bills

    def done_at(self) -> float:
        return self.created + self.queued_s + self.run_s

    def phase(self, now: float) -> str:
        elapsed = now - self.created
        if elapsed < self.queued_s:
            return "queued"
        if elapsed < self.queued_s + self.run_s:
            return "running"
        return self.outcome

    def progress(self, now: float) -> int:
        elapsed = now - self.created - self.queued_s
        return max(0, min(100, int(100 * elapsed / self.run_s))) if self.run_s else 100


class VideoTaskFake:
    def __init__(self, flavour: str, api_key: str, models: tuple[str, ...], job_limit: int, words: str,
                 queued_s: tuple[float, float], run_s: tuple[float, float], retry_after: bool,
                 seed: int | None, result_ttl_s: float = 3600.0) -> None:
        if flavour not in FLAVOURS:
            raise ValueError(f"unknown flavour {flavour!r} (allowed: {', '.join(FLAVOURS)})")
        self.flavour, self.api_key, self.models = flavour, api_key, models
        self.job_limit, self.words, self.retry_after = job_limit, WORDS[words], retry_after
        self.words_name = words
        self.queued_s, self.run_s = queued_s, run_s
        self.result_ttl_s = result_ttl_s  # a finished video's content is downloadable this long (expires_at)
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.jobs: dict[str, Job] = {}
        self.faults: dict[str, deque[Any]] = {route: deque() for route in ROUTES}
        self.base_url = ""
        self.reset_counters()

    def reset_counters(self) -> None:
        with self.lock:
            self.creates: Counter[str] = Counter()
            self.create_order: list[str] = []
            self.create_times: list[float] = []
            self.create_bodies: list[dict[str, Any]] = []
            self.rejects: Counter[int] = Counter()
            self.calls: Counter[str] = Counter()
            self.cancels: list[str] = []
            self.remixes: list[str] = []  # the videos remixed, in order
            self.max_in_flight = 0
            self.downloads = 0
            self.files_with_key = 0

    def inject(self, route: str, *faults: Any) -> None:
        if route not in ROUTES:
            raise ValueError(f"unknown route {route!r} (allowed: {', '.join(ROUTES)})")
        with self.lock:
            self.faults[route].extend(faults)

    def next_fault(self, route: str) -> Any:
        with self.lock:
            self.calls[route] += 1
            queue = self.faults[route]
            return queue.popleft() if queue else None

    def in_flight(self, now: float) -> int:
        return sum(1 for j in self.jobs.values() if not j.deleted and j.phase(now) in ("queued", "running"))

    def add_job(self, model: str, prompt: str, body: dict[str, Any], remix_of: Job | None = None) -> Job | None:
        """The new job (a create's, or a remix of ``remix_of``), or None when the job limit is reached."""
        now = time.time()
        with self.lock:
            if self.in_flight(now) >= self.job_limit:
                self.rejects[429] += 1
                return None
            prefix = "video_" if self.flavour == "openai-videos" else "task_"
            outcome = next((o for marker, o in (("#fail", "failed"), ("#cancel", "canceled"),
                                                ("#expire", "expired")) if marker in prompt), "success")
            job = Job(f"{prefix}{self.rng.getrandbits(96):024x}", model, prompt, now,
                      self.rng.uniform(*self.queued_s), self.rng.uniform(*self.run_s), outcome,
                      seconds=str(body.get("seconds", remix_of.seconds if remix_of else "4")),
                      size=str(body.get("size", remix_of.size if remix_of else "720x1280")),
                      remixed_from=remix_of.job_id if remix_of else None,
                      billed_s=remix_of.billed_s if remix_of else _billed_seconds(self.flavour, body))
            self.jobs[job.job_id] = job
            if remix_of is not None:
                self.remixes.append(remix_of.job_id)
            else:
                self.creates[prompt] += 1
                self.create_order.append(prompt)
                self.create_times.append(now)
                self.create_bodies.append(body)
            self.max_in_flight = max(self.max_in_flight, self.in_flight(now))
            return job

    def expired(self, job: Job, now: float) -> bool:
        return now >= job.done_at() + self.result_ttl_s

    def stats(self) -> dict[str, Any]:
        with self.lock:
            return {"creates": dict(self.creates), "create_order": list(self.create_order),
                    "create_times": list(self.create_times), "rejects": {str(k): v for k, v in self.rejects.items()},
                    "calls": dict(self.calls), "cancels": list(self.cancels), "max_in_flight": self.max_in_flight,
                    "downloads": self.downloads, "files_with_key": self.files_with_key, "jobs": len(self.jobs),
                    "remixes": list(self.remixes)}

    # --- the two public shapes --------------------------------------------------------------
    def openai_object(self, job: Job, now: float) -> dict[str, Any]:
        phase = job.phase(now)
        status = {"queued": "queued", "running": "in_progress", "success": "completed"}.get(phase, "failed")
        obj: dict[str, Any] = {"id": job.job_id, "object": "video", "model": job.model, "status": status,
                               "progress": job.progress(now), "created_at": int(job.created), "seconds": job.seconds,
                               "size": job.size, "prompt": job.prompt, "remixed_from_video_id": job.remixed_from,
                               "completed_at": None, "expires_at": None, "error": None}
        if status == "completed":
            obj.update(completed_at=int(job.done_at()), expires_at=int(job.done_at() + self.result_ttl_s))
        if status == "failed":
            obj["error"] = {"code": "content_policy_violation",
                            "message": "The request was rejected by the safety system (demo)."}
        return obj

    def newapi_object(self, job: Job, now: float) -> dict[str, Any]:
        phase = job.phase(now)
        word = {"canceled": "cancelled", "expired": "expired"}.get(phase) or self.words[phase]
        obj: dict[str, Any] = {"task_id": job.job_id, "status": word, "format": "mp4", "metadata": {}}
        url = f"{self.base_url}/files/{job.job_id}.mp4"
        if phase == "success":
            if self.words_name == "huawei":
                obj["content"] = {"result_url": url}
            else:
                obj["url"] = url
            obj["usage"] = {"duration": job.billed_s}  # the seconds billed (Huawei MaaS, New API)
        if phase in ("failed", "expired"):
            obj["error"] = {"code": "generation_failed" if phase == "failed" else "expired",
                            "message": "generation failed (demo)" if phase == "failed" else "the task expired"}
        return obj


def _billed_seconds(flavour: str, body: dict[str, Any]) -> int:
    """The length a create asked for (already validated), or the service's default."""
    if flavour == "openai-videos":
        return int(str(body.get("seconds", "4")))
    duration = body.get("duration")
    return duration if isinstance(duration, int) and not isinstance(duration, bool) else 5


class _Handler(BaseHTTPRequestHandler):
    server: LoopbackServer
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        pass

    @property
    def fake(self) -> VideoTaskFake:
        fake: VideoTaskFake = self.server.fake
        return fake

    # --- plumbing --------------------------------------------------------------------------
    def _send(self, status: int, body: bytes, ctype: str = "application/json",
              headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(obj).encode(), headers=headers)

    def _error(self, status: int, message: str, code: str, kind: str = "invalid_request_error",
               headers: dict[str, str] | None = None) -> None:
        self._json(status, {"error": {"message": message, "type": kind, "param": None, "code": code}}, headers)

    def _too_many(self) -> None:
        headers = {"Retry-After": "1"} if self.fake.retry_after else None
        self._error(429, "Too many concurrent video jobs; try again later", "too_many_jobs",
                    "rate_limit_error", headers)

    def _fault(self, route: str) -> Any:
        """Apply the route's next fault; returns it, or "done" when the request is answered."""
        fault = self.fake.next_fault(route)
        if fault is None or fault in ("lost", "short", "cut"):  # answered by the route itself
            return fault
        if isinstance(fault, str) and fault.startswith("slow:"):
            time.sleep(float(fault.split(":", 1)[1]))
            return None
        if fault == "reset":
            reset_connection(self)
        elif fault == "nonjson":
            self._send(502, b"<html><body>502 Bad Gateway</body></html>", "text/html")
        elif fault == "http500":
            self._error(500, "The server had an error while processing your request.", "server_error",
                        "server_error")
        elif fault == "429":
            self._too_many()
        return "done"

    def _authorised(self) -> bool:
        if self.headers.get("Authorization") == f"Bearer {self.fake.api_key}":
            return True
        self._error(401, "Incorrect API key provided.", "invalid_api_key")
        return False

    def _read_body(self) -> tuple[dict[str, Any], dict[str, tuple[str, bytes]]] | None:
        """(fields, files) of a JSON or multipart body; None once a 400 was answered."""
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_INPUT_BYTES:
            self.close_connection = True  # the unread body would be taken for the next request
            self._error(413, f"request body over {MAX_INPUT_BYTES} bytes", "file_too_large")
            return None
        raw = self.rfile.read(length) if length else b""
        ctype = self.headers.get("Content-Type", "")
        if ctype.startswith("multipart/form-data"):
            try:
                return parse_multipart(ctype, raw)
            except MultipartError as exc:
                self._error(400, f"We could not parse the multipart body of your request: {exc}",
                            "invalid_multipart")
                return None
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            body = None
        if not isinstance(body, dict):
            self._error(400, "We could not parse the JSON body of your request.", "invalid_json")
            return None
        return body, {}

    # --- routes ----------------------------------------------------------------------------
    def do_GET(self) -> None:
        if self.path == "/_demo/stats":
            self._json(200, self.fake.stats())
        elif self.path.startswith("/files/"):
            self._file()
        elif self.fake.flavour == "openai-videos" and self.path.split("?")[0] == "/v1/videos":
            self._openai_list()
        elif self.fake.flavour == "openai-videos" and self.path.startswith("/v1/videos/"):
            self._openai_get()
        elif self.fake.flavour == "newapi-video" and self.path.startswith("/v1/video/generations/"):
            self._newapi_get()
        else:
            self._error(404, f"Unknown request URL: GET {self.path}", "unknown_url")

    def do_POST(self) -> None:
        if self.path == "/_demo/faults":
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            for route, faults in body.items():
                self.fake.inject(route, *faults)
            self._json(200, {})
        elif self.path == "/_demo/reset":
            self.fake.reset_counters()
            self._json(200, {})
        elif (self.fake.flavour, self.path) in (("openai-videos", "/v1/videos"),
                                                ("newapi-video", "/v1/video/generations")):
            self._create()
        elif self.fake.flavour == "openai-videos" and self.path.startswith("/v1/videos/") \
                and self.path.endswith("/remix"):
            self._remix()
        else:
            self._error(404, f"Unknown request URL: POST {self.path}", "unknown_url")

    def do_DELETE(self) -> None:
        if self.fake.flavour == "openai-videos" and self.path.startswith("/v1/videos/"):
            self._openai_delete()
        else:
            self._error(404, f"Unknown request URL: DELETE {self.path}", "unknown_url")

    def _create(self) -> None:
        fault = self._fault("create")
        if fault == "done" or not self._authorised():
            return
        parsed = self._read_body()
        if parsed is None:
            return
        fields, files = parsed
        problem = self._invalid_create(fields, files)
        if problem is not None:
            self._error(400, problem[1], problem[0])
            return
        record = {**fields, **{name: f"<file {fname} {len(data)} bytes>" for name, (fname, data) in files.items()}}
        job = self.fake.add_job(str(fields["model"]), str(fields["prompt"]), record)
        if job is None:
            self._too_many()
            return
        if fault == "lost":
            reset_connection(self)
            return
        now = time.time()
        if self.fake.flavour == "openai-videos":
            self._json(200, self.fake.openai_object(job, now))
        else:
            self._json(200, {"task_id": job.job_id, "status": self.fake.words["queued"]})

    def _remix(self) -> None:
        """``POST /v1/videos/{id}/remix`` with ``{prompt}``: a new job from a completed video."""
        if self._fault("remix") == "done" or not self._authorised():
            return
        source = self._job(self.path.removesuffix("/remix"))
        if source is None:
            return
        parsed = self._read_body()
        if parsed is None:
            return
        prompt = parsed[0].get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            self._error(400, "Missing required parameter: 'prompt'.", "missing_required_parameter")
            return
        if source.phase(time.time()) != "success":
            self._error(400, f"Video '{source.job_id}' is not completed; only a completed video can be remixed.",
                        "video_not_ready")
            return
        job = self.fake.add_job(source.model, prompt, {"prompt": prompt}, remix_of=source)
        if job is None:
            self._too_many()
            return
        self._json(200, self.fake.openai_object(job, time.time()))

    def _openai_list(self) -> None:
        """``GET /v1/videos``: the jobs, newest first, as a list object."""
        if self._fault("list") == "done" or not self._authorised():
            return
        now = time.time()
        with self.fake.lock:
            jobs = sorted((j for j in self.fake.jobs.values() if not j.deleted), key=lambda j: -j.created)
        data = [self.fake.openai_object(job, now) for job in jobs]
        self._json(200, {"object": "list", "data": data, "first_id": data[0]["id"] if data else None,
                         "last_id": data[-1]["id"] if data else None, "has_more": False})

    def _send_video(self, job: Job, fault: Any) -> None:
        """The job's MP4; a "short" fault sends half of it with a matching length (only the
        content tells), a "cut" fault announces it whole and stops halfway."""
        with self.fake.lock:
            self.fake.downloads += 1
        body = demo_video(job.job_id)
        if fault == "short":
            self._send(200, body[:len(body) // 2], "video/mp4")
        elif fault == "cut":
            self.send_response(200)
            self.send_header("Content-Type", "video/mp4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[:len(body) // 2])
            self.wfile.flush()
            reset_connection(self)
        else:
            self._send(200, body, "video/mp4")

    def _invalid_create(self, fields: dict[str, Any], files: dict[str, tuple[str, bytes]]) -> tuple[str, str] | None:
        """(code, message) of the first problem, as the real services word it."""
        model, prompt = fields.get("model"), fields.get("prompt")
        if not isinstance(model, str) or not model:
            return "missing_required_parameter", "Missing required parameter: 'model'."
        if model not in self.fake.models:
            return "model_not_found", f"The model '{model}' does not exist or you do not have access to it."
        if not isinstance(prompt, str) or not prompt.strip():
            return "missing_required_parameter", "Missing required parameter: 'prompt'."
        if self.fake.flavour == "openai-videos":
            seconds, size = fields.get("seconds", "4"), fields.get("size", "720x1280")
            if seconds not in OPENAI_SECONDS:
                return "invalid_value", (f"Invalid value for 'seconds': {seconds!r}; supported values are "
                                         f"{', '.join(repr(s) for s in OPENAI_SECONDS)} (strings).")
            if size not in OPENAI_SIZES:
                return "invalid_value", f"Invalid value for 'size': {size!r}."
            unknown = set(files) - {"input_reference"}
            if unknown:
                return "unknown_parameter", f"Unknown parameter: '{sorted(unknown)[0]}'."
            if "input_reference" in files and not files["input_reference"][1].startswith(IMAGE_MAGIC):
                return "invalid_image", "input_reference must be a JPEG, PNG or WEBP image."
        else:
            image = fields.get("image")
            if image is not None and (not isinstance(image, str)
                                      or not image.startswith(("http://", "https://", "data:image/"))):
                return "invalid_image", "image must be an http(s) URL or a data:image/... base64 URL."
            duration = fields.get("duration")
            if duration is not None and (isinstance(duration, bool) or not isinstance(duration, int)):
                return "invalid_value", "duration must be an integer number of seconds."
        return None

    def _job(self, path: str | None = None) -> Job | None:
        """The job the path names (after auth); answers 404 itself when there is none."""
        job_id = (path or self.path).split("?")[0].rstrip("/").removesuffix("/content").split("/")[-1]
        with self.fake.lock:
            job = self.fake.jobs.get(job_id)
        if job is None or job.deleted:
            what = "Video with id" if self.fake.flavour == "openai-videos" else "task_id"
            self._error(404, f"{what} '{job_id}' not found.", "not_found")
            return None
        return job

    def _openai_get(self) -> None:
        content = self.path.split("?")[0].endswith("/content")
        fault = self._fault("content" if content else "status")
        if fault == "done" or not self._authorised():
            return
        job = self._job()
        if job is None:
            return
        now = time.time()
        if not content:
            self._json(200, self.fake.openai_object(job, now))
        elif job.phase(now) != "success":
            self._error(400, "Video is not ready yet; wait until its status is 'completed'.", "video_not_ready")
        elif self.fake.expired(job, now):
            self._error(404, f"The content of video '{job.job_id}' has expired.", "video_expired")
        else:
            self._send_video(job, fault)

    def _openai_delete(self) -> None:
        if self._fault("cancel") == "done" or not self._authorised():
            return
        job = self._job()
        if job is None:
            return
        with self.fake.lock:
            job.deleted = True
            self.fake.cancels.append(job.job_id)
        self._json(200, {"id": job.job_id, "object": "video.deleted", "deleted": True})

    def _newapi_get(self) -> None:
        if self._fault("status") == "done" or not self._authorised():
            return
        job = self._job()
        if job is not None:
            self._json(200, self.fake.newapi_object(job, time.time()))

    def _file(self) -> None:
        fault = self._fault("files")
        if fault == "done":
            return
        job_id = self.path.split("/")[-1].removesuffix(".mp4")
        with self.fake.lock:
            job = self.fake.jobs.get(job_id)
            if self.headers.get("Authorization"):
                self.fake.files_with_key += 1  # a storage host must never see the key
        if job is None or job.phase(time.time()) != "success":
            self._send(404, b"<Error><Code>NoSuchKey</Code></Error>", "application/xml")
            return
        self._send_video(job, fault)


class VideoTaskDemoServer(DemoServer):
    """``with VideoTaskDemoServer("openai-videos") as server:`` -- ``server.base_url`` ends in /v1.

    ``queued_s``/``run_s`` are (min, max) real seconds."""

    def __init__(self, flavour: str, *, api_key: str = DEMO_VIDEO_KEY, models: tuple[str, ...] = ("sora-2",),
                 job_limit: int = 3, words: str = "newapi", queued_s: tuple[float, float] = (0.1, 0.3),
                 run_s: tuple[float, float] = (0.5, 1.0), retry_after: bool = True, port: int = 0,
                 seed: int | None = None, result_ttl_s: float = 3600.0) -> None:
        self.fake = VideoTaskFake(flavour, api_key, models, job_limit, words, queued_s, run_s, retry_after, seed,
                                  result_ttl_s)
        self._httpd = LoopbackServer(("127.0.0.1", port), _Handler, self.fake)
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self.base_url = f"{self.url}/v1"
        self.fake.base_url = self.url


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Fake video task API on 127.0.0.1")
    parser.add_argument("flavour", choices=FLAVOURS)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--api-key", default=DEMO_VIDEO_KEY)
    parser.add_argument("--model", action="append", default=None)
    parser.add_argument("--limit", type=int, default=3, help="jobs at once (then 429)")
    parser.add_argument("--words", choices=tuple(WORDS), default="newapi")
    parser.add_argument("--queued", type=float, nargs=2, default=(0.1, 0.3), metavar=("MIN", "MAX"))
    parser.add_argument("--run", type=float, nargs=2, default=(0.5, 1.0), metavar=("MIN", "MAX"))
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args(argv)
    server = VideoTaskDemoServer(args.flavour, api_key=args.api_key, models=tuple(args.model or ["sora-2"]),
                                 job_limit=args.limit, words=args.words, queued_s=tuple(args.queued),
                                 run_s=tuple(args.run), port=args.port, seed=args.seed)
    server.serve_until_interrupted(server.base_url)


if __name__ == "__main__":
    main()
