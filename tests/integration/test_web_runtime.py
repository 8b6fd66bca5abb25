"""The browser runtime's safety: leftovers reaped, shared profiles refused, hung browsers killed."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest

from mediaassist.core.clock import Clock
from mediaassist.core.store import Store
from mediaassist.providers.web import login_account
from mediaassist.providers.web.browser import (
    BrowserRuntime,
    LaunchSettings,
    PlaywrightHandle,
    ProfileInUse,
    find_chromium,
    profile_dir,
)
from mediaassist.providers.web.oslock import lock_path, user_hash
from mediaassist.providers.web.procs import profile_processes
from tests.harness import run_batch, scheduler_running, task_log, wait_until
from tests.helpers import cli, write_config
from tests.web_helpers import WEB_SPEED, demo_site, log_in, needs_chromium, web_config, web_task

# The browser is the subject here, not the store (test_store covers it on both back-ends).
pytestmark = pytest.mark.sqlite_only


def _lines() -> tuple[list[str], Callable[[str], None]]:
    lines: list[str] = []
    return lines, lines.append


@pytest.mark.asyncio
async def test_stale_singleton_files_are_removed_and_live_owners_respected(data_dir: Path) -> None:
    runtime = BrowserRuntime("acct", profile_dir(data_dir, "acct"), LaunchSettings())
    lines, log = _lines()
    os.symlink(f"{socket.gethostname()}-{2**22 + 12345}", runtime.profile / "SingletonLock")  # a dead pid
    (runtime.profile / "SingletonCookie").write_text("x")
    await runtime.self_check(log)
    assert not (runtime.profile / "SingletonLock").is_symlink()
    assert not (runtime.profile / "SingletonCookie").exists()
    assert any("removed stale SingletonLock, SingletonCookie" in line for line in lines)

    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        os.symlink(f"{socket.gethostname()}-{other.pid}", runtime.profile / "SingletonLock")
        with pytest.raises(ProfileInUse) as refused:  # busy, not logged out: the task is requeued
            await runtime.self_check(log)
        assert refused.value.wait_s and f"pid {other.pid}" in str(refused.value)
        assert (runtime.profile / "SingletonLock").is_symlink()  # a live owner's lock is never deleted
    finally:
        other.kill()
        other.wait()


def test_lock_file_path_carries_a_hash_of_the_os_user(data_dir: Path) -> None:
    path = lock_path(profile_dir(data_dir, "acct"))
    assert user_hash() in path.name and len(user_hash()) == 12
    assert os.stat(path.parent.parent).st_mode & 0o077 == 0  # profiles dir is private


@pytest.mark.browser
@needs_chromium
@pytest.mark.asyncio
async def test_leftover_chromium_on_the_profile_is_reaped_before_launch(store: Store, data_dir: Path) -> None:
    config = web_config()
    with demo_site(data_dir) as site:
        await log_in(config, data_dir, site)
        profile = profile_dir(data_dir, "acct-a")
        leftover = subprocess.Popen(
            [find_chromium(None), "--headless=new", "--no-sandbox", f"--user-data-dir={profile}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            await wait_until(lambda: (profile / "SingletonLock").is_symlink(), timeout=20)
            tasks = await run_batch(store, config, data_dir, [web_task("after the leftover")], WEB_SPEED)
        finally:
            leftover.kill()
            leftover.wait()
    log = task_log(store, tasks[0].task_id)
    assert tasks[0].state == "success"
    assert f"leftover Chromium process(es) on this profile: {leftover.pid} (browser)" in log
    assert leftover.returncode is not None and not profile_processes(profile)


@pytest.mark.browser
@needs_chromium
@pytest.mark.asyncio
async def test_profile_held_by_another_process_requeues_and_leaves_the_login_state(
        store: Store, data_dir: Path) -> None:
    config = web_config()
    profile = profile_dir(data_dir, "acct-a")
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from pathlib import Path; "
         "from mediaassist.providers.web.oslock import ProfileLock; "
         "held = ProfileLock(Path(sys.argv[1])); held.acquire(); print('locked', flush=True); time.sleep(60)",
         str(profile)],
        stdout=subprocess.PIPE, text=True)
    store.sync_accounts(config.accounts)
    store.set_login_state("acct-a", "ok")
    clock = Clock(speed=10)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with demo_site(data_dir) as site:
            # The one account is busy elsewhere: the task goes back and waits (it is not failed),
            # so the scheduler is stopped once it has been handed back.
            async with scheduler_running(store, config, data_dir, clock) as sched:
                [task_id], _ = store.enqueue("b1", [web_task("refused")])
                sched.wake()
                await wait_until(lambda: "back in the queue" in task_log(store, task_id))
            assert site.snapshot()["generations"] == []
            # the operator's login tool cannot open the profile either, and records nothing
            assert not await login_account("acct-a", config, data_dir, store, headless=True, timeout_s=5)
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()
    [task] = store.tasks(["b1"])
    assert (task.state, task.attempt, task.error_kind) == ("pending", 1, None)
    assert f"in use by another program: process {holder.pid}" in task_log(store, task.task_id)
    assert store.account("acct-a").login_state == "ok"  # busy is not logged out
    assert not profile_processes(profile)  # no browser was started on the shared profile


@pytest.mark.browser
@needs_chromium
@pytest.mark.asyncio
async def test_a_browser_that_ignores_close_is_killed_after_three_seconds_even_if_the_close_is_cancelled(
        data_dir: Path) -> None:
    runtime = BrowserRuntime("acct", profile_dir(data_dir, "acct"), LaunchSettings())
    handle = PlaywrightHandle()
    lines, log = _lines()
    try:
        await runtime.open(await handle.get(), log)
        browser = runtime.browser
        assert browser is not None and f"browser launched (pid {browser.pid})" in lines
        tree = [browser, *browser.children(recursive=True)]
        os.kill(browser.pid, signal.SIGSTOP)  # a hung browser: it cannot answer the close
        closing = asyncio.ensure_future(runtime.close(log))
        await asyncio.sleep(1)
        closing.cancel()  # e.g. the task is cancelled while its browser is being recycled
        with pytest.raises(asyncio.CancelledError):
            await closing
    finally:
        await handle.stop()
    assert "browser did not close within 3 s" in lines
    assert any(f"browser pid {browser.pid} still running 3 s after close; killed its tree" in line for line in lines)
    for proc in tree:
        assert not proc.is_running() or proc.status() == psutil.STATUS_ZOMBIE
    assert not runtime.os_lock.held


@pytest.mark.browser
@needs_chromium
@pytest.mark.asyncio
async def test_a_launch_cancelled_half_way_leaves_no_browser_behind(data_dir: Path, tmp_path: Path) -> None:
    started = tmp_path / "launch-started"
    slow_chromium = tmp_path / "slow-chromium"  # Chromium that takes a second to come up
    slow_chromium.write_text(f'#!/bin/sh\ntouch "{started}"\nsleep 1\nexec "{find_chromium(None)}" "$@"\n')
    slow_chromium.chmod(0o755)
    runtime = BrowserRuntime("acct", profile_dir(data_dir, "acct"), LaunchSettings(chromium_path=str(slow_chromium)))
    handle = PlaywrightHandle()
    lines, log = _lines()
    try:
        opening = asyncio.ensure_future(runtime.open(await handle.get(), log))
        await wait_until(started.exists, timeout=20)
        opening.cancel()
        with pytest.raises(asyncio.CancelledError):
            await opening
        assert not profile_processes(runtime.profile)  # the launch finished, then was closed
        assert not runtime.os_lock.held and not runtime.is_open
        assert any(line.startswith("browser closed (pid ") for line in lines)
    finally:
        await handle.stop()


@pytest.mark.browser
@needs_chromium
@pytest.mark.asyncio
async def test_a_browser_that_quits_as_it_starts_is_launched_once_more(data_dir: Path, tmp_path: Path) -> None:
    """Seen on CI: a login's launch right after the lane's browser closed ended with "Target
    page, context or browser has been closed", and the login failed."""
    tried = tmp_path / "tried-once"
    flaky_chromium = tmp_path / "flaky-chromium"  # quits at once the first time, then is Chromium
    flaky_chromium.write_text(f'#!/bin/sh\nif [ ! -e "{tried}" ]; then touch "{tried}"; exit 1; fi\n'
                              f'exec "{find_chromium(None)}" "$@"\n')
    flaky_chromium.chmod(0o755)
    runtime = BrowserRuntime("acct", profile_dir(data_dir, "acct"), LaunchSettings(chromium_path=str(flaky_chromium)))
    handle = PlaywrightHandle()
    lines, log = _lines()
    try:
        context = await runtime.open(await handle.get(), log)
        page = await context.new_page()
        await page.set_content("<p>up</p>")
        assert await page.inner_text("p") == "up"
        assert tried.exists() and any(line.startswith("the browser quit as it started (") for line in lines)
        await runtime.close(log)
    finally:
        await handle.stop()
    assert not runtime.os_lock.held


@pytest.mark.asyncio
async def test_helpers_started_by_a_dying_leftover_are_reaped_too(data_dir: Path) -> None:
    runtime = BrowserRuntime("acct", profile_dir(data_dir, "acct"), LaunchSettings())
    lines, log = _lines()
    # a browser caught mid-start-up: told to stop, it still starts a helper on the profile
    script = ("import signal, subprocess, sys, time\n"
              "def spawn_and_exit(*_):\n"
              "    subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)',\n"
              "                      '--type=utility', sys.argv[1]])\n"
              "    sys.exit(0)\n"
              "signal.signal(signal.SIGTERM, spawn_and_exit)\n"
              "print('ready', flush=True)\n"
              "time.sleep(60)\n")
    leftover = subprocess.Popen([sys.executable, "-c", script, f"--user-data-dir={runtime.profile}"],
                                stdout=subprocess.PIPE, text=True)
    assert leftover.stdout is not None  # stdout=PIPE
    try:
        assert leftover.stdout.readline().strip() == "ready"
        await runtime.self_check(log)
    finally:
        leftover.kill()
        for straggler in profile_processes(runtime.profile):
            straggler.kill()
        leftover.wait()
        leftover.stdout.close()
    assert f"leftover Chromium process(es) on this profile: {leftover.pid} (browser)" in lines[0]
    assert not profile_processes(runtime.profile)


_HOLD_PROFILE = """
import sys
from pathlib import Path
from mediaassist.providers.web.oslock import ProfileLock
lock = ProfileLock(Path(sys.argv[1]))
lock.acquire()
print("held", flush=True)
sys.stdin.read()  # until the test closes our stdin
"""


def test_accounts_login_while_a_headless_run_holds_the_profile_says_to_stop_that_run(
        data_dir: Path, tmp_path: Path) -> None:
    # No window runs here: the login cannot be handed to the lane, and the line says what to do.
    config = write_config(tmp_path / "config.toml", '[[accounts]]\nname = "acct-a"\nsite = "demochat"\n')
    holder = subprocess.Popen([sys.executable, "-c", _HOLD_PROFILE, str(profile_dir(data_dir, "acct-a"))],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        # a display is named (never opened: the profile is refused first)
        done = cli("accounts", "login", "acct-a", "--config", str(config), "--data-dir", str(data_dir),
                   env={"DISPLAY": ":1999", "QT_QPA_PLATFORM": "offscreen"})
    finally:
        holder.communicate(timeout=30)
    answer = done.stderr.strip().splitlines()[-1]  # after the log's warning line
    assert done.returncode == 1, done.stderr
    assert answer.startswith(f"acct-a: login not confirmed: the browser profile of account 'acct-a' is in use by "
                             f"another program: process {holder.pid}"), answer
    assert "Only the window hands a login to a running lane" in answer and "stop it" in answer


@pytest.mark.parametrize("command", [
    ["sites", "check", "demochat", "--account", "acct-a"],
    ["sites", "learn", "http://127.0.0.1:9/", "--name", "mine", "--account", "acct-a"]])
def test_a_site_command_on_a_profile_held_by_another_process_is_one_line_and_exit_1(
        data_dir: Path, tmp_path: Path, command: list[str]) -> None:
    config = write_config(tmp_path / "config.toml", '[[accounts]]\nname = "acct-a"\nsite = "demochat"\n')
    holder = subprocess.Popen([sys.executable, "-c", _HOLD_PROFILE, str(profile_dir(data_dir, "acct-a"))],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        done = cli(*command, "--config", str(config), "--data-dir", str(data_dir))
    finally:
        holder.communicate(timeout=30)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1 and len(lines) == 1, done.stderr
    assert lines[0].startswith(f"mediaassist: {' '.join(command[:2])}: the browser profile of account 'acct-a' "
                               f"is in use by another program: process {holder.pid}")
    assert "try again" in lines[0] and "goes back to the queue" not in lines[0]
