"""The tray as a glance: running / waiting / failed per lane kind in the tooltip and the menu,
Pause all and Resume all, and notices only for what needs the operator (a batch finished, a
burst of failures, an account that needs a login).

Without a system tray (bare X servers, offscreen) the same texts go to the window title, the
status bar and the notice list; everything else works the same.
"""

from __future__ import annotations

import time
from collections import Counter, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QIcon
from PySide6.QtWidgets import QMainWindow, QMenu, QSystemTrayIcon, QWidget

from mediaassist.core.events import TaskEvent, TaskEventKind
from mediaassist.ui.i18n import labelled, tr
from mediaassist.ui.labels import error_kind_labels, lane_kind_label

NOTICE_MS = 8000
MAX_NOTICES = 200
KINDS = ("web", "api", "poll")
BURST_FAILURES = 5  # this many failed tasks ...
BURST_WINDOW_S = 60.0  # ... within this many seconds is a burst worth a notice
BURST_QUIET_S = 300.0  # and the next burst notice waits at least this long


@dataclass
class Notice:
    title: str
    text: str


@dataclass(frozen=True)
class KindCounts:
    running: int = 0
    waiting: int = 0
    failed: int = 0


def kind_counts(by_kind: Mapping[tuple[str, str], int]) -> dict[str, KindCounts]:
    """The snapshot's {(lane kind, state): n} -> a line's counts for every kind (none missing)."""
    return {kind: KindCounts(by_kind.get((kind, "running"), 0), by_kind.get((kind, "pending"), 0),
                             by_kind.get((kind, "failed"), 0)) for kind in KINDS}


def counts_line(kind: str, counts: KindCounts) -> str:
    return tr("{kind}: {running} running · {waiting} waiting · {failed} failed").format(
        kind=lane_kind_label(kind), running=counts.running, waiting=counts.waiting, failed=counts.failed)


class FailureBursts:
    """Counts failures in a sliding window; says so once per burst, then stays quiet a while."""

    def __init__(self, threshold: int = BURST_FAILURES, window_s: float = BURST_WINDOW_S,
                 quiet_s: float = BURST_QUIET_S) -> None:
        self.threshold, self.window_s, self.quiet_s = threshold, window_s, quiet_s
        self._recent: deque[tuple[float, str]] = deque()
        self._last_notice = float("-inf")

    def record(self, now: float, error_kind: str | None) -> Counter[str] | None:
        """One failure; returns the window's failures by error kind when a burst is to be told."""
        self._recent.append((now, error_kind or "internal"))
        while self._recent and self._recent[0][0] < now - self.window_s:
            self._recent.popleft()
        if len(self._recent) < self.threshold or now - self._last_notice < self.quiet_s:
            return None
        self._last_notice = now
        return Counter(kind for _, kind in self._recent)


def burst_text(kinds: Counter[str]) -> str:
    labels = error_kind_labels()
    parts = ", ".join(f"{labels.get(kind, kind)} {n}" for kind, n in kinds.most_common())
    return tr("{n} tasks failed within a minute ({kinds}). Check the Failed filter.").format(
        n=sum(kinds.values()), kinds=parts)


class Tray:
    def __init__(self, window: QMainWindow, icon: QIcon, on_pause_all: Callable[[], None],
                 on_resume_all: Callable[[], None], on_quit: Callable[[], None], use_tray: bool = True) -> None:
        self.window = window
        self.notices: list[Notice] = []
        self.icon: QSystemTrayIcon | None = None
        self.bursts = FailureBursts()
        self._counts: dict[str, KindCounts] = {kind: KindCounts() for kind in KINDS}
        self._all_paused = False
        self.tooltip = ""
        # The menu exists with or without a tray, so a language switch retranslates one thing.
        self.menu = QMenu(window)
        self._show = QAction(self.menu)
        self._show.triggered.connect(self._raise_window)
        # Enabled, so they read as information rather than greyed-out choices; a click shows the window.
        self.count_actions = {kind: QAction(self.menu) for kind in KINDS}
        for action in self.count_actions.values():
            action.triggered.connect(self._raise_window)
        self.pause_all = QAction(self.menu)
        self.pause_all.triggered.connect(on_pause_all)
        self.resume_all = QAction(self.menu)
        self.resume_all.triggered.connect(on_resume_all)
        self._quit = QAction(self.menu)
        self._quit.triggered.connect(on_quit)
        self.menu.addAction(self._show)
        self.menu.addSeparator()
        self.menu.addActions(list(self.count_actions.values()))
        self.menu.addSeparator()
        self.menu.addActions([self.pause_all, self.resume_all])
        self.menu.addSeparator()
        self.menu.addAction(self._quit)
        self.retranslate()
        if use_tray and QSystemTrayIcon.isSystemTrayAvailable():
            self.icon = QSystemTrayIcon(icon, window)
            self.icon.setContextMenu(self.menu)
            self.icon.activated.connect(lambda _reason: self._raise_window())
            self.icon.show()

    def retranslate(self) -> None:
        self._show.setText(tr("Show window"))
        self.pause_all.setText(tr("Pause all"))
        self.resume_all.setText(tr("Resume all"))
        self._quit.setText(tr("Quit"))
        self._show_counts()

    @property
    def available(self) -> bool:
        return self.icon is not None

    def update(self, by_kind: Mapping[tuple[str, str], int], all_paused: bool, any_paused: bool) -> None:
        """New counts ({(lane kind, state): n}) and whether the lanes are paused."""
        self._counts = kind_counts(by_kind)
        self._all_paused = all_paused
        self.pause_all.setEnabled(not all_paused)
        self.resume_all.setEnabled(any_paused)
        self._show_counts()

    def _show_counts(self) -> None:
        total = KindCounts(*(sum(getattr(c, f) for c in self._counts.values())
                             for f in ("running", "waiting", "failed")))
        title = tr("mediaassist: {running} running, {waiting} waiting, {failed} failed").format(
            running=total.running, waiting=total.waiting, failed=total.failed)
        if self._all_paused:
            title += " · " + tr("Paused")
        self.window.setWindowTitle(title)
        lines = {kind: counts_line(kind, counts) for kind, counts in self._counts.items()}
        for kind, action in self.count_actions.items():
            action.setText(lines.get(kind, ""))
        self.tooltip = "\n".join([title, *lines.values()])
        if self.icon is not None:
            self.icon.setToolTip(self.tooltip)

    def task_event(self, event: TaskEvent) -> None:
        """The feed's event: a burst of failures is worth a notice."""
        if event.kind != TaskEventKind.FAILED:
            return
        kinds = self.bursts.record(time.monotonic(), event.error_kind)
        if kinds is not None:
            self.notify(tr("Failures"), burst_text(kinds))

    def notify(self, title: str, text: str) -> None:
        self.notices.append(Notice(title, text))
        del self.notices[:-MAX_NOTICES]
        self.window.statusBar().showMessage(labelled(title, text), NOTICE_MS)
        if self.icon is not None:
            self.icon.showMessage(title, text, QSystemTrayIcon.MessageIcon.Information, NOTICE_MS)

    def hide(self) -> None:
        if self.icon is not None:
            self.icon.hide()

    def _raise_window(self) -> None:
        bring_forward(self.window)


def bring_forward(window: QWidget) -> None:
    """Show and raise the window as it was: un-minimized, but never un-maximized or resized
    (``showNormal()`` took a maximized 1366×749 window down to 1161×652)."""
    if window.isMinimized():
        window.setWindowState(window.windowState() & ~Qt.WindowState.WindowMinimized)
    if not window.isVisible():
        window.show()
    window.raise_()
    window.activateWindow()
