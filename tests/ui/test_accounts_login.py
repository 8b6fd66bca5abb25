"""The Accounts panel's "Log in" on a web account while its lane runs: the login happens in the
lane's own browser (real Chromium on the demo chat site), and the account's queued task then runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QPushButton

from mediaassist.core.store import NewTask
from mediaassist.demo_servers.chat_site import DEMO_SITE
from mediaassist.providers.web import WebProvider
from mediaassist.ui.accounts import AccountsPanel
from mediaassist.ui.main_window import MainWindow
from tests.harness import wait_until
from tests.web_helpers import demo_site, needs_chromium, stored_account

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


def login_button(window: MainWindow, account: str) -> QPushButton:
    button = window.accounts.table.cellWidget(account_row(window, account), LOGIN_COLUMN)
    assert isinstance(button, QPushButton)
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
