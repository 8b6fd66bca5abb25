"""``mediaassist accounts login NAME`` in a shell while the window runs on the same data dir: the
login goes to the window over its single-instance channel, is done by the window's lanes (on a
simulated account, which needs none; on a real chat UI, in the running lane's own browser), and
the command prints the window's answer."""

from __future__ import annotations

import asyncio
import gc
import os
import sys
from pathlib import Path

import pytest
from keyrings.alt.file import PlaintextKeyring
from PySide6.QtCore import QSettings

from mediaassist.core.paths import data_dir as resolve_data_dir
from mediaassist.providers.web import WebProvider
from mediaassist.providers.web.kept_login import KEPT_LOGIN_SERVICE
from mediaassist.runtime import RuntimeOptions
from mediaassist.ui.app import run_window
from mediaassist.ui.main_window import MainWindow
from mediaassist.ui.single_instance import SingleInstance, server_name
from tests.fixtures.webui.answers import answer_for
from tests.harness import wait_until
from tests.helpers import sim_config_text
from tests.web_helpers import WEB_SPEED, needs_chromium, stored_account, stored_result
from tests.webui_helpers import MULTI_LINE, PASSWORD, ChatApp, app_task, streamlit_login, write_profile

STREAMLIT_CONFIG = """
[[accounts]]
name = "acct-a"
site = "streamlit"

[[models]]
name = "streamlit-chat"
kind = "web"
site = "streamlit"
"""


@pytest.mark.asyncio
async def test_accounts_login_in_a_shell_is_done_by_the_running_windows_lanes(
        tmp_path: Path, ui_settings: QSettings) -> None:
    # Qt objects earlier tests left in reference cycles are freed here, on this thread: collected
    # later on the thread asyncio waits for the child process on, they warn about their timers.
    gc.collect()
    config = tmp_path / "config.toml"
    config.write_text(sim_config_text(accounts=("acct-a",)))
    options = RuntimeOptions(config_path=config, data_dir=tmp_path / "data", speed=20.0)
    instance = SingleInstance(server_name(resolve_data_dir(options.data_dir)))
    assert instance.listen()
    shown: list[MainWindow] = []
    runner = asyncio.ensure_future(run_window([], options, ui_settings, instance, use_tray=False,
                                              on_window=shown.append))
    try:
        await wait_until(lambda: shown or runner.done())
        env = {**os.environ, "DISPLAY": "", "WAYLAND_DISPLAY": "", "PYTHONPATH": str(Path(__file__).parents[2])}
        command = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "mediaassist", "accounts", "login", "acct-a", "--data-dir", str(options.data_dir),
            "--config", str(config), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env)
        out, err = await asyncio.wait_for(command.communicate(), 90)
    finally:
        if shown and not shown[0].quit_requested.done():
            shown[0].quit_requested.set_result(False)
        await asyncio.wait_for(runner, 30)
        instance.close()
        instance.deleteLater()  # in this thread: a garbage collection elsewhere would warn about its timers

    assert command.returncode == 0, err.decode()
    assert "acct-a: a simulated account needs no login (in the running window's lane)" in out.decode()


@pytest.mark.asyncio
@pytest.mark.browser
@needs_chromium
@pytest.mark.timeout(180)
@pytest.mark.parametrize("keep", [False, True], ids=["plain", "keep-login"])
async def test_accounts_login_in_a_shell_logs_a_real_chat_ui_in_inside_the_windows_running_lane(
        streamlit_app: ChatApp, tmp_path: Path, ui_settings: QSettings, os_keyring: PlaintextKeyring,
        keep: bool) -> None:
    # A Streamlit chat behind its password gate (a login kept only in the page): the window's lane
    # finds the gate on its first task and keeps its browser open (the profile is held); the
    # shell's `accounts login` is done in that browser, where the person types the password, and
    # the waiting tasks then run in that page. With --keep-login the window's lane keeps what
    # was typed in the OS keyring (the window's process's keyring: here a file backend).
    gc.collect()  # see the test above
    data_dir = tmp_path / "data"
    write_profile(streamlit_app, data_dir)
    config = tmp_path / "config.toml"
    config.write_text(STREAMLIT_CONFIG)
    options = RuntimeOptions(config_path=config, data_dir=data_dir, speed=WEB_SPEED)
    instance = SingleInstance(server_name(resolve_data_dir(options.data_dir)))
    assert instance.listen()
    shown: list[MainWindow] = []
    runner = asyncio.ensure_future(run_window([], options, ui_settings, instance, use_tray=False,
                                              on_window=shown.append))
    prompts = ["met the gate", "first, after the login", MULTI_LINE]
    try:
        await wait_until(lambda: shown or runner.done())
        window = shown[0]
        store = window.rt.store
        store.enqueue("b1", [app_task("streamlit", p) for p in prompts])
        window.rt.wake()
        lane = window.rt.scheduler.lanes["web:acct-a"]
        assert isinstance(lane.provider, WebProvider)
        runtime = lane.provider.runtime("acct-a")
        await wait_until(lambda: stored_account(store, "acct-a").login_state == "needs_login", timeout=60)
        assert runtime.is_open  # the lane's browser holds the profile: only the window can log it in

        env = {**os.environ, "DISPLAY": "", "WAYLAND_DISPLAY": "", "PYTHONPATH": str(Path(__file__).parents[2])}
        command = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "mediaassist", "accounts", "login", "acct-a", "--data-dir", str(data_dir),
            "--config", str(config), *(["--keep-login"] if keep else []), stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=env)
        await wait_until(lambda: runtime.is_open and runtime.headless is False, timeout=60)  # relaunched headed
        await streamlit_login(await runtime.page())  # the person, at the lane's window
        out, err = await asyncio.wait_for(command.communicate(), 90)
        await wait_until(lambda: all(t.state in ("success", "failed") for t in store.tasks(["b1"])), timeout=90)
        tasks = {t.prompt: t for t in store.tasks(["b1"])}
        results = {p: stored_result(store, tasks[p].task_id).text for p in prompts[1:]}
    finally:
        if shown and not shown[0].quit_requested.done():
            shown[0].quit_requested.set_result(False)
        await asyncio.wait_for(runner, 30)
        instance.close()
        instance.deleteLater()

    assert command.returncode == 0, err.decode()
    said = ("login ok (in the lane's own browser); kept in the OS keyring, re-entered whenever a new browser finds "
            "the page logged out" if keep else "login ok (in the lane's own browser, kept open for its tasks)")
    assert f"acct-a: {said} (in the running window's lane)" in out.decode()
    kept = os_keyring.get_password(KEPT_LOGIN_SERVICE, "acct-a") or ""
    assert (PASSWORD in kept) is keep
    gate = tasks["met the gate"]
    assert (gate.state, gate.error_kind) == ("failed", "login")  # the page showed the gate: the account waits
    assert results == {p: answer_for(p) for p in prompts[1:]}  # in the page the login was done in
