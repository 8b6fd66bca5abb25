"""The poll lane's pre-flight in the window (issue 13): the account check the lane ran at start --
balance, tasks running, the key's concurrent limit -- in the lane row's tooltip, and the warning
when max_polling_tasks is above what the account runs, in the row itself; in the window's language.
Against the demo RunningHub over real HTTP."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import QSettings

from mediaassist.demo_servers.runninghub_server import DEMO_API_KEY, RunningHubDemoServer
from mediaassist.ui.panels import PROBLEM_STYLE, LaneRow
from tests.harness import wait_until

from .test_window import App, start_app, stop_app

ACCOUNT_LIMIT = 3  # what the demo key runs at once; the lane asks for more
KEY_VARIABLE = "MEDIAASSIST_TEST_RUNNINGHUB_KEY"


def runninghub_config(url: str, polled: int) -> str:
    return f"""
[[providers]]
name = "rh"
kind = "poll"
type = "runninghub"
base_url = "{url}"
api_key_env = "{KEY_VARIABLE}"
max_polling_tasks = {polled}

[[models]]
name = "rh-video"
kind = "poll"
provider = "rh"
workflow_id = "1904136902449209346"
prompt_node_id = "6"
"""


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[RunningHubDemoServer]:
    monkeypatch.setenv(KEY_VARIABLE, DEMO_API_KEY)
    with RunningHubDemoServer({DEMO_API_KEY: ACCOUNT_LIMIT}) as srv:
        yield srv


async def runninghub_row(app: App) -> LaneRow:
    """The RunningHub lane's row once the window has shown a refresh after the lane started."""
    [row] = [row for row in app.window.api_panel.rows if row.lane.name == "poll:rh"]
    app.window.refresh_stats()
    await wait_until(lambda: "\n" in row.gauge.toolTip(), timeout=30)
    return row


@pytest.mark.asyncio
@pytest.mark.timeout(90)
async def test_the_lane_row_shows_the_account_check_and_warns_above_the_account_limit(
        tmp_path, ui_settings: QSettings, server: RunningHubDemoServer) -> None:
    app = await start_app(tmp_path, ui_settings, extra_config=runninghub_config(server.url, polled=5))
    try:
        row = await runninghub_row(app)
        tooltip = row.gauge.toolTip()
        assert "account: NORMAL, balance 177814 coins, 0 task(s) running" in tooltip
        assert f"queue: the key runs {ACCOUNT_LIMIT} task(s) at once" in tooltip
        assert row.status.text().startswith(f"warning: max_polling_tasks = 5 is above what the account runs "
                                            f"at once ({ACCOUNT_LIMIT})")
        assert row.status.styleSheet() == PROBLEM_STYLE
        assert DEMO_API_KEY not in tooltip + row.status.text() + row.name.toolTip()
        # The simulated poll lane checks no account: no notes, no warning.
        [sim] = [r for r in app.window.api_panel.rows if r.lane.name == "poll:sim-poll"]
        assert sim.gauge.toolTip() == "poll:sim-poll" and sim.status.text() == ""
    finally:
        await stop_app(app)


@pytest.mark.asyncio
@pytest.mark.timeout(90)
async def test_no_warning_when_the_account_runs_what_the_lane_polls(
        tmp_path, ui_settings: QSettings, server: RunningHubDemoServer) -> None:
    app = await start_app(tmp_path, ui_settings, extra_config=runninghub_config(server.url, polled=ACCOUNT_LIMIT))
    try:
        row = await runninghub_row(app)
        assert f"queue: the key runs {ACCOUNT_LIMIT} task(s) at once" in row.gauge.toolTip()
        assert "warning" not in row.status.text()  # (the room beside the counts shows the balance)
        assert "177,814" in row.status.text() and row.status.styleSheet() == ""  # news, not in a problem's red
    finally:
        await stop_app(app)


@pytest.mark.asyncio
@pytest.mark.timeout(90)
async def test_the_account_check_is_shown_in_chinese(tmp_path, ui_settings: QSettings,
                                                     server: RunningHubDemoServer) -> None:
    ui_settings.setValue("app/language", "zh_CN")
    app = await start_app(tmp_path, ui_settings, extra_config=runninghub_config(server.url, polled=5))
    try:
        row = await runninghub_row(app)
        tooltip = row.gauge.toolTip()
        assert "账户：NORMAL，余额 177814 个币，正在运行 0 个任务" in tooltip
        assert f"队列：此密钥可同时运行 {ACCOUNT_LIMIT} 个任务" in tooltip
        assert row.status.text() == (f"警告：max_polling_tasks = 5 超过账户可同时运行的任务数（{ACCOUNT_LIMIT}）；"
                                     "其余任务将在 RunningHub 队列中等待或收到 421")
    finally:
        await stop_app(app)
