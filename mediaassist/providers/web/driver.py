"""The one generic driver: runs any site profile on a page.

Per generation: bring the chat page up the profile's way (reload, New chat, or stay), clear
pop-ups, check the login state, refuse on a rate-limit banner, attach files, enter the prompt and
read it back, send, see the turn start, then wait until the generating indicator is gone, the done
marker has been seen in the new turn for several polls and the turn's text has settled -- "stop
gone + text stable" alone would accept a settled preamble. An error the page shows during or
after the turn fails the attempt: it is never an answer.
"""

from __future__ import annotations

import asyncio
import mimetypes
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Locator, Page
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from mediaassist.core.clock import Clock
from mediaassist.core.errors import ErrorKind, TaskError
from mediaassist.core.messages import Message, msg
from mediaassist.providers.web.markdown import html_to_markdown
from mediaassist.providers.web.site import SiteProfile

DEFAULT_BANNERS = ["[role=alert]", "[role=status]", "[aria-live]"]
NAV_TIMEOUT_MS = 30_000
CLICK_TIMEOUT_MS = 5_000
DISMISS_TIMEOUT_MS = 1_000
_INTERCEPTED = re.compile(r"(<[^\n]*?>)(?:…</[\w-]+>)?(?: from <[^\n]*?> subtree)? intercepts pointer events")
# Captures what a copy button writes, inside the page: the real clipboard is shared by every
# browser on the machine (parallel accounts would race), and headless pages may not have one.
_CAPTURE_CLIPBOARD = """() => {
  if (window.__maCopied) { window.__maCopied.length = 0; return; }
  window.__maCopied = [];
  const keep = (text) => { window.__maCopied.push(String(text)); return Promise.resolve(); };
  const clip = {
    writeText: keep,
    write: async (items) => { for (const item of items) {
      if (item.types.includes('text/plain')) keep(await (await item.getType('text/plain')).text()); } },
    readText: async () => window.__maCopied[window.__maCopied.length - 1] || '',
  };
  try { Object.defineProperty(navigator, 'clipboard', {value: clip, configurable: true}); } catch (e) {}
  document.addEventListener('copy', (e) => {
    const data = e.clipboardData && e.clipboardData.getData('text/plain');
    keep(data || String(document.getSelection()));
  }, true);
}"""


# Stamps, page-side, the last change inside an answer bubble: "the text settled" is then measured
# from the change itself, not from the poll that noticed it. Only CSS selectors can be watched.
_WATCH_ANSWERS = """(selectors) => {
  const css = selectors.filter((s) => { try { document.querySelector(s); return true; } catch (e) { return false; } });
  if (!css.length) return false;
  const within = (node) => { const el = node.nodeType === 1 ? node : node.parentElement;
    return !!el && css.some((s) => el.closest(s)); };
  if (window.__maAnswerObserver) window.__maAnswerObserver.disconnect();
  window.__maAnswerChange = performance.now();
  window.__maEndSince = null;
  window.__maAnswerObserver = new MutationObserver((records) => {
    if (records.some((r) => within(r.target) || [...r.addedNodes].some(within)))
      window.__maAnswerChange = performance.now();
  });
  window.__maAnswerObserver.observe(document.body, {subtree: true, childList: true, characterData: true});
  return true;
}"""
# The completion rule evaluated in the page (Playwright re-runs it every few ms there), so the
# time from the last change to the verdict does not depend on how busy our event loop is. The
# same rule as the Python-side one: nothing generating and the done marker new, held for
# ``holdMs``; new answer elements; none of them changed for ``stableMs``.
_TURN_SETTLED = """(rule) => {
  const all = (s) => [...document.querySelectorAll(s)];
  const shown = (el) => { const box = el.getBoundingClientRect();  // Playwright's "visible"
    return box.width > 0 && box.height > 0 && getComputedStyle(el).visibility !== 'hidden'; };
  const firstNonEmpty = (selectors, keep) => {
    for (const s of selectors) { const found = all(s).filter(keep); if (found.length) return found; }
    return []; };
  const generating = firstNonEmpty(rule.generating, shown).length > 0;
  const doneSeen = !rule.done.length || firstNonEmpty(rule.done, () => true).length > rule.doneBefore;
  const now = performance.now();
  if (generating || !doneSeen) { window.__maEndSince = null; return false; }
  if (window.__maEndSince === null || window.__maEndSince === undefined) window.__maEndSince = now;
  const texts = firstNonEmpty(rule.answer, () => true).map((e) => e.innerText.trim());
  let firstNew = 0;
  while (firstNew < Math.min(texts.length, rule.before.length) && texts[firstNew] === rule.before[firstNew]) firstNew++;
  firstNew = Math.max(firstNew, rule.before.length - 1, 0);
  return texts.length > firstNew && now - window.__maEndSince >= rule.holdMs
    && now - window.__maAnswerChange >= rule.stableMs;
}"""
# Read in one round trip to the page, not one per selector: after the verdict, each round trip
# waits its turn on a busy event loop. null when a selector is not CSS (the Python-side reads).
_PAGE_ERROR_TEXTS = """([errors, banners]) => {
  const shown = (el) => { const box = el.getBoundingClientRect();  // Playwright's "visible"
    return box.width > 0 && box.height > 0 && getComputedStyle(el).visibility !== 'hidden'; };
  const texts = (s) => [...document.querySelectorAll(s)].filter(shown).map((e) => e.innerText.trim());
  try {
    let first = [];
    for (const s of errors) { const found = texts(s); if (found.length) { first = found; break; } }
    return {errors: first, banners: banners.flatMap(texts).filter((t) => t)};
  } catch (e) { return null; }
}"""
_PAGE_BUBBLE_TEXTS = """(selectors) => {
  try {
    for (const s of selectors) { const found = document.querySelectorAll(s);
      if (found.length) return [...found].map((e) => e.innerText.trim()); }
    return [];
  } catch (e) { return null; }
}"""
SETTLE_WAIT_MS = 500  # how long one in-page wait runs before the page is checked for errors again
SETTLE_POLL_MS = 25


class ClickIntercepted(Exception):
    """A click that kept landing on another element (a modal, a banner) until it timed out."""

    def __init__(self, role: str, cover: str) -> None:
        super().__init__(f"clicks on the {role} are intercepted by {cover}")
        self.role = role
        self.cover = cover


@dataclass
class TurnMarks:
    """Counts taken just before sending, so the new turn can be told from old ones."""

    answers: int
    done: int
    answer_texts: list[str] = field(default_factory=list)
    copies: int = 0
    errors: Counter[str] = field(default_factory=Counter)


class SiteDriver:
    def __init__(self, site: SiteProfile, page: Page, clock: Clock, log: Callable[[Message | str], None]) -> None:
        self.site = site
        self.page = page
        self.clock = clock
        self.log = log
        self.turn_pending = False  # sent, and neither its start nor a verdict seen yet
        self.failed_on_page_error = False  # the attempt ended on an error the page showed

    # --- selectors ------------------------------------------------------------------------
    def _selectors(self, role: str) -> list[str]:
        if role == "generating":
            return self.site.generating_selectors
        if role == "send":
            return self.site.send_buttons
        return self.site.selectors.get(role, [])

    async def first(self, role: str) -> Locator | None:
        """The first selector of the role's fallback list that matches anything."""
        for selector in self._selectors(role):
            locator = self.page.locator(selector)
            if await locator.count():
                return locator
        return None

    async def visible(self, role: str) -> int:
        for selector in self._selectors(role):
            count = await self.page.locator(selector).filter(visible=True).count()
            if count:
                return count
        return 0

    async def count(self, role: str) -> int:
        found = await self.first(role)
        return await found.count() if found is not None else 0

    async def visible_texts(self, role: str) -> list[str]:
        """The texts of the first selector of the role with visible matches."""
        for selector in self._selectors(role):
            texts = await self.page.locator(selector).filter(visible=True).all_inner_texts()
            if texts:
                return [t.strip() for t in texts]
        return []

    # --- pop-ups and clicks -----------------------------------------------------------------
    async def dismiss_popups(self) -> int:
        """Click every visible ``dismiss`` control (modals, "what's new", cookie consent)."""
        clicked = 0
        for selector in self.site.selectors.get("dismiss", []):
            buttons = self.page.locator(selector).filter(visible=True)
            for _ in range(await buttons.count()):
                try:
                    await buttons.first.click(timeout=DISMISS_TIMEOUT_MS)
                    clicked += 1
                except PlaywrightError:
                    break  # gone meanwhile, or itself covered: the next step tells
        if clicked:
            self.log(msg("dismissed {n} pop-up(s)", n=clicked))
        return clicked

    async def click(self, role: str, locator: Locator) -> None:
        """A real click after clearing pop-ups; one that keeps being intercepted says by what."""
        await self.dismiss_popups()
        try:
            await locator.click(timeout=CLICK_TIMEOUT_MS)
        except PlaywrightError as exc:
            cover = _INTERCEPTED.findall(str(exc))
            if cover:
                raise ClickIntercepted(role, cover[-1][:200]) from None
            raise

    # --- navigation, login and banners ------------------------------------------------------
    def on_site(self) -> bool:
        here, start = urlsplit(self.page.url), urlsplit(self.site.start_url)
        return (here.scheme, here.netloc) == (start.scheme, start.netloc)

    async def open_chat(self, fresh: bool = False) -> str:
        """Bring up the chat page the profile's way (``fresh``: always reload); returns "ok" or
        "needs_login" (an unreadable page is an error)."""
        mode = "reload" if fresh or not self.on_site() else self.site.navigation
        if mode == "reload":
            await self.goto(self.site.start_url)
        elif mode == "new_chat":
            await self.dismiss_popups()
            button = await self.first("new_chat")
            if button is None or not await button.first.is_visible():
                await self.goto(self.site.start_url)  # a logged-out or odd page: start over
            else:
                await self.click("new_chat button", button.first)
        await self.dismiss_popups()
        return await self.login_state()

    async def goto(self, url: str) -> None:
        try:
            await self.page.goto(url, wait_until="domcontentloaded", timeout=NAV_TIMEOUT_MS)
        except PlaywrightError as exc:
            raise TaskError(ErrorKind.NETWORK, msg("could not open {url}: {detail}",
                                                   url=url, detail=first_line(exc))) from None

    async def login_state(self, timeout_s: float | None = None) -> str:
        """"ok" once the logged-in marker shows, "needs_login" on the logged-out one. A site with
        no ``logged_out`` marker counts as logged out when its ``logged_in`` one never shows
        and it has a ``login_url``; without either, the page is not recognised."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + (timeout_s if timeout_s is not None else self.site.completion.login_timeout_s)
        while True:
            if await self.visible("logged_out"):
                return "needs_login"
            if await self.visible("logged_in"):
                return "ok"
            if loop.time() > deadline:
                if not self.site.has("logged_out") and self.site.login_url:
                    return "needs_login"
                seen = msg("neither logged in nor logged out") if self.site.has("logged_out") else "logged_in"
                raise TaskError(ErrorKind.PROVIDER, msg("{site}: the page shows no login marker ({seen}); the site "
                                                        "may have changed (check it with: mediaassist sites check "
                                                        "{name} --account NAME)",
                                                        site=self.site.name, seen=seen, name=self.site.name))
            await self.dismiss_popups()
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
                raise TaskError(ErrorKind.QUOTA, msg("{site} shows a rate-limit banner: {detail}",
                                                     site=self.site.name, detail=text[:200]),
                                pause_lane=msg("rate limited by {site}: {detail}",
                                               site=self.site.name, detail=text[:120]))
            if any(marker in lowered for marker in self.site.busy_texts):
                raise TaskError(ErrorKind.PROVIDER, msg("{site} refused: {detail}",
                                                        site=self.site.name, detail=text[:200]))

    async def error_texts(self) -> Counter[str]:
        """What the page shows as an error: ``error`` elements, and banners or toasts carrying
        one of the ``error_texts``."""
        banner_selectors = self.site.selectors.get("banner", DEFAULT_BANNERS) if self.site.error_texts else []
        selectors = [*self._selectors("error"), *banner_selectors]
        seen = (await self.page.evaluate(_PAGE_ERROR_TEXTS, [self._selectors("error"), banner_selectors])
                if all(_is_css(s) for s in selectors) else None)
        if seen is None:
            seen = {"errors": await self.visible_texts("error"),
                    "banners": await self.banner_texts() if banner_selectors else []}
        found = Counter(_squash(t) or "(an error with no text)" for t in seen["errors"])
        found.update(_squash(t) for t in seen["banners"]
                     if any(marker in t.lower() for marker in self.site.error_texts))
        return found

    async def check_errors(self, before: Counter[str]) -> None:
        """An error that was not on the page before the send fails the attempt as ``provider``.
        ``before`` is narrowed to the old errors still showing: one that went away and comes
        back (a page re-rendering its history) is new again."""
        now = await self.error_texts()
        before &= now
        new = now - before
        if new:
            message = " | ".join(new)[:300]
            self.failed_on_page_error = True
            raise TaskError(ErrorKind.PROVIDER, msg("{site} showed an error: {detail}",
                                                    site=self.site.name, detail=message))

    # --- composing ------------------------------------------------------------------------
    async def set_instructions(self, text: str) -> bool:
        """Fill (or clear) the page's default-instructions box; False if the site has none."""
        box = await self.first("instructions")
        if box is None:
            return False
        await box.first.fill(text)
        return True

    async def attach(self, files: list[Path], before_errors: Counter[str]) -> None:
        """Give the files to the page's file input, then wait for its upload-done marker (if the
        site has one); an error the page shows meanwhile is a refusal of the file."""
        found = await self.first("file_input")
        if found is None:
            raise TaskError(ErrorKind.PROVIDER, msg("{site}: file input not found (selectors.file_input)",
                                                    site=self.site.name))
        ready_before = await self.count("attachment_ready")
        await found.first.set_input_files([str(f) for f in files])
        names = ", ".join(f.name for f in files)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.site.completion.start_timeout_s
        while True:
            new = (await self.error_texts()) - before_errors
            if new:
                raise TaskError(ErrorKind.PROVIDER, msg("{site} rejected the attachment {names}: {detail}",
                                                        site=self.site.name, names=names,
                                                        detail=' | '.join(new)[:300]), retry=False)
            ready = await self.count("attachment_ready") >= ready_before + len(files)
            if not self.site.has("attachment_ready") or ready:
                self.log(msg("attached {names}", names=names))
                return
            if loop.time() > deadline:
                raise TaskError(ErrorKind.PROVIDER, msg("{site}: the attachment {names} was not shown as ready "
                                                        "within {seconds} s",
                                                        site=self.site.name, names=names,
                                                        seconds=format(self.site.completion.start_timeout_s, ".0f")))
            await asyncio.sleep(0.1)

    async def enter_prompt(self, text: str) -> None:
        """Type the prompt, read it back, and type it again another way if it did not land whole."""
        found = await self.first("prompt")
        if found is None:
            raise TaskError(ErrorKind.PROVIDER, msg("{site}: prompt box not found", site=self.site.name))
        box = found.first
        await self.click("prompt box", box)
        rich = await box.evaluate("e => e.isContentEditable")
        await (self._type_rich(box, text) if rich else box.fill(text))
        landed = await _box_text(box)
        if _same(landed, text, rich):
            return
        self.log(msg("prompt read-back differs ({landed} of {total} characters); inserting again",
                     landed=len(landed), total=len(text)))
        await self._clear(box)
        if rich:
            await box.fill(text)  # the editor's own paste path
        else:
            await self.page.keyboard.insert_text(text)
        landed = await _box_text(box)
        if not _same(landed, text, rich):
            raise TaskError(ErrorKind.PROVIDER, msg("the prompt did not arrive whole in the page ({landed} of "
                                                    "{total} characters landed)",
                                                    landed=len(landed), total=len(text)))

    async def _type_rich(self, box: Locator, text: str) -> None:
        """A rich-text editor (ProseMirror, Lexical, Quill...): inserted line by line with the
        site's line-break chord between, as a person types it -- a raw newline in inserted
        text means something different in each editor, and Enter may send."""
        await self._clear(box)
        for number, line in enumerate(text.replace("\r\n", "\n").split("\n")):
            if number:
                await self.page.keyboard.press(self.site.line_break)
            if line:
                await self.page.keyboard.insert_text(line)

    async def _clear(self, box: Locator) -> None:
        await box.focus()
        await self.page.keyboard.press("ControlOrMeta+a")
        await self.page.keyboard.press("Delete")

    async def marks(self) -> TurnMarks:
        texts = await self.bubble_texts()
        return TurnMarks(answers=len(texts), done=await self.count("done"), answer_texts=texts,
                         copies=await self.count("copy"), errors=await self.error_texts())

    async def send(self) -> None:
        button = await self.first("send") if self.site.send_buttons else None
        if button is not None:
            self.turn_pending = True  # before the click: the site may take the turn before it returns
            await self.click("send button", button.first)
            return
        chord, found = self.site.send_chord, await self.first("prompt")
        if chord is None or found is None:
            missing = msg("prompt box") if chord else msg("send button")
            raise TaskError(ErrorKind.PROVIDER, msg("{site}: {what} not found", site=self.site.name, what=missing))
        self.turn_pending = True
        await found.first.focus()
        await self.page.keyboard.press(chord)

    # --- waiting for the answer -----------------------------------------------------------
    async def wait_answer(self, before: TurnMarks) -> str:
        try:
            await self._wait_answer(before)
            return await self.answer_of_turn(before)
        except TaskError:
            self.turn_pending = False  # the page was watched until it gave a verdict
            raise

    async def _wait_answer(self, before: TurnMarks) -> None:
        rule = self.site.completion
        loop = asyncio.get_running_loop()
        start_deadline = loop.time() + rule.start_timeout_s
        deadline = loop.time() + self.clock.real(rule.timeout_s)
        started = False
        text, stable_since, done_polls, ended_without_answer = "", loop.time(), 0, 0
        baseline_errors = before.errors.copy()  # narrowed in place by check_errors
        in_page = await self.page.evaluate(_WATCH_ANSWERS, self.site.selectors["answer"]) and self._css_only()
        while True:
            await self._check_turn(baseline_errors)
            generating = await self.visible("generating") > 0
            first_new, answers = await self.new_range(before)
            if not started:
                started = generating or answers > first_new
                if started:
                    self.turn_pending = False
                    self.log(msg("the answer started"))
                elif loop.time() > start_deadline:
                    raise await self._ended_in_error(msg("the answer did not start within {seconds} s after send (the "
                                                         "send may have been swallowed)",
                                                         seconds=format(rule.start_timeout_s, ".0f")))
            if started:
                ended_without_answer = ended_without_answer + 1 if not generating and answers <= first_new else 0
                if ended_without_answer >= max(2, rule.done_polls) and await self.error_texts():
                    # The turn ran and ended with no new answer, the page showing an error: that
                    # error is the verdict, even when it reads like the one before the send
                    # (a page that re-runs a failed turn shows the same box again).
                    raise await self._ended_in_error(msg("the turn ended without an answer"))
                if in_page:
                    if await self._settled_in_page(before, min(SETTLE_WAIT_MS, (deadline - loop.time()) * 1000)):
                        await self.check_errors(baseline_errors)  # an error in its last moments still counts
                        return
                else:
                    now_text = "\n".join(await self.turn_texts(before))
                    if now_text != text:
                        text, stable_since = now_text, loop.time()
                    done_polls = done_polls + 1 if not generating and await self._done_seen(before) else 0
                    stable_ms = (loop.time() - stable_since) * 1000
                    if done_polls >= max(1, rule.done_polls) and stable_ms >= rule.stable_ms and answers > first_new:
                        return
            if loop.time() > deadline:
                raise TaskError(ErrorKind.TIMEOUT, msg("no complete answer within {seconds} s",
                                                       seconds=format(rule.timeout_s, ".0f")))
            if not (started and in_page):  # the in-page wait was the pause
                await asyncio.sleep(rule.poll_ms / 1000)

    async def _check_turn(self, baseline_errors: Counter[str]) -> None:
        """What fails a turn on any poll: pop-ups cleared first, then banners, new errors, a logout."""
        await self.dismiss_popups()
        await self.check_banners()
        await self.check_errors(baseline_errors)
        if await self.visible("logged_out"):
            raise TaskError(ErrorKind.LOGIN, msg("{site} logged the account out during the answer",
                                                 site=self.site.name))

    async def _ended_in_error(self, what: Message) -> TaskError:
        """A turn that ended without an answer: the page's visible error is the reason, if it shows one."""
        shown = " | ".join(await self.error_texts())[:300]
        if shown:
            self.failed_on_page_error = True  # the page's words, then ours
            return TaskError(ErrorKind.PROVIDER, msg("{site} showed an error: {detail} ({what})",
                                                     site=self.site.name, detail=shown, what=what))
        return TaskError(ErrorKind.PROVIDER, what)

    def _css_only(self) -> bool:
        """The in-page rule reads the roles with querySelectorAll: Playwright-only selectors
        (``text=``, ``:has-text``) keep the Python-side rule."""
        roles = [self.site.generating_selectors, self.site.selectors.get("done", []), self.site.selectors["answer"]]
        return all(_is_css(selector) for selectors in roles for selector in selectors)

    async def _settled_in_page(self, before: TurnMarks, wait_ms: float) -> bool:
        """Wait in the page, up to ``wait_ms``, for the completion rule to hold."""
        rule = self.site.completion
        arg = {"generating": self.site.generating_selectors, "done": self.site.selectors.get("done", []),
               "answer": self.site.selectors["answer"], "doneBefore": before.done, "before": before.answer_texts,
               "holdMs": max(0, rule.done_polls - 1) * rule.poll_ms, "stableMs": rule.stable_ms}
        try:
            await self.page.wait_for_function(_TURN_SETTLED, arg=arg, polling=SETTLE_POLL_MS,
                                              timeout=max(1.0, wait_ms))
        except PlaywrightTimeoutError:
            return False
        return True

    async def _done_seen(self, before: TurnMarks) -> bool:
        if not self.site.has("done"):
            return True
        return await self.count("done") > before.done

    async def bubble_texts(self) -> list[str]:
        answer = self.site.selectors["answer"]
        texts: list[str] | None = (await self.page.evaluate(_PAGE_BUBBLE_TEXTS, answer)
                                   if all(_is_css(s) for s in answer) else None)
        if texts is not None:
            return texts
        found = await self.first("answer")
        if found is None:
            return []
        return [t.strip() for t in await found.evaluate_all("els => els.map(e => e.innerText)")]

    async def new_range(self, before: TurnMarks) -> tuple[int, int]:
        """Where the new turn's answer elements start, and how many there are in all. Old
        answers are the ones still showing the text they had before the send: a page that
        re-renders its history (Streamlit drops a failed run's bubble) shifts the count. Only
        the last old one can be taken over that way: a changed older one is not this turn's."""
        texts = await self.bubble_texts()
        first_new = 0
        for old, now in zip(before.answer_texts, texts, strict=False):
            if old != now:
                break
            first_new += 1
        return max(first_new, before.answers - 1, 0), len(texts)

    async def new_bubbles(self, before: TurnMarks) -> list[Locator]:
        """The answer elements of the new turn (an answer may be split over several)."""
        found = await self.first("answer")
        if found is None:
            return []
        first_new, total = await self.new_range(before)
        return [found.nth(i) for i in range(first_new, total)]

    async def turn_texts(self, before: TurnMarks) -> list[str]:
        return [(await bubble.inner_text()).strip() for bubble in await self.new_bubbles(before)]

    async def answer_of_turn(self, before: TurnMarks) -> str:
        """The new turn's answer the way the profile says to read it, bubbles joined by a blank line."""
        if self.site.answer_text == "copy_button":
            copied = await self._copied_texts(before)
            if copied:
                return "\n\n".join(copied)
            self.log(msg("the copy button gave no text; reading the answer from the page instead"))
        bubbles = await self.new_bubbles(before)
        attribute = self.site.answer_attribute
        parts: list[str] = []
        for bubble in bubbles:
            value = await bubble.get_attribute(attribute) if attribute else None
            if value is None and self.site.answer_format == "markdown":
                value = html_to_markdown(await bubble.inner_html())
            elif value is None:
                value = await bubble.inner_text()
            parts.append(value.strip())
        return "\n\n".join(p for p in parts if p)

    async def _copied_texts(self, before: TurnMarks) -> list[str]:
        found = await self.first("copy")
        if found is None:
            return []
        await self.page.evaluate(_CAPTURE_CLIPBOARD)
        texts: list[str] = []
        for i in range(before.copies, await found.count()):
            try:
                await found.nth(i).click(timeout=CLICK_TIMEOUT_MS)
            except PlaywrightError as exc:
                self.log(msg("copy button {n} could not be clicked ({error})", n=i + 1, error=first_line(exc)))
                continue
            copied = await self.page.evaluate("() => window.__maCopied.splice(0)")
            texts += [t.strip() for t in copied[-1:] if t.strip()]
        return texts

    # --- stopping and recovering ------------------------------------------------------------
    async def stop(self) -> bool:
        """Click the stop control if one is showing (never a mere generating indicator)."""
        for selector in self.site.selectors.get("stop", []):
            button = self.page.locator(selector).filter(visible=True)
            if await button.count():
                try:
                    await button.first.click(timeout=2_000)
                except PlaywrightError as exc:
                    self.log(msg("the stop button could not be clicked ({error})", error=first_line(exc)))
                    return False
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
        await self.dismiss_popups()
        await self.stop()
        while await self.visible("generating"):
            if loop.time() > deadline:
                return "still_generating"
            await asyncio.sleep(0.1)
        return "stopped"

    # --- images ---------------------------------------------------------------------------
    async def save_images(self, before: TurnMarks, folder_for: Callable[[], Path]) -> list[str]:
        """Images shown in the new turn, fetched with the page's own cookies into the output dir."""
        selector = ", ".join(self.site.selectors.get("answer_images", ["img"]))
        sources: list[str] = []
        for bubble in await self.new_bubbles(before):
            sources += await bubble.locator(selector).evaluate_all("els => els.map(e => e.currentSrc || e.src)")
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
                self.log(msg("image {src} could not be fetched (HTTP {status})", src=src, status=response.status))
                return None
            ext = mimetypes.guess_extension(response.headers.get("content-type", "").split(";")[0]) or ".bin"
            path = folder_for() / f"image-{number}{ext}"
            path.write_bytes(await response.body())
            return path
        finally:
            await response.dispose()


async def _box_text(box: Locator) -> str:
    return str(await box.evaluate("e => e.isContentEditable ? e.innerText : ('value' in e ? e.value : e.innerText)"))


def _same(landed: str, wanted: str, rich: bool = False) -> bool:
    """Equal up to line endings and edge whitespace; a rich-text editor also renders its own
    paragraph and line breaks (often twice), so there only the words and their order count."""
    def norm(text: str) -> str:
        text = text.replace("\r\n", "\n").replace("\u00a0", " ").replace("\u200b", "").strip()
        return " ".join(text.split()) if rich else text
    return norm(landed) == norm(wanted)


def _is_css(selector: str) -> bool:
    """Playwright's own engines (``text=``, ``xpath=``, ``>>`` chains, ``:has-text``) are not CSS."""
    return not re.search(r"^\w+=|>>|:has-text|:text|:visible|:nth-match", selector)


def _squash(text: str) -> str:
    """A toast's text on one line, without its close mark."""
    return " ".join(word for word in text.split() if word not in ("×", "✕", "✖"))


def first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
