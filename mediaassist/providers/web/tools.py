"""Operator tools on one account's profile: check a site's selectors, log in by hand."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from mediaassist.core.clock import Clock
from mediaassist.core.config import AppConfig
from mediaassist.core.errors import ConfigError, TaskError
from mediaassist.core.lanes import login_state_message
from mediaassist.core.messages import Message, msg, verbatim
from mediaassist.providers.web.browser import (
    BrowserRuntime,
    LaunchSettings,
    PlaywrightHandle,
    ProfileInUse,
    profile_dir,
)
from mediaassist.providers.web.driver import SiteDriver
from mediaassist.providers.web.kept_login import LoginRecorder, log_in_again
from mediaassist.providers.web.session import save_session
from mediaassist.providers.web.site import SiteProfile, load_site

if TYPE_CHECKING:
    from mediaassist.core.lane_store import LaneStore

log = logging.getLogger("mediaassist.web")
LOGIN_POLL_S = 1.0


@dataclass
class SelectorCheck:
    role: str
    selector: str
    matches: int
    visible: int


@dataclass
class SiteCheckReport:
    site: str
    account: str
    url: str
    login_state: str  # ok | needs_login | unknown
    checks: list[SelectorCheck] = field(default_factory=list)
    notes: list[Message] = field(default_factory=list)

    @property
    def usable(self) -> bool:
        """Logged in, and the prompt box found: a task could be typed in."""
        matched = {c.role for c in self.checks if c.matches}
        return self.login_state == "ok" and {"prompt", "logged_in"} <= matched

    def lines(self) -> list[Message]:
        """The report for the operator, a message a line (``sites check``, ``sites learn``)."""
        lines = [msg("site {site} as {account}: {url}", site=self.site, account=self.account, url=self.url),
                 msg("login: {state}", state=login_state_message(self.login_state))]
        roles = max([14, *(len(c.role) for c in self.checks)])
        for c in self.checks:
            lines.append(msg("  {mark} {role} {selector}  ({matches} match, {visible} visible)",
                             mark="ok" if c.matches else "--", role=c.role.ljust(roles), selector=c.selector,
                             matches=c.matches, visible=c.visible))
        lines += [msg("  note: {note}", note=n) for n in self.notes]
        return lines

    def format(self) -> str:
        """The report in English."""
        return "\n".join(map(str, self.lines()))


def _account_site(account: str, config: AppConfig) -> str:
    acct = config.account(account)
    if acct is None:
        names = ", ".join(a.name for a in config.accounts) or "none configured"
        raise ConfigError(msg("no account named {account} (have: {names})", account=repr(account), names=names))
    return acct.site


async def with_browser(account: str, config: AppConfig, data_dir: Path, headless: bool | None,
                        work: Callable[[BrowserRuntime, Page], Awaitable[Any]]) -> Any:
    """Run ``work(runtime, page)`` in the account's browser, then close it whatever happens."""
    handle = PlaywrightHandle()
    runtime = BrowserRuntime(account, profile_dir(data_dir, account), LaunchSettings.from_config(config))

    def note(line: Message | str) -> None:
        log.info("[web:%s] %s", account, line)
    try:
        await runtime.open(await handle.get(), note, headless=headless)
        return await work(runtime, await runtime.page())
    finally:
        await runtime.close(note)
        await handle.stop()


async def check_site(site: str, account: str, config: AppConfig, data_dir: Path,
                     store: LaneStore | None = None) -> SiteCheckReport:
    """Open the site in the account's profile and report which selectors match; the login
    state seen is recorded on the account (when a store is given)."""
    profile = load_site(site, data_dir)

    async def work(runtime: BrowserRuntime, page: Page) -> SiteCheckReport:
        driver = SiteDriver(profile, page, Clock(), log.info)
        report = SiteCheckReport(site, account, profile.start_url, "unknown")
        try:
            report.login_state = await driver.open_chat(fresh=True)
        except TaskError as exc:
            report.notes.append(exc.message)
        for role, selectors in profile.selectors.items():
            for selector in selectors:
                if role == "send" and selector not in profile.send_buttons:
                    report.notes.append(msg("send: the key chord {selector} (when no send button matches)",
                                            selector=selector))
                    continue
                locator = page.locator(selector)
                report.checks.append(SelectorCheck(role, selector, await locator.count(),
                                                   await locator.filter(visible=True).count()))
        if report.login_state == "ok":
            report.notes.append(msg("send/generating/answer/done/error selectors may match only during or after an "
                                    "answer"))
        return report

    report: SiteCheckReport = await with_browser(account, config, data_dir, None, work)
    if store is not None and report.login_state != "unknown":
        error = None if report.login_state == "ok" else msg("sites check saw the site logged out ({site})", site=site)
        store.set_login_state(account, report.login_state, error)
    return report


@dataclass
class LoginResult:
    """Truthy when the login was seen, and seen again after relaunching the profile."""

    ok: bool
    message: Message

    def __bool__(self) -> bool:
        return self.ok


Operator = Callable[[Page], Awaitable[None]]


def no_display_message(account: str, command: str | None = None) -> Message | None:
    """Why a headed window cannot open here, with the way out (``command``, by default the
    account's login); None when it can."""
    if not sys.platform.startswith("linux") or os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        return None
    command = command or "accounts login " + account
    return msg("no display to open the login window on (DISPLAY is not set); log in from a desktop session, or on a "
               "virtual screen: xvfb-run -a mediaassist {command}", command=command)


async def login_account(account: str, config: AppConfig, data_dir: Path, store: LaneStore | None, *,
                        headless: bool = False, login_url: str | None = None, timeout_s: float = 600.0,
                        operator: Operator | None = None, keep_login: bool = False) -> LoginResult:
    """Open the account's profile (headed by default) on the site's login page and wait until the
    logged-in marker shows, the window is closed, or ``timeout_s`` passes; then relaunch the
    profile headless and check that the login is still there (re-entered, for a kept login).
    Records the result. ``operator`` plays the person at the window (tests, scripted logins);
    ``keep_login``: what is typed into the login form goes to the OS keyring (kept_login.py)."""
    site = load_site(_account_site(account, config), data_dir)
    if not headless and (blocked := no_display_message(account)) is not None:
        return LoginResult(False, blocked)  # says nothing about the login: nothing recorded
    opened = False
    recorder = LoginRecorder() if keep_login else None

    async def work(runtime: BrowserRuntime, page: Page) -> bool:
        nonlocal opened
        opened = True
        return await wait_for_login(site, runtime, page, login_url, operator, timeout_s, recorder)

    try:
        result = LoginResult(True, msg("login ok"))
        if not await with_browser(account, config, data_dir, headless, work):
            result = LoginResult(False, msg("no login was seen before the window closed or the time ran out"))
        elif recorder is not None and not (kept := keep_typed_login(recorder, account)).ok:
            result = kept
        elif (lost := await _login_after_relaunch(account, config, data_dir)) is not None:
            result = LoginResult(False, lost)
        elif recorder is not None:
            result = LoginResult(True, msg("login ok; kept in the OS keyring, re-entered whenever a new browser finds "
                                           "the page logged out"))
    except TaskError as exc:
        result = LoginResult(False, exc.message)
    except ProfileInUse as exc:  # a `run` (or another program) has the browser: it cannot be handed a login
        result = LoginResult(False, msg("{busy}. Only the window hands a login to a running lane; a headless "
                                        "`mediaassist run` cannot take one: stop it (its tasks go back to the queue), "
                                        "log in, then start it again", busy=exc.busy))
    except PlaywrightError as exc:  # e.g. the window was closed while the page loaded
        result = LoginResult(False, verbatim((str(exc).strip().splitlines() or ["browser error"])[0]))
    if not result.ok:
        log.warning("[web:%s] login not confirmed: %s", account, result.message)
    # Record only what was checked: a profile we could not open (another program holds it) says
    # nothing about the login, and must not block a lane that is running fine elsewhere.
    if store is not None and opened:
        store.set_login_state(account, "ok" if result.ok else "needs_login", None if result.ok else result.message)
    return result


async def wait_for_login(site: SiteProfile, runtime: BrowserRuntime, page: Page, login_url: str | None,
                         operator: Operator | None, timeout_s: float, recorder: LoginRecorder | None = None) -> bool:
    """Open the login page and wait until the logged-in marker shows (the session cookies are then
    saved), the window is closed, or ``timeout_s`` passes; ``recorder`` notes what is typed."""
    driver = SiteDriver(site, page, Clock(), log.info)
    if recorder is not None:
        await recorder.watch(page)
    await page.goto(login_url or site.login_url or site.start_url, wait_until="domcontentloaded")
    if operator is not None:
        await operator(page)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while loop.time() < deadline and not page.is_closed():
        if await driver.visible("logged_in") and not await driver.visible("logged_out"):
            await save_session(runtime.context, runtime.profile)  # type: ignore[arg-type]
            return True
        await driver.dismiss_popups()
        await asyncio.sleep(LOGIN_POLL_S if not runtime.headless else 0.1)
    return False


def keep_typed_login(recorder: LoginRecorder, account: str) -> LoginResult:
    """The login the operator typed, into the OS keyring; a failed result says why it is not kept."""
    if not recorder.values:
        return LoginResult(False, msg("nothing was typed into a login form with a password box, so there is no login "
                                      "to keep (log in on the form itself)"))
    if not recorder.keep(account):
        return LoginResult(False, msg("the OS keyring is not usable here, so the login cannot be kept (it is never "
                                      "written to a file)"))
    return LoginResult(True, msg("login ok"))


async def _login_after_relaunch(account: str, config: AppConfig, data_dir: Path) -> Message | None:
    """Relaunch the profile headless, as a task would, and look at the chat page; the reason
    the login did not last, or None when it did."""
    site = load_site(_account_site(account, config), data_dir)

    async def work(runtime: BrowserRuntime, page: Page) -> str:
        driver = SiteDriver(site, page, Clock(), log.info)
        state = await driver.open_chat(fresh=True)
        return "ok" if state == "ok" or await log_in_again(driver, account) else state

    state = await with_browser(account, config, data_dir, True, work)
    if state == "ok":
        return None
    return msg("the login did not survive relaunching the browser (the site may keep it only in the open page, or the "
               "session expired at once); tasks on this account would find it logged out")
