"""The web provider: one per site, shared by every account lane of that site.

``run(ctx)`` works on the account ``ctx.task.account``. The scheduler already gives an account at
most one task; the provider's own per-account ``asyncio.Lock`` and the OS-level profile lock keep
that true even if something else calls it, because a second generation on one logged-in session
is what the real sites refuse (or silently mix up).
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from playwright.async_api import Error as PlaywrightError

from mediaassist.core.clock import Clock
from mediaassist.core.config import AppConfig
from mediaassist.core.errors import ErrorKind, TaskError
from mediaassist.providers.base import TaskContext, TaskResult
from mediaassist.providers.web.browser import (BrowserRuntime, LaunchSettings, PlaywrightHandle, profile_dir,
                                               run_to_completion)
from mediaassist.providers.web.driver import SiteDriver
from mediaassist.providers.web.site import SiteProfile, load_site

log = logging.getLogger("mediaassist.web")
STOP_WAIT_S = 5.0  # real seconds for an answer to end after clicking stop


class WebProvider:
    def __init__(self, site: SiteProfile, settings: LaunchSettings, clock: Clock, data_dir: Path) -> None:
        self.site = site
        self.settings = settings
        self.clock = clock
        self.data_dir = data_dir
        self.playwright = PlaywrightHandle()
        self.runtimes: dict[str, BrowserRuntime] = {}

    def runtime(self, account: str) -> BrowserRuntime:
        if account not in self.runtimes:
            self.runtimes[account] = BrowserRuntime(account, profile_dir(self.data_dir, account), self.settings)
        return self.runtimes[account]

    async def start(self) -> None:
        """Nothing to do up front: browsers start on an account's first task (and stay warm)."""

    async def close(self) -> None:
        for account, runtime in self.runtimes.items():
            await runtime.close(lambda line, account=account: log.info("[web:%s] %s", account, line))
        await self.playwright.stop()

    async def run(self, ctx: TaskContext) -> TaskResult:
        account = ctx.task.account
        if not account:
            raise TaskError(ErrorKind.INTERNAL, "a web task reached the provider without an account")
        runtime = self.runtime(account)
        if runtime.lock.locked():
            ctx.log(f"waiting: account {account} is still busy with another generation")
        async with runtime.lock:
            return await self._run_locked(runtime, ctx)

    async def _run_locked(self, runtime: BrowserRuntime, ctx: TaskContext) -> TaskResult:
        driver: SiteDriver | None = None
        succeeded = False
        try:
            await runtime.open(await self.playwright.get(), ctx.log)
            driver = SiteDriver(self.site, await runtime.page(), ctx.clock, ctx.log)
            result = await generate(driver, ctx)
            succeeded = True
            return result
        except PlaywrightError as exc:
            # the page or browser broke mid-task; a browser that went away is relaunched next time
            first_line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise TaskError(ErrorKind.PROVIDER, f"browser error: {first_line}") from None
        finally:
            if driver is not None and not succeeded:
                # Whatever ended the attempt (cancel, shutdown, time-out, a banner mid-answer),
                # its answer must end before the account is free: the next send would otherwise
                # be a second generation on one session, which the sites refuse.
                await run_to_completion(_stop_generation(driver, ctx))
            if runtime.is_open:
                runtime.tasks_since_launch += 1
            if runtime.needs_recycle:
                ctx.log(f"recycling the browser after {runtime.tasks_since_launch} tasks")
                await runtime.close(ctx.log)


async def generate(driver: SiteDriver, ctx: TaskContext) -> TaskResult:
    account = ctx.task.account
    await _no_running_answer(driver, ctx)  # the warm page may still show the last answer running
    if await driver.open_chat() == "needs_login":
        raise TaskError(ErrorKind.LOGIN, f"account {account} is logged out of {driver.site.name}; "
                        f"log in with: mediaassist accounts login {account}")
    await _no_running_answer(driver, ctx)
    await driver.check_banners()
    await _compose(driver, ctx)
    before = await driver.marks()
    started = ctx.clock.monotonic()
    await driver.send()
    text = await driver.wait_answer(before)
    files = await driver.save_images(ctx.make_output_dir)
    ctx.log(f"answer complete: {len(text)} characters, {len(files)} image(s) "
            f"in {ctx.clock.monotonic() - started:.1f} s")
    return TaskResult(text=text, files=files)


async def _compose(driver: SiteDriver, ctx: TaskContext) -> None:
    """Prompt plus instructions; ``need_empty_prompt`` sends the user content and nothing else."""
    prompt, system = ctx.task.prompt, ctx.task.system_prompt
    if ctx.model.need_empty_prompt:
        if await driver.set_instructions(""):
            ctx.log("need_empty_prompt: cleared the page's default instructions")
        if system:
            ctx.log("need_empty_prompt: the system prompt is not sent")
    elif system and not await driver.set_instructions(system):
        prompt = f"{system}\n\n{prompt}"  # a page with no system slot gets it as plain text
    await driver.enter_prompt(prompt)
    ctx.log(f"prompt entered ({len(prompt)} characters, {prompt.count(chr(10)) + 1} lines)")


async def _no_running_answer(driver: SiteDriver, ctx: TaskContext) -> None:
    """Never send into a busy session: an answer still running (a stop that did not take, a site
    that resumes one on load) is stopped first; one that keeps going fails this attempt."""
    outcome = await driver.stop_and_wait(STOP_WAIT_S)
    if outcome == "idle":
        return
    ctx.log(f"an earlier answer was still being generated on this account; clicked stop ({outcome})")
    if outcome == "still_generating":
        raise TaskError(ErrorKind.PROVIDER, f"an earlier answer on account {ctx.task.account} was still "
                        f"being generated {STOP_WAIT_S:.0f} s after clicking stop")


async def _stop_generation(driver: SiteDriver, ctx: TaskContext) -> None:
    """Click stop and wait for the answer to end. On shutdown too: the task reruns from the
    queue on the next start, and would find the session busy."""
    try:
        outcome = await asyncio.wait_for(driver.stop_and_wait(STOP_WAIT_S), STOP_WAIT_S + 3)
    except (asyncio.TimeoutError, PlaywrightError) as exc:
        ctx.log(f"stopping the generation failed ({type(exc).__name__})")
        return
    if outcome == "stopped":
        ctx.log("clicked stop on the page; the answer ended")
    elif outcome == "still_generating":
        ctx.log(f"clicked stop on the page, but the answer was still being generated {STOP_WAIT_S:.0f} s later")
    elif ctx.stop_reason is not None:
        ctx.log("no generation was showing; nothing to stop")


def build_web_provider(site: str, config: AppConfig, clock: Clock, data_dir: Path) -> WebProvider:
    return WebProvider(load_site(site, data_dir), LaunchSettings.from_app(config.app), clock, data_dir)
