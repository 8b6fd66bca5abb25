"""A fake OpenAI-compatible server on 127.0.0.1, for ``--demo``, the tests and the benchmarks.

Speaks ``POST /v1/chat/completions`` and ``POST /v1/images/generations`` (``b64_json`` or
``url``; the image bytes are served under ``/files/``), with a latency drawn per request and
divided by ``speed``. It counts requests in flight (and the maximum seen), keeps a request log,
and injects faults on demand -- from Python (``add_fault``) or over HTTP, so a test can steer a
server that a ``mediaassist run`` subprocess talks to:

    POST   /_demo/faults   {"kind": "rate_limit", "count": 3, "retry_after": 1}  (or {"faults": [...]})
                           {"kind": "redirect", "target": "files"}  (image downloads: redirect,
                           server_error or drop)
    DELETE /_demo/faults
    POST   /_demo/config   {"latency_s": [0.1, 0.3], "speed": 1}
    POST   /_demo/reset    (clears faults, log and the in-flight maximum)
    GET    /_demo/stats    {"in_flight", "max_in_flight", "requests": [...]}

Standalone: ``python -m mediaassist.demo_servers.openai_server --port 0`` prints its base URL.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import itertools
import json
import random
import select
import socket
import struct
import threading
import time
import zlib
from dataclasses import asdict, dataclass, field
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from mediaassist.demo_servers import read_json_body
from mediaassist.demo_servers.text import demo_answer

FAULT_STATUS = {
    "rate_limit": 429, "quota": 429, "unavailable": 503, "server_error": 500,
    "unauthorized": 401, "forbidden": 403, "bad_request": 400,
}
# Faults that still answer 200 after the normal latency.
ANSWER_FAULTS = {"slow", "not_json", "bad_shape"}
FAULT_KINDS = set(FAULT_STATUS) | ANSWER_FAULTS | {"drop"}
FILE_FAULT_KINDS = {"redirect", "server_error", "drop"}  # for GET /files/ (target "files")
KEPT_IMAGES = 2000  # url results kept for download (oldest dropped first)


@dataclass
class Fault:
    """The next ``count`` API requests (all of them while ``count`` is None) answer with ``kind``."""

    kind: str
    count: int | None = 1
    retry_after: float | None = None  # Retry-After header, in seconds as sent (not scaled)
    retry_after_date: bool = False  # send it as an HTTP-date instead of delta-seconds
    delay_s: float = 0.0  # nominal wait before answering (the extra time of "slow")
    model: str | None = None  # only requests for this model
    target: str = "api"  # "api" requests, or "files" (image downloads)

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
    fault: str | None = None
    status: int | None = None
    retry_after: str | None = None
    responded: float | None = None  # just before the answer was written
    finished: float | None = None
    aborted: bool = False  # the client hung up before the answer


class DemoOpenAIServer:
    def __init__(self, *, api_key: str | None = None, latency_s: tuple[float, float] = (0.0, 0.0),
                 model_latency: dict[str, tuple[float, float]] | None = None, speed: float = 1.0,
                 host: str = "127.0.0.1", port: int = 0) -> None:
        self.api_key = api_key
        self.latency_s = latency_s
        self.model_latency = dict(model_latency or {})
        self.speed = speed
        self.in_flight = 0
        self.max_in_flight = 0
        self.requests: list[RequestRecord] = []
        self._faults: list[Fault] = []
        self._images: dict[str, bytes] = {}
        self._seq = itertools.count(1)
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer((host, port), _Handler)
        self._httpd.daemon_threads = True
        self._httpd.demo = self  # type: ignore[attr-defined]
        self._thread: threading.Thread | None = None

    # --- lifecycle -------------------------------------------------------------------------
    @property
    def root_url(self) -> str:
        host, port = self._httpd.server_address[:2]
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
                  model_latency: dict[str, tuple[float, float]] | None = None) -> None:
        with self._lock:
            if latency_s is not None:
                self.latency_s = (float(latency_s[0]), float(latency_s[1]))
            if speed is not None:
                self.speed = float(speed)
            if model_latency is not None:
                self.model_latency = {k: (float(v[0]), float(v[1])) for k, v in model_latency.items()}

    def reset(self) -> None:
        with self._lock:
            self._faults.clear()
            self.requests.clear()
            self.max_in_flight = self.in_flight

    def stats(self) -> dict[str, Any]:
        with self._lock:
            return {"in_flight": self.in_flight, "max_in_flight": self.max_in_flight,
                    "requests": [asdict(r) for r in self.requests]}

    def api_requests(self) -> list[RequestRecord]:
        with self._lock:
            return [r for r in self.requests if r.path.startswith("/v1/")]

    # --- used by the handler threads -------------------------------------------------------
    def begin(self, method: str, path: str, headers: Any, body: dict[str, Any]) -> RequestRecord:
        auth = headers.get("Authorization")
        messages = body.get("messages") if isinstance(body.get("messages"), list) else []
        record = RequestRecord(
            seq=0, method=method, path=path, started=time.monotonic(), model=body.get("model"),
            has_auth=auth is not None, auth_ok=self.api_key is None or auth == f"Bearer {self.api_key}",
            header_names=sorted(k.lower() for k in headers.keys()),
            has_system=any(isinstance(m, dict) and m.get("role") == "system" for m in messages),
            body_keys=sorted(body),
        )
        with self._lock:
            record.seq = next(self._seq)
            self.requests.append(record)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        return record

    def end(self, record: RequestRecord) -> None:
        with self._lock:
            self.in_flight -= 1
            record.finished = time.monotonic()

    def take_fault(self, model: str | None, target: str = "api") -> Fault | None:
        with self._lock:
            for fault in self._faults:
                if fault.target == target and (fault.model is None or fault.model == model):
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

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 -- quiet
        pass

    # --- routing ---------------------------------------------------------------------------
    def do_POST(self) -> None:  # noqa: N802
        body = read_json_body(self)
        if self.path in ("/v1/chat/completions", "/v1/images/generations"):
            self._api(body)
        elif self.path == "/_demo/faults":
            self._control(lambda: [self.demo.add_fault(Fault(**f)) for f in body.get("faults", [body])])
        elif self.path == "/_demo/config":
            self._control(lambda: self.demo.configure(**body))
        elif self.path == "/_demo/reset":
            self._control(self.demo.reset)
        else:
            self._send_json(404, _error("not found", "not_found"))

    def do_DELETE(self) -> None:  # noqa: N802
        read_json_body(self)
        if self.path == "/_demo/faults":
            self._control(self.demo.clear_faults)
        else:
            self._send_json(404, _error("not found", "not_found"))

    def do_GET(self) -> None:  # noqa: N802
        if self.path == "/_demo/stats":
            self._send_json(200, self.demo.stats())
        elif self.path.startswith("/files/"):
            self._file(self.path.removeprefix("/files/"))
        else:
            self._send_json(404, _error("not found", "not_found"))

    def _control(self, action: Any) -> None:
        try:
            action()
        except (TypeError, ValueError) as exc:
            self._send_json(400, _error(str(exc), "bad_request"))
        else:
            self._send_json(200, {"ok": True})

    # --- the API ---------------------------------------------------------------------------
    def _api(self, body: dict[str, Any]) -> None:
        record = self.demo.begin("POST", self.path, self.headers, body)
        try:
            self._answer(record, body)
        except (BrokenPipeError, ConnectionResetError):
            record.aborted = True
        finally:
            self.demo.end(record)

    def _answer(self, record: RequestRecord, body: dict[str, Any]) -> None:
        if not record.auth_ok:
            return self._reply(record, 401, _unauthorized(self.headers.get("Authorization")))
        fault = self.demo.take_fault(record.model)
        record.fault = fault.kind if fault else None
        if fault is not None and fault.kind not in ANSWER_FAULTS:
            return self._fail(record, fault)
        wait = self.demo.latency(record.model) + (fault.delay_s / self.demo.speed if fault else 0.0)
        if not self._pause(wait):
            record.aborted = True
            return None
        if fault is not None and fault.kind == "not_json":
            return self._reply(record, 200, b"<html><body>502 Bad Gateway</body></html>", "text/html")
        if fault is not None and fault.kind == "bad_shape":
            return self._reply(record, 200, {"id": "x", "object": "chat.completion", "choices": []})
        if self.path.endswith("/images/generations"):
            return self._reply(record, 200, self._images(body))
        return self._reply(record, 200, _chat_answer(body))

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
        body = (_unauthorized(self.headers.get("Authorization")) if fault.kind == "unauthorized"
                else _FAULT_BODIES[fault.kind])
        return self._reply(record, FAULT_STATUS[fault.kind], body, headers=headers)

    def _images(self, body: dict[str, Any]) -> dict[str, Any]:
        count = max(1, min(4, int(body.get("n", 1))))
        as_url = body.get("response_format") == "url"
        data = []
        for number in range(count):
            png = _png(f"{body.get('prompt', '')}#{number}")
            data.append({"url": self.demo.keep_image(png)} if as_url
                        else {"b64_json": base64.b64encode(png).decode("ascii")})
        return {"created": int(time.time()), "data": data}

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


def _error(message: str, code: str, kind: str = "invalid_request_error") -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "code": code}}


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
}


def _unauthorized(authorization: str | None) -> dict[str, Any]:
    # Echoes the key in full, as some gateways do: the worst case for our redaction.
    presented = (authorization or "").removeprefix("Bearer ")
    return _error(f"Incorrect API key provided: {presented or '(none)'}.", "invalid_api_key")


def _chat_answer(body: dict[str, Any]) -> dict[str, Any]:
    messages = body.get("messages") if isinstance(body.get("messages"), list) else []
    prompt = next((str(m.get("content", "")) for m in reversed(messages)
                   if isinstance(m, dict) and m.get("role") == "user"), "")
    text = f"[{body.get('model')}] {demo_answer(prompt)}"
    return {
        "id": f"chatcmpl-{random.getrandbits(48):012x}", "object": "chat.completion",
        "created": int(time.time()), "model": body.get("model"),
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": len(prompt) // 4 + 1, "completion_tokens": len(text) // 4 + 1,
                  "total_tokens": (len(prompt) + len(text)) // 4 + 2},
    }


def _png(seed: str, size: int = 64) -> bytes:
    """A small gradient PNG whose colours come from the prompt (stdlib only)."""
    r, g, b = hashlib.sha256(seed.encode()).digest()[:3]
    rows = b"".join(b"\x00" + bytes(v for x in range(size) for v in (r, (g + 3 * y) % 256, (b + 3 * x) % 256))
                    for y in range(size))

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Fake OpenAI-compatible server for demos and benchmarks")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, nargs=2, default=(0.0, 0.0), metavar=("MIN_S", "MAX_S"))
    parser.add_argument("--speed", type=float, default=1.0)
    parser.add_argument("--api-key", default=None, help="require this bearer key (default: accept any)")
    args = parser.parse_args(argv)
    server = DemoOpenAIServer(api_key=args.api_key, latency_s=tuple(args.latency), speed=args.speed,
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
