"""Small pictures of output images and videos, decoded and scaled off the loop and kept in a
bounded cache.

A ``QImage`` may be built in any thread (a ``QPixmap`` only in the GUI thread), so a worker
thread loads and scales, and the loop turns the result into a pixmap and says ``ready(path)``.
A video's picture is its first frame (PyAV's FFmpeg decodes without the GIL) with a play mark;
without PyAV (the optional ``video`` extra) a video has no picture, and its placeholder says why
(``no_picture_reason``).
"""

from __future__ import annotations

import asyncio
import functools
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from PySide6.QtCore import QObject, QPointF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QImage, QPainter, QPixmap, QPolygonF

from mediaassist.core.outputs import video_tools_installed
from mediaassist.ui.i18n import tr

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".webp", ".gif", ".bmp"}
VIDEO_SUFFIXES = {".mp4", ".webm", ".mov", ".mkv", ".avi"}
CACHE_LIMIT = 2000  # pixmaps kept (a 32 px thumbnail is ~4 KiB)
PLAY_MARK = QColor(0, 0, 0, 150)
MIN_MARK_RADIUS = 6.0


def is_image(name: str) -> bool:
    return Path(name).suffix.lower() in IMAGE_SUFFIXES


def is_video(name: str) -> bool:
    return Path(name).suffix.lower() in VIDEO_SUFFIXES


def no_picture_reason() -> str:
    """Why no video shows a picture on this install ("" where PyAV is there): said on the video's
    placeholder, so a table or gallery of blank clips is no mystery (the preview says how to add it)."""
    return "" if video_tools_installed() else tr("no preview: PyAV not installed")


def first_frame(path: Path, box: int) -> QImage | None:
    """A video's first frame scaled to fit ``box``; None when it has no decodable picture or
    PyAV is not installed."""
    if not video_tools_installed():
        return None
    import av  # 80 ms and FFmpeg's libraries: only a process that decodes a video pays for them

    try:
        with av.open(str(path)) as container:
            for frame in container.decode(video=0):
                size = QSize(frame.width, frame.height)
                if size.width() > box or size.height() > box:
                    size = size.scaled(QSize(box, box), Qt.AspectRatioMode.KeepAspectRatio)
                rgb = frame.reformat(width=max(size.width(), 1), height=max(size.height(), 1), format="rgb24")
                plane = rgb.planes[0]
                # copy(): the QImage must own its pixels, the frame's buffer goes with the frame
                return QImage(bytes(plane), rgb.width, rgb.height, plane.line_size,
                              QImage.Format.Format_RGB888).copy()
    # not a video, truncated; IndexError: no video stream at all (a sound saved as .mp4)
    except (av.FFmpegError, OSError, ValueError, IndexError):
        return None
    return None  # a video stream without a single frame


def with_play_mark(image: QImage) -> QImage:
    """A dark disc with a white triangle in the middle: this tile is a clip, not a picture."""
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    side = min(image.width(), image.height())
    radius = min(max(side / 6, MIN_MARK_RADIUS), side / 2)  # a table cell's 18 px frame still shows it
    centre = QPointF(image.width() / 2, image.height() / 2)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(PLAY_MARK)
    painter.drawEllipse(centre, radius, radius)
    painter.setBrush(QColor("white"))
    corners = (QPointF(-radius / 3, -radius / 2), QPointF(-radius / 3, radius / 2), QPointF(radius / 2, 0))
    painter.drawPolygon(QPolygonF([centre + corner for corner in corners]))
    painter.end()
    return image


def _scaled(path: str, size: QSize) -> QImage | None:
    """Runs in the worker thread: decode and scale (a video: its first frame, marked), nothing else."""
    if is_video(path):
        frame = first_frame(Path(path), max(size.width(), size.height()))
        return None if frame is None else with_play_mark(frame)
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

    @property
    def loading(self) -> bool:
        """Some thumbnail asked for is still being made."""
        return bool(self._loading)

    def get(self, path: str) -> QPixmap | None:
        if path in self._pixmaps:
            self._pixmaps.move_to_end(path)
            return self._pixmaps[path]
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # painted while no loop runs (Qt's events handled outside it): asked again later
            return None
        if path not in self._loading:
            self._loading.add(path)
            future = loop.run_in_executor(self._pool, _scaled, path, self.size)
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
