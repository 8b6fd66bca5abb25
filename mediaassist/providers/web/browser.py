"""One account's browser: its private profile, its locks, and a Chromium launched and closed safely.

Launch = OS lock, self-check (reap leftovers, judge ``Singleton*``), launch, record the browser
PID. Close = graceful close, and if the browser process is still there 3 s later, kill its whole
tree. Every finding goes to the ``log`` callable the caller passes (the task log when a task
triggered it).
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import unquote, urlsplit

import psutil
from playwright.async_api import BrowserContext, Page, Playwright, async_playwright
from playwright.async_api import Error as PlaywrightError

from mediaassist.core.config import AppConfig, proxy_label
from mediaassist.core.errors import ErrorKind, Requeue, TaskError
from mediaassist.core.messages import Message, msg
from mediaassist.core.paths import make_private_dir
from mediaassist.providers.web import procs
from mediaassist.providers.web.oslock import ProfileBusy, ProfileLock
from mediaassist.providers.web.session import restore_session

if TYPE_CHECKING:  # what async_playwright() returns; public only through that function
    from playwright.async_api import ProxySettings
    from playwright.async_api._context_manager import PlaywrightContextManager

log = logging.getLogger("mediaassist.web")
Log = Callable[[Message | str], None]
T = TypeVar("T")

# Keep Chromium quiet on a closed network: no update, sync, component or field-trial traffic.
QUIET_ARGS = ["--disable-background-networking", "--disable-component-update", "--disable-sync",
              "--no-first-run", "--no-default-browser-check", "--disable-features=Translate,MediaRouter"]
CHROMIUM_CANDIDATES = ("/usr/lib/chromium/chromium", "chromium", "chromium-browser", "google-chrome",
                       "google-chrome-stable", "chrome",
                       # where the Windows and macOS builds find a browser with no chromium_path
                       r"C:\Program Files\Google\Chrome\Application\chrome.exe",
                       r"C:\Program Files (x86)\Microsoft\Edge\Application\msedge.exe",
                       "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
                       "/Applications/Chromium.app/Contents/MacOS/Chromium")
PLAYWRIGHT_STOP_S = 5.0
REAP_ROUNDS = 3
PROFILE_BUSY_WAIT_S = 30.0  # nominal seconds an account rests when another process has its profile


async def run_to_completion(work: Awaitable[T]) -> T:
    """Await ``work`` to its end even if the caller is cancelled meanwhile, then re-raise the
    cancel: half a launch or half a close leaves a browser running that nobody will stop."""
    task = asyncio.ensure_future(work)
    interrupted = False
    while not task.done():
        try:
            await asyncio.wait([task])
        except asyncio.CancelledError:
            interrupted = True
    if interrupted:
        if not task.cancelled():
            task.exception()  # retrieved: the caller's cancel is what propagates
        raise asyncio.CancelledError
    return task.result()


def find_chromium(configured: str | None) -> str:
    """``app.chromium_path`` if set, else the first Chromium found (Debian's real binary first:
    ``/usr/bin/chromium`` is a wrapper script)."""
    for candidate in ([configured] if configured else CHROMIUM_CANDIDATES):
        path = candidate if os.path.isabs(candidate) else shutil.which(candidate)
        if path and os.access(path, os.X_OK):
            return path
    wanted = configured or ", ".join(CHROMIUM_CANDIDATES)
    raise TaskError(ErrorKind.PROVIDER, msg("no Chromium executable found ({detail}); set app.chromium_path",
                                            detail=wanted),
                    retry=False)


def chromium_available(configured: str | None) -> bool:
    try:
        find_chromium(configured)
    except TaskError:
        return False
    return True


def running_as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


@dataclass
class LaunchSettings:
    chromium_path: str | None = None
    headless: bool = True
    recycle_after: int = 50
    proxies: dict[str, str] = field(default_factory=dict, repr=False)  # account -> its proxy URL

    @classmethod
    def from_config(cls, config: AppConfig) -> LaunchSettings:
        app = config.app
        proxies = {acct.name: acct.proxy for acct in config.accounts if acct.proxy}
        return cls(app.chromium_path, app.headless, app.browser_recycle_after, proxies)


def playwright_proxy(url: str) -> ProxySettings:
    """Chromium's own proxy setting for one profile. The user and password go to Playwright, which
    answers the proxy's challenge; they never appear on Chromium's command line. Loopback is not
    exempt (Chromium's default): with a proxy, all of the account's traffic goes through it."""
    parts = urlsplit(url)
    proxy: ProxySettings = {"server": proxy_label(url), "bypass": "<-loopback>"}
    if parts.username:
        proxy["username"] = unquote(parts.username)
        proxy["password"] = unquote(parts.password or "")
    return proxy


def profile_dir(data_dir: Path, account: str) -> Path:
    """``<data>/profiles/<account>``, absolute (Playwright resolves relative paths against the
    executable) and private to the user."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in account) or "_"
    return make_private_dir(make_private_dir(data_dir.resolve() / "profiles") / safe)


def profile_holder(data_dir: Path, account: str) -> dict[str, Any] | None:
    """The other process holding the account's browser profile ({"pid", "program", ...}), or
    None when no other process does (a `run` beside the window leaves such accounts to it)."""
    return ProfileLock(profile_dir(data_dir, account)).holder_elsewhere()


class PlaywrightHandle:
    """Playwright's driver, started on first use on the running loop and stopped with a bound."""

    def __init__(self) -> None:
        self._manager: PlaywrightContextManager | None = None
        self._playwright: Playwright | None = None
        self._lock = asyncio.Lock()

    async def get(self) -> Playwright:
        async with self._lock:
            if self._playwright is None:
                self._manager = async_playwright()
                self._playwright = await self._manager.start()
            return self._playwright

    async def stop(self) -> None:
        if self._playwright is None or self._manager is None:  # both are set by get() together
            return
        self._playwright = None
        try:
            await asyncio.wait_for(self._manager.__aexit__(None, None, None), PLAYWRIGHT_STOP_S)
        except (TimeoutError, Exception):  # a dead driver must not block quitting
            log.warning("Playwright did not stop cleanly within %.0f s", PLAYWRIGHT_STOP_S)


class BrowserRuntime:
    """The browser of one account. ``lock`` serialises its tasks inside this process; the
    ``ProfileLock`` keeps every other process off the profile while the browser lives."""

    def __init__(self, account: str, profile: Path, settings: LaunchSettings) -> None:
        self.account = account
        self.profile = profile
        self.settings = settings
        self.lock = asyncio.Lock()
        self.os_lock = ProfileLock(profile)
        self.context: BrowserContext | None = None
        self.browser: psutil.Process | None = None
        self.tasks_since_launch = 0
        self.headless = settings.headless  # as the open browser was launched
        self._gone_away = False

    @property
    def is_open(self) -> bool:
        return self.context is not None

    @property
    def needs_recycle(self) -> bool:
        return self.is_open and self.tasks_since_launch >= self.settings.recycle_after

    async def open(self, playwright: Playwright, log_line: Log, headless: bool | None = None) -> BrowserContext:
        """The warm browser, or a fresh launch after the self-check."""
        if self.context is not None and not self._gone_away:
            return self.context
        if self.context is not None:
            log_line("the browser of this account had gone away; cleaning up and relaunching")
            await self.close(log_line)
        executable = find_chromium(self.settings.chromium_path)
        try:
            self.os_lock.acquire()
        except ProfileBusy as busy:
            raise profile_in_use(self.account, str(busy)) from None
        try:
            await self.self_check(log_line)
            context = await self._launch_twice_at_most(playwright, executable, headless, log_line)
            log_line(f"browser launched (pid {self.browser.pid if self.browser else 'unknown'})")
            await restore_session(context, self.profile, log_line)  # before the first navigation
        except BaseException:
            await self.close(log_line)  # whatever the launch produced; releases the OS lock
            raise
        return context

    async def _launch_twice_at_most(self, playwright: Playwright, executable: str, headless: bool | None,
                                    log_line: Log) -> BrowserContext:
        """A Chromium that quits as it starts (seen on a loaded machine right after the
        profile's previous browser closed: "Target page, context or browser has been closed")
        gets one more launch, after another self-check of the profile."""
        # A cancel cannot stop Playwright's launch half-way: let it finish, then close it.
        try:
            return await run_to_completion(self._launch(playwright, executable, headless))
        except PlaywrightError as exc:
            log_line(f"the browser quit as it started ({str(exc).splitlines()[0]}); launching it once more")
        await self.self_check(log_line)
        return await run_to_completion(self._launch(playwright, executable, headless))

    async def _launch(self, playwright: Playwright, executable: str, headless: bool | None) -> BrowserContext:
        self.headless = self.settings.headless if headless is None else headless
        proxy = self.settings.proxies.get(self.account)
        context = self.context = await playwright.chromium.launch_persistent_context(
            user_data_dir=str(self.profile), executable_path=executable, headless=self.headless,
            args=QUIET_ARGS, chromium_sandbox=not running_as_root(), viewport={"width": 1280, "height": 900},
            proxy=playwright_proxy(proxy) if proxy else None,
        )
        self._gone_away = False
        context.on("close", lambda _ctx: self._mark_gone())
        self.tasks_since_launch = 0
        self.browser = procs.find_browser_main(self.profile)
        pid = self.browser.pid if self.browser else None
        self.os_lock.record(browser_pid=pid, account=self.account)
        return context

    def _mark_gone(self) -> None:
        self._gone_away = True

    async def self_check(self, log_line: Log) -> None:
        """Reap leftover browsers on this profile, then clear ``Singleton*`` only if stale."""
        leftovers = _mains_first(procs.profile_processes(self.profile))
        if leftovers:
            log_line(f"self-check: {len(leftovers)} leftover Chromium process(es) on this profile: "
                     f"{', '.join(procs.describe(p) for p in leftovers)}; terminating them")
            killed = await self._reap(leftovers)
            if killed:
                log_line(f"self-check: still running after {procs.GRACE_S:.0f} s, killed: "
                         f"{', '.join(str(p.pid) for p in killed)}")
            survivors = procs.profile_processes(self.profile)
            if survivors:
                raise profile_in_use(self.account, "processes that could not be stopped: "
                                     + ", ".join(procs.describe(p) for p in survivors))
        verdict = procs.judge_singleton(self.profile)
        if verdict.state == "stale":
            removed = procs.remove_singletons(self.profile)
            log_line(f"self-check: removed stale {', '.join(removed)} ({verdict.detail})")
        elif verdict.state != "absent":
            raise profile_in_use(self.account, verdict.detail)
        elif not leftovers:
            log_line("self-check: no leftover browser on this profile")

    async def _reap(self, leftovers: list[psutil.Process]) -> list[psutil.Process]:
        """Stop the leftovers, then any process the dying browser started after the scan (one
        caught mid-start-up still spawns helpers); returns the ones that had to be killed."""
        killed: list[psutil.Process] = []
        for _ in range(REAP_ROUNDS):
            killed += await procs.terminate_then_kill(leftovers)
            leftovers = _mains_first(procs.profile_processes(self.profile))
            if not leftovers:
                break
        return killed

    async def page(self) -> Page:
        """The account's one working page (a fresh one if the last was closed)."""
        assert self.context is not None
        open_pages = [p for p in self.context.pages if not p.is_closed()]
        return open_pages[0] if open_pages else await self.context.new_page()

    async def close(self, log_line: Log) -> None:
        """Graceful close; if the browser is still alive 3 s after we asked, kill its tree. Runs
        to its end even when the caller is cancelled, so survivors are always killed."""
        await run_to_completion(self._close(log_line))

    async def _close(self, log_line: Log) -> None:
        context, browser = self.context, self.browser
        self.context, self.browser = None, None
        try:
            if context is None:
                return
            tree = procs.process_tree(browser) if browser else []
            loop = asyncio.get_running_loop()
            asked = loop.time()
            try:
                await asyncio.wait_for(context.close(), procs.GRACE_S)
            except TimeoutError:
                log_line(f"browser did not close within {procs.GRACE_S:.0f} s")
            except Exception as exc:  # a dead driver or browser: the kill below still applies
                log_line(f"closing the browser raised {type(exc).__name__}")
            survivors = await procs.wait_gone(tree, max(0.0, procs.GRACE_S - (loop.time() - asked)))
            survivors += [p for p in procs.profile_processes(self.profile) if p not in survivors]
            if survivors:
                await procs.kill_now(survivors)
                log_line(f"browser pid {browser.pid if browser else '?'} still running "
                         f"{procs.GRACE_S:.0f} s after close; killed its tree: "
                         f"{', '.join(str(p.pid) for p in survivors)}")
            else:
                log_line(f"browser closed (pid {browser.pid if browser else '?'})")
        finally:
            self.os_lock.release()


def _mains_first(found: list[psutil.Process]) -> list[psutil.Process]:
    """Browser mains first, so the bottom-up terminate signals their children before them."""
    def rank(proc: psutil.Process) -> int:
        try:
            return 0 if procs.is_browser_main(proc.cmdline()) else 1
        except psutil.Error:
            return 1
    return sorted(found, key=rank)


class ProfileInUse(Requeue):
    """Another process holds the account's profile. That says nothing about the login: the task
    goes back to the queue (no attempt used) and the account's lane waits a while. ``busy`` is
    the short form, for a command (not a task) that could not open the profile."""

    def __init__(self, message: str, busy: str, wait_s: float) -> None:
        super().__init__(message, wait_s=wait_s)
        self.busy = busy


def profile_in_use(account: str, holder: str) -> ProfileInUse:
    busy = f"the browser profile of account {account!r} is in use by another program: {holder}"
    return ProfileInUse(
        f"{busy}. mediaassist never shares a profile: the task goes back to the queue and {account!r} "
        f"takes no work for {PROFILE_BUSY_WAIT_S:.0f} s (close that program to free the account sooner)",
        busy, wait_s=PROFILE_BUSY_WAIT_S,
    )
