"""The one generic driver: runs any site profile on a page.

Per generation: open the chat page and check the login state, refuse on a rate-limit banner,
enter the prompt and read it back, send, see the turn start, then wait until the generating
indicator is gone, the done marker has been seen for several polls and the text has been
stable -- "stop gone + text stable" alone would accept a settled preamble.
"""

from __future__ import annotations

import asyncio
import mimetypes
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Locator, Page

from mediaassist.core.clock import Clock
from mediaassist.core.errors import ErrorKind, TaskError
from mediaassist.providers.web.site import SiteProfile

DEFAULT_BANNERS = ["[role=alert]", "[role=status]", "[aria-live]"]
NAV_TIMEOUT_MS = 30_000
CLICK_TIMEOUT_MS = 5_000


@dataclass
class TurnMarks:
    """Counts taken just before sending, so the new turn can be told from old ones."""

    answers: int
    done: int


class SiteDriver:
    def __init__(self, site: SiteProfile, page: Page, clock: Clock, log: Callable[[str], None]) -> None:
        self.site = site
        self.page = page
        self.clock = clock
        self.log = log
        self.turn_pending = False  # sent, and neither its start nor a verdict seen yet

    # --- selectors ------------------------------------------------------------------------
    async def first(self, role: str) -> Locator | None:
        """The first selector of the role's fallback list that matches anything."""
        for selector in self.site.selectors.get(role, []):
            locator = self.page.locator(selector)
            if await locator.count():
                return locator
        return None

    async def visible(self, role: str) -> int:
        for selector in self.site.selectors.get(role, []):
            count = await self.page.locator(selector).filter(visible=True).count()
            if count:
                return count
        return 0

    async def count(self, role: str) -> int:
        found = await self.first(role)
        return await found.count() if found is not None else 0

    # --- login and banners ----------------------------------------------------------------
    async def open_chat(self) -> str:
        """Load the chat page; returns "ok" or "needs_login" (an unreadable page is an error)."""
        try:
            await self.page.goto(self.site.start_url, wait_until="domcontentloaded", timeout=NAV_TIMEOUT_MS)
        except PlaywrightError as exc:
            raise TaskError(ErrorKind.NETWORK, f"could not open {self.site.start_url}: {_first_line(exc)}") from None
        return await self.login_state()

    async def login_state(self, timeout_s: float | None = None) -> str:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + (timeout_s if timeout_s is not None else self.site.completion.login_timeout_s)
        while True:
            if await self.visible("logged_out"):
                return "needs_login"
            if await self.visible("logged_in"):
                return "ok"
            if loop.time() > deadline:
                raise TaskError(ErrorKind.PROVIDER, f"{self.site.name}: the page shows neither the logged-in nor "
                                "the logged-out marker; the site may have changed (check it with: "
                                f"mediaassist sites check {self.site.name} --account NAME)")
            await asyncio.sleep(0.1)

    async def banner_texts(self) -> list[str]:
        texts = []
        for selector in self.site.selectors.get("banner", DEFAULT_BANNERS):
            for text in await self.page.locator(selector).filter(visible=True).all_inner_texts():
                if text.strip():
                    texts.append(text.strip())
        return texts

    async def check_banners(self) -> None:
        """A visible rate-limit banner is ``quota``; a "still generating" one is ``provider``."""
        for text in await self.banner_texts():
            lowered = text.lower()
            if any(marker in lowered for marker in self.site.rate_limit_texts):
                # Pause the account's lane: its next tasks would hit the same banner; they wait
                # (or go to another account) until the operator resumes the lane.
                raise TaskError(ErrorKind.QUOTA, f"{self.site.name} shows a rate-limit banner: {text[:200]}",
                                pause_lane=f"rate limited by {self.site.name}: {text[:120]}")
            if any(marker in lowered for marker in self.site.busy_texts):
                raise TaskError(ErrorKind.PROVIDER, f"{self.site.name} refused: {text[:200]}")

    # --- composing ------------------------------------------------------------------------
    async def set_instructions(self, text: str) -> bool:
        """Fill (or clear) the page's default-instructions box; False if the site has none."""
        box = await self.first("instructions")
        if box is None:
            return False
        await box.first.fill(text)
        return True

    async def enter_prompt(self, text: str) -> None:
        """Fill the box, read it back, and fall back to inserted text if it did not land whole."""
        found = await self.first("prompt")
        if found is None:
            raise TaskError(ErrorKind.PROVIDER, f"{self.site.name}: prompt box not found")
        box = found.first
        await box.click(timeout=CLICK_TIMEOUT_MS)
        await box.fill(text)
        landed = await _box_text(box)
        if _same(landed, text):
            return
        self.log(f"prompt read-back differs ({len(landed)} of {len(text)} characters); inserting again")
        await box.fill("")
        await box.focus()
        await self.page.keyboard.insert_text(text)
        landed = await _box_text(box)
        if not _same(landed, text):
            raise TaskError(ErrorKind.PROVIDER, f"the prompt did not arrive whole in the page "
                            f"({len(landed)} of {len(text)} characters landed)")

    async def marks(self) -> TurnMarks:
        return TurnMarks(answers=await self.count("answer"), done=await self.count("done"))

    async def send(self) -> None:
        button = await self.first("send")
        if button is None:
            raise TaskError(ErrorKind.PROVIDER, f"{self.site.name}: send button not found")
        self.turn_pending = True  # before the click: the site may take the turn before it returns
        await button.first.click(timeout=CLICK_TIMEOUT_MS)

    # --- waiting for the answer -----------------------------------------------------------
    async def wait_answer(self, before: TurnMarks) -> str:
        try:
            return await self._wait_answer(before)
        except TaskError:
            self.turn_pending = False  # the page was watched until it gave a verdict
            raise

    async def _wait_answer(self, before: TurnMarks) -> str:
        rule = self.site.completion
        loop = asyncio.get_running_loop()
        start_deadline = loop.time() + rule.start_timeout_s
        deadline = loop.time() + self.clock.real(rule.timeout_s)
        started = False
        text, stable_since, done_polls = "", loop.time(), 0
        while True:
            await self.check_banners()
            if await self.visible("logged_out"):
                raise TaskError(ErrorKind.LOGIN, f"{self.site.name} logged the account out during the answer")
            generating = await self.visible("generating") > 0
            answers = await self.count("answer")
            if not started:
                started = generating or answers > before.answers
                if started:
                    self.turn_pending = False
                    self.log("the answer started")
                elif loop.time() > start_deadline:
                    raise TaskError(ErrorKind.PROVIDER, f"the answer did not start within {rule.start_timeout_s:.0f} s "
                                    "after send (the send may have been swallowed)")
            if started:
                now_text = await self.last_answer_text(answers, before)
                if now_text != text:
                    text, stable_since = now_text, loop.time()
                done_polls = done_polls + 1 if not generating and await self._done_seen(before) else 0
                stable_ms = (loop.time() - stable_since) * 1000
                if done_polls >= max(1, rule.done_polls) and stable_ms >= rule.stable_ms:
                    return text
            if loop.time() > deadline:
                raise TaskError(ErrorKind.TIMEOUT, f"no complete answer within {rule.timeout_s:.0f} s")
            await asyncio.sleep(rule.poll_ms / 1000)

    async def _done_seen(self, before: TurnMarks) -> bool:
        if not self.site.has("done"):
            return True
        return await self.count("done") > before.done

    async def last_answer_text(self, answers: int, before: TurnMarks) -> str:
        if answers <= before.answers:
            return ""
        found = await self.first("answer")
        return (await found.last.inner_text()).strip() if found is not None else ""

    async def stop(self) -> bool:
        """Click the stop control if one is showing."""
        for role in ("stop", "generating"):
            for selector in self.site.selectors.get(role, []):
                button = self.page.locator(selector).filter(visible=True)
                if await button.count():
                    await button.first.click(timeout=2_000)
                    return True
        return False

    async def stop_and_wait(self, timeout_s: float) -> str:
        """End an answer the page shows as generating: "idle" (none was), "stopped" (gone after
        clicking stop), or "still_generating" after ``timeout_s`` real seconds. A turn just sent
        may not show yet (the site accepts it before the page says so): wait for it to show."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while not await self.visible("generating"):
            if not self.turn_pending or loop.time() > deadline:
                return "idle"
            await asyncio.sleep(0.1)
        await self.stop()
        while await self.visible("generating"):
            if loop.time() > deadline:
                return "still_generating"
            await asyncio.sleep(0.1)
        return "stopped"

    # --- images ---------------------------------------------------------------------------
    async def save_images(self, folder_for: Callable[[], Path]) -> list[str]:
        """Images shown in the last answer, fetched with the page's cookies into the output dir."""
        answer = await self.first("answer")
        if answer is None:
            return []
        selector = ", ".join(self.site.selectors.get("answer_images", ["img"]))
        sources = await answer.last.locator(selector).evaluate_all("els => els.map(e => e.currentSrc || e.src)")
        files: list[str] = []
        for src in sources:
            if urlsplit(src).scheme in ("http", "https"):
                path = await self._save_image(src, folder_for, len(files) + 1)
                files += [str(path)] if path else []
        return files

    async def _save_image(self, src: str, folder_for: Callable[[], Path], number: int) -> Path | None:
        response = await self.page.context.request.get(src)
        try:  # the browser keeps every response body until disposed (or the browser closes)
            if not response.ok:
                self.log(f"image {src} could not be fetched (HTTP {response.status})")
                return None
            ext = mimetypes.guess_extension(response.headers.get("content-type", "").split(";")[0]) or ".bin"
            path = folder_for() / f"image-{number}{ext}"
            path.write_bytes(await response.body())
            return path
        finally:
            await response.dispose()


async def _box_text(box: Locator) -> str:
    return await box.evaluate("e => ('value' in e && e.tagName !== 'DIV') ? e.value : e.innerText")


def _same(landed: str, wanted: str) -> bool:
    """Equal up to line endings and edge whitespace (contenteditable boxes normalise those)."""
    def norm(text: str) -> str:
        return text.replace("\r\n", "\n").replace("\u00a0", " ").strip()
    return norm(landed) == norm(wanted)


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
