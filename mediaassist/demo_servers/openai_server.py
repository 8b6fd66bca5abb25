"""A fake OpenAI-compatible server on 127.0.0.1, for ``--demo``, the tests and the benchmarks.

As strict as the real API, so the client cannot lean on kindness:

* ``POST /v1/chat/completions`` (``n`` choices, ``stream`` as SSE with heartbeat comments and a
  usage chunk when ``stream_options.include_usage``; image parts as data URLs or http URLs),
  ``POST /v1/images/generations`` (``b64_json`` or ``url``, ``size`` honoured; the image bytes are
  served under ``/files/``), ``POST /v1/images/edits`` (multipart ``image[]`` + ``mask``) and
  ``GET /v1/models``;
* 404 ``model_not_found`` for a model it does not serve, 400 ``invalid_request_error`` naming the
  ``param`` for a body it cannot accept (unknown arguments, wrong types, malformed images);
* ``x-ratelimit-limit/remaining/reset-requests`` on every answer, from a requests-per-window
  budget (``rpm``); past it, 429 with or without ``Retry-After``;
* a hidden concurrency limit (``concurrency_limit``): past N API requests in flight, 429 with no
  header at all, as LiteLLM and many gateways do;
* several keys (``keys = {key: its concurrency limit or None}``), each with its own hidden limit
  (past it, the same 429 for that key only), counted in flight per key; ``revoke_key`` makes one
  answer 401 ``invalid_api_key`` from then on, as a key deleted in the console does;
* with ``balance`` a prepaid key as DeepSeek's: each answer's tokens are charged, ``GET
  /user/balance`` tells what is left, and a key with nothing left gets 402 "Insufficient Balance".

The latency is drawn per request and divided by ``speed``. It counts requests in flight (and
the maximum seen), keeps a request log, and injects faults on demand -- from Python
(``add_fault``) or over HTTP, so a test can steer a server that a ``mediaassist run`` subprocess
talks to:

    POST   /_demo/faults   {"kind": "rate_limit", "count": 3, "retry_after": 1}  (or {"faults": [...]})
                           {"kind": "rate_limit", "count": null, "for_s": 3}  (a closed window)
                           {"kind": "redirect", "target": "files"}  (image downloads: redirect,
                           server_error or drop)
    DELETE /_demo/faults
    POST   /_demo/config   {"latency_s": [0.1, 0.3], "speed": 1, "concurrency_limit": 4}
    POST   /_demo/reset    (clears faults, log and the in-flight maximum)
    GET    /_demo/stats    {"in_flight", "max_in_flight", "requests": [...]}

Standalone: ``python -m mediaassist.demo_servers.openai_server --port 0`` prints its base URL.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import hashlib
import itertools
import json
import math
import random
import select
import socket
import struct
import threading
import time
import zlib
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from decimal import Decimal
from email.message import Message
from email.parser import BytesParser
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, cast

from mediaassist.demo_servers import QuietHTTPServer
from mediaassist.demo_servers.text import demo_answer

FAULT_STATUS = {
    "rate_limit": 429, "quota": 429, "unavailable": 503, "server_error": 500,
    "unauthorized": 401, "forbidden": 403, "bad_request": 400, "budget": 400,
}
# Faults that still answer 200 after the normal latency.
ANSWER_FAULTS = {"slow", "not_json", "bad_shape", "stream_break"}
FAULT_KINDS = set(FAULT_STATUS) | ANSWER_FAULTS | {"drop"}
FILE_FAULT_KINDS = {"redirect", "server_error", "drop"}  # for GET /files/ (target "files")
KEPT_IMAGES = 2000  # url results kept for download (oldest dropped first)
# The models it serves unless told otherwise: the demo's own and a few real names.
DEFAULT_MODELS = ("demo-writer", "demo-illustrator", "gpt-4o-mini", "gpt-4o", "gpt-image-1", "dall-e-3")
CHAT_ARGS = {
    "model", "messages", "n", "temperature", "top_p", "stream", "stream_options", "max_tokens",
    "max_completion_tokens", "presence_penalty", "frequency_penalty", "seed", "stop", "user",
    "response_format", "logprobs", "top_logprobs", "tools", "tool_choice", "parallel_tool_calls",
    "metadata", "store", "reasoning_effort", "modalities", "logit_bias", "service_tier",
}
IMAGE_ARGS = {"model", "prompt", "n", "size", "response_format", "quality", "style", "user", "background",
              "output_format", "moderation"}
EDIT_FIELDS = IMAGE_ARGS | {"image", "image[]", "mask"}
ROLES = {"system", "developer", "user", "assistant", "tool"}
IMAGE_SIZES = ("256x256", "512x512", "1024x1024", "1536x1024", "1024x1536", "1792x1024", "1024x1792")
MAX_N = {"chat": 8, "images": 10}
IMAGE_MAGIC = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a")
# A request this long after the first Retry-After of a closed window is "early": the client (or
# another process sharing its key) had been told, and had time to hear it.
EARLY_GRACE_S = 0.25
DEFAULT_WINDOW = (10_000, 60.0)  # requests per window when no ``rpm`` is set: ample, but counted
STREAM_PIECES = 8  # content chunks per choice in a stream
MAX_BODY = 64 << 20


class BadRequest(Exception):
    """A body the real API would refuse: 400 with the offending ``param``."""

    def __init__(self, message: str, param: str | None = None, code: str = "invalid_value") -> None:
        super().__init__(message)
        self.param = param
        self.code = code


@dataclass
class Fault:
    """The next ``count`` API requests (all of them while ``count`` is None) answer with ``kind``."""

    kind: str
    count: int | None = 1
    retry_after: float | None = None  # Retry-After header, in seconds as sent (not scaled)
    retry_after_date: bool = False  # send it as an HTTP-date instead of delta-seconds
    retry_after_ms: float | None = None  # retry-after-ms header (OpenAI's own), in ms as sent
    should_retry: bool | None = None  # x-should-retry header
    status: int | None = None  # instead of the kind's usual status (e.g. a 422 budget error)
    for_s: float | None = None  # nominal: active this long after its first use, then gone
    delay_s: float = 0.0  # nominal wait before answering (the extra time of "slow")
    model: str | None = None  # only requests for this model
    target: str = "api"  # "api" requests, or "files" (image downloads)
    first_used: float | None = None

    def __post_init__(self) -> None:
        kinds = {"api": FAULT_KINDS, "files": FILE_FAULT_KINDS}.get(self.target)
        if kinds is None:
            raise ValueError(f"fault target {self.target!r} is not one of ['api', 'files']")
        if self.kind not in kinds:
            raise ValueError(f"fault kind {self.kind!r} is not one of {sorted(kinds)} for {self.target}")


@dataclass
class RequestRecord:
    seq: int
    method: str
    path: str
    started: float  # time.monotonic() at the server
    model: str | None = None
    has_auth: bool = False
    auth_ok: bool = False
    header_names: list[str] = field(default_factory=list)
    has_system: bool = False
    body_keys: list[str] = field(default_factory=list)
    in_flight: int = 0  # API requests in flight when it arrived, itself included
    key_in_flight: int = 0  # with ``keys``: the requests of its key in flight, itself included
    key_index: int | None = None  # with ``keys``: which key (its place in ``keys``) it came with
    stream: bool = False
    images: list[dict[str, Any]] = field(default_factory=list)  # what the image inputs decoded to
    fault: str | None = None
    status: int | None = None
    retry_after: str | None = None
    responded: float | None = None  # just before the answer was written
    finished: float | None = None
    aborted: bool = False  # the client hung up before the answer
    chunks: int = 0  # SSE events written
    sent_headers: dict[str, str] = field(default_factory=dict)  # the answer's extra headers


class DemoOpenAIServer:
    def __init__(self, *, api_key: str | None = None, latency_s: tuple[float, float] = (0.0, 0.0),
                 model_latency: dict[str, tuple[float, float]] | None = None, speed: float = 1.0,
                 models: Iterable[str] | None = None, concurrency_limit: int | None = None,
                 rpm: tuple[int, float] | None = None, rpm_retry_after: bool = True,
                 ratelimit_headers: bool = True, echo_key: bool = False,
                 balance: Decimal | None = None, price_per_1k_tokens: Decimal = Decimal("0.002"),
                 keys: dict[str, int | None] | None = None,
                 host: str = "127.0.0.1", port: int = 0) -> None:
        self.api_key = api_key
        self.keys = dict(keys or {})  # key -> its own concurrency limit (None: none); empty: api_key rules
        self._key_order = list(self.keys)
        self.key_in_flight = dict.fromkeys(self._key_order, 0)
        self.key_max_in_flight = dict.fromkeys(self._key_order, 0)
        self.latency_s = latency_s
        self.model_latency = dict(model_latency or {})
        self.speed = speed
        self.models = tuple(models) if models is not None else DEFAULT_MODELS
        self.concurrency_limit = concurrency_limit
        self.rpm = rpm  # (requests, window seconds as sent, not scaled)
        self.rpm_retry_after = rpm_retry_after
        self.ratelimit_headers = ratelimit_headers  # x-ratelimit-*: many gateways send none
        self.echo_key = echo_key  # a 401 shows the whole key, as some gateways do (else masked, as OpenAI)
        # A prepaid key, as DeepSeek's: each answer's tokens are charged (CNY), the balance is told at
        # /user/balance, and a key with nothing left is refused with 402 "Insufficient Balance".
        self.balance = balance
        self.price_per_1k_tokens = price_per_1k_tokens
        self.in_flight = 0
        self.max_in_flight = 0
        self.requests: list[RequestRecord] = []
        self._window_start = time.monotonic()
        self._window_used = 0
        self._told_at: float | None = None  # when this window's first Retry-After went out
        self.early = 0  # requests that came while the window was closed, after a client was told so
        self._faults: list[Fault] = []
        self._images: dict[str, bytes] = {}
        self._seq = itertools.count(1)
        self._lock = threading.Lock()
        self._httpd = QuietHTTPServer((host, port), _Handler)
        self._httpd.demo = self  # type: ignore[attr-defined]
        self._thread: threading.Thread | None = None

    # --- lifecycle -------------------------------------------------------------------------
    @property
    def root_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        assert isinstance(host, str)  # an AF_INET server's address is (host, port)
        return f"http://{host}:{port}"

    @property
    def base_url(self) -> str:
        return f"{self.root_url}/v1"

    def start(self) -> DemoOpenAIServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="demo-openai", daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        """Serve in the calling thread (the standalone process)."""
        self._httpd.serve_forever()

    def stop(self) -> None:
        if self._thread is not None:
            self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> DemoOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- control (the same operations as the /_demo endpoints) ----------------------------
    def add_fault(self, fault: Fault) -> None:
        with self._lock:
            self._faults.append(fault)

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()

    def configure(self, latency_s: tuple[float, float] | None = None, speed: float | None = None,
                  model_latency: dict[str, tuple[float, float]] | None = None,
                  concurrency_limit: int | None = None) -> None:
        with self._lock:
            if latency_s is not None:
                self.latency_s = (float(latency_s[0]), float(latency_s[1]))
            if speed is not None:
                self.speed = float(speed)
            if model_latency is not None:
                self.model_latency = {k: (float(v[0]), float(v[1])) for k, v in model_latency.items()}
            if concurrency_limit is not None:
                self.concurrency_limit = int(concurrency_limit) or None

    def reset(self) -> None:
        with self._lock:
            self._faults.clear()
            self.requests.clear()
            self.max_in_flight = self.in_flight

    def stats(self) -> dict[str, Any]:
        with self._lock:
            return {"in_flight": self.in_flight, "max_in_flight": self.max_in_flight, "early": self.early,
                    "requests": [asdict(r) for r in self.requests]}

    def revoke_key(self, key: str) -> None:
        """The key answers 401 from now on (deleted in the provider's console)."""
        with self._lock:
            self.keys.pop(key, None)

    def authorised(self, authorization: str | None) -> bool:
        if self._key_order:
            return authorization is not None and authorization.removeprefix("Bearer ") in self.keys
        return self.api_key is None or authorization == f"Bearer {self.api_key}"

    def over_key_limit(self, record: RequestRecord) -> bool:
        if record.key_index is None:
            return False
        limit = self.keys.get(self._key_order[record.key_index])
        return limit is not None and record.key_in_flight > limit

    def api_requests(self) -> list[RequestRecord]:
        with self._lock:
            return [r for r in self.requests if r.path.startswith("/v1/") and r.method == "POST"]

    # --- used by the handler threads -------------------------------------------------------
    def begin(self, method: str, path: str, headers: Any, body: dict[str, Any]) -> RequestRecord:
        auth = headers.get("Authorization")
        given = body.get("messages")
        messages = given if isinstance(given, list) else []
        record = RequestRecord(
            seq=0, method=method, path=path, started=time.monotonic(),
            model=body.get("model") if isinstance(body.get("model"), str) else None,
            has_auth=auth is not None, auth_ok=self.authorised(auth),
            header_names=sorted(k.lower() for k in headers),
            has_system=any(isinstance(m, dict) and m.get("role") == "system" for m in messages),
            body_keys=sorted(body), stream=body.get("stream") is True,
        )
        with self._lock:
            record.seq = next(self._seq)
            self.requests.append(record)
            self.in_flight += 1
            record.in_flight = self.in_flight
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            key = (auth or "").removeprefix("Bearer ")
            if record.auth_ok and key in self.key_in_flight:
                record.key_index = self._key_order.index(key)
                self.key_in_flight[key] += 1
                record.key_in_flight = self.key_in_flight[key]
                self.key_max_in_flight[key] = max(self.key_max_in_flight[key], record.key_in_flight)
        return record

    def end(self, record: RequestRecord) -> None:
        with self._lock:
            self.in_flight -= 1
            if record.key_index is not None:
                self.key_in_flight[self._key_order[record.key_index]] -= 1
            record.finished = time.monotonic()

    def charge(self, usage: dict[str, Any]) -> None:
        if self.balance is None:
            return
        tokens = int(usage.get("total_tokens", 0))
        with self._lock:
            self.balance -= Decimal(tokens) * self.price_per_1k_tokens / 1000

    def out_of_balance(self) -> bool:
        with self._lock:
            return self.balance is not None and self.balance <= 0

    def balance_reply(self) -> dict[str, Any]:
        """DeepSeek's ``GET /user/balance``."""
        with self._lock:
            left = self.balance or Decimal(0)
        total = f"{left.quantize(Decimal('0.01')):f}"
        return {"is_available": left > 0, "balance_infos": [
            {"currency": "CNY", "total_balance": total, "granted_balance": "0.00", "topped_up_balance": total}]}

    def over_hidden_limit(self, record: RequestRecord) -> bool:
        return self.concurrency_limit is not None and record.in_flight > self.concurrency_limit

    def take_window(self) -> tuple[bool, dict[str, str]]:
        """One request against the requests-per-window budget: (allowed, x-ratelimit headers)."""
        limit, window = self.rpm or DEFAULT_WINDOW
        with self._lock:
            now = time.monotonic()
            if now - self._window_start >= window:
                self._window_start, self._window_used, self._told_at = now, 0, None
            allowed = self._window_used < limit
            self._window_used += allowed
            if not allowed and self._told_at is not None and now - self._told_at > EARLY_GRACE_S:
                self.early += 1  # a client was told when to come back, and came before
            elif not allowed and self.rpm_retry_after and self._told_at is None:
                self._told_at = now
            reset = max(0.0, window - (now - self._window_start))
            remaining = limit - self._window_used
        headers = {"x-ratelimit-limit-requests": str(limit), "x-ratelimit-remaining-requests": str(remaining),
                   "x-ratelimit-reset-requests": f"{reset:.3f}s"} if self.ratelimit_headers else {}
        if not allowed and self.rpm_retry_after:
            headers["Retry-After"] = f"{max(1, math.ceil(reset))}"  # never before the window reopens
        return allowed, headers

    def take_fault(self, model: str | None, target: str = "api") -> Fault | None:
        with self._lock:
            now = time.monotonic()
            for fault in list(self._faults):
                if fault.for_s is not None and fault.first_used is not None \
                        and now - fault.first_used >= fault.for_s / self.speed:
                    self._faults.remove(fault)
                    continue
                if fault.target == target and (fault.model is None or fault.model == model):
                    fault.first_used = fault.first_used if fault.first_used is not None else now
                    if fault.count is not None:
                        fault.count -= 1
                        if fault.count <= 0:
                            self._faults.remove(fault)
                    return fault
        return None

    def latency(self, model: str | None) -> float:
        low, high = self.model_latency.get(model or "", self.latency_s)
        return random.uniform(low, high) / self.speed

    def keep_image(self, content: bytes) -> str:
        name = f"{hashlib.sha1(content + str(time.monotonic_ns()).encode()).hexdigest()[:16]}.png"
        with self._lock:
            self._images[name] = content
            while len(self._images) > KEPT_IMAGES:
                self._images.pop(next(iter(self._images)))
        return f"{self.root_url}/files/{name}"

    def image(self, name: str) -> bytes | None:
        with self._lock:
            return self._images.get(name)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real API servers do
    server: ThreadingHTTPServer

    @property
    def demo(self) -> DemoOpenAIServer:
        return self.server.demo  # type: ignore[attr-defined,no-any-return]

    def setup(self) -> None:
        super().setup()
        # Headers and body go out in two writes; with Nagle on, the body waits for the client's
        # delayed ACK (~40 ms per request), which would make the server look slower than it is.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:
        pass

    # --- routing ---------------------------------------------------------------------------
    def do_POST(self) -> None:
        raw = self._read_raw()
        if self.path in ("/v1/chat/completions", "/v1/images/generations", "/v1/images/edits"):
            self._api(raw)
            return
        body = _json_object(raw) or {}
        if self.path == "/_demo/faults":
            def add_faults() -> None:
                for f in body.get("faults", [body]):
                    self.demo.add_fault(Fault(**f))

            self._control(add_faults)
        elif self.path == "/_demo/config":
            self._control(lambda: self.demo.configure(**body))
        elif self.path == "/_demo/reset":
            self._control(self.demo.reset)
        else:
            self._send_json(404, _error("not found", "not_found"))

    def do_DELETE(self) -> None:
        self._read_raw()
        if self.path == "/_demo/faults":
            self._control(self.demo.clear_faults)
        else:
            self._send_json(404, _error("not found", "not_found"))

    def do_GET(self) -> None:
        if self.path == "/_demo/stats":
            self._send_json(200, self.demo.stats())
        elif self.path.startswith("/files/"):
            self._file(self.path.removeprefix("/files/"))
        elif self.path in ("/user/balance", "/v1/user/balance") and self.demo.balance is not None:
            if not self.demo.authorised(self.headers.get("Authorization")):
                self._send_json(401, _unauthorized(self.headers.get("Authorization"), self.demo.echo_key))
            else:
                self._send_json(200, self.demo.balance_reply())
        elif self.path == "/v1/models" or self.path.startswith("/v1/models/"):
            self._models(self.path.removeprefix("/v1/models").strip("/"))
        else:
            self._send_json(404, _error("not found", "not_found"))

    def _control(self, action: Any) -> None:
        try:
            action()
        except (TypeError, ValueError) as exc:
            self._send_json(400, _error(str(exc), "bad_request"))
        else:
            self._send_json(200, {"ok": True})

    def _read_raw(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(min(length, MAX_BODY)) if length else b""

    def _models(self, model_id: str) -> None:
        if not self.demo.authorised(self.headers.get("Authorization")):
            self._send_json(401, _unauthorized(self.headers.get("Authorization"), self.demo.echo_key))
        elif not model_id:
            self._send_json(200, {"object": "list", "data": [_model(m) for m in self.demo.models]})
        elif model_id in self.demo.models:
            self._send_json(200, _model(model_id))
        else:
            self._send_json(404, _model_not_found(model_id))

    # --- the API ---------------------------------------------------------------------------
    def _api(self, raw: bytes) -> None:
        try:
            body = self._body(raw)
            problem = None
        except BadRequest as exc:
            body, problem = {}, exc
        record = self.demo.begin("POST", self.path, self.headers, body)
        try:
            self._answer(record, body, problem)
        except (BrokenPipeError, ConnectionResetError):
            record.aborted = True
        finally:
            self.demo.end(record)

    def _body(self, raw: bytes) -> dict[str, Any]:
        if self.path.endswith("/images/edits"):
            return _multipart(self.headers.get("Content-Type", ""), raw)
        body = _json_object(raw)
        if body is None:
            raise BadRequest("We could not parse the JSON body of your request. (HINT: This likely means "
                             "you aren't using your HTTP library correctly.)", None, "invalid_json")
        return body

    def _answer(self, record: RequestRecord, body: dict[str, Any], problem: BadRequest | None) -> None:
        if not record.auth_ok:
            return self._reply(record, 401, _unauthorized(self.headers.get("Authorization"), self.demo.echo_key))
        if self.demo.over_hidden_limit(record) or self.demo.over_key_limit(record):  # no header, as gateways
            return self._reply(record, 429, _error("Too many concurrent requests for this key.",
                                                   "rate_limit_exceeded", "requests"))
        if self.demo.out_of_balance():
            return self._reply(record, 402, {"error": {"message": "Insufficient Balance", "type": "unknown_error",
                                                       "param": None, "code": "invalid_request_error"}})
        allowed, window_headers = self.demo.take_window()
        if not allowed:
            record.retry_after = window_headers.get("Retry-After")
            return self._reply(record, 429, _FAULT_BODIES["rate_limit"], headers=window_headers)
        try:
            if problem is not None:
                raise problem
            self._validate(record, body)
        except BadRequest as exc:
            return self._reply(record, 400, _error(str(exc), exc.code, param=exc.param), headers=window_headers)
        except ModelNotFound as exc:
            return self._reply(record, 404, _model_not_found(str(exc)), headers=window_headers)
        fault = self.demo.take_fault(record.model)
        record.fault = fault.kind if fault else None
        if fault is not None and fault.kind not in ANSWER_FAULTS:
            return self._fail(record, fault)
        wait = self.demo.latency(record.model) + (fault.delay_s / self.demo.speed if fault else 0.0)
        if record.stream:
            return self._stream(record, body, wait, window_headers, broken=fault is not None
                                and fault.kind == "stream_break")
        if not self._pause(wait):
            record.aborted = True
            return None
        if fault is not None and fault.kind == "not_json":
            return self._reply(record, 200, b"<html><body>502 Bad Gateway</body></html>", "text/html")
        if fault is not None and fault.kind == "bad_shape":
            return self._reply(record, 200, {"id": "x", "object": "chat.completion", "choices": []})
        answer = self._images(body) if self.path.endswith(("/images/generations", "/images/edits")) \
            else _chat_answer(body)
        self.demo.charge(answer["usage"])
        return self._reply(record, 200, answer, headers=window_headers)

    def _validate(self, record: RequestRecord, body: dict[str, Any]) -> None:
        chat = self.path.endswith("/chat/completions")
        allowed = CHAT_ARGS if chat else EDIT_FIELDS if self.path.endswith("/edits") else IMAGE_ARGS
        unknown = sorted(set(body) - allowed)
        if unknown:
            raise BadRequest(f"Unrecognized request argument supplied: {unknown[0]}", unknown[0],
                             "unknown_parameter")
        model = body.get("model")
        if not isinstance(model, str) or not model:
            raise BadRequest("you must provide a model parameter", "model", "missing_required_parameter")
        if model not in self.demo.models:
            raise ModelNotFound(model)
        _check_int(body, "n", 1, MAX_N["chat" if chat else "images"])
        if "stream" in body and not isinstance(body["stream"], bool):
            raise BadRequest(f"Invalid type for 'stream': expected a boolean, but got {_kind(body['stream'])} "
                             "instead.", "stream", "invalid_type")
        if chat:
            _check_number(body, "temperature", 0.0, 2.0)
            _check_number(body, "top_p", 0.0, 1.0)
            _check_int(body, "max_tokens", 1, 1 << 20)
            record.images = _check_messages(body.get("messages"))
        else:
            record.stream = False
            _check_images_body(body)
            if self.path.endswith("/edits"):
                record.images = _check_edit_files(body)

    def _fail(self, record: RequestRecord, fault: Fault) -> None:
        if not self._pause(fault.delay_s / self.demo.speed):
            record.aborted = True
            return None
        if fault.kind == "drop":
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return None
        headers = {}
        if fault.retry_after is not None:
            headers["Retry-After"] = (formatdate(time.time() + fault.retry_after, usegmt=True)
                                      if fault.retry_after_date else f"{fault.retry_after:g}")
            record.retry_after = headers["Retry-After"]
        if fault.retry_after_ms is not None:
            headers["retry-after-ms"] = f"{fault.retry_after_ms:g}"
        if fault.should_retry is not None:
            headers["x-should-retry"] = "true" if fault.should_retry else "false"
        body = (_unauthorized(self.headers.get("Authorization"), self.demo.echo_key) if fault.kind == "unauthorized"
                else _FAULT_BODIES[fault.kind])
        return self._reply(record, fault.status or FAULT_STATUS[fault.kind], body, headers=headers)

    def _images(self, body: dict[str, Any]) -> dict[str, Any]:
        count = int(body.get("n", 1))
        width, height = _size(body.get("size"))
        as_url = body.get("response_format") == "url"
        data = []
        for number in range(count):
            png = _png(f"{body.get('prompt', '')}#{number}", width, height)
            data.append({"url": self.demo.keep_image(png)} if as_url
                        else {"b64_json": base64.b64encode(png).decode("ascii")})
        prompt_tokens = len(str(body.get("prompt", ""))) // 4 + 1
        return {"created": int(time.time()), "data": data,
                "usage": {"input_tokens": prompt_tokens, "output_tokens": 272 * count,
                          "total_tokens": prompt_tokens + 272 * count}}

    def _stream(self, record: RequestRecord, body: dict[str, Any], wait: float, headers: dict[str, str],
                broken: bool) -> None:
        """The answer as ``chat.completion.chunk`` events, spread over the latency, with SSE
        comment heartbeats between them; ``broken`` hangs up halfway."""
        answer = _chat_answer(body)
        self.demo.charge(answer["usage"])
        events = _chunks(answer, include_usage=_include_usage(body))
        record.status, record.responded, record.sent_headers = 200, time.monotonic(), dict(headers)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache")
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        gap = wait / (len(events) + 1)
        for number, event in enumerate(events):
            if broken and number == len(events) // 2:
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            if not self._pause(gap):
                record.aborted = True
                return
            self._chunk(b": keep-alive\n\n" + f"data: {json.dumps(event, ensure_ascii=False)}\n\n".encode())
            record.chunks += 1
        self._chunk(b"data: [DONE]\n\n")
        self._chunk(b"")

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _file(self, name: str) -> None:
        record = self.demo.begin("GET", self.path, self.headers, {})
        fault = self.demo.take_fault(None, "files")
        record.fault = fault.kind if fault else None
        try:
            content = self.demo.image(name)
            if fault is not None and fault.kind == "redirect":  # as a CDN or a signed link does
                self._reply(record, 302, b"", "text/plain", headers={"Location": f"/files/{name}"})
            elif fault is not None:
                self._fail(record, fault)
            elif content is None:
                self._reply(record, 404, _error("no such file", "not_found"))
            else:
                self._reply(record, 200, content, "image/png")
        finally:
            self.demo.end(record)

    # --- plumbing --------------------------------------------------------------------------
    def _pause(self, seconds: float) -> bool:
        """Wait like a busy server; False if the client hung up meanwhile (a cancelled request)."""
        if seconds <= 0:
            return True
        deadline = time.monotonic() + seconds
        readable, _, _ = select.select([self.connection], [], [], seconds)
        if readable and not self._peer_still_there():
            self.close_connection = True
            return False
        time.sleep(max(0.0, deadline - time.monotonic()))
        return True

    def _peer_still_there(self) -> bool:
        try:
            return bool(self.connection.recv(1, socket.MSG_PEEK))
        except OSError:
            return False

    def _reply(self, record: RequestRecord, status: int, payload: Any, content_type: str = "application/json",
               headers: dict[str, str] | None = None) -> None:
        record.status = status
        record.responded = time.monotonic()
        record.sent_headers = dict(headers or {})
        self._send(status, payload, content_type, headers or {})

    def _send_json(self, status: int, payload: Any) -> None:
        self._send(status, payload, "application/json", {})

    def _send(self, status: int, payload: Any, content_type: str, headers: dict[str, str]) -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


class ModelNotFound(Exception):
    """The model is not one the server serves: 404 ``model_not_found``."""


# --- validation ------------------------------------------------------------------------------
def _json_object(raw: bytes) -> dict[str, Any] | None:
    try:
        data = json.loads(raw or b"{}")
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _kind(value: Any) -> str:
    return {bool: "a boolean", int: "an integer", float: "a decimal", str: "a string", list: "an array",
            dict: "an object", type(None): "null"}.get(type(value), type(value).__name__)


def _check_int(body: dict[str, Any], key: str, low: int, high: int) -> None:
    if key not in body:
        return
    value = body[key]
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadRequest(f"Invalid type for '{key}': expected an integer, but got {_kind(value)} instead.",
                         key, "invalid_type")
    if not low <= value <= high:
        raise BadRequest(f"Invalid '{key}': integer {value} is out of range ({low}..{high}).", key)


def _check_number(body: dict[str, Any], key: str, low: float, high: float) -> None:
    if key not in body:
        return
    value = body[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise BadRequest(f"Invalid type for '{key}': expected a decimal, but got {_kind(value)} instead.",
                         key, "invalid_type")
    if not low <= value <= high:
        raise BadRequest(f"Invalid '{key}': decimal {value} is out of range ({low}..{high}).", key)


def _check_messages(messages: Any) -> list[dict[str, Any]]:
    """The messages as the real API checks them; returns what each image part decoded to."""
    if not isinstance(messages, list) or not messages:
        raise BadRequest("Invalid 'messages': expected a non-empty array.", "messages")
    images: list[dict[str, Any]] = []
    for number, message in enumerate(messages):
        where = f"messages[{number}]"
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            raise BadRequest(f"Invalid '{where}.role': expected one of {sorted(ROLES)}.", f"{where}.role")
        content = message.get("content")
        if isinstance(content, str):
            continue
        if not isinstance(content, list) or not content:
            raise BadRequest(f"Invalid '{where}.content': expected a string or an array of parts.",
                             f"{where}.content")
        for index, part in enumerate(content):
            images.extend(_check_part(part, f"{where}.content[{index}]"))
    return images


def _check_part(part: Any, where: str) -> list[dict[str, Any]]:
    kind = part.get("type") if isinstance(part, dict) else None
    if kind == "text" and isinstance(part.get("text"), str):
        return []
    if kind != "image_url":
        raise BadRequest(f"Invalid '{where}': expected a text or image_url part.", where)
    image = part.get("image_url")
    url = image.get("url") if isinstance(image, dict) else None
    if not isinstance(url, str):
        raise BadRequest(f"Invalid '{where}.image_url.url': expected a string.", f"{where}.image_url.url")
    if url.startswith(("http://", "https://")):
        return [{"url": url}]
    head, _, data = url.partition(",")
    if not (head.startswith("data:image/") and head.endswith(";base64")):
        raise BadRequest(f"Invalid '{where}.image_url.url': expected an http(s) URL or a base64 data URL.",
                         f"{where}.image_url.url", "invalid_image_url")
    try:
        content = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise BadRequest("Invalid image data: the base64 does not decode.", f"{where}.image_url.url",
                         "invalid_image_format") from None
    _check_image_bytes(content, f"{where}.image_url.url")
    return [{"mime": head.removeprefix("data:").removesuffix(";base64"), "bytes": len(content),
             "sha256": hashlib.sha256(content).hexdigest()}]


def _check_image_bytes(content: bytes, param: str) -> None:
    if not content.startswith(IMAGE_MAGIC) and not (content[:4] == b"RIFF" and content[8:12] == b"WEBP"):
        raise BadRequest("You uploaded an unsupported image. Please make sure your image is a PNG, JPEG, "
                         "GIF or WEBP.", param, "invalid_image_format")


def _check_images_body(body: dict[str, Any]) -> None:
    prompt = body.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise BadRequest("Invalid 'prompt': expected a non-empty string.", "prompt")
    if body.get("response_format", "b64_json") not in ("b64_json", "url"):
        raise BadRequest(f"Invalid value for 'response_format': {body['response_format']!r}. Supported "
                         "values are: 'url' and 'b64_json'.", "response_format")
    _size(body.get("size"))


def _check_edit_files(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Every ``image[]`` (or ``image``) and the ``mask`` part must be a real image file."""
    for key in ("image[]", "image", "mask"):
        if key in body and not isinstance(body[key], list):
            raise BadRequest(f"Invalid '{key}': expected a file upload, got a text field.", key, "invalid_type")
    files = body.get("image[]", []) + body.get("image", [])
    if not files:
        raise BadRequest("Missing required parameter: 'image'.", "image", "missing_required_parameter")
    found = []
    for role, items in (("image", files), ("mask", body.get("mask", []))):
        for name, content in items:
            _check_image_bytes(content, role)
            found.append({"role": role, "filename": name, "bytes": len(content),
                          "sha256": hashlib.sha256(content).hexdigest()})
    return found


def _size(value: Any) -> tuple[int, int]:
    if value is None or value == "auto":
        return 64, 64
    if value not in IMAGE_SIZES:
        raise BadRequest(f"Invalid value: {value!r}. Supported values are: {', '.join(IMAGE_SIZES)} and 'auto'.",
                         "size")
    width, _, height = value.partition("x")
    return int(width), int(height)


def _multipart(content_type: str, raw: bytes) -> dict[str, Any]:
    """A multipart/form-data body: text fields as values, files as [(filename, bytes)] lists."""
    if not content_type.startswith("multipart/form-data"):
        raise BadRequest("images/edits expects a multipart/form-data body.", None, "invalid_content_type")
    message = BytesParser().parsebytes(f"Content-Type: {content_type}\r\n\r\n".encode() + raw)
    if not message.is_multipart():
        raise BadRequest("The multipart body could not be parsed.", None, "invalid_multipart")
    body: dict[str, Any] = {}
    # cast: a multipart message's payload is the list of its parts (typeshed types any payload)
    for part in cast(list[Message], message.get_payload()):
        name = part.get_param("name", header="content-disposition")
        if not name or not isinstance(name, str):  # (an RFC 2231 tuple: no client of the demo sends one)
            raise BadRequest("A multipart part has no name.", None, "invalid_multipart")
        payload = part.get_payload(decode=True)
        content = payload if isinstance(payload, bytes) else b""
        filename = part.get_filename()
        if filename is not None:
            body.setdefault(name, []).append((filename, content))
        else:
            body[name] = _form_value(name, content.decode("utf-8", "replace"))
    return body


def _form_value(name: str, text: str) -> Any:
    return int(text) if name == "n" and text.isdigit() else text


# --- answers ---------------------------------------------------------------------------------
def _error(message: str, code: str | None, kind: str = "invalid_request_error",
           param: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


_FAULT_BODIES: dict[str, Any] = {
    "rate_limit": _error("Rate limit reached for requests. Please try again later.", "rate_limit_exceeded",
                         "requests"),
    "quota": _error("You exceeded your current quota, please check your plan and billing details.",
                    "insufficient_quota", "insufficient_quota"),
    "unavailable": _error("The server is overloaded, please retry later.", "overloaded", "server_error"),
    "server_error": _error("The server had an error while processing your request.", "server_error",
                           "server_error"),
    "forbidden": _error("Your organisation has no access to this model.", "forbidden"),
    "bad_request": _error("Invalid value for 'messages'.", "invalid_value"),
    # LiteLLM's words for a key whose budget is spent (sent as 400, or 422 by some versions).
    "budget": _error("Budget has been exceeded! Current cost: 10.02, Max budget: 10.0", "400", "budget_exceeded"),
}


def _unauthorized(authorization: str | None, echo_key: bool) -> dict[str, Any]:
    """OpenAI's 401: the presented key masked (``sk-abc***…wjh3``), or a different text when no
    key came at all. ``echo_key``: the whole key, as some gateways do (the worst case for our
    redaction)."""
    presented = (authorization or "").removeprefix("Bearer ").strip()
    if not presented:
        return _error("You didn't provide an API key. You need to provide your API key in an Authorization "
                      "header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field "
                      "(with blank username) if you're accessing the API from your browser and are prompted for "
                      "a username. You can obtain an API key from https://platform.openai.com/account/api-keys.",
                      None)
    shown = presented if echo_key else mask_key(presented)
    return _error(f"Incorrect API key provided: {shown}. You can find your API key at "
                  "https://platform.openai.com/account/api-keys.", "invalid_api_key")


def mask_key(key: str) -> str:
    """As OpenAI shows a key it refused: the first 6 and the last 4 characters, stars between
    (a short key is all stars: there is nothing to show without showing it)."""
    if len(key) < 14:
        return "*" * len(key)
    return f"{key[:6]}{'*' * (len(key) - 10)}{key[-4:]}"


def _model_not_found(model: str) -> dict[str, Any]:
    return _error(f"The model `{model}` does not exist or you do not have access to it.", "model_not_found")


def _model(model_id: str) -> dict[str, Any]:
    return {"id": model_id, "object": "model", "created": 1_700_000_000, "owned_by": "mediaassist-demo"}


def _chat_answer(body: dict[str, Any]) -> dict[str, Any]:
    given = body.get("messages")
    messages = given if isinstance(given, list) else []
    prompt = next((_text_of(m.get("content")) for m in reversed(messages)
                   if isinstance(m, dict) and m.get("role") == "user"), "")
    count = int(body.get("n", 1))
    texts = [f"[{body.get('model')}] {demo_answer(prompt)}" + (f" (choice {i + 1})" if count > 1 else "")
             for i in range(count)]
    completion = sum(len(t) // 4 + 1 for t in texts)
    return {
        "id": f"chatcmpl-{random.getrandbits(48):012x}", "object": "chat.completion",
        "created": int(time.time()), "model": body.get("model"),
        "choices": [{"index": i, "message": {"role": "assistant", "content": text}, "finish_reason": "stop",
                     "logprobs": None} for i, text in enumerate(texts)],
        "usage": {"prompt_tokens": len(prompt) // 4 + 1, "completion_tokens": completion,
                  "total_tokens": len(prompt) // 4 + 1 + completion},
    }


def _text_of(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text")
    return str(content or "")


def _include_usage(body: dict[str, Any]) -> bool:
    options = body.get("stream_options")
    return isinstance(options, dict) and options.get("include_usage") is True


def _chunks(answer: dict[str, Any], include_usage: bool) -> list[dict[str, Any]]:
    """A completion cut into the events a real stream sends: role, content pieces, finish, usage."""
    base = {"id": answer["id"], "object": "chat.completion.chunk", "created": answer["created"],
            "model": answer["model"]}
    events = []
    for choice in answer["choices"]:
        index, text = choice["index"], choice["message"]["content"]
        events.append({**base, "choices": [{"index": index, "delta": {"role": "assistant", "content": ""},
                                            "finish_reason": None}]})
        step = max(1, -(-len(text) // STREAM_PIECES))
        for start in range(0, len(text), step):
            events.append({**base, "choices": [{"index": index, "delta": {"content": text[start:start + step]},
                                                "finish_reason": None}]})
        events.append({**base, "choices": [{"index": index, "delta": {}, "finish_reason": "stop"}]})
    if include_usage:
        events.append({**base, "choices": [], "usage": answer["usage"]})
    return events


def _png(seed: str, width: int = 64, height: int = 64) -> bytes:
    """A banded PNG whose colours come from the prompt (stdlib only, cheap at 1792 px)."""
    r, g, b = hashlib.sha256(seed.encode()).digest()[:3]
    rows = b"".join(b"\x00" + bytes((r, (g + 3 * y) % 256, b)) * width for y in range(height))

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Fake OpenAI-compatible server for demos and benchmarks")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, nargs=2, default=(0.0, 0.0), metavar=("MIN_S", "MAX_S"))
    parser.add_argument("--speed", type=float, default=1.0)
    parser.add_argument("--api-key", default=None, help="require this bearer key (default: accept any)")
    parser.add_argument("--models", nargs="+", default=None, help="the model ids it serves")
    parser.add_argument("--concurrency-limit", type=int, default=None,
                        help="hidden limit: 429 (no header) past this many requests in flight")
    args = parser.parse_args(argv)
    server = DemoOpenAIServer(api_key=args.api_key, latency_s=tuple(args.latency), speed=args.speed,
                              models=args.models, concurrency_limit=args.concurrency_limit,
                              host=args.host, port=args.port)
    print(server.base_url, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


if __name__ == "__main__":
    main()
