"""Small real media files for tests: each starts with the magic bytes its format really has."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path


def png_bytes(width: int = 4, height: int = 3, shade: int = 0) -> bytes:
    """A valid RGB PNG; ``shade`` changes the content without changing the size."""
    raw = b"".join(b"\x00" + bytes([shade % 256, 40, 200]) * width for _ in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 0))
            + chunk(b"IEND", b""))


# The first bytes of each format as real files have them (padded to a sniffable length).
MAGIC = {
    "image/png": png_bytes(),
    "image/jpeg": b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + bytes(40),
    "image/gif": b"GIF89a" + bytes(40),
    "image/webp": b"RIFF\x24\x00\x00\x00WEBPVP8 " + bytes(40),
    "image/bmp": b"BM" + bytes(12) + (40).to_bytes(4, "little") + bytes(40),
    "video/mp4": b"\x00\x00\x00\x20ftypisom\x00\x00\x02\x00" + bytes(40),
    "video/quicktime": b"\x00\x00\x00\x14ftypqt  \x00\x00\x00\x00" + bytes(40),
    "video/webm": b"\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\x82\x84webm" + bytes(40),
    "video/x-matroska": b"\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\x82\x88matroska" + bytes(40),
    "audio/mpeg": b"ID3\x04\x00\x00\x00\x00\x00\x00" + bytes(40),
    "audio/wav": b"RIFF\x24\x00\x00\x00WAVEfmt " + bytes(40),
    "audio/mp4": b"\x00\x00\x00\x20ftypM4A \x00\x00\x00\x00" + bytes(40),
    "audio/aac": b"\xff\xf1\x50\x80\x02\x1f\xfc" + bytes(40),
    "audio/ogg": b"OggS\x00\x02" + bytes(40),
    "audio/flac": b"fLaC\x00\x00\x00\x22" + bytes(40),
}


def write_png(path: Path, shade: int = 0, width: int = 4) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(png_bytes(width=width, shade=shade))
    return path


def write_mp4(path: Path, color: tuple[int, int, int], width: int = 96, height: int = 64, frames: int = 6) -> Path:
    """A real H.264 MP4 (PyAV's own FFmpeg) whose every frame is one colour: a decoder that
    shows its first frame shows that colour."""
    import av  # a test-only use at import time would cost every test module FFmpeg's load

    with av.open(str(path), "w", format="mp4") as container:
        stream = container.add_stream("libx264", rate=12)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        for _ in range(frames):
            frame = av.VideoFrame(width, height, "rgb24")
            plane = frame.planes[0]  # rows may be padded to an alignment
            plane.update((bytes(color) * width + bytes(plane.line_size - 3 * width)) * height)
            container.mux(stream.encode(frame))
        container.mux(stream.encode(None))  # flush the encoder's delayed frames
    return path


def first_frame_size(path: Path) -> tuple[int, int]:
    """(width, height) of the file's first decoded video frame: it is a real, playable clip."""
    import av

    with av.open(str(path)) as container:
        frame = next(container.decode(video=0))
        return frame.width, frame.height
