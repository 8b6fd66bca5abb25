"""Tray icon with live counts, and notices that reach the operator with or without a tray.

Without a system tray (bare X servers, offscreen) notices go to the status bar and the notice
list; everything else works the same.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtGui import QAction, QIcon
from PySide6.QtWidgets import QMainWindow, QMenu, QSystemTrayIcon

from mediaassist.ui.i18n import tr

NOTICE_MS = 8000
MAX_NOTICES = 200


@dataclass
class Notice:
    title: str
    text: str


class Tray:
    def __init__(self, window: QMainWindow, icon: QIcon, on_pause_all: Callable[[], None],
                 on_quit: Callable[[], None], use_tray: bool = True) -> None:
        self.window = window
        self.notices: list[Notice] = []
        self.icon: QSystemTrayIcon | None = None
        self._all_paused = False
        # The menu exists with or without a tray, so a language switch retranslates one thing.
        self.menu = QMenu(window)
        self._show = QAction(self.menu, triggered=self._raise_window)
        self.pause_all = QAction(self.menu, triggered=on_pause_all)
        self._quit = QAction(self.menu, triggered=on_quit)
        self.menu.addActions([self._show, self.pause_all, self._quit])
        self.retranslate()
        if use_tray and QSystemTrayIcon.isSystemTrayAvailable():
            self.icon = QSystemTrayIcon(icon, window)
            self.icon.setContextMenu(self.menu)
            self.icon.activated.connect(lambda _reason: self._raise_window())
            self.icon.show()

    def retranslate(self) -> None:
        self._show.setText(tr("Show"))
        self.pause_all.setText(tr("Resume all") if self._all_paused else tr("Pause all"))
        self._quit.setText(tr("Quit"))

    @property
    def available(self) -> bool:
        return self.icon is not None

    def update(self, running: int, pending: int, failed: int, all_paused: bool) -> None:
        text = tr("mediaassist: {running} running, {pending} pending, {failed} failed").format(
            running=running, pending=pending, failed=failed)
        if all_paused:
            text += " · " + tr("Paused")
        self.window.setWindowTitle(text)
        self._all_paused = all_paused
        self.pause_all.setText(tr("Resume all") if all_paused else tr("Pause all"))
        if self.icon is not None:
            self.icon.setToolTip(text)

    def notify(self, title: str, text: str) -> None:
        self.notices.append(Notice(title, text))
        del self.notices[:-MAX_NOTICES]
        self.window.statusBar().showMessage(f"{title}: {text}", NOTICE_MS)
        if self.icon is not None:
            self.icon.showMessage(title, text, QSystemTrayIcon.MessageIcon.Information, NOTICE_MS)

    def hide(self) -> None:
        if self.icon is not None:
            self.icon.hide()

    def _raise_window(self) -> None:
        self.window.showNormal()
        self.window.raise_()
        self.window.activateWindow()
