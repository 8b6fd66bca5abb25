from __future__ import annotations

import socket
import uuid
from pathlib import Path

import pytest
from PySide6.QtCore import QDir

from mediaassist.ui.single_instance import SingleInstance, server_name
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
