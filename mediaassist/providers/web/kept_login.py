"""Logins an operator lets a lane keep: a page-session login re-entered after a browser recycle.

A site whose login lives only in the open page (Streamlit's usual password gate) loses it with
the browser: a recycle, a crash, a new ``run``. With ``accounts login NAME --keep-login`` the
values the operator types into the login form (its text, e-mail and password boxes) are kept in
the OS keyring -- service ``mediaassist-web-login``, user = the account -- never in a file, a log,
a result or a profile. Each password is registered with the log filter the moment it is read. When
a lane then finds its page logged out, it fills the form with them and presses Enter.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from dataclasses import dataclass

from playwright.async_api import Page
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from mediaassist.core.secrets import keep_in_keyring, keyring_password, register_secret
from mediaassist.providers.web.driver import SiteDriver

KEPT_LOGIN_SERVICE = "mediaassist-web-login"
FORM_WAIT_MS = 5_000  # the login form of a page found logged out is already there, or soon
_binding_numbers = itertools.count(1)  # a page keeps its bindings: each recorder needs its own name
# In the page: each time a box of a form with a password box changes, every filled box of it.
_WATCH_FORM = """(binding) => {
  const selectorOf = (el) => {
    if (el.type === 'password') return 'input[type="password"]';
    for (const name of ['name', 'autocomplete', 'aria-label', 'placeholder', 'type'])
      if (el.getAttribute(name)) return `input[${name}=${JSON.stringify(el.getAttribute(name))}]`;
    return 'input';
  };
  const send = () => {
    if (!window[binding]) return;
    const boxes = [...document.querySelectorAll('input')].filter((el) =>
      ['text', 'email', 'password', 'tel'].includes(el.type) && el.value && el.getClientRects().length);
    if (boxes.some((el) => el.type === 'password'))
      window[binding](boxes.map((el) => ({selector: selectorOf(el), value: el.value})));
  };
  document.addEventListener('input', send, true);
  document.addEventListener('change', send, true);
}"""


@dataclass(frozen=True)
class FormValue:
    selector: str
    value: str


class LoginRecorder:
    """What the operator typed into the login form last (a password box among it)."""

    def __init__(self) -> None:
        self.values: list[FormValue] = []
        self.binding = f"__maKeepLogin{next(_binding_numbers)}"

    async def watch(self, page: Page) -> None:
        await page.expose_binding(self.binding, self._typed)
        script = f"({_WATCH_FORM})({json.dumps(self.binding)})"
        await page.add_init_script(script)  # the login page may be another page than this one
        await page.evaluate(script)

    def _typed(self, _source: object, values: list[dict[str, str]]) -> None:
        self.values = [FormValue(item["selector"], item["value"]) for item in values]
        _mask_passwords(self.values)

    def keep(self, account: str) -> bool:
        """Into the OS keyring; False when nothing was typed or there is no usable keyring."""
        text = json.dumps([[v.selector, v.value] for v in self.values])
        return bool(self.values) and keep_in_keyring(KEPT_LOGIN_SERVICE, account, text)


def kept_login(account: str) -> list[FormValue]:
    """The login the operator let the lane keep for ``account`` (empty: none, or no keyring)."""
    text = keyring_password(KEPT_LOGIN_SERVICE, account)
    try:
        values = [FormValue(str(selector), str(value)) for selector, value in json.loads(text or "[]")]
    except (ValueError, TypeError):  # not ours, or damaged: as if none were kept
        return []
    _mask_passwords(values)
    return values


def _mask_passwords(values: list[FormValue]) -> None:
    """The password boxes' values, masked in every log line from now on (a user name is often
    the account's own name, which the logs must go on showing)."""
    for item in values:
        if _is_password(item):
            register_secret(item.value)


def _is_password(item: FormValue) -> bool:
    return "password" in item.selector


async def log_in_again(driver: SiteDriver, account: str) -> bool:
    """On a page showing its login form: fill in the kept login, press Enter in the password box
    and wait for the logged-in marker. False when none is kept or it did not log in."""
    values = kept_login(account)
    if not values:
        return False
    boxes = [driver.page.locator(item.selector).filter(visible=True).first for item in values]
    try:
        for box, item in zip(boxes, values, strict=True):
            await box.fill(item.value, timeout=FORM_WAIT_MS)
    except PlaywrightTimeoutError:  # not the form the login was typed into: the operator's turn
        return False
    password = next((b for b, v in zip(boxes, values, strict=True) if _is_password(v)), boxes[-1])
    await password.press("Enter")
    return await _logged_in_within(driver, driver.site.completion.login_timeout_s)


async def _logged_in_within(driver: SiteDriver, seconds: float) -> bool:
    """The login form gone and the logged-in marker showing (the form may linger a moment)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while loop.time() < deadline:
        if await driver.visible("logged_in") and not await driver.visible("logged_out"):
            return True
        await asyncio.sleep(0.1)
    return False
