"""The demo servers' streaming multipart reader: the same fields and bytes however the body is
cut into reads, and a clear refusal for bodies a real client would not send."""

from __future__ import annotations

import hashlib
import io
import os

import httpx
import pytest

from mediaassist.demo_servers.multipart import MultipartError, parse_multipart, read_multipart
from mediaassist.demo_servers.runninghub_server import DEMO_API_KEY, RunningHubDemoServer


def _body(boundary: str, payload: bytes) -> bytes:
    return (f"preamble\r\n--{boundary}\r\nContent-Disposition: form-data; name=\"apiKey\"\r\n\r\nk-1\r\n"
            f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a b.png\"\r\n"
            f"Content-Type: image/png\r\n\r\n").encode() + payload + f"\r\n--{boundary}--\r\n".encode()


class _Dribble:
    """A socket that hands out at most ``step`` bytes per read, so every boundary straddles reads."""

    def __init__(self, data: bytes, step: int) -> None:
        self.data, self.step = data, step

    def read(self, size: int = -1) -> bytes:
        chunk, self.data = self.data[:min(self.step, size)], self.data[min(self.step, size):]
        return chunk


@pytest.mark.parametrize("step", [1, 3, 7, 64, 1 << 20])
def test_fields_and_file_bytes_survive_any_cut_of_the_body(step: int) -> None:
    boundary = "xYz123"
    # the payload holds the boundary's look-alikes: a CRLF, a near miss, dashes
    payload = b"\r\n--xYz12\r\n-\r\n--" + os.urandom(3000) + b"\r\n--xYz1"
    body = _body(boundary, payload)
    received: list[bytes] = []
    fields = read_multipart(f'multipart/form-data; boundary="{boundary}"', _Dribble(body, step),
                            len(body), lambda name, filename: received.append)
    assert fields == {"apiKey": "k-1"} and b"".join(received) == payload
    assert parse_multipart(f"multipart/form-data; boundary={boundary}", body)[1] == {"file": ("a b.png", payload)}


@pytest.mark.parametrize("ctype, body, reason", [
    ("multipart/form-data", b"--b\r\n", "with a boundary"),
    ("application/json", b"{}", "not multipart/form-data"),
    ("multipart/form-data; boundary=b", b"--b\r\nContent-Disposition: form-data; name=\"f\"; filename=\"x\"\r\n\r\nabc",
     "no closing boundary"),
    ("multipart/form-data; boundary=b", b"--b\r\nContent-Disposition: attachment\r\n\r\nabc\r\n--b--",
     "without Content"),
    ("multipart/form-data; boundary=b", b"--bXX", "not followed by CRLF"),
    ("multipart/form-data; boundary=b", b"no boundary at all" * 2000, "within"),
])
def test_a_malformed_body_is_refused_with_the_reason(ctype: str, body: bytes, reason: str) -> None:
    with pytest.raises(MultipartError, match=reason):
        parse_multipart(ctype, body)


def test_a_body_shorter_than_its_content_length_is_refused() -> None:
    body = _body("b", b"data")
    with pytest.raises(MultipartError, match="10 bytes before its Content-Length"):  # the client went away
        read_multipart("multipart/form-data; boundary=b", io.BytesIO(body[:-10]), len(body), lambda *_: lambda _d: None)


def test_the_upload_route_keeps_the_size_and_hash_of_a_streamed_file_and_refuses_garbage() -> None:
    data = os.urandom(5 * 1024 * 1024 + 17)
    with RunningHubDemoServer({DEMO_API_KEY: 1}, max_upload_bytes=6 * 1024 * 1024) as server:
        with httpx.Client(base_url=server.url) as client:
            ok = client.post("/task/openapi/upload", data={"apiKey": DEMO_API_KEY, "fileType": "input"},
                             files={"file": ("big.png", data, "image/png")}).json()
            garbage = client.post("/task/openapi/upload", content=b"--zz\r\nnot a part",
                                  headers={"Content-Type": "multipart/form-data; boundary=zz"}).json()
            v2_too_big = client.post("/openapi/v2/media/upload/binary",
                                     headers={"Authorization": f"Bearer {DEMO_API_KEY}"},
                                     files={"file": ("huge.png", data + data, "image/png")}).json()
        uploads = server.stats()["uploads"]
    assert ok["code"] == 0 and ok["data"]["fileName"].startswith("api/")
    assert [(u["size"], u["sha256"]) for u in uploads] == [(len(data), hashlib.sha256(data).hexdigest())]
    assert garbage["code"] == 301 and "PARAMS_INVALID" in garbage["msg"]
    assert (v2_too_big["code"], v2_too_big["message"]) == (1008, "File size limit exceeded")
