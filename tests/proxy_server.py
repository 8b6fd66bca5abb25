"""A small HTTP proxy on 127.0.0.1 for the proxy tests: CONNECT tunnels and absolute-form requests,
optional Basic proxy authentication (407 without the right credentials). It records what it was
asked to reach, so a test sees that a lane's traffic really went through it."""

from __future__ import annotations

import base64
import socket
import socketserver
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from tests.helpers import local_server


@dataclass
class Proxy:
    port: int
    user: str | None = None
    password: str | None = None
    seen: list[tuple[str, str]] = field(default_factory=list)  # (method, host:port)
    auth_failures: int = 0

    def url(self, scheme: str = "http") -> str:
        creds = f"{self.user}:{self.password}@" if self.user else ""
        return f"{scheme}://{creds}127.0.0.1:{self.port}"

    def reached(self, port: int) -> int:
        return sum(1 for _method, target in self.seen if target.endswith(f":{port}"))


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    try:
        while chunk := source.recv(65536):
            sink.sendall(chunk)
    except OSError:
        pass
    finally:
        for sock in (sink, source):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


@contextmanager
def http_proxy(user: str | None = None, password: str | None = None) -> Iterator[Proxy]:
    lock = threading.Lock()

    class Handler(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            client: socket.socket = self.request
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = client.recv(65536)
                if not chunk:
                    return
                head += chunk
            header, _, rest = head.partition(b"\r\n\r\n")
            lines = header.decode("latin-1").split("\r\n")
            method, target, version = lines[0].split(" ", 2)
            headers = [line for line in lines[1:] if line]
            if not self._allowed(client, headers):
                return
            if method == "CONNECT":
                host, port = target.rsplit(":", 1)
                self._record(method, target)
                upstream = socket.create_connection((host, int(port)))
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                if rest:
                    upstream.sendall(rest)
            else:
                parts = urlsplit(target)
                self._record(method, f"{parts.hostname}:{parts.port}")
                upstream = socket.create_connection((parts.hostname, parts.port))
                kept = [h for h in headers if not h.lower().startswith(("proxy-", "connection:"))]
                path = parts.path + (f"?{parts.query}" if parts.query else "")
                upstream.sendall((f"{method} {path} {version}\r\n" + "\r\n".join([*kept, "Connection: close"])
                                  + "\r\n\r\n").encode("latin-1") + rest)
            with upstream:
                back = threading.Thread(target=_pipe, args=(upstream, client), daemon=True)
                back.start()
                _pipe(client, upstream)
                back.join(timeout=30)

        def _allowed(self, client: socket.socket, headers: list[str]) -> bool:
            if proxy.user is None:
                return True
            expected = "Basic " + base64.b64encode(f"{proxy.user}:{proxy.password}".encode()).decode()
            if any(h.split(":", 1)[1].strip() == expected for h in headers
                   if h.lower().startswith("proxy-authorization:")):
                return True
            with lock:
                proxy.auth_failures += 1
            client.sendall(b'HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="test"\r\n'
                           b"Content-Length: 0\r\nConnection: close\r\n\r\n")
            return False

        def _record(self, method: str, target: str) -> None:
            with lock:
                proxy.seen.append((method, target))

    class Server(socketserver.ThreadingTCPServer):
        daemon_threads = True
        allow_reuse_address = True

    with local_server(Server, Handler) as server:
        proxy = Proxy(port=server.server_address[1], user=user, password=password)
        yield proxy
