"""Output files: checked when they arrive, placed by the naming template, described for the manifest.

A provider writes a task's files into the task's own folder (``<batch folder>/<task_id>/``).
When the attempt succeeds, ``place_outputs`` moves each file to the path the template gives
inside the batch's folder (``[outputs] folder``/``<batch_id>``), never over an existing file (a
``-2`` suffix instead: the move is a hard link that fails on a taken name, then the old name is
removed), and records what the manifest says of it: bytes, sha256, media kind and, where the
content tells, width, height and duration.

``verify_download`` is the downloaders' check that a file is whole: the size the server
announced, and content that decodes as what it claims to be (PyAV for video and audio, the
container's own structure for MP4/MOV, PNG and JPEG).

PyAV (FFmpeg, ~100 MB) is the optional ``video`` extra: without it, videos and sounds get no
width, height or duration and a download is checked by its structure only; a warning says so
once per process (images' sizes are read from their headers either way).
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import struct
from dataclasses import dataclass
from datetime import date
from functools import cache
from pathlib import Path
from typing import Any, BinaryIO

from mediaassist.core.config import AppConfig
from mediaassist.core.errors import MessageError
from mediaassist.core.media import MEDIA_TEXTS, file_sha256, sniff_bytes, sniff_media
from mediaassist.core.messages import Message, msg
from mediaassist.core.naming import DEFAULT_NAMING, Template, numbered, render
from mediaassist.core.paths import output_dir, safe_name

log = logging.getLogger("mediaassist")
TEXT_SUFFIXES = {".txt", ".md", ".json", ".csv", ".srt", ".vtt", ".html"}
OUTPUTS_DIR = "outputs"


class BrokenDownload(MessageError):
    """A downloaded file that is not whole (short, cut, not what it claims to be)."""


@dataclass(frozen=True)
class OutputFile:
    """One output file as the store and the manifest keep it."""

    n: int  # 1-based, in the order the provider gave them
    path: str  # absolute
    bytes: int
    sha256: str
    media: str  # image | video | audio | text | other
    width: int | None = None
    height: int | None = None
    duration_s: float | None = None


def outputs_root(config: AppConfig, data_dir: Path) -> Path:
    """``[outputs] folder``, else ``DATA_DIR/outputs``."""
    return config.outputs.folder or data_dir / OUTPUTS_DIR


def batch_folder(root: Path, batch_id: str) -> Path:
    """Where a batch's files and its manifest live."""
    return root / safe_name(batch_id)


def task_folder(root: Path, batch_id: str, task_id: str) -> Path:
    """Where a provider writes a task's files (and where they stay under the default naming)."""
    return output_dir(root, batch_id, task_id)


def batch_name(batch_id: str) -> str:
    """``{batch}``: the batch id without its random tail (the task file's stem and its time)."""
    head, _, tail = batch_id.rpartition("-")
    return head if head and len(tail) == 8 and all(c in "0123456789abcdef" for c in tail) else batch_id


@dataclass(frozen=True)
class NamingValues:
    """What a template's fields stand for, for one task (``n``, ``ext`` and ``original`` are per file)."""

    batch_id: str
    task_id: str
    row: int | None
    model: str
    provider: str
    account: str
    finished: float
    cells: dict[str, str]

    def for_file(self, n: int, source: Path) -> dict[str, Any]:
        return {"batch": batch_name(self.batch_id), "batch_id": self.batch_id, "row": self.row or 0,
                "task_id": self.task_id, "model": self.model, "provider": self.provider,
                "account": self.account, "n": n, "ext": source.suffix.lower(),
                "date": date.fromtimestamp(self.finished), "original": source.name}


def naming_for(config: AppConfig, model: str) -> Template:
    outputs = config.outputs
    return outputs.model_naming.get(model) or outputs.naming or Template(DEFAULT_NAMING)


def place_outputs(files: list[str], folder: Path, template: Template, values: NamingValues) -> list[OutputFile]:
    """Move each file to its templated path inside the batch's ``folder``; their descriptions."""
    placed: list[OutputFile] = []
    for n, name in enumerate(files, start=1):
        source = Path(name)
        relative = render(template, values.for_file(n, source), values.cells)
        target = move_unique(source, folder / relative)
        placed.append(describe_output(n, target))
    for source_dir in {Path(f).parent for f in files}:
        with contextlib.suppress(OSError):  # left only when it still holds something
            source_dir.rmdir()
    return placed


def move_unique(source: Path, target: Path) -> Path:
    """``source`` moved to ``target`` (or ``target-2`` ...): a taken name is never overwritten,
    even by another process placing files at the same moment."""
    target.parent.mkdir(parents=True, exist_ok=True)
    number = 1
    while True:
        candidate = numbered(target, number)
        if candidate == source:
            return candidate
        try:
            os.link(source, candidate)  # fails, atomically, when the name is taken
        except FileExistsError:
            number += 1
            continue
        except OSError:  # a file system without hard links: look, then rename
            if candidate.exists():
                number += 1
                continue
            os.replace(source, candidate)
            return candidate
        source.unlink()
        return candidate


def describe_output(n: int, path: Path) -> OutputFile:
    media = media_of(path)
    width = height = None
    duration = None
    if media in ("image", "video", "audio"):
        width, height, duration = probe(path, media)
    return OutputFile(n=n, path=str(path), bytes=path.stat().st_size, sha256=file_sha256(path), media=media,
                      width=width, height=height, duration_s=duration)


def media_of(path: Path) -> str:
    """image, video or audio by the content; text by the extension; else other."""
    try:
        sniffed = sniff_media(path)
    except OSError:
        sniffed = None
    if sniffed is not None:
        return sniffed[0]
    return "text" if path.suffix.lower() in TEXT_SUFFIXES else "other"


# --- what the content says: sizes and durations ---------------------------------------------

VIDEO_EXTRA_HINT = "MEDIAASSIST_EXTRAS=video packaging/setup.sh --app"  # or pip install "mediaassist[video]"


@cache
def video_tools_installed() -> bool:
    """PyAV is there (the ``video`` extra: ~100 MB with its FFmpeg, so optional): videos' and
    sounds' sizes, durations, first frames and the decode check of a download need it."""
    return importlib.util.find_spec("av") is not None


@cache
def _say_video_tools_missing() -> None:
    """Once per process, where a video or sound first goes without what PyAV would tell."""
    log.warning("PyAV is not installed: videos and sounds get no size, duration or first frame, and a "
                "download is checked by its structure only, not decoded; add it with %s", VIDEO_EXTRA_HINT)


def probe(path: Path, media: str) -> tuple[int | None, int | None, float | None]:
    """(width, height, duration in seconds) as far as the content tells: an image's size from its
    header; a video's or sound's from PyAV when it is installed; Nones where nothing tells."""
    if media == "image":
        size = image_size(path)
        return (size[0], size[1], None) if size else (None, None, None)
    if not video_tools_installed():
        _say_video_tools_missing()
        return None, None, None
    import av

    try:
        with av.open(str(path)) as container:
            video = container.streams.video[0] if container.streams.video else None
            duration = container.duration / 1_000_000 if container.duration else None
            return (video.codec_context.width if video else None, video.codec_context.height if video else None,
                    round(duration, 3) if duration else None)
    except (av.FFmpegError, OSError, ValueError, IndexError):
        return None, None, None


def image_size(path: Path) -> tuple[int, int] | None:
    """(width, height) of a PNG, JPEG, GIF, WebP or BMP from its header; None when it is none of
    them or the header is cut."""
    try:
        with path.open("rb") as handle:
            head = handle.read(32)
            sniffed = sniff_bytes(head)
            if sniffed is None or sniffed[0] != "image":
                return None
            if sniffed[1] == "image/jpeg":
                return _jpeg_size(handle)
            return _header_size(sniffed[1], head)
    except (OSError, struct.error, IndexError):  # IndexError: the file ends inside the header
        return None


def _header_size(mime: str, head: bytes) -> tuple[int, int] | None:
    if mime == "image/png":
        return struct.unpack(">II", head[16:24])
    if mime == "image/gif":
        return struct.unpack("<HH", head[6:10])
    if mime == "image/bmp":
        if head[14] == 12:  # an OS/2 header: 16-bit sides
            return struct.unpack("<HH", head[18:22])
        width, height = struct.unpack("<ii", head[18:26])
        return width, abs(height)  # a bottom-up BMP gives a negative height
    chunk = head[12:16]  # WebP: lossy, lossless or extended
    if chunk == b"VP8 ":
        width, height = struct.unpack("<HH", head[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L":
        bits = int.from_bytes(head[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X":
        return int.from_bytes(head[24:27], "little") + 1, int.from_bytes(head[27:30], "little") + 1
    return None


# JPEG markers that start a frame (SOF0-SOF15 but DHT, JPG and DAC), whose header holds the size.
_JPEG_FRAMES = set(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
_JPEG_STANDALONE = {0x01, *range(0xD0, 0xD9)}  # markers without a length


def _jpeg_size(handle: BinaryIO) -> tuple[int, int] | None:
    """Walk a JPEG's segments to its frame header (EXIF and ICC segments come first)."""
    handle.seek(2)
    while (marker := handle.read(2)) and len(marker) == 2 and marker[0] == 0xFF:
        kind = marker[1]
        while kind == 0xFF:  # fill bytes before a marker
            kind = handle.read(1)[0]
        if kind in _JPEG_STANDALONE:
            continue
        length = struct.unpack(">H", handle.read(2))[0]
        if kind in _JPEG_FRAMES:
            height, width = struct.unpack(">xHH", handle.read(5))
            return width, height
        if kind == 0xDA or length < 2:  # the scan starts, or a broken length: no frame header ahead
            return None
        handle.seek(length - 2, os.SEEK_CUR)
    return None


# --- is a download whole? -------------------------------------------------------------------

MEDIA_NOUNS = {"video": msg("video"), "audio": msg("audio")}  # "holds no {media} stream"

def verify_download(path: Path, announced: int | None, expected_media: str | None) -> None:
    """Raise ``BrokenDownload`` unless ``path`` holds the announced number of bytes and content
    that is whole: an MP4/MOV whose boxes all fit, a PNG that ends with IEND, a JPEG with its
    end marker, a video or sound PyAV decodes a frame of."""
    size = path.stat().st_size
    if announced is not None and size != announced:
        raise BrokenDownload(msg("got {size} of the {announced} bytes announced", size=format(size, ","),
                                 announced=format(announced, ",")))
    if size == 0:
        raise BrokenDownload(msg("the file is empty"))
    sniffed = sniff_media(path)
    if sniffed is None:
        if expected_media in ("image", "video", "audio"):
            raise BrokenDownload(msg("not {media} by its content", media=MEDIA_TEXTS[expected_media]))
        return
    media, mime = sniffed
    if mime in ("video/mp4", "video/quicktime", "audio/mp4"):
        _check_iso_boxes(path, size)
    elif mime in _END_MARKERS:
        with path.open("rb") as handle:
            handle.seek(max(0, size - 64))
            problem = _end_problem(mime, handle.read())
        if problem is not None:
            raise BrokenDownload(problem)
    if media in ("video", "audio"):
        if video_tools_installed():
            _check_decodes(path, media)
        else:
            _say_video_tools_missing()


# How a whole PNG and a whole JPEG end (trailing zero padding aside).
_END_MARKERS = {"image/png": (b"IEND\xaeB`\x82", msg("PNG without its end (IEND)")),
                "image/jpeg": (b"\xff\xd9", msg("JPEG without its end marker"))}


def _end_problem(mime: str, tail: bytes) -> Message | None:
    marker, problem = _END_MARKERS[mime]
    return None if tail.rstrip(b"\0").endswith(marker) else problem


def image_problem(data: bytes) -> Message | None:
    """Why downloaded bytes are not a whole image, or None when they are."""
    sniffed = sniff_bytes(data[:64])
    if sniffed is None or sniffed[0] != "image":
        return msg("not {media} by its content", media=MEDIA_TEXTS["image"])
    return _end_problem(sniffed[1], data[-64:]) if sniffed[1] in _END_MARKERS else None


def _check_iso_boxes(path: Path, size: int) -> None:
    """Every top-level box of an ISO media file fits inside the file (a cut file's last box
    claims more bytes than are there)."""
    position = 0
    with path.open("rb") as handle:
        while position < size:
            handle.seek(position)
            head = handle.read(16)
            if len(head) < 8:
                raise BrokenDownload(msg("cut inside a box header at byte {position}", position=format(position, ",")))
            box_size, kind = struct.unpack(">I4s", head[:8])
            if box_size == 1 and len(head) == 16:
                box_size = struct.unpack(">Q", head[8:16])[0]
            elif box_size == 0:  # the box runs to the end of the file
                return
            if box_size < 8 or position + box_size > size:
                raise BrokenDownload(msg("cut short: the {box} box needs {needed} bytes, the file has {size}",
                                         box=repr(kind.decode("latin-1")), needed=format(position + box_size, ","),
                                         size=format(size, ",")))
            position += box_size


def _check_decodes(path: Path, media: str) -> None:
    import av

    try:
        with av.open(str(path)) as container:
            streams = container.streams.video if media == "video" else container.streams.audio
            if not streams:
                raise BrokenDownload(msg("holds no {media} stream", media=MEDIA_NOUNS[media]))
            for _frame in container.decode(streams[0]):
                return
    except av.FFmpegError as exc:
        raise BrokenDownload(msg("does not decode ({problem})", problem=exc)) from None
    raise BrokenDownload(msg("no {media} frame decodes", media=MEDIA_NOUNS[media]))


