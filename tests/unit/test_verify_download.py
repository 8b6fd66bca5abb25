"""Is a downloaded file whole? Real PNG, JPEG and MP4 bytes, whole and cut."""

from __future__ import annotations

from pathlib import Path

import pytest

from mediaassist.core.outputs import BrokenDownload, describe_output, image_problem, media_of, verify_download
from mediaassist.core.paths import RESOURCES
from tests.media_helpers import png_bytes

CLIP = (RESOURCES / "media" / "demo-clip.mp4").read_bytes()
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00" + bytes(200) + b"\xff\xd9"


def written(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("name, data", [("a.png", png_bytes()), ("b.jpg", JPEG), ("c.mp4", CLIP),
                                        ("d.txt", b"hello")])
def test_whole_files_pass(tmp_path: Path, name: str, data: bytes) -> None:
    verify_download(written(tmp_path, name, data), len(data), None)


@pytest.mark.parametrize("name, data, expected, words", [
    ("a.png", png_bytes()[:-12], None, "PNG without its end"),
    ("b.jpg", JPEG[:-2], None, "JPEG without its end marker"),
    ("c.mp4", CLIP[:len(CLIP) // 2], None, "cut short"),
    ("c.mp4", CLIP[:-100], None, "cut short: the 'moov' box"),
    ("d.mp4", b"<html>502 Bad Gateway</html>", "video", "not a video by its content"),
    ("e.bin", b"", None, "empty"),
])
def test_cut_or_wrong_files_are_refused(tmp_path: Path, name: str, data: bytes, expected: str | None,
                                        words: str) -> None:
    with pytest.raises(BrokenDownload, match=words):
        verify_download(written(tmp_path, name, data), None, expected)


def test_a_size_other_than_announced_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BrokenDownload, match="got 3,278 of the 4,000 bytes announced"):
        verify_download(written(tmp_path, "c.mp4", CLIP), 4000, "video")


def test_image_bytes_and_output_descriptions(tmp_path: Path) -> None:
    assert image_problem(png_bytes()) is None
    assert str(image_problem(png_bytes()[:-4])) == "PNG without its end (IEND)"
    assert str(image_problem(b"{\"error\": 1}")) == "not an image by its content"
    clip = describe_output(1, written(tmp_path, "c.mp4", CLIP))
    assert (clip.media, clip.width, clip.height, clip.bytes) == ("video", 160, 90, len(CLIP))
    assert clip.duration_s is not None and 0.5 < clip.duration_s < 2
    picture = describe_output(2, written(tmp_path, "p.png", png_bytes(8, 6)))
    assert (picture.media, picture.width, picture.height, picture.duration_s) == ("image", 8, 6, None)
    assert media_of(written(tmp_path, "n.md", b"# notes")) == "text"
