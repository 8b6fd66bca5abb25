"""``mediaassist sites learn URL``: a site profile written from an operator's three clicks.

The page opens headed in an account's profile. The operator clicks the prompt box (a test prompt
is typed into it), then the send button (which sends it), then the finished answer. Every click
is captured in the page and turned into robust selectors -- ``data-testid``, ``aria-label``, a
stable id, ``role``/``name``/``placeholder``, then stable classes; never positional chains or
generated class names. While the test turn runs, the visible elements are counted every 100 ms:
one that appears after the send and is gone when the answer is done is the generating indicator
(a stop button when it is a button), one that appears as the answer ends and stays is the done
marker. The profile is written, then checked with ``sites check``. ``operator`` plays the
person in tests (the clicks are then driven by Playwright).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from playwright.async_api import Page

from mediaassist.core import paths
from mediaassist.core.config import AppConfig
from mediaassist.core.errors import ConfigError, ErrorKind, TaskError
from mediaassist.providers.web.browser import BrowserRuntime
from mediaassist.providers.web.site import parse_site
from mediaassist.providers.web.tools import SiteCheckReport, _with_browser, check_site, no_display_message

TEST_PROMPT = "Please reply with one short sentence."
CLICK_WAIT_S = 300.0
WATCH_POLL_S = 0.1
STEPS = {"prompt": "click the prompt box (log in first if the site asks)",
         "send": "click the send button (this sends a short test prompt)",
         "answer": "when the answer has finished, click on the answer text"}
Operator = Callable[[str, Page], Awaitable[None]]
Chain = list[dict[str, Any]]  # the clicked element, then its ancestors: {tag, selectors, editable}

# In the page: remember what the operator clicks, and describe elements by robust selectors.
_PAGE_SCRIPT = r"""() => {
  if (window.__maLearn) return;
  const q = (v) => JSON.stringify(v);
  const generated = /^(svelte|css|st-emotion|sc|jsx|emotion|tw|_)-|[0-9]{3,}|^[a-z]{1,3}[0-9]|__|--/;
  const candidates = (el, verify = true) => {
    const tag = el.tagName.toLowerCase(), out = [];
    const attr = (name) => el.getAttribute(name);
    if (attr('data-testid')) out.push(`${tag}[data-testid=${q(attr('data-testid'))}]`);
    if (attr('aria-label') && attr('aria-label').length <= 60) out.push(`${tag}[aria-label=${q(attr('aria-label'))}]`);
    if (el.id && !generated.test(el.id) && !/[:.]/.test(el.id)) out.push('#' + CSS.escape(el.id));
    for (const name of ['role', 'name', 'placeholder'])
      if (attr(name) && attr(name).length <= 60) out.push(`${tag}[${name}=${q(attr(name))}]`);
    const classes = [...el.classList].filter((c) => !generated.test(c) && c.length <= 30).slice(0, 2);
    if (classes.length) out.push(tag + classes.map((c) => '.' + CSS.escape(c)).join(''));
    if (!verify) return out;
    const matches = (s) => {
      try { return [...document.querySelectorAll(s)].includes(el); } catch (e) { return false; } };
    return out.filter(matches);
  };
  const visible = (el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';
  window.__maLearn = {
    picked: null,
    candidates,
    // the clicked element and its ancestors, each with its selectors (the bubble may be a parent)
    describe: (el) => { const chain = []; for (let e = el; e && e !== document.body; e = e.parentElement)
      chain.push({tag: e.tagName.toLowerCase(), selectors: candidates(e), editable: e.isContentEditable ||
                  e.tagName === 'TEXTAREA' || e.tagName === 'INPUT'}); return chain; },
    census: () => { const counts = {}; for (const el of document.body.querySelectorAll('*')) {
      if (!visible(el)) continue;
      for (const s of candidates(el, false)) counts[s] = (counts[s] || 0) + 1; } return counts; },
  };
  document.addEventListener('pointerdown', (e) => {
    window.__maLearn.picked = window.__maLearn.describe(e.target);
    window.__maLearn.pickedElement = e.target;
  }, true);
}"""


@dataclass
class Watch:
    """What appeared on the page during the test turn, and when (seconds after the send)."""

    baseline: dict[str, int]
    first_seen: dict[str, float] = field(default_factory=dict)
    last_seen: dict[str, float] = field(default_factory=dict)
    at_end: dict[str, int] = field(default_factory=dict)

    def record(self, counts: dict[str, int], at: float) -> None:
        for selector, count in counts.items():
            if count > self.baseline.get(selector, 0):
                self.first_seen.setdefault(selector, at)
                self.last_seen[selector] = at
        self.at_end = counts

    def transient(self) -> list[str]:
        """Appeared after the send, gone again by the end: longest-lived first."""
        gone = [s for s in self.first_seen if self.at_end.get(s, 0) <= self.baseline.get(s, 0)]
        return sorted(gone, key=lambda s: self.first_seen[s] - self.last_seen[s])

    def arrived_late(self, after: float) -> list[str]:
        """Appeared once the turn was ending (``after``) and still there."""
        return [s for s, t in self.first_seen.items()
                if t >= after and self.at_end.get(s, 0) > self.baseline.get(s, 0)]


@dataclass
class LearnResult:
    path: Path
    profile_text: str
    check: SiteCheckReport


async def learn_site(name: str, url: str, account: str, config: AppConfig, data_dir: Path, *,
                     headless: bool = False, operator: Operator | None = None, force: bool = False,
                     say: Callable[[str], None] = print) -> LearnResult:
    """Learn a profile for the chat page at ``url`` and save it as ``<config dir>/sites/<name>.toml``."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", name):
        raise ConfigError(f"site name {name!r}: letters, digits, '.', '_' and '-' only")
    target = paths.config_dir() / "sites" / f"{name}.toml"
    if target.exists() and not force:
        raise ConfigError(f"{target} exists; pass --force to replace it")
    if not headless and (blocked := no_display_message(account)) is not None:
        raise ConfigError(blocked.replace("accounts login", f"sites learn {url} --name {name} --account"))

    async def work(_runtime: BrowserRuntime, page: Page) -> str:
        await page.goto(url, wait_until="domcontentloaded")
        return await _learn_on_page(name, url, page, operator, say)

    text = await _with_browser(account, config, data_dir, headless, work)
    parse_site(_toml_loads(text), target)  # what was learned must be a valid profile
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    say(f"wrote {target}; checking it now")
    report = await check_site(name, account, config, data_dir)
    return LearnResult(target, text, report)


def _toml_loads(text: str) -> dict[str, Any]:
    import tomllib
    return tomllib.loads(text)


async def _learn_on_page(name: str, url: str, page: Page, operator: Operator | None,
                         say: Callable[[str], None]) -> str:
    await page.evaluate(_PAGE_SCRIPT)
    prompt_chain = await _pick(page, "prompt", operator, say)
    prompt = _choose(prompt_chain, editable=True)
    await page.locator(prompt).first.click()
    await page.keyboard.insert_text(TEST_PROMPT)
    watch = Watch(await page.evaluate("() => window.__maLearn.census()"))
    loop = asyncio.get_running_loop()
    sent_at = loop.time()
    send_task = asyncio.ensure_future(_pick(page, "send", operator, say))
    answer_task: asyncio.Future[Chain] | None = None
    while True:
        watch.record(await page.evaluate("() => window.__maLearn.census()"), loop.time() - sent_at)
        if answer_task is None and send_task.done():
            send_chain = send_task.result()
            answer_task = asyncio.ensure_future(_pick(page, "answer", operator, say))
        if answer_task is not None and answer_task.done():
            break
        await asyncio.sleep(WATCH_POLL_S)
    answer_chain = answer_task.result()
    answer = await _answer_selector(page, answer_chain, watch)
    generating = next(iter(watch.transient()), None)
    ended = watch.last_seen.get(generating, 0.0) if generating else 0.0
    done = await _done_selector(page, watch, ended, answer) if generating else None
    return _profile_text(name, url, prompt, _choose(send_chain), answer, generating, done)


async def _pick(page: Page, step: str, operator: Operator | None, say: Callable[[str], None]) -> Chain:
    """Wait for the operator's click for ``step``; the clicked element and its ancestors."""
    await page.evaluate("() => { window.__maLearn.picked = null; }")
    say(f"in the browser window, {STEPS[step]}")
    if operator is not None:
        await operator(step, page)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + CLICK_WAIT_S
    while loop.time() < deadline:
        picked: Chain | None = await page.evaluate("() => window.__maLearn.picked")
        if picked:
            return picked
        await asyncio.sleep(WATCH_POLL_S)
    raise TaskError(ErrorKind.TIMEOUT, f"no click for the {step} within {CLICK_WAIT_S:.0f} s", retry=False)


def _choose(chain: Chain, editable: bool = False) -> str:
    """The most robust selector of the clicked element, or of the nearest ancestor that has one."""
    for item in chain:
        if editable and not item["editable"]:
            continue
        if item["selectors"]:
            return str(item["selectors"][0])
    raise TaskError(ErrorKind.PROVIDER, "the clicked element has no stable selector (no data-testid, "
                    "aria-label, id, role or stable class); write this role by hand", retry=False)


async def _answer_selector(page: Page, chain: Chain, watch: Watch) -> str:
    """The answer bubble: the clicked element or the nearest ancestor whose selector appeared
    with the test turn (so it matches every answer, not one paragraph of one) -- once: a
    selector that gained two matches also matches the prompt's own bubble."""
    appeared = [s for item in chain for s in item["selectors"] if s in watch.first_seen]
    once = [s for s in appeared if watch.at_end.get(s, 0) - watch.baseline.get(s, 0) == 1]
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


def _profile_text(name: str, url: str, prompt: str, send: str, answer: str, generating: str | None,
                  done: str | None) -> str:
    def line(role: str, selector: str | None, note: str) -> str:
        return f"{role} = [{json.dumps(selector, ensure_ascii=False)}]  # {note}\n" if selector else ""
    is_button = generating is not None and re.match(r"(button|#|\[)", generating) is not None
    return (f"# Learned by `mediaassist sites learn` from three clicks on {url}.\n"
            "# Review it: add logged_out, error, dismiss and banner selectors the test turn could not show.\n"
            f"name = {json.dumps(name)}\nstart_url = {json.dumps(url)}\n\n[selectors]\n"
            + line("prompt", prompt, "clicked as the prompt box")
            + line("send", send, "clicked as the send button")
            + line("answer", answer, "every answer bubble; the new turn's ones are read")
            + line("generating", generating, "shown while the test answer was written")
            + line("stop", generating if is_button and generating and "stop" in generating.lower() else None,
                   "clicked to end an answer")
            + line("done", done, "appeared when the test answer ended")
            + line("logged_in", prompt, "the prompt box shows once logged in"))
