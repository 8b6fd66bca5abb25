"""``mediaassist accounts login NAME`` in a shell while the window runs on the same data dir: the
login goes to the window over its single-instance channel, is done by the window's lanes (here on
a simulated account, which needs none), and the command prints the window's answer."""

from __future__ import annotations

import asyncio
import gc
import os
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from mediaassist.core.paths import data_dir as resolve_data_dir
from mediaassist.runtime import RuntimeOptions
from mediaassist.ui.app import run_window
from mediaassist.ui.main_window import MainWindow
from mediaassist.ui.single_instance import SingleInstance, server_name
from tests.harness import wait_until
from tests.helpers import sim_config_text


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
