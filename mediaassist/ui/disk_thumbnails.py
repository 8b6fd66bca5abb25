"""Thumbnails made off the loop and kept on disk, so a gallery of thousands never stalls the window.

Decoding and scaling run in one worker thread with ``QImageReader`` (``QImage`` is safe outside
the GUI thread, ``QPixmap`` is not); the loop only turns the small result into a pixmap. A
thumbnail is cached as a PNG named after the file's path, size, mtime and the thumbnail size, so
an edited file gets a new one and two windows share the cache without locking (atomic rename).
"""

from __future__ import annotations

import asyncio
import hashlib
import os
from concurrent.futures import ThreadPoolExecutor
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


class DiskThumbnails:
    """``await thumbs.thumbnail(path)`` -> a small QImage (None when the file is no image)."""

    def __init__(self, folder: Path, size: int = THUMB_PX) -> None:
        self.folder = folder
        self.size = size
        # One worker: the machine has few cores and the scheduler's loop must keep one.
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="thumbnails")

    def cache_file(self, path: Path) -> Path:
        stat = path.stat()
        key = hashlib.sha1(f"{path.resolve()}\0{stat.st_size}\0{stat.st_mtime_ns}\0{self.size}".encode()).hexdigest()
        return self.folder / key[:2] / f"{key}.png"

    def render(self, path: Path) -> QImage | None:
        """Worker thread: the cached thumbnail, made and saved first if needed."""
        try:
            cached = self.cache_file(path)
        except OSError:
            return None  # gone since the list was read
        if cached.exists():
            image = QImage(str(cached))
            if not image.isNull():
                return image
        scaled = read_scaled(path, self.size)
        if scaled is None:
            return None
        image = centred_in_square(scaled, self.size)
        cached.parent.mkdir(parents=True, exist_ok=True)
        partial = cached.with_name(f"{cached.stem}.{os.getpid()}.part.png")
        if image.save(str(partial), "PNG"):
            os.replace(partial, cached)
        return image

    async def thumbnail(self, path: Path) -> QImage | None:
        return await asyncio.get_running_loop().run_in_executor(self._pool, self.render, path)

    async def full_image(self, path: Path) -> QImage | None:
        """For the preview: the whole picture (bounded), decoded off the loop as well."""
        return await asyncio.get_running_loop().run_in_executor(self._pool, read_scaled, path, PREVIEW_PX)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
