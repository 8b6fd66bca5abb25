from __future__ import annotations

import asyncio
import gc
import os
import socket
import sys
import uuid
from pathlib import Path

import pytest
from PySide6.QtCore import QDir, QTimer

from mediaassist.core.paths import data_dir as resolve_data_dir
from mediaassist.ui.single_instance import LoginReply, SingleInstance, server_name
from tests.harness import wait_until


def _unique_name() -> str:
    return f"mediaassist-test-{uuid.uuid4().hex[:8]}"


@pytest.mark.asyncio
async def test_second_launch_hands_its_files_to_the_first(tmp_path: Path) -> None:
    name = _unique_name()
    first = SingleInstance(name)
    assert not first.hand_over([])  # nobody is running yet
    assert first.listen()
    received: list[list[str]] = []
    first.files_received.connect(received.append)
    second = SingleInstance(name)
    assert second.hand_over([tmp_path / "a.csv", tmp_path / "中文.xlsx"])
    await wait_until(lambda: received)
    assert received == [[str(tmp_path / "a.csv"), str(tmp_path / "中文.xlsx")]]
    first.close()


@pytest.mark.asyncio
async def test_a_stale_socket_from_a_crash_does_not_block_start_up() -> None:
    name = _unique_name()
    path = Path(QDir.tempPath()) / name
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(path))  # bound, never listening, then the "process" dies: the file stays
    stale.close()
    assert path.exists()
    instance = SingleInstance(name)
    assert not instance.hand_over([])  # the dead socket answers nothing
    assert instance.listen()
    instance.close()


def test_server_name_is_per_user_and_data_dir(tmp_path: Path) -> None:
    assert server_name(tmp_path / "a") == server_name(tmp_path / "a")
    assert server_name(tmp_path / "a") != server_name(tmp_path / "b")


@pytest.mark.asyncio
async def test_a_failed_listen_never_removes_a_live_instances_socket(tmp_path: Path) -> None:
    name = _unique_name()
    first, late = SingleInstance(name), SingleInstance(name)
    assert first.listen()
    received: list[list[str]] = []
    first.files_received.connect(received.append)
    assert not late.listen()  # started at the same moment: the first one is alive and keeps its socket
    assert first.server is not None and first.server.isListening()
    assert SingleInstance(name).hand_over([tmp_path / "x.csv"])
    await wait_until(lambda: received)
    assert received == [[str(tmp_path / "x.csv")]]
    first.close()


@pytest.mark.asyncio
async def test_claim_listens_first_then_hands_over(tmp_path: Path) -> None:
    name = _unique_name()
    first = SingleInstance(name)
    assert not first.claim([])  # nobody running: this one listens
    received: list[list[str]] = []
    first.files_received.connect(received.append)
    assert SingleInstance(name).claim([tmp_path / "y.csv"])
    await wait_until(lambda: received)
    assert received == [[str(tmp_path / "y.csv")]]
    assert not (Path(QDir.tempPath()) / f"{name}.lock").exists()  # released after start-up
    first.close()


@pytest.mark.asyncio
@pytest.mark.parametrize("outcome", [True, False])
async def test_accounts_login_from_a_shell_is_handed_to_the_running_window_and_answered(
        tmp_path: Path, outcome: bool) -> None:
    """``mediaassist accounts login`` in another process, while the window runs on the data dir:
    the window (here its single-instance end, answering as its lanes do) does the login and the
    command reports the window's answer -- with no display of its own: the window has one."""
    # Qt objects earlier tests left in reference cycles are freed here, on this thread: collected
    # later on the thread asyncio waits for the child process on, they warn about their timers.
    gc.collect()
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    window = SingleInstance(server_name(resolve_data_dir(data_dir)))
    assert window.listen()
    asked: list[str] = []

    def log_in(account: str, reply: LoginReply, keep_login: bool) -> None:
        asked.append(account)
        assert not keep_login  # only with --keep-login
        message = "login ok (in the lane's own browser)" if outcome else "no login was seen before the time ran out"
        QTimer.singleShot(300, lambda: reply(outcome, message))
    window.login_requested.connect(log_in)
    env = {**os.environ, "DISPLAY": "", "WAYLAND_DISPLAY": "", "PYTHONPATH": str(Path(__file__).parents[2])}
    command = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "mediaassist", "accounts", "login", "acct-a", "--data-dir", str(data_dir),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env)
    out, err = await asyncio.wait_for(command.communicate(), 90)
    window.close()
    window.deleteLater()  # in this thread: a garbage collection elsewhere would warn about its timers

    assert asked == ["acct-a"]
    if outcome:
        assert command.returncode == 0 and "acct-a: login ok (in the lane's own browser)" in out.decode()
    else:
        assert command.returncode == 1 and "no login was seen before the time ran out" in err.decode()
