"""An image's size read from its header, without PyAV (the optional ``video`` extra): for every
format the app sniffs, the same size PyAV's FFmpeg reads from files FFmpeg wrote."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from mediaassist.core.outputs import image_size
from tests.media_helpers import png_bytes

WIDTH, HEIGHT = 37, 21
Writer = tuple[str, str, str, dict[str, str], int]  # container format, encoder, pixels, options, frames
WRITERS: dict[str, Writer] = {
    "a.png": ("image2", "png", "rgb24", {}, 1),
    "a.jpg": ("image2", "mjpeg", "yuvj420p", {}, 1),
    "a.bmp": ("image2", "bmp", "bgr24", {}, 1),
    "a.gif": ("gif", "gif", "rgb8", {}, 1),
    "lossy.webp": ("webp", "libwebp", "yuv420p", {}, 1),
    "lossless.webp": ("webp", "libwebp", "bgra", {"lossless": "1"}, 1),
}
# The extended (VP8X) header; FFmpeg's WebP reader does not read animated files (it says 0×0).
ANIMATED_WEBP: Writer = ("webp", "libwebp_anim", "yuva420p", {}, 2)


def ffmpeg_image(path: Path, container: str, codec: str, pixels: str, options: dict[str, str], frames: int) -> Path:
    import av  # a test and `video` extra tool: the code under test must not need it

    with av.open(str(path), "w", format=container) as output:
        stream = output.add_stream(codec, rate=1, options=options)
        assert isinstance(stream, av.VideoStream)
        stream.width, stream.height, stream.pix_fmt = WIDTH, HEIGHT, pixels
        for _ in range(frames):
            for packet in stream.encode(av.VideoFrame(WIDTH, HEIGHT, "rgb24").reformat(format=pixels)):
                output.mux(packet)
        for packet in stream.encode(None):
            output.mux(packet)
    return path


def ffmpeg_reads(path: Path) -> tuple[int, int]:
    import av

    with av.open(str(path)) as container:
        context = container.streams.video[0].codec_context
        return context.width, context.height


@pytest.mark.parametrize("name", WRITERS)
def test_the_header_gives_the_size_ffmpeg_reads(tmp_path: Path, name: str) -> None:
    path = ffmpeg_image(tmp_path / name, *WRITERS[name])
    assert image_size(path) == ffmpeg_reads(path) == (WIDTH, HEIGHT)


def test_an_animated_webp_has_the_size_of_its_canvas(tmp_path: Path) -> None:
    assert image_size(ffmpeg_image(tmp_path / "animated.webp", *ANIMATED_WEBP)) == (WIDTH, HEIGHT)


def test_a_jpeg_with_exif_before_its_frame_and_a_top_down_bmp(tmp_path: Path) -> None:
    jpeg = ffmpeg_image(tmp_path / "a.jpg", *WRITERS["a.jpg"])
    exif = b"Exif\x00\x00" + bytes(3000)  # a camera's segment, longer than any header read at once
    with_exif = tmp_path / "exif.jpg"
    with_exif.write_bytes(b"\xff\xd8\xff\xe1" + struct.pack(">H", len(exif) + 2) + exif + jpeg.read_bytes()[2:])
    assert image_size(with_exif) == ffmpeg_reads(with_exif) == (WIDTH, HEIGHT)
    data = bytearray(ffmpeg_image(tmp_path / "a.bmp", *WRITERS["a.bmp"]).read_bytes())
    data[22:26] = struct.pack("<i", -HEIGHT)  # rows stored top-down
    top_down = tmp_path / "top-down.bmp"
    top_down.write_bytes(bytes(data))
    assert image_size(top_down) == (WIDTH, HEIGHT)


@pytest.mark.parametrize("data", [png_bytes(8, 6)[:20], b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + bytes(40), b"hello",
                                  b"\xff\xd8\xff"])
def test_no_size_from_a_cut_header_or_what_is_not_an_image(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "x"
    path.write_bytes(data)
    assert image_size(path) is None
