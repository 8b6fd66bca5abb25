"""Lanes and accounts: pause/resume one lane or all, enable/disable an account, log in."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from PySide6.QtCore import QObject, Signal

from mediaassist.core.store import PAUSED_BY_OPERATOR
from mediaassist.runtime import Login, Runtime
from mediaassist.ui.background import BackgroundJobs
from mediaassist.ui.core_texts import translated
from mediaassist.ui.i18n import labelled, tr

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
        self.jobs = jobs

    def all_paused(self, paused: dict[str, str] | None = None) -> bool:
        return self.rt.all_paused(paused)

    def toggle_lane(self, name: str) -> None:
        if name in self.rt.paused_lanes():
            self.rt.resume_lane(name)
        else:
            self.rt.pause_lane(name, PAUSED_BY_OPERATOR)
        self.changed.emit()

    def toggle_pause_all(self) -> None:
        if self.all_paused():
            self.resume_all()
        else:
            self.pause_all()

    def pause_all(self) -> None:
        self.rt.pause_all(PAUSED_BY_OPERATOR)
        self.changed.emit()

    def resume_all(self) -> None:
        self.rt.resume_all()
        self.changed.emit()

    def set_account_enabled(self, name: str, enabled: bool) -> None:
        self.rt.set_account_enabled(name, enabled)
        self.changed.emit()

    def log_in(self, name: str, reply: Callable[[bool, str], None] | None = None, keep_login: bool = False) -> None:
        """Open the account's profile headed so the operator can log in (the web lane's job).
        ``reply(ok, message)``: the answer to ``mediaassist accounts login`` run from another
        process, which handed the login to this window (its lane's browser holds the profile);
        ``keep_login``: its ``--keep-login``."""
        answer = reply or (lambda _ok, _message: None)
        try:
            login = self.rt.log_in(name, keep_login)
        except KeyError:  # gone from the store since the panel was drawn
            answer(False, f"no account named {name!r}")
            return
        except ImportError:
            self.message.emit(tr("Log in"), tr("Logging in is not available: the web lane is not installed."))
            answer(False, "the web lane is not installed")
            return
        if login is None:
            self.notice.emit(tr("Log in"), tr("{name} is a simulated account; it needs no login.").format(name=name))
            self.changed.emit()
            answer(True, "a simulated account needs no login")
            return
        self.notice.emit(tr("Log in"), tr("Opening the browser for {name}…").format(name=name))

        def failed(exc: BaseException) -> None:
            self.message.emit(tr("Log in failed"), labelled(name, str(exc)))
            answer(False, str(exc))
        self.jobs.spawn(self._after_login(name, login, answer), failed, finish_on_quit=False)

    async def _after_login(self, name: str, login: Awaitable[Login],
                           answer: Callable[[bool, str], None]) -> None:
        """The account's tasks go as soon as it is logged in; a login that did not happen says why
        (no display, the window closed, the profile held elsewhere), not only in the Accounts tab."""
        result = await login
        answer(result.ok, str(result.message))  # the waiting CLI gets the English
        if not result.ok:
            self.message.emit(tr("Log in failed"), labelled(name, translated(result.message)))
        self.rt.wake()
        self.changed.emit()
