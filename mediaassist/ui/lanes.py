"""Lanes and accounts: pause/resume one lane or all, enable/disable an account, log in."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from mediaassist.core.store import PAUSED_BY_OPERATOR
from mediaassist.providers.registry import SIMULATED_SITE
from mediaassist.runtime import Runtime
from mediaassist.ui.background import BackgroundJobs
from mediaassist.ui.core_texts import translated
from mediaassist.ui.i18n import labelled, tr

if TYPE_CHECKING:  # the web lane is optional: imported where a login starts
    from mediaassist.providers.web import LoginResult

# Stored in English like every lane reason (the CLI and other windows read it); shown translated.


class LanesController(QObject):
    """Signals:
        changed(): a lane or an account changed; the counts and panels are due a refresh.
        notice(str, str): a title and a line for the tray / status bar.
        message(str, str): a title and a text the operator must read.
    """

    changed = Signal()
    notice = Signal(str, str)
    message = Signal(str, str)

    def __init__(self, rt: Runtime, jobs: BackgroundJobs, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.rt = rt
        self.store, self.scheduler = rt.store, rt.scheduler
        self.jobs = jobs

    def all_paused(self, paused: dict[str, str] | None = None) -> bool:
        paused = self.store.paused_lanes() if paused is None else paused
        return bool(self.scheduler.lanes) and all(name in paused for name in self.scheduler.lanes)

    def toggle_lane(self, name: str) -> None:
        if name in self.store.paused_lanes():
            self.store.resume_lane(name)
        else:
            self.store.pause_lane(name, PAUSED_BY_OPERATOR)
        self._changed()

    def toggle_pause_all(self) -> None:
        if self.all_paused():
            self.resume_all()
        else:
            self.pause_all()

    def pause_all(self) -> None:
        paused = self.store.paused_lanes()
        for name in self.scheduler.lanes:
            if name not in paused:
                self.store.pause_lane(name, PAUSED_BY_OPERATOR)
        self._changed()

    def resume_all(self) -> None:
        for name in self.store.paused_lanes():
            self.store.resume_lane(name)
        self._changed()

    def set_account_enabled(self, name: str, enabled: bool) -> None:
        self.store.set_account_enabled(name, enabled)
        self._changed()

    def log_in(self, name: str) -> None:
        """Open the account's profile headed so the operator can log in (the web lane's job)."""
        acct = self.store.account(name)
        if acct is None:
            return
        if acct.site == SIMULATED_SITE:
            self.store.set_login_state(name, "ok")
            self.notice.emit(tr("Log in"), tr("{name} is a simulated account; it needs no login.").format(name=name))
            self._changed()
            return
        try:
            from mediaassist.providers.web import WebProvider, login_account
        except ImportError:
            self.message.emit(tr("Log in"), tr("Logging in is not available: the web lane is not installed."))
            return
        self.notice.emit(tr("Log in"), tr("Opening the browser for {name}…").format(name=name))
        configured = self.rt.config.account(name)
        lane = self.scheduler.lanes.get(configured.lane) if configured is not None else None
        # The running lane's browser holds the profile: the login happens in it (and its page
        # stays open for the account's tasks, so a login kept in the page session lasts).
        login = (lane.provider.log_in(name, self.store) if lane is not None and isinstance(lane.provider, WebProvider)
                 else login_account(name, self.rt.config, self.rt.data_dir, self.store))
        self.jobs.spawn(self._after_login(name, login),
                        lambda exc: self.message.emit(tr("Log in failed"), labelled(name, str(exc))),
                        finish_on_quit=False)

    async def _after_login(self, name: str, login: Awaitable[LoginResult]) -> None:
        """The account's tasks go as soon as it is logged in; a login that did not happen says why
        (no display, the window closed, the profile held elsewhere), not only in the Accounts tab."""
        result = await login
        if not result.ok:
            self.message.emit(tr("Log in failed"), labelled(name, translated(result.message)))
        self._changed()

    def _changed(self) -> None:
        self.scheduler.wake()
        self.changed.emit()
