"""Thumbnails made off the loop and kept on disk, so a gallery of thousands never stalls the window.

Decoding and scaling run in a worker *process* (``QImageReader.read`` holds the GIL for the whole
decode, ~25 ms for a 1024×576 PNG, so a worker thread still stalled the loop by as much); the loop
only reads back the small cached PNG and turns it into a pixmap. A thumbnail is cached under a
name made of the file's path, size, mtime and the thumbnail size, so an edited file gets a new
one and two windows share the cache without locking (atomic rename).
"""

from __future__ import annotations

import asyncio
import hashlib
import multiprocessing
import os
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QImage, QImageReader, QPainter

THUMB_PX = 160
PREVIEW_PX = 4096  # a preview never decodes more than this per side


def read_scaled(path: Path, box: int) -> QImage | None:
    """The image scaled to fit ``box`` (decoded at that size where the format allows)."""
    reader = QImageReader(str(path))
    reader.setAutoTransform(True)  # phone photos carry their rotation in EXIF
    size = reader.size()
    if size.isValid() and (size.width() > box or size.height() > box):
        reader.setScaledSize(size.scaled(QSize(box, box), Qt.AspectRatioMode.KeepAspectRatio))
    image = reader.read()
    return None if image.isNull() else image


def centred_in_square(image: QImage, box: int) -> QImage:
    """Every cell of a grid the same shape: the picture centred on a transparent square, so
    captions line up whatever the aspect ratio."""
    square = QImage(box, box, QImage.Format.Format_ARGB32_Premultiplied)
    square.fill(Qt.GlobalColor.transparent)
    painter = QPainter(square)
    painter.drawImage((box - image.width()) // 2, (box - image.height()) // 2, image)
    painter.end()
    return square


def make_thumbnail(source: str, cached: str, box: int) -> bool:
    """In the worker process: decode, scale and save one thumbnail (True if there is one now)."""
    target = Path(cached)
    if target.exists():
        return True
    scaled = read_scaled(Path(source), box)
    if scaled is None:
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.stem}.{os.getpid()}.part.png")
    if not centred_in_square(scaled, box).save(str(partial), "PNG"):
        return False
    os.replace(partial, target)
    return True


class DiskThumbnails:
    """``await thumbs.thumbnail(path)`` -> a small QImage (None when the file is no image)."""

    def __init__(self, folder: Path, size: int = THUMB_PX) -> None:
        self.folder = folder
        self.size = size
        self._worker: Executor | None = None  # started on the first thumbnail that is not cached
        self._previews = ThreadPoolExecutor(max_workers=1, thread_name_prefix="previews")

    def cache_file(self, path: Path) -> Path:
        stat = path.stat()
        key = hashlib.sha1(f"{path.resolve()}\0{stat.st_size}\0{stat.st_mtime_ns}\0{self.size}".encode()).hexdigest()
        return self.folder / key[:2] / f"{key}.png"

    def _workers(self) -> Executor:
        if self._worker is None:
            # One process (the machine has few cores and the scheduler's loop must keep one);
            # spawned, not forked: a fork of a process running Qt and threads is not safe.
            self._worker = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
        return self._worker

    async def thumbnail(self, path: Path) -> QImage | None:
        try:
            cached = self.cache_file(path)
        except OSError:
            return None  # gone since the list was read
        if not cached.exists():
            made = await asyncio.get_running_loop().run_in_executor(
                self._workers(), make_thumbnail, str(path), str(cached), self.size)
            if not made:
                return None
        image = QImage(str(cached))  # a 160 px PNG: about a millisecond
        return None if image.isNull() else image

    async def full_image(self, path: Path) -> QImage | None:
        """For the preview: the whole picture (bounded), decoded in a thread (one decode, when the
        operator asks for it)."""
        return await asyncio.get_running_loop().run_in_executor(self._previews, read_scaled, path, PREVIEW_PX)

    def close(self) -> None:
        if self._worker is not None:
            self._worker.shutdown(wait=True, cancel_futures=True)
            self._worker = None
        self._previews.shutdown(wait=True, cancel_futures=True)
