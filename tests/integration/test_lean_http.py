"""The poll lane's lean HTTP client against a scripted asyncio server on 127.0.0.1 (port 0), in
plain HTTP and over real TLS (a throw-away CA and certificate from ``trustme``)."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import trustme

from mediaassist.providers.poll.lean_http import LeanClient, LeanHTTPError

Reply = Callable[[bytes], bytes | None]  # request bytes → raw reply (None: close without a reply)


@asynccontextmanager
async def scripted(*replies: Reply, tls: ssl.SSLContext | None = None,
                   ) -> AsyncIterator[tuple[str, list[bytes], list[int]]]:
    """Answers the n-th request with ``replies[n]``; yields (base URL, requests, connections seen).
    With ``tls`` the server speaks HTTPS with that context."""
    requests: list[bytes] = []
    connections: list[int] = []
    script = list(replies)

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(len(connections))
        try:
            while script:
                head = await reader.readuntil(b"\r\n\r\n")
                length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                                  if line.lower().startswith(b"content-length")))
                requests.append(head + await reader.readexactly(length))
                reply = script.pop(0)(requests[-1])
                if reply is None:
                    break
                writer.write(reply)
                await writer.drain()
                if b"Connection: close" in reply:
                    break
        except asyncio.IncompleteReadError:
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0, ssl=tls)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"{'https' if tls else 'http'}://127.0.0.1:{port}/v1", requests, connections
    finally:
        server.close()
        await server.wait_closed()


def ok(body: bytes) -> Reply:
    return lambda _request: b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (
        len(body), body)


@pytest.mark.asyncio
async def test_keeps_the_connection_and_joins_the_base_path() -> None:
    async with scripted(ok(b'{"n": 1}'), ok(b'{"n": 2}')) as (url, requests, connections):
        client = LeanClient(url)
        first = await client.request("POST", "/status", json_body={"taskId": "7"},
                                     headers={"Authorization": "Bearer k"})
        second = await client.request("GET", "/videos/7")
        await client.aclose()
    assert (first.status_code, first.json(), second.json()) == (200, {"n": 1}, {"n": 2})
    assert requests[0].startswith(b"POST /v1/status HTTP/1.1\r\n") and requests[0].endswith(b'{"taskId": "7"}')
    assert b"Authorization: Bearer k\r\n" in requests[0] and requests[1].startswith(b"GET /v1/videos/7 ")
    assert connections == [0]  # one connection for both


@pytest.mark.asyncio
async def test_reads_chunked_and_read_to_close_bodies() -> None:
    chunked = (b"HTTP/1.1 429 Too Many Requests\r\nTransfer-Encoding: chunked\r\nRetry-After: 3\r\n\r\n"
               b"5\r\n{\"a\":\r\n3;ext=1\r\n 1}\r\n0\r\n\r\n")
    to_close = b"HTTP/1.0 502 Bad Gateway\r\nContent-Type: text/html\r\n\r\n<html>502</html>"
    async with scripted(lambda _: chunked, lambda _: to_close) as (url, _requests, _connections):
        client = LeanClient(url)
        first = await client.request("GET", "/a")
        second = await client.request("GET", "/b")
        await client.aclose()
    assert (first.status_code, first.json(), first.headers["retry-after"]) == (429, {"a": 1}, "3")
    assert (second.status_code, second.text) == (502, "<html>502</html>")


@pytest.mark.asyncio
async def test_a_kept_connection_closed_by_the_server_is_retried_once_on_a_new_one() -> None:
    async with scripted(ok(b"{}"), lambda _: None, ok(b'{"again": true}')) as (url, requests, connections):
        client = LeanClient(url)
        await client.request("GET", "/one")
        retried = await client.request("GET", "/two")  # the server dropped the idle connection
        await client.aclose()
    assert retried.json() == {"again": True}
    assert len(requests) == 3 and connections == [0, 1]


@pytest.mark.asyncio
async def test_a_fresh_connection_closed_without_a_reply_is_an_error_that_may_have_arrived() -> None:
    async with scripted(lambda _: None) as (url, _requests, _connections):
        client = LeanClient(url)
        with pytest.raises(LeanHTTPError) as caught:
            await client.request("GET", "/x")
    assert caught.value.sent


@pytest.mark.asyncio
async def test_nothing_is_sent_for_a_header_with_a_line_break_or_to_a_closed_port() -> None:
    async with scripted(ok(b"{}")) as (url, requests, connections):
        client = LeanClient(url)
        with pytest.raises(LeanHTTPError, match="could not be built") as caught:
            await client.request("GET", "/x", headers={"Authorization": "Bearer secret\nX-Evil: 1"})
        assert not caught.value.sent and "secret" not in str(caught.value)
        assert requests == [] and connections == []
    with pytest.raises(LeanHTTPError, match="cannot connect") as caught:
        await LeanClient(url).request("GET", "/x")
    assert not caught.value.sent


@pytest.fixture
def authority() -> trustme.CA:
    return trustme.CA()


def server_tls(authority: trustme.CA, *names: str) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert(*names).configure_cert(context)
    return context


@pytest.fixture
def trusted(authority: trustme.CA, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The client trusts the test CA the way an operator adds a corporate CA: SSL_CERT_FILE."""
    bundle = tmp_path / "ca.pem"
    authority.cert_pem.write_to_path(str(bundle))
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    yield


CHUNKED = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
           b"8\r\n{\"state\"\r\n9\r\n: \"done\"}\r\n0\r\n\r\n")


@pytest.mark.asyncio
async def test_over_tls_keeps_the_connection_and_reads_chunked_bodies(authority: trustme.CA, trusted: None) -> None:
    async with scripted(ok(b'{"n": 1}'), lambda _: CHUNKED, tls=server_tls(authority, "127.0.0.1")) as (
            url, requests, connections):
        client = LeanClient(url)
        first = await client.request("POST", "/status", json_body={"taskId": "7"})
        second = await client.request("GET", "/videos/7")
        await client.aclose()
    assert url.startswith("https://")
    assert (first.json(), second.json()) == ({"n": 1}, {"state": "done"})
    assert requests[0].startswith(b"POST /v1/status HTTP/1.1\r\n") and connections == [0]


@pytest.mark.asyncio
async def test_an_untrusted_certificate_is_refused_before_anything_is_sent(authority: trustme.CA) -> None:
    async with scripted(ok(b"{}"), tls=server_tls(authority, "127.0.0.1")) as (url, requests, _connections):
        with pytest.raises(LeanHTTPError, match="SSLCertVerificationError: cannot connect") as caught:
            await LeanClient(url).request("GET", "/x")
    assert not caught.value.sent and requests == []


@pytest.mark.asyncio
async def test_a_certificate_for_another_host_is_refused(authority: trustme.CA, trusted: None) -> None:
    async with scripted(ok(b"{}"), tls=server_tls(authority, "gateway.example.com")) as (url, requests, _conns):
        with pytest.raises(LeanHTTPError, match="SSLCertVerificationError: cannot connect") as caught:
            await LeanClient(url).request("GET", "/x")
    assert not caught.value.sent and requests == []
