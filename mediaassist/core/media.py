"""Media inputs of a task: files checked at import, recorded by size and hash, verified before upload.

A task-file cell names a local file (absolute, or relative to the task file's folder) or an
http(s) URL. Local files are sniffed by their first bytes -- never trusted by extension -- and
recorded as ``{"path", "size", "mtime_ns", "sha256", "mime", "media"}``; URLs as
``{"url", "media"}`` (not fetched at import). Before a lane uploads a file it calls
``verify_unchanged`` so a frame edited or deleted since import fails the task instead of sending
a different picture than the operator checked.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from mediaassist.core.config import InputSpec
from mediaassist.core.errors import ErrorKind, MessageError, TaskError
from mediaassist.core.messages import Message, either, msg, verbatim

MIB = 1 << 20
# Used when the provider sets no max_upload_bytes; RunningHub documents ~10 MB for images.
DEFAULT_MAX_BYTES = {"image": 10 * MIB, "video": 100 * MIB, "audio": 100 * MIB}
# RunningHub uploads expire after about a day; an older upload is uploaded again.
UPLOAD_FRESH_S = 20 * 3600
LIST_SEPARATOR = "|"
_SNIFF_BYTES = 64
_CHUNK = MIB

_URL_SUFFIX_MEDIA = {
    **dict.fromkeys((".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp"), "image"),
    **dict.fromkeys((".mp4", ".mov", ".webm", ".mkv", ".m4v"), "video"),
    **dict.fromkeys((".mp3", ".wav", ".m4a", ".aac", ".ogg", ".flac"), "audio"),
}
# ISO base media brands that are audio-only containers; every other ftyp is taken as video.
_AUDIO_BRANDS = (b"M4A ", b"M4B ", b"M4P ", b"F4A ")
# A BMP's DIB header has one of these sizes; "BM" alone would match plain text.
_BMP_DIB_SIZES = (12, 40, 52, 56, 64, 108, 124)


class MediaInputError(MessageError, ValueError):
    """One input value that cannot be used; the message is a short reason for the row error."""


_T = TypeVar("_T")
# A file as it was when looked at: (resolved path, size, mtime in ns).
_FileStamp = tuple[str, int, int]


@dataclass
class MediaCache:
    """What one import learnt about files, so a frame named by 10,000 rows is read once."""

    resolved: dict[tuple[Path, str], Path] = field(default_factory=dict)  # (base dir, cell) -> path
    folders: dict[str, str] = field(default_factory=dict)  # folder as written -> its real path
    sniffed: dict[_FileStamp, tuple[str, str] | None] = field(default_factory=dict)
    digests: dict[_FileStamp, str] = field(default_factory=dict)

    def resolve(self, value: str, base_dir: Path) -> Path:
        """The absolute path of a cell's file; each folder's symlinks are resolved once (a
        realpath per row is most of the cost of importing 10,000 rows with their own frames)."""
        key = (base_dir, value)
        if key not in self.resolved:
            folder, name = os.path.split(os.path.join(base_dir, os.path.expanduser(value.strip())))
            if folder not in self.folders:
                self.folders[folder] = os.path.realpath(folder)
            self.resolved[key] = Path(self.folders[folder], name)
        return self.resolved[key]


def sniff_media(path: Path) -> tuple[str, str] | None:
    """``(media kind, mime)`` from the file's magic bytes, or None when it is no known type."""
    with open(path, "rb") as handle:
        return sniff_bytes(handle.read(_SNIFF_BYTES))


def sniff_bytes(head: bytes) -> tuple[str, str] | None:
    """The same test on bytes already read (at least the first 64 of the file)."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image", "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image", "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image", "image/gif"
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "image", "image/webp"
    if head.startswith(b"RIFF") and head[8:12] == b"WAVE":
        return "audio", "audio/wav"
    if head.startswith(b"BM") and int.from_bytes(head[14:18], "little") in _BMP_DIB_SIZES:
        return "image", "image/bmp"
    if head[4:8] == b"ftyp":
        return _iso_media(head[8:12])
    if head.startswith(b"\x1a\x45\xdf\xa3"):  # EBML: Matroska, or WebM by its DocType
        return ("video", "video/webm") if b"webm" in head else ("video", "video/x-matroska")
    if head.startswith(b"OggS"):
        return "audio", "audio/ogg"
    if head.startswith(b"fLaC"):
        return "audio", "audio/flac"
    return _mpeg_audio(head)


def _iso_media(brand: bytes) -> tuple[str, str]:
    if brand in _AUDIO_BRANDS:
        return "audio", "audio/mp4"
    if brand == b"qt  ":
        return "video", "video/quicktime"
    return "video", "video/mp4"


def _mpeg_audio(head: bytes) -> tuple[str, str] | None:
    if head.startswith(b"ID3"):
        return "audio", "audio/mpeg"
    if len(head) < 2 or head[0] != 0xFF:
        return None
    if head[1] & 0xF6 == 0xF0:  # ADTS sync word, layer 0
        return "audio", "audio/aac"
    if head[1] & 0xE0 == 0xE0 and head[1] & 0x06:  # MPEG frame sync with a layer set
        return "audio", "audio/mpeg"
    return None


def is_url(value: str) -> bool:
    return value.strip().lower().startswith(("http://", "https://"))


def split_cell(value: str, spec: InputSpec) -> list[str]:
    """The values of one cell: ``a.png|b.png`` only where the input takes several."""
    parts = [part.strip() for part in value.split(LIST_SEPARATOR)] if spec.multiple else [value.strip()]
    if not spec.multiple and LIST_SEPARATOR in value and not is_url(value):
        raise MediaInputError(msg("several files given ({separator}) but {input} takes one",
                                  separator=LIST_SEPARATOR, input=spec.name))
    if any(not part for part in parts):
        raise MediaInputError(msg("an empty file name between '{separator}' separators", separator=LIST_SEPARATOR))
    return parts


def check_input_value(value: str, base_dir: Path, spec: InputSpec, max_bytes: int | None,
                      cache: MediaCache | None = None) -> dict[str, Any]:
    """One value of a cell: a URL entry, or a checked local file's entry."""
    if is_url(value):
        return url_entry(value, spec)
    return check_local_input(value, base_dir, spec, max_bytes, cache)


def url_entry(value: str, spec: InputSpec) -> dict[str, Any]:
    """``{"url", "media"}`` after a syntax check; media guessed from the suffix."""
    url = value.strip()
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 -- raises ValueError on a bad port
    except ValueError:
        raise MediaInputError(msg("{url} is not a valid URL", url=repr(url))) from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname or any(c.isspace() for c in url):
        raise MediaInputError(msg("{url} is not a valid http(s) URL", url=repr(url)))
    guessed = _URL_SUFFIX_MEDIA.get(Path(parts.path).suffix.lower())
    if guessed is not None and guessed not in spec.media:
        raise MediaInputError(msg("{url} looks like {media} by its name, but {input} takes {kinds}",
                                  url=url, media=_a(guessed), input=spec.name, kinds=_kinds(spec.media)))
    media = guessed or ("image" if "image" in spec.media else spec.media[0])
    return {"url": url, "media": media}


def check_local_input(value: str, base_dir: Path, spec: InputSpec, max_bytes: int | None,
                      cache: MediaCache | None = None) -> dict[str, Any]:
    """Check one local file for ``spec`` and describe it, or raise ``MediaInputError``.

    Exists, is a regular readable file, is a kind ``spec`` takes by its content, is within
    ``max_bytes`` (else the kind's default limit); hashed last, so a too-big file is never read.
    """
    cache = cache or MediaCache()
    path = cache.resolve(value, base_dir)
    try:
        info = path.stat()
    except FileNotFoundError:
        raise MediaInputError(msg("file not found: {path}", path=path)) from None
    except OSError as exc:
        raise MediaInputError(msg("cannot read {path}: {reason}", path=path, reason=exc.strerror or exc)) from None
    if not stat.S_ISREG(info.st_mode):
        raise MediaInputError(msg("{path} is a folder", path=path) if stat.S_ISDIR(info.st_mode)
                              else msg("{path} is not a regular file", path=path))
    stamp = (str(path), info.st_size, info.st_mtime_ns)
    if stamp not in cache.sniffed:
        _read_or_fail(path, lambda opened: _learn(opened, stamp, spec, max_bytes, cache))
    media, mime = _accepted(path.name, cache.sniffed[stamp], info.st_size, spec, max_bytes)
    if stamp not in cache.digests:  # sniffed earlier for an input that refused it
        cache.digests[stamp] = _read_or_fail(path, file_sha256)
    return {"path": str(path), "size": info.st_size, "mtime_ns": info.st_mtime_ns,
            "sha256": cache.digests[stamp], "mime": mime, "media": media}


def _learn(path: Path, stamp: _FileStamp, spec: InputSpec, max_bytes: int | None, cache: MediaCache) -> None:
    """Sniff the file and, when ``spec`` will take it, hash it in the same pass (one open)."""
    with open(path, "rb") as handle:
        block = handle.read(_CHUNK)
        cache.sniffed[stamp] = sniffed = sniff_bytes(block[:_SNIFF_BYTES])
        try:
            _accepted(path.name, sniffed, stamp[1], spec, max_bytes)
        except MediaInputError:
            return  # never read a file that is refused (a 5 GB video for an image input)
        digest = hashlib.sha256()
        while block:
            digest.update(block)
            block = handle.read(_CHUNK)
        cache.digests[stamp] = digest.hexdigest()


def _accepted(name: str, sniffed: tuple[str, str] | None, size: int, spec: InputSpec,
              max_bytes: int | None) -> tuple[str, str]:
    """``(media, mime)`` when ``spec`` takes this file, else ``MediaInputError`` saying why."""
    if sniffed is None:
        raise MediaInputError(msg("{name} is not {kinds} file by its content (known: PNG, JPEG, GIF, WEBP, BMP, "
                                  "MP4, MOV, WEBM, MKV, MP3, WAV, M4A, AAC, OGG, FLAC)",
                                  name=name, kinds=_kinds(spec.media)))
    media, mime = sniffed
    if media not in spec.media:
        raise MediaInputError(msg("{name} is {media} ({mime}), but {input} takes {kinds}",
                                  name=name, media=_a(media), mime=mime, input=spec.name, kinds=_kinds(spec.media)))
    limit = max_bytes or DEFAULT_MAX_BYTES[media]
    if size > limit:
        raise MediaInputError(msg("{name} is {size}, over the {limit} limit for {media}",
                                  name=name, size=_size(size), limit=_size(limit), media=_a(media)))
    return sniffed


def _read_or_fail(path: Path, read: Callable[[Path], _T]) -> _T:
    try:
        return read(path)
    except OSError as exc:
        raise MediaInputError(msg("cannot read {path}: {reason}", path=path, reason=exc.strerror or exc)) from None


def iter_file_chunks(path: Path | str, chunk: int = _CHUNK) -> Iterator[bytes]:
    """The file in ``chunk``-sized pieces, for streaming uploads (never whole in memory)."""
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            yield block


def file_sha256(path: Path | str) -> str:
    digest = hashlib.sha256()
    for block in iter_file_chunks(path):
        digest.update(block)
    return digest.hexdigest()


def verify_unchanged(entry: dict[str, Any]) -> None:
    """Raise ``TaskError(BAD_INPUT)`` when a local input is gone or differs from import time.

    A stat is enough when size and mtime match; only a touched file is hashed again.
    """
    if "path" not in entry:
        return  # a URL: nothing local to compare
    path = Path(entry["path"])
    try:
        info = path.stat()
    except FileNotFoundError:
        raise TaskError(ErrorKind.BAD_INPUT, msg("input file {path} is gone since import",
                                                 path=path), retry=False) from None
    except OSError as exc:
        raise TaskError(ErrorKind.BAD_INPUT, msg("input file {path} cannot be read: {reason}",
                                                 path=path, reason=exc.strerror or exc),
                        retry=False) from None
    changed = TaskError(ErrorKind.BAD_INPUT, msg("input file {path} changed since import (size/hash differ); "
                                                 "import the task again to send the new file",
                                                 path=path), retry=False)
    if info.st_size != entry["size"]:
        raise changed
    if info.st_mtime_ns == entry.get("mtime_ns"):
        return
    try:
        digest = file_sha256(path)
    except OSError as exc:
        raise TaskError(ErrorKind.BAD_INPUT, msg("input file {path} cannot be read: {reason}",
                                                 path=path, reason=exc.strerror or exc),
                        retry=False) from None
    if digest != entry["sha256"]:
        raise changed


def upload_key(provider_name: str, entry: dict[str, Any]) -> str:
    """The key of an upload record in ``Task.uploads``: one per provider and file content."""
    return f"{provider_name}:{entry['sha256']}"


def fresh_upload_name(uploads: dict[str, dict[str, Any]], key: str, now: float) -> str | None:
    """The remote name of an upload still fresh enough to reuse, else None (upload again)."""
    record = uploads.get(key)
    if record is None or now - float(record.get("at", 0)) >= UPLOAD_FRESH_S:
        return None
    return str(record["name"])


MEDIA_TEXTS = {"image": msg("an image"), "video": msg("a video"), "audio": msg("an audio")}


def _a(media: str) -> Message:
    return MEDIA_TEXTS[media]


def _kinds(media: tuple[str, ...]) -> Message:
    """"an image or a video", each kind in the reader's language."""
    return either([_a(kind) for kind in media])


def _size(n: int) -> Message:
    if n >= MIB and n % MIB == 0:
        return verbatim(f"{n // MIB} MiB")
    if n >= MIB:
        return msg("{size} MiB ({n} bytes)", size=format(n / MIB, ".1f"), n=format(n, ","))
    return msg("{n} bytes", n=format(n, ","))

