"""Small pictures of output images, decoded and scaled off the loop and kept in a bounded cache.

A ``QImage`` may be built in any thread (a ``QPixmap`` only in the GUI thread), so a worker
thread loads and scales, and the loop turns the result into a pixmap and says ``ready(path)``.
"""

from __future__ import annotations

import asyncio
import functools
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from PySide6.QtCore import QObject, QSize, Qt, Signal
from PySide6.QtGui import QImage, QPixmap

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".webp", ".gif", ".bmp"}
VIDEO_SUFFIXES = {".mp4", ".webm", ".mov", ".mkv", ".avi"}
CACHE_LIMIT = 2000  # pixmaps kept (a 32 px thumbnail is ~4 KiB)


def is_image(name: str) -> bool:
    return Path(name).suffix.lower() in IMAGE_SUFFIXES


def is_video(name: str) -> bool:
    return Path(name).suffix.lower() in VIDEO_SUFFIXES


def _scaled(path: str, size: QSize) -> QImage | None:
    """Runs in the worker thread: decode and scale, nothing else."""
    image = QImage()
    if not image.load(path):
        return None
    return image.scaled(size, Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.SmoothTransformation)


class ThumbnailCache(QObject):
    """``get(path)`` answers from the cache or starts a load and answers None; ``ready`` follows.

    Signals:
        ready(str): the thumbnail of this path can now be read with ``get`` (a failed load reads
            as None again, and is not retried).
    """

    ready = Signal(str)

    def __init__(self, size: int, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.size = QSize(size, size)
        self._pixmaps: OrderedDict[str, QPixmap | None] = OrderedDict()
        self._loading: set[str] = set()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="thumbnails")

    def get(self, path: str) -> QPixmap | None:
        if path in self._pixmaps:
            self._pixmaps.move_to_end(path)
            return self._pixmaps[path]
        if path not in self._loading:
            self._loading.add(path)
            future = asyncio.get_running_loop().run_in_executor(self._pool, _scaled, path, self.size)
            future.add_done_callback(functools.partial(self._loaded, path))
        return None

    def _loaded(self, path: str, future: asyncio.Future[QImage | None]) -> None:
        self._loading.discard(path)
        if future.cancelled():
            return
        image = None if future.exception() is not None else future.result()
        self._pixmaps[path] = QPixmap.fromImage(image) if image is not None else None
        while len(self._pixmaps) > CACHE_LIMIT:
            self._pixmaps.popitem(last=False)
        self.ready.emit(path)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
