"""Built-in demo providers: real HTTP servers on 127.0.0.1 for ``--demo`` and the tests."""

from __future__ import annotations

import json
import socket
import struct
import sys
import threading
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from mediaassist.core.paths import RESOURCES


@cache
def _demo_clip() -> bytes:
    return (RESOURCES / "media" / "demo-clip.mp4").read_bytes()


def demo_video(tag: str) -> bytes:
    """A real, decodable MP4 (a 1-second 160×90 H.264 clip) that ends with ``tag``: the tag is
    the payload of a trailing ``free`` box, which players skip, so every task's file differs and
    a test can tell whose file was fetched."""
    payload = tag.encode()
    return _demo_clip() + struct.pack(">I", 8 + len(payload)) + b"free" + payload


def read_json_body(handler: BaseHTTPRequestHandler) -> dict[str, Any]:
    """The request's JSON object; anything else (empty, broken, a list) reads as {}."""
    length = int(handler.headers.get("Content-Length") or 0)
    raw = handler.rfile.read(length) if length else b""
    try:
        data = json.loads(raw or b"{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def reset_connection(handler: BaseHTTPRequestHandler) -> None:
    """Drop the handler's connection with a TCP RST, no reply (a fault the client must survive)."""
    handler.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    handler.close_connection = True
    handler.connection.close()


class QuietHTTPServer(ThreadingHTTPServer):
    """A threaded server for which a client that goes away is normal: the app quitting drops its
    keep-alive connections and its requests in flight (a traceback on the terminal said otherwise)."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            super().handle_error(request, client_address)


class LoopbackServer(QuietHTTPServer):
    """A threaded demo server holding its fake service's state in ``fake``."""

    allow_reuse_address = True
    request_queue_size = 256

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler], fake: Any) -> None:
        super().__init__(address, handler)
        self.fake = fake


class DemoServer:
    """Runs a ``LoopbackServer`` on a thread: ``with Server(...) as server:`` serves meanwhile.
    Subclasses set ``fake`` (the service's state, with ``inject`` and ``stats``) and ``_httpd``."""

    fake: Any
    _httpd: LoopbackServer
    _thread: threading.Thread | None = None

    def start(self) -> Self:
        self._thread = threading.Thread(target=self._httpd.serve_forever, name=type(self).__name__, daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        """Serve on the calling thread (the stand-alone process)."""
        try:
            self._httpd.serve_forever()
        finally:
            self._httpd.server_close()

    def serve_until_interrupted(self, address: str) -> None:
        """The stand-alone process: print where it serves (for whoever started it), then serve
        until Ctrl-C."""
        print(address, flush=True)
        try:
            self.serve_forever()
        except KeyboardInterrupt:
            pass

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # conveniences for tests
    def inject(self, route: str, *faults: Any) -> None:
        self.fake.inject(route, *faults)

    def stats(self) -> dict[str, Any]:
        stats: dict[str, Any] = self.fake.stats()
        return stats
