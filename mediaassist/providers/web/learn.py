"""``mediaassist sites learn URL``: a site profile written from an operator's three clicks.

The page opens headed in an account's profile. The operator clicks the prompt box (a test prompt
is typed into it), then the send button (which sends it), then the finished answer. Every click
is captured in the page and turned into robust selectors -- ``data-testid``, ``aria-label``, a
stable id, ``role``/``name``/``placeholder``, then stable classes; never positional chains,
generated class names, or state classes (``is-empty``, ``focused``, ``ProseMirror-*``...) that an
element loses once text is typed or the pointer moves. A click inside a rich-text editor means its
editable root. A click on a control inside a pop-up (a dialog with no form) is the optional
fourth click: the ``dismiss`` button. A MutationObserver installed before the send records every
element that shows during the test turn (hover artefacts -- tooltips, popovers -- left out), with
when it showed and whether it was gone at the end: what came after the send and was gone when the
answer was done is the generating indicator (a stop button when it is one); what appeared as the
answer ended and stayed is the done marker.

Then every learned selector is checked where it must work: the prompt box with text in it (each
of type, paste and fill is tried; the first that reads back exact is ``prompt_entry``), the
logged-in marker with a draft, a second test turn run by the learned profile itself, end to end,
and a reload (one that loses the login means ``navigation = "stay"``). A fresh private browser
(no cookies) shows where a logged-out person lands: ``login_url`` and its password box. With
``error_turn``, a last, optional turn is one the operator makes fail (stops the service, or sends a
prompt the site refuses): the alert, toast or dialog it shows -- one that was on the page neither
before that send nor at any time of the good turns -- is the ``error`` role, beside the driver's
generic rule (``generic_errors = true``: an error shown another way still fails a task); without
it, or when none shows, the generic rule alone applies. The profile is written, then checked with
``sites check``. ``operator`` plays the person in tests (the clicks are then driven by
Playwright).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page, async_playwright
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from mediaassist.core import paths
from mediaassist.core.clock import Clock
from mediaassist.core.config import AppConfig
from mediaassist.core.errors import ConfigError, ErrorKind, TaskError
from mediaassist.core.messages import Message, each_of, msg
from mediaassist.providers.web.browser import BrowserRuntime, find_chromium
from mediaassist.providers.web.driver import ALERT_SELECTORS, SiteDriver
from mediaassist.providers.web.site import PROMPT_ENTRIES, SiteProfile, parse_site
from mediaassist.providers.web.tools import SiteCheckReport, check_site, no_display_message, with_browser

if TYPE_CHECKING:
    from mediaassist.core.lane_store import LaneStore

# A prompt that asks for a long answer (~1,000 characters, on any site): a turn that ends within
# half a second may show no indicator at all -- Streamlit shows its "running" widget only once
# the script has run for about 0.5 s, so a one-line answer caught it one run in two.
TEST_PROMPT = ("Please repeat this list back, one item per line: "
               + ", ".join(f"item {number}" for number in range(1, 121)))
# Read back after each way of entering it: a blank line, Chinese and an emoji (what editors mangle).
ENTRY_TEST = "mediaassist test\n\nsecond paragraph 第二段 😀\n  indented line"
ERROR_TEST_PROMPT = "mediaassist error test"  # what the failing turn sends unless the operator replaces it
MAX_ERROR_SELECTORS = 2
SECOND_PROMPT = ("Please repeat these words back, one per line: "
                 + ", ".join(f"word {number}" for number in range(1, 81)))
CLICK_WAIT_S = 300.0
WATCH_POLL_S = 0.1
MAX_GENERATING = 3
MIN_EXTENSION_S = 0.25  # a flicker just before or after the main indicator adds nothing
STEPS = {"prompt": "click the prompt box (log in first if the site asks; close a pop-up with its own close "
                   "button, that click is learned too)",
         "send": "click the send button (this sends a test prompt asking for a long answer)",
         "answer": "when the answer has finished, click on the answer text",
         "login": "log in again (the reload logged out)",
         "error": "make a turn fail now: stop the chat service, or replace the test prompt in the box with one the "
                  "site refuses; then send it (learn waits for the error the page shows)"}
Operator = Callable[[str, Page], Awaitable[None]]
Chain = list[dict[str, Any]]  # the clicked element, then its ancestors: {tag, selectors, editable, control}

# In the page: remember what the operator clicks, and describe elements by robust selectors.
PASSWORD_BOX = 'input[type="password"]'
# What follows the pointer (tooltips, popovers): never an indicator of anything.
ARTEFACTS = ("[role=tooltip], [class*=tooltip i], [class*=popover i], [data-radix-popper-content-wrapper], "
             "[data-tippy-root]")
POPUPS = "[role=dialog], [role=alertdialog], dialog, [aria-modal=true]"
# What an error the page shows looks like: an alert, toast or dialog, or a selector that says so.
ERROR_ELEMENTS = f"{ALERT_SELECTORS}, {POPUPS}"
ERROR_WORDS = r"error|exception|alert|toast|snackbar|danger"
_PAGE_SCRIPT = (r"""() => {
  if (window.__maLearn) return;
  const q = (v) => JSON.stringify(v);
  const generated = /^(svelte|css|st-emotion|sc|jsx|emotion|tw|_)-|[0-9]{3,}|^[a-z]{1,3}[0-9]|__|--/;
  // what an element is now, not what it is: gone as soon as text is typed, the pointer moves...
  const state = new RegExp('^(is|has)-|^ProseMirror-|empty|focus|active|hover|selected|checked|disabled|' +
                           'expanded|collapsed|open|closed|loading', 'i');
  const ARTEFACTS = ARTEFACT_SELECTORS, POPUPS = POPUP_SELECTORS, ERRORS = ERROR_SELECTORS;
  const errorWords = new RegExp(ERROR_WORDS, 'i');
  const candidates = (el, verify = true) => {
    const tag = el.tagName.toLowerCase(), out = [];
    const attr = (name) => el.getAttribute(name);
    if (attr('data-testid')) out.push(`${tag}[data-testid=${q(attr('data-testid'))}]`);
    if (attr('aria-label') && attr('aria-label').length <= 60) out.push(`${tag}[aria-label=${q(attr('aria-label'))}]`);
    if (el.id && !generated.test(el.id) && !/[:.]/.test(el.id)) out.push('#' + CSS.escape(el.id));
    for (const name of ['role', 'name', 'placeholder'])
      if (attr(name) && attr(name).length <= 60) out.push(`${tag}[${name}=${q(attr(name))}]`);
    const classes = [...el.classList].filter((c) => !generated.test(c) && !state.test(c) && c.length <= 30).slice(0, 2);
    if (classes.length) out.push(tag + classes.map((c) => '.' + CSS.escape(c)).join(''));
    if (!verify) return out;
    const matches = (s) => {
      try { return [...document.querySelectorAll(s)].includes(el); } catch (e) { return false; } };
    return out.filter(matches);
  };
  const visible = (el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';
  const passwordShown = () => [...document.querySelectorAll(PASSWORD_BOX)].some(visible);
  // Every element that shows after track(): when it first showed, when it was last seen showing,
  // and whether it is gone; checked on each batch of mutations (and every 50 ms, for changes
  // made by style sheets alone), so an indicator shown briefly between two polls is not missed.
  const track = () => {
    const t0 = performance.now(), seen = new Map(), live = new Set();
    const note = (el) => { if (el.nodeType !== 1 || seen.has(el)) return;
      seen.set(el, {first: null, last: null, gone: false, selectors: []}); live.add(el); };
    const scan = () => {
      const now = performance.now() - t0;
      for (const el of live) {
        const rec = seen.get(el), shows = el.isConnected && visible(el);
        if (shows) { if (rec.first === null) { rec.first = now;
                                               rec.selectors = el.closest(ARTEFACTS) ? [] : candidates(el); }
                     rec.last = now; rec.gone = false; }
        else if (rec.first !== null) { rec.gone = true; if (!el.isConnected) live.delete(el); }
      }
    };
    const noteTree = (el) => { note(el); if (el.querySelectorAll)
      [...el.querySelectorAll('*')].slice(0, 3000).forEach(note); };
    let lastChange = performance.now();
    const observer = new MutationObserver((records) => {
      lastChange = performance.now();
      for (const r of records) { noteTree(r.target); r.addedNodes.forEach(noteTree); }
      scan(); });
    observer.observe(document.body, {subtree: true, childList: true, attributes: true, characterData: true});
    const timer = setInterval(scan, 50);
    window.__maLearn.quietMs = () => performance.now() - lastChange;
    window.__maLearn.turn = () => { scan(); observer.disconnect(); clearInterval(timer);
      return [...seen.values()].filter((r) => r.first !== null && r.selectors.length); };
    // The outermost new alerts, toasts and dialogs that showed since track() and still show, with
    // text; "new": by a selector that matched nothing before (in ``baseline``, a census), which is
    // all that is kept of it. What is one by its role or kind comes first; then what only says so
    // in its class, id or test id (never in an aria-label: that may quote the prompt).
    window.__maLearn.errorsNow = (baseline) => { scan();
      const hits = [];
      for (const [el, r] of seen) {
        const fresh = r.selectors.filter((s) => !baseline[s]);
        if (r.first === null || r.gone || !fresh.length) continue;
        const kind = el.matches(ERRORS);
        const named = [el.id, el.getAttribute('data-testid') || '', ...el.classList].some((n) => errorWords.test(n));
        const text = (el.innerText || '').trim();  // an SVG element has none
        if ((kind || named) && text) hits.push({el, kind, selectors: fresh, text});
      }
      const hit = new Set(hits.map((h) => h.el));
      const outermost = (h) => { for (let p = h.el.parentElement; p; p = p.parentElement) if (hit.has(p)) return false;
                                 return true; };
      return hits.filter(outermost).sort((a, b) => b.kind - a.kind)
                 .map((h) => ({selectors: h.selectors, text: h.text})); };
  };
  window.__maLearn = {
    picked: null,
    loginSeen: false,
    track,
    candidates,
    // the clicked element and its ancestors, each with its selectors (the bubble may be a parent)
    describe: (el) => { const chain = []; for (let e = el; e && e !== document.body; e = e.parentElement)
      chain.push({tag: e.tagName.toLowerCase(), selectors: candidates(e), editable: e.isContentEditable ||
                  e.tagName === 'TEXTAREA' || e.tagName === 'INPUT',
                  root: (e.isContentEditable && !(e.parentElement && e.parentElement.isContentEditable)) ||
                  e.tagName === 'TEXTAREA' || e.tagName === 'INPUT',
                  control: ['BUTTON', 'A'].includes(e.tagName) || e.getAttribute('role') === 'button' ||
                  (e.tagName === 'INPUT' && ['submit', 'button'].includes(e.type))}); return chain; },
    census: () => { const counts = {}; for (const el of document.body.querySelectorAll('*')) {
      if (!visible(el)) continue;
      for (const s of candidates(el, false)) counts[s] = (counts[s] || 0) + 1; } return counts; },
  };
  setInterval(() => { window.__maLearn.loginSeen ||= passwordShown(); }, 100);
  document.addEventListener('pointerdown', (e) => {
    const popup = e.target.closest(POPUPS);
    const control = e.target.closest('button, a, [role=button]');
    if (popup && control && !popup.querySelector('input, textarea')) {
      window.__maLearn.dismiss = window.__maLearn.describe(control);
      return;
    }
    window.__maLearn.picked = window.__maLearn.describe(e.target);
    window.__maLearn.pickedElement = e.target;
  }, true);
}""".replace("PASSWORD_BOX", json.dumps(PASSWORD_BOX)).replace("ARTEFACT_SELECTORS", json.dumps(ARTEFACTS))
                .replace("POPUP_SELECTORS", json.dumps(POPUPS)).replace("ERROR_SELECTORS", json.dumps(ERROR_ELEMENTS))
                .replace("ERROR_WORDS", json.dumps(ERROR_WORDS)))
RELOAD_CHECK_MS = 15_000
QUIET_MS = 1_000
SETTLE_LIMIT_S = 10.0


@dataclass
class Shown:
    """An element that showed during the test turn (times in seconds after the tracking began)."""

    first: float
    last: float
    gone: bool
    selectors: list[str]


@dataclass
class Watch:
    """The test turn: visible-element counts per selector before the send and at the end, and
    every element that showed in between."""

    baseline: dict[str, int]
    at_end: dict[str, int]
    shown: list[Shown]

    def gained(self, selector: str) -> int:
        return self.at_end.get(selector, 0) - self.baseline.get(selector, 0)

    def appeared(self, selector: str) -> bool:
        return self.gained(selector) > 0 or any(selector in e.selectors for e in self.shown)

    def _idle_hidden(self, selector: str) -> bool:
        """Shown neither before the send nor at the end: fit to say "generating"."""
        return not self.baseline.get(selector, 0) and not self.at_end.get(selector, 0)

    def generating(self) -> tuple[list[str], float]:
        """The indicators: elements that showed after the send and were gone by the end, by a
        selector never visible while idle -- the longest-lived one first (a stop button, a status
        widget), then each one that covers a part of the turn the ones before did not (a skeleton
        while the answer renders after the app finished; under load it may outlive the widget);
        and when the last of them went."""
        chain: list[str] = []
        start, end = 0.0, 0.0
        for element in sorted((e for e in self.shown if e.gone), key=lambda e: e.first - e.last):
            selector = next((s for s in element.selectors if self._idle_hidden(s)), None)
            covers_more = max(start - element.first, element.last - end) >= MIN_EXTENSION_S
            if selector is None or selector in chain or (chain and not covers_more):
                continue
            start, end = (element.first, element.last) if not chain else (min(start, element.first),
                                                                          max(end, element.last))
            chain.append(selector)
            if len(chain) == MAX_GENERATING:
                break
        return chain, end

    def arrived_late(self, after: float) -> list[str]:
        """Selectors of elements that showed once the turn was ending (``after``) and stayed."""
        late = [s for e in self.shown if e.first >= after and not e.gone for s in e.selectors if self.gained(s) > 0]
        return list(dict.fromkeys(late))


@dataclass
class LearnResult:
    path: Path
    profile_text: str
    check: SiteCheckReport


async def learn_site(name: str, url: str, account: str, config: AppConfig, data_dir: Path, *,
                     headless: bool = False, operator: Operator | None = None, force: bool = False,
                     say: Callable[[str], None] = print, store: LaneStore | None = None,
                     error_turn: bool = False) -> LearnResult:
    """Learn a profile for the chat page at ``url`` and save it as ``<config dir>/sites/<name>.toml``;
    the login state its check sees is recorded on the account (when a store is given).
    ``error_turn``: end with a turn the operator makes fail, to learn the ``error`` role."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", name):
        raise ConfigError(msg("site name {name}: letters, digits, '.', '_' and '-' only", name=repr(name)))
    target = paths.config_dir() / "sites" / f"{name}.toml"
    if target.exists() and not force:
        raise ConfigError(msg("{target} exists; pass --force to replace it", target=target))
    learn_again = f"sites learn {url} --name {name} --account {account}"
    if not headless and (blocked := no_display_message(account, learn_again)):
        raise ConfigError(blocked)

    async def work(_runtime: BrowserRuntime, page: Page) -> str:
        await page.goto(url, wait_until="domcontentloaded")
        return await _learn_on_page(name, url, page, operator, say, config.app.chromium_path, error_turn=error_turn)

    text = await with_browser(account, config, data_dir, headless, work)
    parse_site(_toml_loads(text), target)  # what was learned must be a valid profile
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    say(f"wrote {target}; checking it now")
    report = await check_site(name, account, config, data_dir, store)
    return LearnResult(target, text, report)


def _toml_loads(text: str) -> dict[str, Any]:
    import tomllib
    return tomllib.loads(text)


@dataclass
class Learned:
    """What the clicks and the test turn taught, before it is written as a profile."""

    prompt: str
    send: str
    answer: str
    generating: list[str]
    done: str | None
    dismiss: str | None
    prompt_entry: str | None = None
    login_url: str | None = None
    logged_out: str | None = None
    stay: bool = False
    error: list[str] = field(default_factory=list)


async def _learn_on_page(name: str, url: str, page: Page, operator: Operator | None,
                         say: Callable[[str], None], chromium_path: str | None, *, error_turn: bool = False) -> str:
    await page.add_init_script(f"({_PAGE_SCRIPT})()")  # the login may navigate: every page gets it
    await page.evaluate(_PAGE_SCRIPT)
    prompt_chain = await _pick(page, "prompt", operator, say)
    has_login = bool(await page.evaluate("() => window.__maLearn.loginSeen"))
    dismiss_chain: Chain | None = await page.evaluate("() => window.__maLearn.dismiss || null")
    prompt = _choose(prompt_chain, root=True)
    await page.locator(prompt).first.click()
    await page.keyboard.insert_text(TEST_PROMPT)
    baseline = await page.evaluate("() => window.__maLearn.census()")
    await page.evaluate("() => window.__maLearn.track()")
    send_chain = await _pick(page, "send", operator, say)
    answer_chain = await _pick(page, "answer", operator, say)
    await _settle(page)
    shown = [Shown(e["first"] / 1000, e["last"] / 1000, e["gone"], e["selectors"])
             for e in await page.evaluate("() => window.__maLearn.turn()")]
    watch = Watch(baseline, await page.evaluate("() => window.__maLearn.census()"), shown)
    answer = await _answer_selector(page, answer_chain, watch)
    generating, ended = watch.generating()
    learned = Learned(prompt, _choose(send_chain, control=True), answer, generating,
                      await _done_selector(page, watch, ended, answer) if generating else None,
                      _choose(dismiss_chain, control=True) if dismiss_chain else None)
    if learned.dismiss:
        say(f"the pop-up's close button was learned as dismiss: {learned.dismiss}")
    learned.login_url, learned.logged_out = await _logged_out_view(url, prompt, chromium_path)
    if has_login and learned.login_url is None:
        learned.login_url, learned.logged_out = url, PASSWORD_BOX
    profile = parse_site(_toml_loads(_profile_text(name, url, learned)))
    learned.prompt_entry = await _exact_prompt_entry(profile, page, say)
    profile.prompt_entry = learned.prompt_entry
    await _second_turn(profile, page, say)
    learned.stay = await _login_lost_on_reload(page, prompt)
    if error_turn:  # last: the operator may stop the service for it
        learned.error = await _failing_turn(profile, page, watch, operator, say)
    return _profile_text(name, url, learned)


async def _failing_turn(profile: SiteProfile, page: Page, good_turn: Watch, operator: Operator | None,
                        say: Callable[[str], None]) -> list[str]:
    """The ``error`` role from a turn the operator makes fail: a selector of each alert, toast or
    dialog that showed after the send and stayed -- one matching nothing before that send nor at
    any time of the good test turn (a selector that also fits a healthy page would fail every
    task). Empty when none showed: the generic rule applies."""
    prompt_box = page.locator(profile.selectors["prompt"][0]).filter(visible=True)
    if not await prompt_box.count():  # a reload logged out (a page-session login)
        say(f"in the browser window, {STEPS['login']}")
        if operator is not None:
            await operator("login", page)
        try:
            await prompt_box.first.wait_for(timeout=CLICK_WAIT_S * 1000)
        except PlaywrightTimeoutError:
            say("no login within the time; no error role is learned (the generic rule applies)")
            return []
    await SiteDriver(profile, page, Clock(), lambda _line: None).enter_prompt(ERROR_TEST_PROMPT)
    baseline = await page.evaluate("() => window.__maLearn.census()")
    await page.evaluate("() => window.__maLearn.track()")
    say(f"optional last step, in the browser window: {STEPS['error']}")
    if operator is not None:
        await operator("error", page)
    shown = await _errors_shown(page, baseline)
    fits = [next((s for s in element["selectors"] if not good_turn.appeared(s) and not good_turn.baseline.get(s)),
                 None) for element in shown]
    learned = list(dict.fromkeys(s for s in fits if s))[:MAX_ERROR_SELECTORS]
    if learned:
        say(f"the failing turn showed {shown[0]['text'][:80]!r}: learned as error: {', '.join(learned)}")
    else:
        say("no alert, toast or dialog with a stable selector showed after the failing send; the generic rule "
            "applies (a new alert or toast, or error-like words, fails a task)")
    return learned


async def _errors_shown(page: Page, baseline: dict[str, int]) -> list[dict[str, Any]]:
    """The alerts, toasts and dialogs that showed since tracking began by selectors not in
    ``baseline``, once one has and the page has been quiet a moment (up to the wait for a click:
    the operator may be stopping a service)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + CLICK_WAIT_S
    while loop.time() < deadline:
        try:
            shown: list[dict[str, Any]] = await page.evaluate("(b) => window.__maLearn.errorsNow(b)", baseline)
            if shown and await page.evaluate("() => window.__maLearn.quietMs()") >= QUIET_MS:
                return shown
        except PlaywrightError:  # navigating (the page reconnects): the next poll reads it
            pass
        await asyncio.sleep(WATCH_POLL_S)
    return []


async def _logged_out_view(url: str, prompt: str, chromium_path: str | None) -> tuple[str | None, str | None]:
    """Open ``url`` in a fresh private browser (no cookies) as a logged-out person would: the
    login page it lands on (``login_url``) and the password box there (``logged_out``); (None,
    None) when the chat shows without a login."""
    async with async_playwright() as playwright:
        try:
            browser = await playwright.chromium.launch(executable_path=find_chromium(chromium_path), headless=True)
        except PlaywrightError:  # no second browser here: the password box seen while learning decides
            return None, None
        try:
            page = await browser.new_page()
            try:
                await page.goto(url, wait_until="domcontentloaded")
            except PlaywrightError:
                return None, None
            either = page.locator(f"{prompt}, {PASSWORD_BOX}").filter(visible=True)
            try:
                await either.first.wait_for(timeout=RELOAD_CHECK_MS)
            except PlaywrightTimeoutError:
                return page.url, None  # neither: the logged-in marker's absence says logged out
            if await page.locator(PASSWORD_BOX).filter(visible=True).count():
                return page.url, PASSWORD_BOX
            return None, None
        finally:
            await browser.close()


async def _exact_prompt_entry(profile: SiteProfile, page: Page, say: Callable[[str], None]) -> str:
    """The first of type, paste and fill that puts a multi-line prompt (a blank line, Chinese,
    an emoji) into the learned prompt box exactly; the box is left empty."""
    driver = SiteDriver(profile, page, Clock(), lambda _line: None)
    problems: list[Message] = []
    for way in PROMPT_ENTRIES:
        profile.prompt_entry = way
        try:
            await driver.enter_prompt(ENTRY_TEST)
        except TaskError as exc:
            problems.append(exc.message)
            continue
        if not await driver.visible("logged_in"):
            raise TaskError(ErrorKind.PROVIDER, msg("the prompt box's selector no longer matches once text is typed "
                                                    "({selector}); redo the click on the prompt box",
                                                    selector=profile.selectors["prompt"][0]), retry=False)
        await driver.clear_prompt()
        say(f"prompts go in by {way} (read back exact)")
        return way
    raise TaskError(ErrorKind.PROVIDER, msg("no way of entering a prompt reads back exact in the learned prompt box: "
                                            "{problems}", problems=each_of(problems)), retry=False)


async def _second_turn(profile: SiteProfile, page: Page, say: Callable[[str], None]) -> None:
    """The learned profile runs a test turn of its own, end to end, before it is saved; an
    indicator that never shows in it is reported."""
    driver = SiteDriver(profile, page, Clock(), lambda _line: None)
    seen_generating = False
    try:
        await driver.dismiss_popups()  # on the page as the first turn left it: a reload may log out
        if await driver.login_state() != "ok":
            raise TaskError(ErrorKind.LOGIN, msg("the page shows it is logged out"), retry=False)
        await driver.enter_prompt(SECOND_PROMPT)
        before = await driver.marks()
        await driver.send()
        waiting = asyncio.ensure_future(driver.wait_answer(before))
        while not waiting.done():
            seen_generating = seen_generating or await driver.visible("generating") > 0
            await asyncio.wait([waiting], timeout=WATCH_POLL_S)
        answer = waiting.result()
    except TaskError as exc:
        raise TaskError(ErrorKind.PROVIDER, msg("the learned profile's own test turn failed: {reason}; run sites learn "
                                                "again (click the prompt box itself, the send button, then the "
                                                "finished answer's text)", reason=exc.message), retry=False) from None
    if not answer:
        raise TaskError(ErrorKind.PROVIDER, msg("the learned profile's own test turn read an empty answer; redo the "
                                                "click on the answer (on its text, once it has finished)"),
                        retry=False)
    if profile.generating_selectors and not seen_generating:
        say(f"note: the generating indicator {profile.generating_selectors[0]} did not show in the second test turn")
    say(f"the learned profile ran a test turn of its own ({len(answer)} characters answered)")


async def _settle(page: Page) -> None:
    """Wait until the page has not changed for a moment (up to a limit: some pages animate for
    ever): the answer may be clicked while it still renders -- an indicator still showing then
    would not count as one that went."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + SETTLE_LIMIT_S
    while loop.time() < deadline and await page.evaluate("() => window.__maLearn.quietMs()") < QUIET_MS:
        await asyncio.sleep(WATCH_POLL_S)


async def _login_lost_on_reload(page: Page, prompt: str) -> bool:
    """Reload the page: True when the prompt box does not come back (a password box or nothing
    instead) -- the site keeps the login in the page session, so tasks must not reload."""
    await page.reload(wait_until="domcontentloaded")
    either = page.locator(f"{prompt}, {PASSWORD_BOX}").filter(visible=True)
    try:
        await either.first.wait_for(timeout=RELOAD_CHECK_MS)
    except PlaywrightTimeoutError:
        return True
    return not await page.locator(prompt).filter(visible=True).count()


async def _pick(page: Page, step: str, operator: Operator | None, say: Callable[[str], None]) -> Chain:
    """Wait for the operator's click for ``step``; the clicked element and its ancestors."""
    await page.evaluate("() => { window.__maLearn.picked = null; }")  # the page is idle between steps
    say(f"in the browser window, {STEPS[step]}")
    if operator is not None:
        await operator(step, page)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + CLICK_WAIT_S
    while loop.time() < deadline:
        try:  # the page may be navigating (a login form posted): the next poll reads the new page
            picked: Chain | None = await page.evaluate("() => window.__maLearn && window.__maLearn.picked")
        except PlaywrightError:
            picked = None
        if picked:
            return picked
        await asyncio.sleep(WATCH_POLL_S)
    raise TaskError(ErrorKind.TIMEOUT, msg("no click for the {step} within {seconds} s",
                                           step=step, seconds=format(CLICK_WAIT_S, ".0f")), retry=False)


def _choose(chain: Chain, root: bool = False, control: bool = False) -> str:
    """The most robust selector of the clicked element, or of the nearest ancestor that has one.
    ``control``: a click inside a button (on its icon, say) means the button itself. ``root``: a
    click inside a rich-text editor (on its empty-state paragraph, say) means its editable root,
    or the textarea or input clicked."""
    controls = [item for item in chain if item["control"] and item["selectors"]] if control else []
    if controls:
        return str(controls[0]["selectors"][0])
    for item in chain:
        if root and not item.get("root"):
            continue
        if item["selectors"]:
            return str(item["selectors"][0])
    raise TaskError(ErrorKind.PROVIDER, msg("the clicked element has no stable selector (no data-testid, "
                                            "aria-label, id, role or stable class); write this role by hand"),
                    retry=False)


async def _answer_selector(page: Page, chain: Chain, watch: Watch) -> str:
    """The answer bubble: the clicked element or the nearest ancestor whose selector appeared
    with the test turn (so it matches every answer, not one paragraph of one) -- once: a
    selector that gained two matches also matches the prompt's own bubble."""
    appeared = [s for item in chain for s in item["selectors"] if watch.appeared(s)]
    once = [s for s in appeared if watch.gained(s) == 1]
    return str((once or appeared or [_choose(chain)])[0])


async def _done_selector(page: Page, watch: Watch, ended: float, answer: str) -> str | None:
    """A marker that arrived as the answer ended, outside the answer text itself."""
    for selector in watch.arrived_late(max(0.0, ended - 0.5)):
        inside = await page.evaluate(
            """([sel, ans]) => { const a = [...document.querySelectorAll(ans)];
                 return [...document.querySelectorAll(sel)]
                   .some(e => a.some(x => x.contains(e) || e.contains(x))); }""",
            [selector, answer])
        if not inside:
            return selector
    return None


def _profile_text(name: str, url: str, learned: Learned) -> str:
    def line(role: str, selectors: list[str], note: str) -> str:
        return f"{role} = {json.dumps(selectors, ensure_ascii=False)}  # {note}\n" if selectors else ""
    stop = [s for s in learned.generating[:1] if re.match(r"(button|#|\[)", s) and "stop" in s.lower()]
    top = f"name = {json.dumps(name)}\nstart_url = {json.dumps(url)}\n"
    if learned.login_url:
        top += f"login_url = {json.dumps(learned.login_url)}  # where a fresh browser (no cookies) lands\n"
    if learned.stay:
        top += 'navigation = "stay"  # a reload lost the login (kept in the page session)\n'
    if learned.prompt_entry:
        top += f"prompt_entry = {json.dumps(learned.prompt_entry)}  # the first way that read back exact\n"
    if learned.error:
        top += "generic_errors = true  # one failing turn showed one kind of error: the others still fail a task\n"
    about_errors = ("# The error role is what a failing test turn showed; the generic rule stays on beside it.\n"
                    if learned.error else
                    "# No error role: the generic rule applies (a new alert or toast, or error-like words once the\n"
                    "# answer stops growing, fails the task). Add error/banner roles or error_texts_in_answer by\n"
                    "# hand, or learn again with --error-turn.\n")
    return (f"# Learned by `mediaassist sites learn` from three clicks on {url}.\n"
            f"{about_errors}{top}\n[selectors]\n"
            + line("prompt", [learned.prompt], "clicked as the prompt box (its editable root)")
            + line("send", [learned.send], "clicked as the send button")
            + line("answer", [learned.answer], "every answer bubble; the new turn's ones are read")
            + line("generating", learned.generating, "shown while the test answer was written")
            + line("stop", stop, "clicked to end an answer")
            + line("done", [learned.done] if learned.done else [], "appeared when the test answer ended")
            + line("dismiss", [learned.dismiss] if learned.dismiss else [], "the pop-up's close button, clicked")
            + line("error", learned.error, "appeared when the failing test turn failed")
            + line("logged_in", [learned.prompt], "the prompt box shows once logged in")
            + line("logged_out", [learned.logged_out] if learned.logged_out else [], "the login form's password box"))
