"""The driver's safe defaults on a small chat page (served from the test, driven by the generic
driver in real Chromium): with no ``error`` role a page error is never a success -- a new alert or
toast, error-like words once the answer stops growing (also inside a shadow root), an error drawn
in the answer bubble described by ``error_texts_in_answer`` -- while an answer that itself talks
about errors or rate limits, inside a live region wrapping the transcript, is still an answer."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from playwright.async_api import Page, async_playwright

from mediaassist.core.clock import Clock
from mediaassist.core.errors import TaskError
from mediaassist.providers.web.browser import find_chromium
from mediaassist.providers.web.driver import SiteDriver
from mediaassist.providers.web.site import SiteProfile, parse_site
from tests.web_helpers import needs_chromium

pytestmark = [pytest.mark.browser, needs_chromium]

# A chat whose transcript is one live region (as Gradio's is); the prompt picks what goes wrong.
CHAT_PAGE = """<!doctype html><html><head><meta charset="utf-8"></head><body>
<aside><a href="#">Fixing an error in my code</a></aside>
<div id="log" role="log" aria-live="polite"></div>
<textarea id="prompt"></textarea><button id="send">Send</button><span id="busy" hidden>Stop</span>
<script>
const $ = (id) => document.getElementById(id);
customElements.define('x-toaster', class extends HTMLElement {
  constructor() { super(); this.attachShadow({mode: 'open'}); } });
function later(ms, fn) { return new Promise((done) => setTimeout(() => { fn(); done(); }, ms)); }
$('send').onclick = async () => {
  const prompt = $('prompt').value; $('prompt').value = '';
  const q = document.createElement('div'); q.className = 'user'; q.textContent = prompt; $('log').append(q);
  const a = document.createElement('div'); a.className = 'bot'; $('log').append(a);
  $('busy').hidden = false;
  await later(200, () => { a.textContent = 'ECHO'; });
  if (prompt.includes('[toast]')) {
    await later(200, () => { const t = document.createElement('div'); t.setAttribute('role', 'alert');
      t.textContent = 'Connection lost'; document.body.append(t); });
    $('busy').hidden = prompt.includes('[ends]');  // else the stop control stays up, as Gradio's does
    return;
  }
  if (prompt.includes('[shadow]')) {
    await later(200, () => { const host = document.createElement('x-toaster'); document.body.append(host);
      host.shadowRoot.innerHTML = '<div class="note">Upstream request failed, please retry</div>'; });
    return;
  }
  if (prompt.includes('[inline]')) {
    await later(200, () => { a.innerHTML = '<p>ECHO partial</p><p>出错了：模型过载</p>'; $('busy').hidden = true; });
    return;
  }
  await later(200, () => { a.textContent = 'Your rate limit question: an error is not a failure. ' + prompt;
                           $('busy').hidden = true; });
};
</script></body></html>"""


def _profile(error: list[str] | None = None, **extra: object) -> SiteProfile:
    roles = {"prompt": "#prompt", "send": "#send", "answer": ".bot", "logged_in": "#prompt", "generating": "#busy"}
    return parse_site({"name": "plain", "start_url": "http://127.0.0.1:1/", **extra,
                       "selectors": {**roles, **({"error": error} if error else {})},
                       "completion": {"start_timeout_s": 5, "timeout_s": 8, "stable_ms": 300}})


@pytest_asyncio.fixture
async def page() -> AsyncIterator[Page]:
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=find_chromium(None))
        page = await browser.new_page()
        await page.set_content(CHAT_PAGE)
        yield page
        await browser.close()


async def _turn(page: Page, profile: SiteProfile, prompt: str) -> str:
    driver = SiteDriver(profile, page, Clock(), lambda line: None)
    await driver.enter_prompt(prompt)
    before = await driver.marks()
    await driver.send()
    return await driver.wait_answer(before)


@pytest.mark.asyncio
async def test_an_answer_about_errors_and_rate_limits_inside_a_live_transcript_is_an_answer(page: Page) -> None:
    prompt = "why does my request fail with error 429?"
    answer = await _turn(page, _profile(), prompt)

    assert answer == f"Your rate limit question: an error is not a failure. {prompt}"


@pytest.mark.asyncio
async def test_a_new_alert_fails_the_turn_with_its_text_even_when_it_reads_like_no_error(page: Page) -> None:
    with pytest.raises(TaskError) as failed:
        await _turn(page, _profile(), "cut off [toast]")

    assert failed.value.kind.value == "provider" and "Connection lost" in str(failed.value.message)


@pytest.mark.asyncio
async def test_error_like_words_in_a_shadow_root_fail_the_turn_once_the_answer_stops_growing(page: Page) -> None:
    with pytest.raises(TaskError) as failed:
        await _turn(page, _profile(), "breaks [shadow]")

    assert failed.value.kind.value == "provider"
    assert "Upstream request failed, please retry" in str(failed.value.message)


@pytest.mark.asyncio
async def test_an_error_drawn_in_the_answer_bubble_is_described_by_error_texts_in_answer(page: Page) -> None:
    with pytest.raises(TaskError) as failed:
        await _turn(page, _profile(error_texts_in_answer=["Error:", "出错了"]), "partial [inline]")
    unmarked = await _turn(page, _profile(), "partial again [inline]")

    assert failed.value.kind.value == "provider" and "出错了：模型过载" in str(failed.value.message)
    assert unmarked == "ECHO partial\n\n出错了：模型过载"  # without the key, nothing says it is an error


@pytest.mark.asyncio
async def test_the_profiles_own_error_role_finds_an_error_inside_a_shadow_root(page: Page) -> None:
    with pytest.raises(TaskError) as failed:
        await _turn(page, _profile(error=[".note"]), "breaks [shadow]")

    assert failed.value.kind.value == "provider" and "Upstream request failed" in str(failed.value.message)


@pytest.mark.asyncio
async def test_a_learned_error_role_adds_to_the_generic_rule_so_an_error_it_does_not_match_still_fails(
        page: Page) -> None:
    """A learned ``error`` role saw one failing turn; an error shown another way (here a new alert
    where the role names a note) still fails the turn, by the generic rule beside it -- never the
    partial answer. A role written by hand is the operator's word on what an error is: alone."""
    with pytest.raises(TaskError) as failed:
        await _turn(page, _profile(error=[".note"], generic_errors=True), "cut off [toast] [ends]")
    by_hand = await _turn(page, _profile(error=[".note"]), "cut off again [toast] [ends]")

    assert failed.value.kind.value == "provider" and "Connection lost" in str(failed.value.message)
    assert by_hand == "ECHO"
