"""multipart/form-data read as it arrives, for the demo servers' upload routes.

A body is read in chunks from the request's stream and cut at its boundary with one
``bytearray.find`` per chunk, so a 30 MB upload is never held in memory and costs about as much
as reading it: each file part's bytes go to a writer the caller chooses (a hash, a counter),
text fields come back as a dict. A body that is not well-formed multipart -- no boundary,
a part without a name, headers or text too long, cut off before the closing boundary -- is a
``MultipartError``, which the servers answer as the real services answer a bad request.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from email.message import Message
from email.parser import BytesHeaderParser
from email.policy import HTTP
from typing import Protocol

CHUNK = 256 * 1024
MAX_HEADERS = 16 * 1024  # one part's header block
MAX_FIELD = 64 * 1024  # one text field (apiKey, fileType): the rest are files
Writer = Callable[[bytes], None]


class Readable(Protocol):
    """A request body: the handler's ``rfile``, or bytes in memory."""

    def read(self, size: int, /) -> bytes: ...


class MultipartError(ValueError):
    """The body is not multipart/form-data as sent by a real client; the message says why."""


def boundary_of(ctype: str) -> bytes:
    message = Message()
    message["Content-Type"] = ctype
    boundary = message.get_param("boundary")
    if message.get_content_type() != "multipart/form-data" or not isinstance(boundary, str) or not boundary:
        raise MultipartError(f"not multipart/form-data with a boundary: {ctype!r}")
    return boundary.encode("latin-1")


class _Reader:
    """The request body, ``length`` bytes at most, buffered a chunk at a time."""

    def __init__(self, stream: Readable, length: int) -> None:
        self.stream, self.left = stream, length
        self.buf = bytearray()

    def fill(self) -> bool:
        """Read the next chunk into the buffer; False once the body is used up."""
        if self.left <= 0:
            return False
        chunk = self.stream.read(min(CHUNK, self.left))
        if not chunk:
            raise MultipartError(f"body ended {self.left} bytes before its Content-Length")
        self.left -= len(chunk)
        self.buf += chunk
        return True

    def until(self, marker: bytes, limit: int) -> bytes:
        """The bytes before ``marker`` (consumed with it), at most ``limit`` of them."""
        while (at := self.buf.find(marker)) < 0:
            if len(self.buf) > limit + len(marker) or not self.fill():
                raise MultipartError(f"expected {marker!r} within {limit} bytes")
        if at > limit:
            raise MultipartError(f"more than {limit} bytes before {marker!r}")
        head = bytes(self.buf[:at])
        del self.buf[:at + len(marker)]
        return head

    def pipe_until(self, marker: bytes, write: Writer) -> None:
        """Hand everything before ``marker`` to ``write`` as it arrives; consume the marker.
        The last ``len(marker) - 1`` bytes stay buffered: they may be the marker's start."""
        keep = len(marker) - 1
        while (at := self.buf.find(marker)) < 0:
            if len(self.buf) > keep:
                write(bytes(self.buf[:-keep]))
                del self.buf[:-keep]
            if not self.fill():
                raise MultipartError("body ended inside a part (no closing boundary)")
        if at:
            write(bytes(self.buf[:at]))
        del self.buf[:at + len(marker)]

    def take(self, size: int) -> bytes:
        while len(self.buf) < size and self.fill():
            pass
        head = bytes(self.buf[:size])
        del self.buf[:size]
        return head


def read_multipart(ctype: str, stream: Readable, length: int,
                   open_file: Callable[[str, str], Writer]) -> dict[str, str]:
    """Read a multipart/form-data body of ``length`` bytes from ``stream``. Text fields are
    returned; each file part's content goes to ``open_file(field name, file name)``'s writer."""
    delimiter = b"--" + boundary_of(ctype)
    reader = _Reader(stream, length)
    reader.until(delimiter, MAX_HEADERS)  # a preamble before the first boundary is allowed
    fields: dict[str, str] = {}
    while True:
        after = reader.take(2)
        if after == b"--":
            return fields  # the closing boundary; an epilogue after it is ignored
        if after != b"\r\n":
            raise MultipartError("a boundary is not followed by CRLF or --")
        name, filename = _disposition(reader.until(b"\r\n\r\n", MAX_HEADERS))
        if filename is None:
            text = reader.until(b"\r\n" + delimiter, MAX_FIELD)
            fields[name] = text.decode("utf-8", "replace")
        else:
            reader.pipe_until(b"\r\n" + delimiter, open_file(name, filename))


def _disposition(block: bytes) -> tuple[str, str | None]:
    """(field name, file name or None) from one part's headers."""
    headers = BytesHeaderParser(policy=HTTP).parsebytes(block + b"\r\n\r\n")
    name = headers.get_param("name", header="content-disposition")
    if headers.get_content_disposition() != "form-data" or not isinstance(name, str) or not name:
        raise MultipartError("a part without Content-Disposition: form-data; name=...")
    filename = headers.get_param("filename", header="content-disposition")
    return name, filename if isinstance(filename, str) else None


def parse_multipart(ctype: str, raw: bytes) -> tuple[dict[str, str], dict[str, tuple[str, bytes]]]:
    """(text fields, files as (file name, bytes)) of a whole multipart/form-data body in memory."""
    buffers: dict[str, tuple[str, bytearray]] = {}

    def collect(name: str, filename: str) -> Writer:
        buffers[name] = (filename, bytearray())
        return buffers[name][1].extend

    fields = read_multipart(ctype, io.BytesIO(raw), len(raw), collect)
    return fields, {name: (filename, bytes(data)) for name, (filename, data) in buffers.items()}
