"""The web provider: one per site, shared by every account lane of that site.

``run(ctx)`` works on the account ``ctx.task.account``. The scheduler already gives an account at
most one task; the provider's own per-account ``asyncio.Lock`` and the OS-level profile lock keep
that true even if something else calls it, because a second generation on one logged-in session
is what the real sites refuse (or silently mix up).
"""

from __future__ import annotations

import asyncio
import functools
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from playwright.async_api import Error as PlaywrightError

from mediaassist.core.clock import Clock
from mediaassist.core.config import AppConfig
from mediaassist.core.errors import ConfigError, ErrorKind, TaskError
from mediaassist.core.media import verify_unchanged
from mediaassist.core.messages import Message, msg, verbatim
from mediaassist.providers.base import TaskContext, TaskResult
from mediaassist.providers.web.browser import (
    BrowserRuntime,
    LaunchSettings,
    PlaywrightHandle,
    ProfileInUse,
    profile_dir,
    run_to_completion,
)
from mediaassist.providers.web.driver import ClickIntercepted, SiteDriver, TurnMarks, first_line
from mediaassist.providers.web.kept_login import LoginRecorder, kept_login, log_in_again
from mediaassist.providers.web.session import save_session
from mediaassist.providers.web.site import SiteProfile, feature_problems, load_site
from mediaassist.providers.web.tools import LoginResult, Operator, keep_typed_login, no_display_message, wait_for_login

if TYPE_CHECKING:
    from mediaassist.core.lane_store import LaneStore

log = logging.getLogger("mediaassist.web")
STOP_WAIT_S = 5.0  # real seconds for an answer to end after clicking stop
# After the page showed the turn's error its answer is over, whatever a stop control still shows
# (Gradio leaves its stop button up): a short wait, then the page is reloaded before the next task.
STOP_WAIT_AFTER_ERROR_S = 1.0


class WebProvider:
    def __init__(self, site: SiteProfile, settings: LaunchSettings, clock: Clock, data_dir: Path) -> None:
        self.site = site
        self.settings = settings
        self.clock = clock
        self.data_dir = data_dir
        self.playwright = PlaywrightHandle()
        self.runtimes: dict[str, BrowserRuntime] = {}
        self.stuck: set[str] = set()  # accounts whose page was left showing an answer running

    def runtime(self, account: str) -> BrowserRuntime:
        if account not in self.runtimes:
            self.runtimes[account] = BrowserRuntime(account, profile_dir(self.data_dir, account), self.settings)
        return self.runtimes[account]

    async def start(self) -> None:
        """Nothing to do up front: browsers start on an account's first task (and stay warm)."""

    async def close(self) -> None:
        for account, runtime in self.runtimes.items():
            await runtime.close(functools.partial(_log_for_account, account))
        await self.playwright.stop()

    async def run(self, ctx: TaskContext) -> TaskResult:
        account = ctx.task.account
        if not account:
            raise TaskError(ErrorKind.INTERNAL, msg("a web task reached the provider without an account"))
        runtime = self.runtime(account)
        if runtime.lock.locked():
            ctx.log(msg("waiting: account {account} is still busy with another generation", account=account))
        async with runtime.lock:
            return await self._run_locked(runtime, ctx)

    async def _run_locked(self, runtime: BrowserRuntime, ctx: TaskContext) -> TaskResult:
        driver: SiteDriver | None = None
        succeeded = False
        account = runtime.account
        try:
            await runtime.open(await self.playwright.get(), ctx.log)
            driver = SiteDriver(self.site, await runtime.page(), ctx.clock, ctx.log)
            result = await generate(driver, ctx, fresh=account in self.stuck)
            self.stuck.discard(account)
            succeeded = True
            return result
        except PlaywrightError as exc:
            # the page or browser broke mid-task; a browser that went away is relaunched next time
            raise TaskError(ErrorKind.PROVIDER, msg("browser error: {detail}", detail=first_line(exc))) from None
        finally:
            # Whatever ended the attempt (cancel, shutdown, time-out, an error mid-answer),
            # its answer must end before the account is free: the next send would otherwise
            # be a second generation on one session, which the sites refuse. A page that
            # still shows one is reloaded before the account's next task.
            if (driver is not None and not succeeded
                    and await run_to_completion(_stop_generation(driver, ctx)) != "idle_or_stopped"):
                self.stuck.add(account)
            await run_to_completion(self._after_task(runtime, ctx))

    async def log_in(self, account: str, store: LaneStore | None, *, headless: bool = False, timeout_s: float = 600.0,
                     operator: Operator | None = None, keep_login: bool = False) -> LoginResult:
        """Log the account in inside this lane's own browser, relaunched headed for the operator
        (the profile cannot open twice). The account takes no task meanwhile (its lock is held);
        the browser then stays open for its tasks, so a login kept only in the page session (a
        site with ``navigation = "stay"``) lasts as long as that page does -- or longer, with
        ``keep_login`` (the form's values into the OS keyring, re-entered by a new browser).
        Records the result."""
        if not headless and (blocked := no_display_message(account)) is not None:
            return LoginResult(False, blocked)
        runtime = self.runtime(account)
        note = functools.partial(_log_for_account, account)
        async with runtime.lock:
            try:
                if runtime.is_open and runtime.headless != headless:
                    await runtime.close(note)
                await runtime.open(await self.playwright.get(), note, headless=headless)
                recorder = LoginRecorder() if keep_login else None
                seen = await wait_for_login(self.site, runtime, await runtime.page(), None, operator, timeout_s,
                                            recorder)
            except (PlaywrightError, TaskError, ProfileInUse) as exc:
                result = LoginResult(False, exc.message if isinstance(exc, (TaskError, ProfileInUse))
                                     else verbatim(first_line(exc)))
            else:
                result = (LoginResult(True, msg("login ok (in the lane's own browser, kept open for its tasks)"))
                          if seen
                          else LoginResult(False, msg("no login was seen before the window closed or the time ran "
                                                      "out")))
                if seen and recorder is not None:
                    kept = keep_typed_login(recorder, account)
                    result = LoginResult(True, kept.message if not kept.ok else
                                         msg("login ok (in the lane's own browser); kept in the OS keyring, "
                                             "re-entered whenever a new browser finds the page logged out"))
        if store is not None:
            store.set_login_state(account, "ok" if result.ok else "needs_login", None if result.ok else result.message)
        return result

    async def _after_task(self, runtime: BrowserRuntime, ctx: TaskContext) -> None:
        if runtime.is_open and runtime.context is not None:
            try:
                await save_session(runtime.context, runtime.profile)
            except (PlaywrightError, OSError) as exc:
                ctx.log(msg("the session cookies could not be saved ({error})", error=type(exc).__name__))
            runtime.tasks_since_launch += 1
        if runtime.needs_recycle and self.site.navigation == "stay" and not kept_login(runtime.account):
            # The login lives in this page (a page-session gate) and the operator kept none to
            # re-enter: a new browser would lose it, so the page is kept (said once).
            if runtime.tasks_since_launch == runtime.settings.recycle_after:
                ctx.log(msg("not recycling the browser after {n} tasks: the login of {site} lives in the open page "
                            "(navigation = \"stay\"), which is kept", n=runtime.tasks_since_launch,
                            site=self.site.name))
        elif runtime.needs_recycle:
            ctx.log(msg("recycling the browser after {n} tasks", n=runtime.tasks_since_launch))
            await runtime.close(ctx.log)


async def generate(driver: SiteDriver, ctx: TaskContext, fresh: bool = False) -> TaskResult:
    """One turn on a page that may have been left in any state."""
    await prepare_page(driver, ctx, fresh)
    try:
        before = await _compose_and_send(driver, ctx)
    except ClickIntercepted as covered:
        ctx.log(msg("{detail}; reloading the page once", detail=covered))
        await prepare_page(driver, ctx, fresh=True)
        try:
            before = await _compose_and_send(driver, ctx)
        except ClickIntercepted as again:
            # not retried: the same cover would come back; the profile needs its close button
            raise TaskError(ErrorKind.PROVIDER, msg("{site}: {detail}, also after a reload; add a selector for its "
                                                    "close button to the profile's dismiss list",
                                                    site=driver.site.name, detail=again), retry=False) from None
    started = ctx.clock.monotonic()
    text = await driver.wait_answer(before)
    files = await driver.save_images(before, ctx.make_output_dir)
    ctx.log(msg("answer complete: {chars} characters, {images} image(s) in {seconds} s",
                chars=len(text), images=len(files), seconds=format(ctx.clock.monotonic() - started, ".1f")))
    return TaskResult(text=text, files=files)


async def prepare_page(driver: SiteDriver, ctx: TaskContext, fresh: bool = False) -> None:
    """The chat page up, logged in, and not busy. Never send into a busy session: an answer
    still running (a stop that did not take, a site that resumes one on load) is stopped; a
    page that keeps showing one is reloaded and checked again; only then does the attempt fail."""
    await _open_logged_in(driver, ctx, fresh)
    outcome = await driver.stop_and_wait(STOP_WAIT_S)
    if outcome != "idle":
        ctx.log(msg("an earlier answer was still being generated on this account; clicked stop ({outcome})",
                    outcome=outcome))
    if outcome == "still_generating":
        ctx.log(msg("reloading the page and checking again"))
        await _open_logged_in(driver, ctx, fresh=True)
        if await driver.stop_and_wait(STOP_WAIT_S) == "still_generating":
            raise TaskError(ErrorKind.PROVIDER, msg("an earlier answer on account {account} was still being "
                                                    "generated {seconds} s after clicking stop, also after a reload",
                                                    account=ctx.task.account, seconds=format(STOP_WAIT_S, ".0f")))
    await driver.check_banners()


async def _open_logged_in(driver: SiteDriver, ctx: TaskContext, fresh: bool) -> None:
    """The chat page, logged in: by the kept login (if the operator let the lane keep one) when a
    new browser finds the page logged out."""
    account = ctx.task.account or ""
    if await driver.open_chat(fresh) == "ok":
        return
    if await log_in_again(driver, account):
        ctx.log(msg("the page was logged out; logged in again with the login kept in the OS keyring"))
    else:
        raise TaskError(ErrorKind.LOGIN, msg("account {account} is logged out of {site}; log in with: mediaassist "
                                             "accounts login {name}",
                                             account=account, site=driver.site.name, name=account))


async def _compose_and_send(driver: SiteDriver, ctx: TaskContext) -> TurnMarks:
    """Prompt plus instructions, then send; returns the marks the new turn is told apart by.
    ``need_empty_prompt`` sends the user content and nothing else."""
    prompt, system = ctx.task.prompt, ctx.task.system_prompt
    if ctx.model.need_empty_prompt:
        if await driver.set_instructions(""):
            ctx.log(msg("need_empty_prompt: cleared the page's default instructions"))
        if system:
            ctx.log(msg("need_empty_prompt: the system prompt is not sent"))
    elif system and not await driver.set_instructions(system):
        prompt = f"{system}\n\n{prompt}"  # a page with no system slot gets it as plain text
    files = attachments(ctx)
    if files:
        await driver.attach(files, await driver.error_texts())
    await driver.enter_prompt(prompt)
    ctx.log(msg("prompt entered ({chars} characters, {lines} lines)",
                chars=len(prompt), lines=prompt.count(chr(10)) + 1))
    before = await driver.marks()
    await driver.send()
    return before


def _log_for_account(account: str, line: Message | str) -> None:
    log.info("[web:%s] %s", account, line)


def attachments(ctx: TaskContext) -> list[Path]:
    """The task's local input files in the model's input order, each checked unchanged since
    import. A web page takes files from disk only: a URL input is refused by name."""
    files: list[Path] = []
    inputs = ctx.task.inputs_dict
    for name in ctx.model.inputs:
        for entry in inputs.get(name, []):
            if "path" not in entry:
                raise TaskError(ErrorKind.BAD_INPUT, msg("input {name}: {url} is a URL; a web model attaches local "
                                                         "files only (download it and name the file instead)",
                                                         name=name, url=entry.get('url')), retry=False)
            verify_unchanged(entry)
            files.append(Path(entry["path"]))
    return files


async def _stop_generation(driver: SiteDriver, ctx: TaskContext) -> str:
    """Click stop and wait for the answer to end. On shutdown too: the task reruns from the
    queue on the next start, and would find the session busy. Returns "idle_or_stopped" when
    the page ends up with nothing running."""
    wait_s = STOP_WAIT_AFTER_ERROR_S if driver.failed_on_page_error else STOP_WAIT_S
    try:
        outcome = await asyncio.wait_for(driver.stop_and_wait(wait_s), wait_s + 3)
    except (TimeoutError, PlaywrightError) as exc:
        ctx.log(msg("stopping the generation failed ({error})", error=type(exc).__name__))
        return "unknown"
    if outcome == "stopped":
        ctx.log(msg("clicked stop on the page; the answer ended"))
    elif outcome == "still_generating":
        ctx.log(msg("clicked stop on the page, but the answer was still being generated {seconds} s later; the "
                    "page is reloaded before the next task",
                    seconds=format(wait_s, ".0f")))
        return outcome
    elif ctx.stop_reason is not None:
        ctx.log(msg("no generation was showing; nothing to stop"))
    return "idle_or_stopped"


def build_web_provider(site: str, config: AppConfig, clock: Clock, data_dir: Path) -> WebProvider:
    profile = load_site(site, data_dir)
    with_inputs = [m.name for m in config.models if m.kind == "web" and m.site == site and m.inputs]
    if with_inputs:
        for problem in feature_problems(profile, inputs=True):
            raise ConfigError(msg("{source}: {problem} (model {model} has inputs)",
                                  source=profile.source or site, problem=problem, model=with_inputs[0]))
    return WebProvider(profile, LaunchSettings.from_config(config), clock, data_dir)
