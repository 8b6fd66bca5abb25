"""Real third-party chat UIs for the web-lane tests: a Gradio ChatInterface behind ``auth=``, a
Streamlit chat app behind a password gate, and a ChatGPT-like app on a TipTap composer
(tests/fixtures/webui/tiptap_chat.py), each run as its own server process on a free port, with
the shipped site profile (if any) pointed at it."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
from playwright.async_api import Page

from mediaassist.core.clock import Clock
from mediaassist.core.config import AccountConfig, AppConfig, ModelConfig
from mediaassist.core.paths import RESOURCES, make_private_dir
from mediaassist.core.scheduler import Scheduler
from mediaassist.core.store import NewTask, Store
from mediaassist.providers.base import Provider
from mediaassist.providers.registry import build_providers
from mediaassist.providers.web import LoginResult, login_account
from mediaassist.providers.web.browser import BrowserRuntime
from mediaassist.providers.web.provider import WebProvider
from mediaassist.providers.web.tools import with_browser
from tests.fixtures.webui.answers import CALLS_FILE_ENV, ERROR_MARK
from tests.harness import wait_until

FIXTURES = Path(__file__).parent / "fixtures" / "webui"
USER, PASSWORD = "alice", "s3cret-pw"
EMAIL = "alice@example.com"  # the TipTap app's login
START_TIMEOUT_S = 90.0
TEMPLATE_ORIGINS = {"gradio": "http://127.0.0.1:7860", "streamlit": "http://127.0.0.1:8501"}

MULTI_LINE = "第一行\n第二行 with `code`\n\nthird line after a blank one"
# The learned profile's batch: the app echoes each prompt's length as it arrived (blank line and all).
LEARNED_BATCH = ["learned one", MULTI_LINE, "请用一句话介绍你自己。", "emoji 😀🎉 and ümlauts", "y" * 1990 + " end."]


@dataclass
class ChatApp:
    site: str
    base_url: str
    process: subprocess.Popen[bytes]
    log_path: Path

    def kill(self) -> None:
        """The server dies as a crashed one does: no goodbye to the page."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)

    def log_text(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def calls(self) -> list[str]:
        """Every prompt the app's model was called with, as it arrived (answers.record_call)."""
        path = self.log_path.with_suffix(".calls")
        lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
        return [json.loads(line) for line in lines]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]  # typeshed types the address as Any
        return port


def _command(site: str, port: int) -> list[str]:
    if site == "gradio":
        return [sys.executable, str(FIXTURES / "gradio_chat.py"), str(port), USER, PASSWORD]
    if site == "tiptap":
        return [sys.executable, str(FIXTURES / "tiptap_chat.py"), str(port), EMAIL, PASSWORD]
    return [sys.executable, "-m", "streamlit", "run", str(FIXTURES / "streamlit_chat.py"),
            "--server.port", str(port), "--server.address", "127.0.0.1", "--server.headless", "true",
            "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none", "--", PASSWORD]


@contextmanager
def chat_app(site: str, tmp_path: Path) -> Iterator[ChatApp]:
    """Start the app, wait until it answers HTTP, and stop it (with its children) afterwards."""
    port = free_port()
    log_path = tmp_path / f"{site}-{port}.log"
    env = {**os.environ, "GRADIO_ANALYTICS_ENABLED": "False", "HF_HUB_OFFLINE": "1",
           "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false", "PYTHONWARNINGS": "ignore",
           CALLS_FILE_ENV: str(log_path.with_suffix(".calls"))}
    with open(log_path, "wb") as log:
        process = subprocess.Popen(_command(site, port), stdout=log, stderr=subprocess.STDOUT, env=env,
                                   cwd=tmp_path, start_new_session=True)
    app = ChatApp(site, f"http://127.0.0.1:{port}", process, log_path)
    try:
        _wait_serving(app)
        yield app
    finally:
        if process.poll() is None:
            app.kill()


def _wait_serving(app: ChatApp) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if app.process.poll() is not None:
            raise RuntimeError(f"{app.site} exited at start:\n{app.log_text()[-2000:]}")
        try:
            if httpx.get(app.base_url + "/", timeout=2).status_code < 500:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{app.site} did not serve within {START_TIMEOUT_S:.0f} s:\n{app.log_text()[-2000:]}")


def write_profile(app: ChatApp, data_dir: Path, without: tuple[str, ...] = ()) -> Path:
    """The shipped profile of the app's kind, pointed at the running app; ``without``: keys
    (top-level or selector roles) left out, as an operator's profile may lack them."""
    text = (RESOURCES / "sites" / f"{app.site}.toml").read_text(encoding="utf-8")
    for key in without:
        text = re.sub(rf"(?m)^{re.escape(key)} = .*\n", "", text)
    path = make_private_dir(data_dir / "sites") / f"{app.site}.toml"
    path.write_text(text.replace(TEMPLATE_ORIGINS[app.site], app.base_url), encoding="utf-8")
    return path


def app_on_store(app: ChatApp, data_dir: Path, store: Store, without: tuple[str, ...] = ()) -> AppConfig:
    """The shipped profile pointed at ``app`` (less the keys ``without``), its config, and the
    config's accounts in ``store``."""
    write_profile(app, data_dir, without)
    config = app_config(app.site)
    store.sync_accounts(config.accounts)
    return config


def app_config(site: str, accounts: tuple[str, ...] = ("acct-a",)) -> AppConfig:
    return AppConfig(accounts=[AccountConfig(name=a, site=site) for a in accounts],
                     models=[ModelConfig(name=f"{site}-chat", kind="web", site=site)])


def app_task(site: str, prompt: str) -> NewTask:
    return NewTask(model=f"{site}-chat", model_kind="web", route=f"web:{site}", prompt=prompt)


def web_lane(data_dir: Path, site: str, config: AppConfig | None = None) -> tuple[dict[str, Provider], WebProvider]:
    """The providers of ``config`` (default: ``app_config(site)``) and the web lane of ``site``
    among them, on a fast clock: errors are retried, so the back-offs are short."""
    providers = build_providers(config or app_config(site), Clock(speed=50), data_dir)
    web = providers[f"web:{site}"]
    assert isinstance(web, WebProvider)
    return providers, web


async def gradio_login(page: Page) -> None:
    """What a person does on Gradio's login form."""
    await page.locator('input[data-testid="textbox"]').fill(USER)
    await page.locator('input[data-testid="password"]').fill(PASSWORD)
    await page.keyboard.press("Enter")


async def logged_in_to_gradio(app: ChatApp, data_dir: Path, without: tuple[str, ...] = ()) -> AppConfig:
    """The Gradio profile pointed at ``app`` (less the keys ``without``), and acct-a logged in
    there as a person would."""
    write_profile(app, data_dir, without)
    config = app_config("gradio")
    assert await login_account("acct-a", config, data_dir, None, headless=True, timeout_s=30,
                               operator=gradio_login)
    return config


async def streamlit_login(page: Page) -> None:
    """What a person does on the app's password gate."""
    await page.locator('input[type="password"]').fill(PASSWORD)
    await page.keyboard.press("Enter")


async def log_out_of_gradio(app: ChatApp, account: str, config: AppConfig, data_dir: Path) -> None:
    """The account logs out in its own browser, as a person would: Gradio's /logout ends every
    token the user had on the server, so the cookies the profile keeps no longer log it in."""
    async def visit_logout(_runtime: BrowserRuntime, page: Page) -> None:
        await page.goto(app.base_url + "/logout", wait_until="domcontentloaded")

    await with_browser(account, config, data_dir, True, visit_logout)


def logs_in_when_the_lane_waits(web: WebProvider, store: Store,
                                outcome: list[LoginResult]) -> Callable[[Scheduler, list[str]], Awaitable[None]]:
    """``during`` for a batch on Streamlit: the account is flagged (its login never survives a
    relaunch), so its lane waits; the operator logs in in the lane's own browser, opened headed
    (the suite runs on a virtual screen), and the lane carries on in that page."""
    async def log_in(sched: Scheduler, ids: list[str]) -> None:
        await wait_until(lambda: "web:acct-a" in sched.blocked_lanes())
        assert all(t.state == "pending" for t in store.tasks(["b1"]))  # none ran into the gate
        # 60 s: the operator's window on a loaded CI machine (30 s ran out once with -n 2)
        outcome.append(await web.log_in("acct-a", store, timeout_s=60, operator=streamlit_login))
        sched.wake()
    return log_in


async def streamlit_learn_operator(step: str, page: Page) -> None:
    """The operator's clicks for ``sites learn`` on the Streamlit app: log in on the gate, then
    the prompt box, the send button, and the answer once its code block has rendered; for the
    failing turn, log in again (the reload logged out) and send a prompt the app fails on."""
    if step == "prompt":
        await streamlit_login(page)
        await page.click('textarea[data-testid="stChatInputTextArea"]')
    elif step == "send":
        await page.click('button[data-testid="stChatInputSubmitButton"]')
    elif step == "login":
        await streamlit_login(page)
    elif step == "error":
        await page.locator('textarea[data-testid="stChatInputTextArea"]').fill(f"boom {ERROR_MARK}")
        await page.click('button[data-testid="stChatInputSubmitButton"]')
    else:
        answer = page.locator('[data-testid="stChatMessage"]').nth(1)
        await answer.locator('[data-testid="stCode"]').wait_for()
        await answer.locator("p").first.click()


async def gradio_learn_operator(step: str, page: Page) -> None:
    """The operator's three clicks on the Gradio chat, and the failing turn: a prompt the app
    refuses (it streams a little, then shows its error toast)."""
    if step == "prompt":
        await page.click('textarea[data-testid="textbox"]')
    elif step == "send":
        await page.click("button.submit-button")
    elif step == "error":
        await page.locator('textarea[data-testid="textbox"]').fill(f"this fails {ERROR_MARK}")
        await page.click("button.submit-button")
    else:
        await page.locator('button[data-testid="stop-button"]').wait_for(state="hidden")
        await page.locator('[data-testid="bot"] p').last.click()


async def tiptap_login(page: Page) -> None:
    """What a person does on the TipTap app's e-mail login page."""
    await page.locator('input[type="email"]').fill(EMAIL)
    await page.locator('input[type="password"]').fill(PASSWORD)
    await page.locator('button[type="submit"]').click()


async def tiptap_learn_operator(step: str, page: Page) -> None:
    """The operator's clicks for ``sites learn`` on the TipTap app: log in, close the "What's
    new" pop-up with its own button, click into the composer (on its empty-state paragraph, as a
    person does), the send button (the pointer stays on it: its tooltip shows), then the answer."""
    if step == "prompt":
        await tiptap_login(page)
        await page.locator(".modal-close").click()
        empty_paragraph = page.locator("#prompt-textarea p")
        assert "is-editor-empty" in (await empty_paragraph.get_attribute("class") or "")  # the trap is set
        await empty_paragraph.click()
    elif step == "send":
        await page.locator('[data-testid="send-button"]').click()
    else:
        await page.locator('[data-testid="stop-button"]').wait_for(state="hidden")
        await page.locator(".markdown p").last.click()
