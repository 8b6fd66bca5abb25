"""A lean HTTP/1.1 client for the poll lane's hot path: the status request of every polled task.

Why not httpx there: 100 tasks polled every 5 s are 20 requests a second, and httpx/httpcore
(with anyio) costs ~2.5-3.5 ms of CPU per request on the development box -- 6-7 % of a core for
the polls alone, against a budget of 2 %. The same request over a kept-alive asyncio stream costs
~0.2 ms. So status requests (small, idempotent, one host) go through this client; everything
else -- creates, uploads, downloads, cancels -- stays on httpx. When an HTTP(S) proxy is set in
the environment, the lane uses httpx for polls too (this client does not speak proxies).

Only what a status poll needs: keep-alive connections to one origin (TLS for https), a JSON
request body, and a response with Content-Length, chunked encoding or read-to-close. A request
on a reused connection that the server had closed meanwhile is sent once more on a fresh one
(safe: polls are reads).
"""

from __future__ import annotations

import asyncio
import json
import os
import ssl
from typing import Any
from urllib.parse import urlsplit

CONNECT_TIMEOUT_S = 10.0
REQUEST_TIMEOUT_S = 30.0
MAX_IDLE = 16  # kept-alive connections; polls are spread over the interval, few are busy at once
MAX_HEADER_BYTES = 64 * 1024
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


class LeanHTTPError(Exception):
    """The request failed on the wire. ``sent``: some of it may have reached the server."""

    def __init__(self, message: str, sent: bool) -> None:
        super().__init__(message)
        self.sent = sent


class LeanResponse:
    """The few things of ``httpx.Response`` the adapters read."""

    def __init__(self, status_code: int, headers: dict[str, str], content: bytes) -> None:
        self.status_code = status_code
        self.headers = headers  # lower-case names
        self.content = content

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")

    def json(self) -> Any:
        return json.loads(self.content)


_Connection = tuple[asyncio.StreamReader, asyncio.StreamWriter]


def proxy_configured() -> bool:
    return any(os.environ.get(name) for name in PROXY_VARIABLES)


class LeanClient:
    def __init__(self, base_url: str) -> None:
        parts = urlsplit(base_url)
        self._tls = parts.scheme == "https"
        self._host = parts.hostname or ""
        self._port = parts.port or (443 if self._tls else 80)
        self._prefix = parts.path.rstrip("/")
        self._host_header = parts.netloc.rpartition("@")[2]
        self._ssl = ssl.create_default_context() if self._tls else None
        self._idle: list[_Connection] = []

    async def request(self, method: str, path: str, *, json_body: Any = None,
                      headers: dict[str, str] | None = None) -> LeanResponse:
        payload = b"" if json_body is None else json.dumps(json_body, ensure_ascii=False).encode()
        head = self._head(method, path, payload, headers or {}, json_body is not None)
        reused = bool(self._idle)
        connection = self._idle.pop() if reused else await self._connect()
        try:
            return await self._exchange(connection, head + payload)
        except _StaleConnection:
            if not reused:
                raise LeanHTTPError("the server closed the connection without answering", sent=True) from None
            try:
                return await self._exchange(await self._connect(), head + payload)
            except _StaleConnection:
                raise LeanHTTPError("the server closed the connection without answering", sent=True) from None

    def _head(self, method: str, path: str, payload: bytes, headers: dict[str, str], is_json: bool) -> bytes:
        lines = [f"{method} {self._prefix}{path} HTTP/1.1", f"Host: {self._host_header}",
                 "Accept: application/json", "Accept-Encoding: identity", f"Content-Length: {len(payload)}"]
        if is_json:
            lines.append("Content-Type: application/json")
        for name, value in headers.items():
            if "\r" in value or "\n" in value:
                # Refused before a byte leaves; no detail (it would quote the header, key included).
                raise LeanHTTPError("the request could not be built (a stray character in a header value, "
                                    "e.g. the API key?)", sent=False)
            lines.append(f"{name}: {value}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    async def _connect(self) -> _Connection:
        try:
            async with asyncio.timeout(CONNECT_TIMEOUT_S):
                return await asyncio.open_connection(self._host, self._port, ssl=self._ssl,
                                                     server_hostname=self._host if self._tls else None)
        except (OSError, TimeoutError, ssl.SSLError) as exc:
            raise LeanHTTPError(f"{type(exc).__name__}: cannot connect to {self._host}:{self._port}",
                                sent=False) from None

    async def _exchange(self, connection: _Connection, request: bytes) -> LeanResponse:
        reader, writer = connection
        keep = False
        try:
            async with asyncio.timeout(REQUEST_TIMEOUT_S):
                writer.write(request)
                await writer.drain()
                response, keep = await self._read_response(reader)
            return response
        except (asyncio.IncompleteReadError, ConnectionResetError, BrokenPipeError) as exc:
            if not isinstance(exc, asyncio.IncompleteReadError) or not exc.partial:
                raise _StaleConnection from None  # closed (or reset) before any byte of a reply
            raise LeanHTTPError(f"{type(exc).__name__} while reading the reply", sent=True) from None
        except (OSError, TimeoutError, ValueError, asyncio.LimitOverrunError) as exc:
            raise LeanHTTPError(f"{type(exc).__name__} while talking to {self._host}", sent=True) from None
        finally:
            if keep and len(self._idle) < MAX_IDLE:
                self._idle.append(connection)
            else:
                writer.close()

    async def _read_response(self, reader: asyncio.StreamReader) -> tuple[LeanResponse, bool]:
        head = await reader.readuntil(b"\r\n\r\n")
        if len(head) > MAX_HEADER_BYTES:
            raise ValueError("response header too long")
        status_line, *header_lines = head.decode("latin-1").split("\r\n")
        version, status, _ = [*status_line.split(" ", 2), ""][:3]
        headers: dict[str, str] = {}
        for line in header_lines:
            if ":" in line:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
        keep = version == "HTTP/1.1" and headers.get("connection", "").lower() != "close"
        if "chunked" in headers.get("transfer-encoding", "").lower():
            content = await self._read_chunked(reader)
        elif "content-length" in headers:
            content = await reader.readexactly(int(headers["content-length"]))
        else:
            content, keep = await reader.read(), False
        return LeanResponse(int(status), headers, content), keep

    @staticmethod
    async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
        parts: list[bytes] = []
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0].strip(), 16)
            if size == 0:
                await reader.readuntil(b"\r\n")  # no trailers expected: the empty line
                return b"".join(parts)
            parts.append(await reader.readexactly(size))
            await reader.readexactly(2)

    async def aclose(self) -> None:
        while self._idle:
            _, writer = self._idle.pop()
            writer.close()


class _StaleConnection(Exception):
    """A kept-alive connection the server had closed: nothing of the reply arrived."""
