"""The one generic driver: runs any site profile on a page.

Per generation: bring the chat page up the profile's way (reload, New chat, or stay), clear
pop-ups, check the login state, refuse on a rate-limit banner, attach files, enter the prompt and
read it back, send, see the turn start, then wait until the generating indicator is gone, the done
marker has been seen in the new turn for several polls and the turn's text has settled -- "stop
gone + text stable" alone would accept a settled preamble. An error the page shows during or
after the turn fails the attempt: it is never an answer -- with no ``error`` role too (or beside
a learned one), by the generic rule (a new alert or toast; error-like words once the answer
stops growing), searching open shadow roots. The prompt goes in the profile's way
(``prompt_entry``) and is read back exactly; one the page cannot hold verbatim is never sent.
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
from mediaassist.core.messages import Message, each_of, msg
from mediaassist.providers.web.markdown import html_to_markdown
from mediaassist.providers.web.site import PROMPT_ENTRIES, SiteProfile

DEFAULT_BANNERS = ["[role=alert]", "[role=status]", "[aria-live]"]  # looked at only outside the answers
# The generic error rule, for a profile with no ``error`` role or beside a learned one
# (``generic_errors``): an alert or toast that was not on the page before the send fails the
# turn; so does a dialog, or a short text outside the answers, that reads like an error (once
# the answer has stopped growing: the answer may be mid-sentence).
ALERT_SELECTORS = ("[role=alert], [role=alertdialog], [aria-live=assertive], [class*=toast i], "
                   "[data-testid*=toast i], [class*=snackbar i], [data-sonner-toast]")
DIALOG_SELECTORS = "[role=dialog], dialog[open], [aria-modal=true]"
ERROR_LIKE = re.compile(r"error|failed|failure|went wrong|try again|timed out|unavailable|exception|"
                        r"出错|错误|失败|网络异常|请重试|重试|异常|超时|服务繁忙", re.IGNORECASE)
ANSWER_QUIET_MS = 1500  # an answer unchanged this long has stopped growing (for error-like texts)
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
# Everything one poll judges the page by, in one round trip (each round trip waits its turn on a
# busy event loop), searching open shadow roots too: the profile's error elements; banners (the
# default ones only outside the answers -- a live region may wrap the whole transcript, and an
# answer that mentions "rate limit" is no banner); the answers' texts and how long they have not
# grown. With ``generic`` (``SiteProfile.uses_generic_errors``): the outermost alerts and toasts,
# dialogs with error-like text, and short error-like texts outside the answers and the prompt box
# that are not the operator's own prompt. ``complete`` is false when a selector was not CSS (the
# Python side then reads the profile's roles with Playwright).
_PAGE_SIGNALS = r"""(o) => {
  const roots = [document];
  for (let i = 0; i < roots.length; i++)
    for (const el of roots[i].querySelectorAll('*')) if (el.shadowRoot) roots.push(el.shadowRoot);
  let complete = true;
  const all = (s) => { try { return roots.flatMap((r) => [...r.querySelectorAll(s)]); }
                       catch (e) { complete = false; return []; } };
  const firstFound = (selectors) => {
    for (const s of selectors) { const f = all(s); if (f.length) return f; }
    return []; };
  const shown = (el) => { const box = el.getBoundingClientRect();  // Playwright's "visible"
    return box.width > 0 && box.height > 0 && getComputedStyle(el).visibility !== 'hidden'; };
  const up = (el) => el.parentElement || (el.parentNode && el.parentNode.host) || null;
  const under = (el, set) => { for (let e = el; e; e = up(e)) if (set.has(e)) return true; return false; };
  const text = (el) => (el.innerText || el.textContent || '').trim();
  const answers = firstFound(o.answer), answerSet = new Set(answers);
  const holds = (el, els) => els.some((a) => {
    for (let e = a; e; e = up(e)) if (e === el) return true;
    return false; });
  const outside = (el) => !under(el, answerSet) && !holds(el, answers);
  const errors = [];
  for (const s of o.errors) {
    const found = all(s).filter(shown);
    if (found.length) { errors.push(...found.map(text)); break; } }
  const banners = o.banners.flatMap((s) => all(s).filter((el) => shown(el) && (!o.bannersOutside || outside(el))))
    .map(text).filter((t) => t);
  const out = {complete, errors, banners, alerts: [], errorish: [], answers: answers.map(text), quietMs: 0};
  const joined = out.answers.join('\n'), now = performance.now();
  if (!window.__maGrowth || window.__maGrowth.text !== joined) window.__maGrowth = {text: joined, at: now};
  out.quietMs = now - window.__maGrowth.at;
  if (!o.generic) return out;
  const errorLike = new RegExp(o.errorPattern, 'i');
  const lines = o.prompt.split('\n').map((l) => l.trim()).filter((l) => l).sort((a, b) => b.length - a.length);
  const notPrompt = (t) => lines.reduce((rest, line) => rest.split(line).join(' '), t);
  const alerts = all(o.alerts).filter(shown), alertSet = new Set(alerts);
  out.alerts = alerts.filter((el) => !under(up(el), alertSet)).map(text).filter((t) => t);
  out.alerts.push(...all(o.dialogs).filter((el) => shown(el) && !under(el, alertSet)).map(text)
    .filter((t) => errorLike.test(notPrompt(t))));
  const composer = firstFound(o.promptBox), composerSet = new Set(composer), seen = new Set();
  for (const root of roots) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      let el = node.parentElement;
      if (!errorLike.test(node.data) || !el || /^(SCRIPT|STYLE|NOSCRIPT|TEMPLATE|TEXTAREA|OPTION)$/.test(el.tagName))
        continue;
      // the whole message: the largest short element around the words (in its own shadow root)
      for (let p = el.parentElement; p && p !== document.body && (p.textContent || '').length <= 200
           && !holds(p, answers); p = p.parentElement) el = p;
      if (seen.has(el)) continue;
      seen.add(el);
      if (!shown(el) || !outside(el) || under(el, alertSet) || holds(el, composer) || under(el, composerSet)) continue;
      const t = text(el);
      if (t && t.length <= 300 && errorLike.test(notPrompt(t))) out.errorish.push(t);
    }
  }
  return out;
}"""
_PAGE_BUBBLE_TEXTS = """(selectors) => {
  try {
    for (const s of selectors) { const found = document.querySelectorAll(s);
      if (found.length) return [...found].map((e) => e.innerText.trim()); }
    return [];
  } catch (e) { return null; }
}"""
# The prompt box's text as the site reads it: a textarea's value; in a rich-text editor, blocks
# one per line and <br> a line break, but not the break an editor keeps at a block's end so
# the caret has a line to stand on (innerText would add blank lines around paragraphs).
_READ_BACK = r"""(e) => {
  if (!e.isContentEditable) return 'value' in e ? e.value : e.innerText;
  const blockTags = /^(P|DIV|LI|H[1-6]|PRE|BLOCKQUOTE|UL|OL|TABLE|TR|SECTION|ARTICLE)$/;
  const isBlock = (n) => n.nodeType === 1 && blockTags.test(n.tagName);
  const isContent = (n) => n.nodeType === 1 || (n.nodeType === 3 && n.data !== '');
  const trailing = (br) => { let next = br.nextSibling; while (next && !isContent(next)) next = next.nextSibling;
    return !next || br.classList.contains('ProseMirror-trailingBreak'); };
  const walk = (n) => {
    if (n.nodeType === 3) return n.data;
    if (n.nodeType !== 1) return '';
    if (n.tagName === 'BR') return trailing(n) ? '' : '\n';
    const kids = [...n.childNodes], blocks = kids.some(isBlock);
    const parts = kids.filter((c) => !(blocks && c.nodeType === 3 && !c.data.trim())).map((c) => [walk(c), isBlock(c)]);
    return parts.map(([t, block], i) => (i && (block || parts[i - 1][1]) ? '\n' : '') + t).join('');
  };
  return walk(e);
}"""
# The page's own paste path, never the OS clipboard (shared by every browser on the machine):
# a synthetic paste event carrying the text; true when the page took it (prevented the default).
_PASTE = """(e, text) => {
  e.focus();
  const data = new DataTransfer();
  data.setData('text/plain', text);
  return !e.dispatchEvent(new ClipboardEvent('paste', {clipboardData: data, bubbles: true, cancelable: true}));
}"""
RICH_ENTRIES = ("type", "paste", "fill")  # tried in turn when the profile names no prompt_entry
PLAIN_ENTRIES = ("fill", "type")
SETTLE_WAIT_MS = 500  # how long one in-page wait runs before the page is checked for errors again
SETTLE_POLL_MS = 25


class ClickIntercepted(Exception):
    """A click that kept landing on another element (a modal, a banner) until it timed out."""

    def __init__(self, role: str, cover: str) -> None:
        super().__init__(f"clicks on the {role} are intercepted by {cover}")
        self.role = role
        self.cover = cover


@dataclass
class PageSignals:
    """One read of the page (``SiteDriver.signals``)."""

    errors: list[str]
    banners: list[str]
    alerts: list[str]
    errorish: list[str]
    answers: list[str]
    quiet_ms: float


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
        self.prompt = ""  # the prompt last entered (its own words are no error the page shows)

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

    async def signals(self) -> PageSignals:
        """The page's errors, banners, alerts and answers, read in one round trip."""
        has_banner = self.site.has("banner")
        arg = {"errors": self._selectors("error"), "banners": self.site.selectors.get("banner", DEFAULT_BANNERS),
               "bannersOutside": not has_banner, "answer": self.site.selectors["answer"],
               "generic": self.site.uses_generic_errors, "alerts": ALERT_SELECTORS, "dialogs": DIALOG_SELECTORS,
               "errorPattern": ERROR_LIKE.pattern, "prompt": self.prompt, "promptBox": self._selectors("prompt")}
        seen = await self.page.evaluate(_PAGE_SIGNALS, arg)
        signals = PageSignals(seen["errors"], seen["banners"], seen["alerts"], seen["errorish"], seen["answers"],
                              float(seen["quietMs"]))
        if not seen["complete"]:  # a Playwright-only selector among the roles: read those with Playwright
            signals.errors = await self.visible_texts("error")
            signals.banners = await self._banner_texts_by_locator() if has_banner else signals.banners
        return signals

    async def _banner_texts_by_locator(self) -> list[str]:
        texts = []
        for selector in self.site.selectors["banner"]:
            texts += [t.strip() for t in await self.page.locator(selector).filter(visible=True).all_inner_texts()]
        return [t for t in texts if t]

    async def check_banners(self, signals: PageSignals | None = None) -> None:
        """A visible rate-limit banner is ``quota``; a "still generating" one is ``provider``."""
        for text in (signals or await self.signals()).banners:
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
        """What the page shows as an error (see ``errors_of``)."""
        return self.errors_of(await self.signals())

    def errors_of(self, signals: PageSignals) -> Counter[str]:
        """``error`` elements, and banners or toasts carrying one of the ``error_texts``; by the
        generic rule (no ``error`` role, or a learned one beside it), also every alert or toast,
        and error-like texts (see ``check_errors``) -- but not the named ones again: the alert
        around a learned error box, or the text inside it, is the same error."""
        found = self._named_errors(signals)
        named = list(found)
        found.update(t for t in [*self._alerts(signals), *self._errorish(signals)]
                     if not any(t in n or n in t for n in named))
        return found

    def _named_errors(self, signals: PageSignals) -> Counter[str]:
        """The errors the profile names: ``error`` elements, banners with one of ``error_texts``."""
        found = Counter(_squash(t) or "(an error with no text)" for t in signals.errors)
        found.update(_squash(t) for t in signals.banners if any(m in t.lower() for m in self.site.error_texts))
        return found

    def _alerts(self, signals: PageSignals) -> list[str]:
        return [_squash(t) for t in signals.alerts]

    def _errorish(self, signals: PageSignals) -> list[str]:
        alerts = self._alerts(signals)
        return [t for t in map(_squash, signals.errorish) if not any(t in alert for alert in alerts)]

    def check_errors(self, before: Counter[str], signals: PageSignals, answer_stopped: bool = False) -> None:
        """An error that was not on the page before the send fails the attempt as ``provider``;
        an error-like text only once the answers have stopped growing (``answer_stopped``, or
        unchanged for ``ANSWER_QUIET_MS``): a streaming answer may be mid-sentence. ``before``
        is narrowed to the old errors still showing: one that went away and comes back (a page
        re-rendering its history) is new again."""
        now = self.errors_of(signals)
        before &= now
        new = now - before
        if not (answer_stopped or signals.quiet_ms >= ANSWER_QUIET_MS):
            new -= Counter(self._errorish(signals))
        if new:
            self.failed_on_page_error = True
            raise TaskError(ErrorKind.PROVIDER, msg("{site} showed an error: {detail}",
                                                    site=self.site.name, detail=" | ".join(new)[:300]))

    def check_answer_errors(self, before: TurnMarks, answers: list[str]) -> None:
        """An answer bubble of the new turn whose text, or its last line, starts with one of the
        profile's ``error_texts_in_answer``: an error the page drew inside the answer."""
        for text in answers[_first_new(before, answers):]:
            last_line = text.strip().rsplit("\n", 1)[-1].strip()
            for marker in self.site.error_texts_in_answer:
                for shown in (text.strip(), last_line):
                    if shown.lower().startswith(marker):
                        self.failed_on_page_error = True
                        raise TaskError(ErrorKind.PROVIDER, msg("{site} showed an error: {detail}",
                                                                site=self.site.name, detail=_squash(shown)[:300]))

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
        """Enter the prompt the profile's way (``prompt_entry``; unset: each way in turn, the first
        that reads back exact wins) and read it back. A prompt the page does not hold exactly as
        written (edge whitespace aside) is refused before sending, naming the difference."""
        found = await self.first("prompt")
        if found is None:
            raise TaskError(ErrorKind.PROVIDER, msg("{site}: prompt box not found", site=self.site.name))
        box = found.first
        await self.click("prompt box", box)
        self.prompt = text
        rich = bool(await box.evaluate("e => e.isContentEditable"))
        ways = [self.site.prompt_entry] if self.site.prompt_entry else list(RICH_ENTRIES if rich else PLAIN_ENTRIES)
        differences: list[Message] = []
        for way in ways:
            await self._clear(box)
            await self._enter(way, box, text, rich)
            difference = prompt_difference(await read_back(box), text)
            if difference is None:
                if differences:
                    self.log(msg("prompt entered by {way} ({detail})", way=way, detail=each_of(differences)))
                return
            differences.append(msg("{way}: {difference}", way=way, difference=difference))
        await self._clear(box)
        raise TaskError(ErrorKind.PROVIDER, msg("{site}: the prompt cannot be entered verbatim, not sent ({detail}); "
                                                "try another prompt_entry ({ways})", site=self.site.name,
                                                detail=each_of(differences), ways=", ".join(PROMPT_ENTRIES)))

    async def _enter(self, way: str, box: Locator, text: str, rich: bool) -> None:
        text = text.replace("\r\n", "\n")
        if way == "fill":
            await box.fill(text)
        elif way == "paste":
            if not await box.evaluate(_PASTE, text):  # the page did not take it: a real paste's default
                await self.page.keyboard.insert_text(text)
        elif rich:
            await self._type_lines(text)
        else:
            await self.page.keyboard.insert_text(text)

    async def _type_lines(self, text: str) -> None:
        """A rich-text editor (ProseMirror, Lexical, Quill...): inserted line by line with the
        site's line-break chord between, as a person types it -- a raw newline in inserted
        text means something different in each editor, and Enter may send."""
        for number, line in enumerate(text.split("\n")):
            if number:
                await self.page.keyboard.press(self.site.line_break)
            if line:
                await self.page.keyboard.insert_text(line)

    async def clear_prompt(self) -> None:
        found = await self.first("prompt")
        if found is not None:
            await self._clear(found.first)

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
            await self._check_turn(baseline_errors, before)
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
                                                         seconds=format(rule.start_timeout_s, ".0f")), before)
            if started:
                ended_without_answer = ended_without_answer + 1 if not generating and answers <= first_new else 0
                if ended_without_answer >= max(2, rule.done_polls) and await self._ended_errors(before):
                    # The turn ran and ended with no new answer, the page showing an error: that
                    # error is the verdict, even when it reads like the one before the send
                    # (a page that re-runs a failed turn shows the same box again).
                    raise await self._ended_in_error(msg("the turn ended without an answer"), before)
                if in_page:
                    if await self._settled_in_page(before, min(SETTLE_WAIT_MS, (deadline - loop.time()) * 1000)):
                        # an error in its last moments, or drawn in the answer, still counts
                        await self._check_turn(baseline_errors, before, answer_stopped=True)
                        return
                else:
                    now_text = "\n".join(await self.turn_texts(before))
                    if now_text != text:
                        text, stable_since = now_text, loop.time()
                    done_polls = done_polls + 1 if not generating and await self._done_seen(before) else 0
                    stable_ms = (loop.time() - stable_since) * 1000
                    if done_polls >= max(1, rule.done_polls) and stable_ms >= rule.stable_ms and answers > first_new:
                        await self._check_turn(baseline_errors, before, answer_stopped=True)
                        return
            if loop.time() > deadline:
                raise TaskError(ErrorKind.TIMEOUT, msg("no complete answer within {seconds} s",
                                                       seconds=format(rule.timeout_s, ".0f")))
            if not (started and in_page):  # the in-page wait was the pause
                await asyncio.sleep(rule.poll_ms / 1000)

    async def _check_turn(self, baseline_errors: Counter[str], before: TurnMarks, answer_stopped: bool = False) -> None:
        """What fails a turn on any poll: pop-ups cleared first, then banners, new errors (an
        error drawn in the answer once it has stopped growing), a logout."""
        await self.dismiss_popups()
        signals = await self.signals()
        await self.check_banners(signals)
        self.check_errors(baseline_errors, signals, answer_stopped)
        if answer_stopped or signals.quiet_ms >= ANSWER_QUIET_MS:
            self.check_answer_errors(before, signals.answers)
        if await self.visible("logged_out"):
            raise TaskError(ErrorKind.LOGIN, msg("{site} logged the account out during the answer",
                                                 site=self.site.name))

    async def _ended_errors(self, before: TurnMarks) -> Counter[str]:
        """The errors a turn that ended without an answer shows: every one the profile names (a
        page that re-runs a failed turn shows the same box again), but of the generic rule's only
        the new ones (a sidebar entry that reads like an error is not this turn's)."""
        signals = await self.signals()
        named = self._named_errors(signals)
        return named + (self.errors_of(signals) - named - before.errors)

    async def _ended_in_error(self, what: Message, before: TurnMarks) -> TaskError:
        """A turn that ended without an answer: the page's visible error is the reason, if it shows one."""
        shown = " | ".join(await self._ended_errors(before))[:300]
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
        return _first_new(before, texts), len(texts)

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


async def read_back(box: Locator) -> str:
    return str(await box.evaluate(_READ_BACK))


def prompt_difference(landed: str, wanted: str) -> Message | None:
    """None when the box holds the prompt exactly (line endings, edge whitespace and zero-width
    spaces aside); else where and how it differs, in the prompt's lines and columns."""
    def canonical(text: str) -> str:
        return text.replace("\r\n", "\n").replace("\u200b", "").replace("\ufeff", "").strip()
    got, want = canonical(landed), canonical(wanted)
    if got == want:
        return None
    at = next((i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b), min(len(got), len(want)))
    line = want.count("\n", 0, at) + 1
    column = at - (want.rfind("\n", 0, at) + 1) + 1
    return msg("at line {line}, column {column} the page holds {got} where the prompt has {wanted} ({n} of {total} "
               "characters)", line=line, column=column, got=repr(got[at:at + 12]), wanted=repr(want[at:at + 12]),
               n=len(got), total=len(want))


def _first_new(before: TurnMarks, texts: list[str]) -> int:
    """The index of the new turn's first answer element among ``texts`` (see ``new_range``)."""
    first_new = 0
    for old, now in zip(before.answer_texts, texts, strict=False):
        if old != now:
            break
        first_new += 1
    return max(first_new, before.answers - 1, 0)


def _is_css(selector: str) -> bool:
    """Playwright's own engines (``text=``, ``xpath=``, ``>>`` chains, ``:has-text``) are not CSS."""
    return not re.search(r"^\w+=|>>|:has-text|:text|:visible|:nth-match", selector)


def _squash(text: str) -> str:
    """A toast's text on one line, without its close mark."""
    return " ".join(word for word in text.split() if word not in ("×", "✕", "✖"))


def first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
