"""The Accounts panel's "Log in" on a web account while its lane runs: the login happens in the
lane's own browser (real Chromium on the demo chat site), and the account's queued task then runs.
Its menu's "keep me logged in" keeps what is typed into a page-session login (a Streamlit chat's
password gate) in the OS keyring, as ``accounts login NAME --keep-login`` does."""

from __future__ import annotations

from pathlib import Path

import pytest
from keyrings.alt.file import PlaintextKeyring
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QToolButton

from mediaassist.core.store import NewTask
from mediaassist.demo_servers.chat_site import DEMO_SITE
from mediaassist.providers.web import WebProvider
from mediaassist.providers.web.kept_login import KEPT_LOGIN_SERVICE
from mediaassist.ui.accounts import AccountsPanel
from mediaassist.ui.main_window import MainWindow
from tests.fixtures.webui.answers import answer_for
from tests.harness import wait_until
from tests.web_helpers import WEB_SPEED, demo_site, needs_chromium, stored_account, stored_result
from tests.webui_helpers import PASSWORD, ChatApp, app_task, streamlit_login, write_profile

from .test_window import start_app, stop_app

pytestmark = [pytest.mark.browser, needs_chromium]

ACCOUNT = "chat-a"
ROUTE = f"web:{DEMO_SITE}"
LOGIN_STATE_COLUMN, LOGIN_COLUMN = 3, AccountsPanel.COLUMNS - 1
WEB_CONFIG = f"""
[[accounts]]
name = "{ACCOUNT}"
site = "{DEMO_SITE}"

[[models]]
name = "chatter"
kind = "web"
site = "{DEMO_SITE}"
"""


def account_row(window: MainWindow, account: str) -> int:
    window.accounts.refresh()
    table = window.accounts.table
    return next(r for r in range(table.rowCount()) if table.item(r, 0).text() == account)


def login_button(window: MainWindow, account: str) -> QToolButton:
    button = window.accounts.table.cellWidget(account_row(window, account), LOGIN_COLUMN)
    assert isinstance(button, QToolButton)
    return button


@pytest.mark.asyncio
@pytest.mark.timeout(90)
async def test_log_in_from_the_accounts_panel_runs_in_the_lane_and_the_waiting_task_then_runs(
        tmp_path: Path, ui_settings: QSettings) -> None:
    with demo_site(tmp_path / "data", duration_s=(0.2, 0.3)) as site:
        app = await start_app(tmp_path, ui_settings, extra_config=WEB_CONFIG)
        window = app.window
        try:
            lane = window.rt.scheduler.lanes[f"web:{ACCOUNT}"]  # one lane per account, on the site's provider
            assert isinstance(lane.provider, WebProvider)
            window.rt.store.set_login_state(ACCOUNT, "needs_login", "logged out of the demo site")
            app.enqueue([NewTask(model="chatter", model_kind="web", route=ROUTE, prompt="你好", task_id="chat1")])
            assert window.rt.store.get("chat1").state == "pending"  # the account waits for its login

            login_button(window, ACCOUNT).click()
            runtime = lane.provider.runtime(ACCOUNT)
            await wait_until(lambda: runtime.is_open, timeout=30)  # the lane's browser, launched for the login
            page = await runtime.page()
            await wait_until(lambda: "/login" in page.url, timeout=15)
            assert window.rt.store.get("chat1").state == "pending"  # no task while the operator logs in
            await page.fill("#user", ACCOUNT)  # the operator types the account and logs in
            await page.click("#login")

            await wait_until(lambda: stored_account(window.rt.store, ACCOUNT).login_state == "ok", timeout=15)
            await wait_until(lambda: window.rt.store.get("chat1").state == "success", timeout=30)
            assert window.rt.store.result("chat1").text  # the demo site's answer, read in the same browser
            assert site.page_loads >= 1
            assert window.accounts.table.item(account_row(window, ACCOUNT), LOGIN_STATE_COLUMN).text() == "logged in"
        finally:
            await stop_app(app)


@pytest.mark.asyncio
async def test_a_log_in_that_cannot_open_a_window_says_why_in_the_windows_language(
        tmp_path: Path, ui_settings: QSettings, monkeypatch: pytest.MonkeyPatch) -> None:
    ui_settings.setValue("app/language", "zh_CN")
    with demo_site(tmp_path / "data"):
        app = await start_app(tmp_path, ui_settings, extra_config=WEB_CONFIG)
        window = app.window
        try:
            window.rt.store.set_login_state(ACCOUNT, "needs_login", "logged out of the demo site")
            told: list[tuple[str, str]] = []
            window.lanes.message.connect(lambda title, text: told.append((title, text)))
            # Qt keeps its connection to the X server; a browser window could not open now
            monkeypatch.delenv("DISPLAY", raising=False)
            monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
            login_button(window, ACCOUNT).click()
            await wait_until(lambda: told != [], timeout=15)
            why = ("没有可打开登录窗口的显示器（未设置 DISPLAY）；请在桌面会话中登录，或在虚拟屏幕上登录："
                   f"xvfb-run -a mediaassist accounts login {ACCOUNT}")
            assert told == [("登录失败", f"{ACCOUNT}：{why}")]
            assert not window.rt.scheduler.lanes[f"web:{ACCOUNT}"].provider.runtime(ACCOUNT).is_open
            assert stored_account(window.rt.store, ACCOUNT).login_state == "needs_login"
        finally:
            window.translations.apply("en")
            await stop_app(app)


KEEPER = "keeper"
STREAMLIT_CONFIG = f"""
[[accounts]]
name = "{KEEPER}"
site = "streamlit"

[[models]]
name = "streamlit-chat"
kind = "web"
site = "streamlit"
"""
KEEP_ME_LOGGED_IN = {"en": "Log in and keep me logged in (OS keyring)", "zh_CN": "登录并保持登录（系统钥匙串）"}


@pytest.mark.asyncio
@pytest.mark.timeout(180)
async def test_keep_me_logged_in_keeps_a_page_session_login_in_the_os_keyring(
        streamlit_app: ChatApp, tmp_path: Path, ui_settings: QSettings, os_keyring: PlaintextKeyring) -> None:
    # A Streamlit chat behind its password gate (a login kept only in the page): the lane meets the
    # gate on its first task; the operator picks the Log in menu's "keep me logged in" and types the
    # password in the lane's page, which the lane then keeps in the OS keyring (here a file backend).
    write_profile(streamlit_app, tmp_path / "data")
    app = await start_app(tmp_path, ui_settings, speed=WEB_SPEED, extra_config=STREAMLIT_CONFIG)
    window = app.window
    prompts = ["met the gate", "after the login"]
    try:
        store = window.rt.store
        store.enqueue("b1", [app_task("streamlit", prompt) for prompt in prompts])
        window.rt.wake()
        lane = window.rt.scheduler.lanes[f"web:{KEEPER}"]
        assert isinstance(lane.provider, WebProvider)
        runtime = lane.provider.runtime(KEEPER)
        await wait_until(lambda: stored_account(store, KEEPER).login_state == "needs_login", timeout=60)

        keep = login_button(window, KEEPER).menu().actions()[0]
        assert keep.text() == KEEP_ME_LOGGED_IN["en"]
        keep.trigger()
        await wait_until(lambda: runtime.is_open and runtime.headless is False, timeout=60)  # relaunched headed
        await streamlit_login(await runtime.page())  # the operator, at the lane's window
        await wait_until(lambda: all(t.state in ("success", "failed") for t in store.tasks(["b1"])), timeout=90)
        after = next(t for t in store.tasks(["b1"]) if t.prompt == "after the login")
        assert stored_result(store, after.task_id).text == answer_for("after the login")
    finally:
        await stop_app(app)
    assert PASSWORD in (os_keyring.get_password(KEPT_LOGIN_SERVICE, KEEPER) or "")


@pytest.mark.asyncio
async def test_the_log_in_menu_says_keep_me_logged_in_in_the_windows_language(
        tmp_path: Path, ui_settings: QSettings) -> None:
    ui_settings.setValue("app/language", "zh_CN")
    app = await start_app(tmp_path, ui_settings)
    try:
        button = login_button(app.window, "acct-a")
        assert button.text() == "登录"
        assert [action.text() for action in button.menu().actions()] == [KEEP_ME_LOGGED_IN["zh_CN"]]
    finally:
        app.window.translations.apply("en")
        await stop_app(app)
