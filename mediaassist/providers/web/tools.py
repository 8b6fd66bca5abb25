"""Operator tools on one account's profile: check a site's selectors, log in by hand."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from playwright.async_api import Error as PlaywrightError

from mediaassist.core.clock import Clock
from mediaassist.core.config import AppConfig
from mediaassist.core.errors import ConfigError, TaskError
from mediaassist.providers.web.browser import (BrowserRuntime, LaunchSettings, PlaywrightHandle, ProfileInUse,
                                               profile_dir)
from mediaassist.providers.web.driver import SiteDriver
from mediaassist.providers.web.site import load_site

if TYPE_CHECKING:
    from mediaassist.core.store import Store

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
    notes: list[str] = field(default_factory=list)

    @property
    def usable(self) -> bool:
        """Logged in, and the prompt box found: a task could be typed in."""
        matched = {c.role for c in self.checks if c.matches}
        return self.login_state == "ok" and {"prompt", "logged_in"} <= matched

    def format(self) -> str:
        lines = [f"site {self.site} as {self.account}: {self.url}", f"login: {self.login_state}"]
        for c in self.checks:
            mark = "ok " if c.matches else "-- "
            lines.append(f"  {mark}{c.role:<14} {c.selector}  ({c.matches} match, {c.visible} visible)")
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


def _account_site(account: str, config: AppConfig) -> str:
    acct = config.account(account)
    if acct is None:
        names = ", ".join(a.name for a in config.accounts) or "none configured"
        raise ConfigError(f"no account named {account!r} (have: {names})")
    return acct.site


async def _with_browser(account: str, config: AppConfig, data_dir: Path, headless: bool | None,
                        work) -> object:
    """Run ``work(runtime, page)`` in the account's browser, then close it whatever happens."""
    handle = PlaywrightHandle()
    runtime = BrowserRuntime(account, profile_dir(data_dir, account), LaunchSettings.from_app(config.app))

    def note(line: str) -> None:
        log.info("[web:%s] %s", account, line)
    try:
        await runtime.open(await handle.get(), note, headless=headless)
        return await work(runtime, await runtime.page())
    finally:
        await runtime.close(note)
        await handle.stop()


async def check_site(site: str, account: str, config: AppConfig, data_dir: Path) -> SiteCheckReport:
    """Open the site in the account's profile and report which selectors match."""
    profile = load_site(site, data_dir)

    async def work(runtime: BrowserRuntime, page) -> SiteCheckReport:
        driver = SiteDriver(profile, page, Clock(), log.info)
        report = SiteCheckReport(site, account, profile.start_url, "unknown")
        try:
            report.login_state = await driver.open_chat()
        except TaskError as exc:
            report.notes.append(exc.message)
        for role, selectors in profile.selectors.items():
            for selector in selectors:
                locator = page.locator(selector)
                report.checks.append(SelectorCheck(role, selector, await locator.count(),
                                                   await locator.filter(visible=True).count()))
        if report.login_state == "ok":
            report.notes.append("send/generating/answer/done selectors may match only during or after an answer")
        return report

    return await _with_browser(account, config, data_dir, None, work)  # type: ignore[return-value]


async def login_account(account: str, config: AppConfig, data_dir: Path, store: Store | None, *,
                        headless: bool = False, login_url: str | None = None, timeout_s: float = 600.0) -> bool:
    """Open the account's profile (headed by default) on the site's login page and wait until the
    logged-in marker shows, the window is closed, or ``timeout_s`` passes. Records the result."""
    site = load_site(_account_site(account, config), data_dir)

    opened = False

    async def work(runtime: BrowserRuntime, page) -> bool:
        nonlocal opened
        opened = True
        driver = SiteDriver(site, page, Clock(), log.info)
        await page.goto(login_url or site.login_url or site.start_url, wait_until="domcontentloaded")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while loop.time() < deadline and not page.is_closed():
            if await driver.visible("logged_in") and not await driver.visible("logged_out"):
                return True
            await asyncio.sleep(LOGIN_POLL_S if not headless else 0.1)
        return False

    error: str | None = None
    try:
        ok = bool(await _with_browser(account, config, data_dir, headless, work))
        if not ok:
            error = "no login was seen before the window closed or the time ran out"
    except TaskError as exc:
        ok, error = False, exc.message
    except ProfileInUse as exc:
        ok, error = False, str(exc)
    except PlaywrightError as exc:  # e.g. the window was closed while the page loaded
        ok, error = False, (str(exc).strip().splitlines() or ["browser error"])[0]
    if not ok:
        log.warning("[web:%s] login not confirmed: %s", account, error)
    # Record only what was checked: a profile we could not open (another program holds it) says
    # nothing about the login, and must not block a lane that is running fine elsewhere.
    if store is not None and opened:
        store.set_login_state(account, "ok" if ok else "needs_login", error)
    return ok
