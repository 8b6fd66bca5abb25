"""A webhook receiver on 127.0.0.1 for the notice tests: a real HTTP server that records what it
is sent and answers as the group robots do (HTTP 200 with an error code in the body), or fails
the first requests with 500 when told to."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.helpers import local_server


@dataclass
class Receiver:
    url: str
    received: list[dict[str, Any]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    fail_first: int = 0  # answer 500 to this many requests first
    answer: dict[str, Any] = field(default_factory=lambda: {"errcode": 0, "errmsg": "ok"})
    requests: int = 0

    def bodies(self, kind: str | None = None) -> list[dict[str, Any]]:
        return [b for b in self.received if kind is None or b.get("event") == kind]


@contextmanager
def webhook_receiver(path: str = "/hook?key=SECRET-HOOK-KEY-123") -> Iterator[Receiver]:
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            with lock:
                receiver.requests += 1
                failing = receiver.requests <= receiver.fail_first
                if not failing:
                    receiver.received.append(json.loads(body))
                    receiver.paths.append(self.path)
            reply = json.dumps({"error": "busy"} if failing else receiver.answer).encode()
            self.send_response(500 if failing else 200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    with local_server(ThreadingHTTPServer, Handler) as server:
        receiver = Receiver(url=f"http://127.0.0.1:{server.server_address[1]}{path}")
        yield receiver
