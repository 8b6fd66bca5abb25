"""Hand a file or folder to the desktop (file manager, image viewer, video player) and say so
when nothing can take it.

``QDesktopServices.openUrl`` on Linux only reports whether ``xdg-open`` *started*, so a machine
without a file manager failed silently. Here ``xdg-open`` runs as a child whose exit code is
read: 0 (or still running after a moment: some handlers stay in the foreground) is success,
anything else is told to the operator.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices

from mediaassist.ui.i18n import tr

SETTLE_S = 3.0  # a handler still running after this long has taken the file
POLL_S = 0.05
# Handlers still in the foreground: kept so they are reaped when they end, not dropped running.
_handlers: set[subprocess.Popen[bytes]] = set()


def _launch(opener: str, path: Path) -> subprocess.Popen[bytes]:
    """Start the opener (returns at once; its exit code is read by polling, never waited on)."""
    _handlers.difference_update({h for h in _handlers if h.poll() is not None})
    return subprocess.Popen([opener, str(path)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)


async def open_externally(path: Path) -> str | None:
    """None when a program took ``path``; otherwise the reason, for a message box."""
    if not sys.platform.startswith("linux"):
        if QDesktopServices.openUrl(QUrl.fromLocalFile(str(path))):
            return None
        return tr("No program could be found to open {path}.").format(path=path)
    opener = shutil.which("xdg-open")
    if opener is None:
        return tr("No program could be found to open {path}: xdg-open is not installed "
                  "(package xdg-utils).").format(path=path)
    child = _launch(opener, path)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + SETTLE_S
    while child.poll() is None and loop.time() < deadline:
        await asyncio.sleep(POLL_S)
    if child.returncode is None:
        _handlers.add(child)
    if child.returncode in (None, 0):
        return None
    return tr("No program could be found to open {path} (xdg-open ended with code {code}): install a "
              "file manager or media player, or set a default application.").format(path=path, code=child.returncode)
