"""Thumbnails made off the loop and kept on disk, so a gallery of thousands never stalls the window.

Decoding and scaling run in a worker *process* (``QImageReader.read`` holds the GIL for the whole
decode, ~25 ms for a 1024×576 PNG, so a worker thread still stalled the loop by as much): this
module run as ``python -m mediaassist.ui.disk_thumbnails``, asked one line per thumbnail by a
thread that only waits on the pipe. (Not a multiprocessing pool: its spawned children import the
parent's main script -- the whole app -- again.) The loop only reads back the small cached PNG.
Videos get their first frame (PyAV's own FFmpeg; PySide6-Essentials has no Qt Multimedia) with a
play mark, so a gallery of clips shows what each clip is. A thumbnail is cached under a name made
of the file's path, size, mtime and the thumbnail size,
so an edited file gets a new one and two windows share the cache without locking (atomic rename).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QImage, QImageReader, QPainter

from mediaassist.ui.thumbnails import first_frame, is_video, with_play_mark

THUMB_PX = 160
PREVIEW_PX = 4096  # a preview never decodes more than this per side


def read_scaled(path: Path, box: int) -> QImage | None:
    """The image, or a video's first frame, scaled to fit ``box``."""
    return first_frame(path, box) if is_video(path.name) else read_image(path, box)


def read_image(path: Path, box: int) -> QImage | None:
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
    square = centred_in_square(scaled, box)
    if is_video(source):
        with_play_mark(square)
    # PySide6's stub types the format as bytes, but the binding accepts only str (b"PNG" raises ValueError).
    if not square.save(str(partial), "PNG"):  # type: ignore[call-overload]
        return False
    os.replace(partial, target)
    return True


class ThumbnailWorker:
    """The child process, spoken to from one thread: a JSON line ``[source, cached, box]`` in,
    ``1`` (made) or ``0`` out. A child that died (a decoder crash on a broken file) is replaced
    at the next request."""

    def __init__(self) -> None:
        self._child: subprocess.Popen[str] | None = None
        self._lock = threading.Lock()

    def make(self, source: str, cached: str, box: int) -> bool:
        with self._lock:
            child = self._running()
            assert child.stdin is not None and child.stdout is not None
            try:
                child.stdin.write(json.dumps([source, cached, box]) + "\n")
                child.stdin.flush()
                answer = child.stdout.readline()
            except OSError:
                answer = ""
            if not answer:
                self._stop()
            return answer.strip() == "1"

    def _running(self) -> subprocess.Popen[str]:
        if self._child is not None and self._child.poll() is not None:
            self._stop()  # it died since the last request: close its pipes, start another
        if self._child is None:
            package_root = str(Path(__file__).resolve().parents[2])  # a checkout runs as installed
            python_path = os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))
            env = dict(os.environ, PYTHONPATH=python_path)
            self._child = subprocess.Popen([sys.executable, "-m", __name__], stdin=subprocess.PIPE,
                                           stdout=subprocess.PIPE, text=True, env=env)
        return self._child

    def _stop(self) -> None:
        if self._child is not None:
            if self._child.stdin is not None:
                try:
                    self._child.stdin.close()  # the child's loop ends at end of input
                except OSError:
                    pass  # it is gone already: the pipe is broken
            try:
                self._child.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._child.kill()
                self._child.wait()
            if self._child.stdout is not None:
                self._child.stdout.close()
            self._child = None

    def close(self) -> None:
        with self._lock:
            self._stop()


def serve() -> None:
    """The worker process: one thumbnail per input line, until the window closes the pipe."""
    for line in sys.stdin:
        source, cached, box = json.loads(line)
        try:
            made = make_thumbnail(source, cached, box)
        except Exception:  # any failure is "no thumbnail", the window shows a placeholder
            made = False
        sys.stdout.write("1\n" if made else "0\n")
        sys.stdout.flush()


class DiskThumbnails:
    """``await thumbs.thumbnail(path)`` -> a small QImage (None when the file is no image)."""

    def __init__(self, folder: Path, size: int = THUMB_PX) -> None:
        self.folder = folder
        self.size = size
        self.worker = ThumbnailWorker()  # started on the first thumbnail that is not cached
        # One worker process (the machine has few cores and the scheduler's loop needs one),
        # asked from one thread that mostly waits on the pipe.
        self._asking = ThreadPoolExecutor(max_workers=1, thread_name_prefix="thumbnails")
        self._previews = ThreadPoolExecutor(max_workers=1, thread_name_prefix="previews")

    def cache_file(self, path: Path) -> Path:
        stat = path.stat()
        key = hashlib.sha1(f"{path.resolve()}\0{stat.st_size}\0{stat.st_mtime_ns}\0{self.size}".encode()).hexdigest()
        return self.folder / key[:2] / f"{key}.png"

    async def thumbnail(self, path: Path) -> QImage | None:
        return await asyncio.get_running_loop().run_in_executor(self._asking, self._thumbnail, path)

    def _thumbnail(self, path: Path) -> QImage | None:
        """In the asking thread: the cached PNG, made by the worker process first if needed.
        Reading a 160 px PNG holds the GIL for about a millisecond; the loop only gets the result."""
        try:
            cached = self.cache_file(path)
        except OSError:
            return None  # gone since the list was read
        if not cached.exists() and not self.worker.make(str(path), str(cached), self.size):
            return None
        image = QImage(str(cached))
        return None if image.isNull() else image

    async def full_image(self, path: Path) -> QImage | None:
        """For the preview: the whole picture (bounded) or a video's first frame, decoded in a
        thread (one decode, when the operator asks for it; FFmpeg decodes without the GIL)."""
        return await asyncio.get_running_loop().run_in_executor(self._previews, read_scaled, path, PREVIEW_PX)

    def close(self) -> None:
        self._asking.shutdown(wait=True, cancel_futures=True)
        self._previews.shutdown(wait=True, cancel_futures=True)
        self.worker.close()


if __name__ == "__main__":
    serve()
