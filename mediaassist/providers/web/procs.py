"""Chromium processes on one profile: find them, stop them, and judge its ``Singleton*`` files.

A process belongs to a profile only when its command line carries exactly
``--user-data-dir=<profile>`` (or the flag and the path as two arguments): a loose substring
match also hits unrelated processes, such as a test script that names the path. Never by name
alone: that would kill the operator's own browser.
"""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import psutil

SINGLETON_FILES = ("SingletonLock", "SingletonSocket", "SingletonCookie")
GRACE_S = 3.0  # real seconds between terminate and kill


def names_profile(cmdline: list[str], profile: Path) -> bool:
    wanted = os.path.normcase(str(profile))  # Windows paths compare case-insensitively
    for i, arg in enumerate(cmdline):
        if os.path.normcase(arg) == os.path.normcase(f"--user-data-dir={wanted}"):
            return True
        if arg == "--user-data-dir" and i + 1 < len(cmdline) and os.path.normcase(cmdline[i + 1]) == wanted:
            return True
    return False


def is_browser_main(cmdline: list[str]) -> bool:
    """Chromium's children carry ``--type=renderer|gpu-process|utility|zygote|...``."""
    return not any(arg.startswith("--type=") for arg in cmdline)


def profile_processes(profile: Path, candidates: Iterable[psutil.Process] | None = None) -> list[psutil.Process]:
    """Live processes (not ours, not zombies) whose command line names ``profile``."""
    found = []
    me = os.getpid()
    for proc in candidates if candidates is not None else psutil.process_iter():
        try:
            if proc.pid == me or proc.status() == psutil.STATUS_ZOMBIE:
                continue
            if names_profile(proc.cmdline(), profile):
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return found


def find_browser_main(profile: Path) -> psutil.Process | None:
    """The browser process we launched: among our descendants, the one without ``--type=``."""
    mine = psutil.Process().children(recursive=True)
    for proc in profile_processes(profile, mine):
        try:
            if is_browser_main(proc.cmdline()):
                return proc
        except psutil.Error:
            continue
    return None


def describe(proc: psutil.Process) -> str:
    try:
        kind = next((a[7:] for a in proc.cmdline() if a.startswith("--type=")), "browser")
        return f"{proc.pid} ({kind})"
    except psutil.Error:
        return str(proc.pid)


def _gone(proc: psutil.Process) -> bool:
    try:
        return not proc.is_running() or proc.status() == psutil.STATUS_ZOMBIE
    except psutil.Error:
        return True


async def wait_gone(procs: list[psutil.Process], timeout: float) -> list[psutil.Process]:
    """Wait without blocking the loop; returns the survivors (zombies count as gone)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    alive = [p for p in procs if not _gone(p)]
    while alive and loop.time() < deadline:
        await asyncio.sleep(0.05)
        alive = [p for p in alive if not _gone(p)]
    return alive


def _signal_all(procs: list[psutil.Process], kill: bool) -> None:
    for proc in procs:
        try:
            proc.kill() if kill else proc.terminate()
        except psutil.Error:
            continue


async def terminate_then_kill(procs: list[psutil.Process], grace_s: float = GRACE_S) -> list[psutil.Process]:
    """SIGTERM bottom-up (children first), wait ``grace_s``, SIGKILL survivors. Returns the killed."""
    _signal_all(list(reversed(procs)), kill=False)
    survivors = await wait_gone(procs, grace_s)
    await kill_now(survivors)
    return survivors


async def kill_now(procs: list[psutil.Process]) -> None:
    _signal_all(procs, kill=True)
    await wait_gone(procs, 1.0)


def process_tree(root: psutil.Process) -> list[psutil.Process]:
    """The root and its descendants, root first (collected before it dies: children get re-parented)."""
    try:
        return [root, *root.children(recursive=True)]
    except psutil.Error:
        return [root]


@dataclass
class SingletonVerdict:
    """What the profile's ``SingletonLock`` says: absent, stale (safe to remove) or held."""

    state: str  # "absent" | "stale" | "held" | "foreign_host"
    detail: str = ""


def judge_singleton(profile: Path) -> SingletonVerdict:
    """Stale only when all hold: this host, the pid is gone, no live process names the profile."""
    lock = profile / "SingletonLock"
    try:
        target = os.readlink(lock)
    except FileNotFoundError:
        return SingletonVerdict("absent")
    except OSError:  # a plain file (Windows) or unreadable: owner unknown, keep it
        return SingletonVerdict("held", f"{lock} exists and its owner cannot be read")
    host, _, pid_text = target.rpartition("-")
    if host != socket.gethostname():
        return SingletonVerdict("foreign_host", f"{lock} names host {host!r} (this is {socket.gethostname()!r})")
    if pid_text.isdigit() and _pid_alive(int(pid_text)):
        return SingletonVerdict("held", f"pid {pid_text} ({_name_of(int(pid_text))})")
    if profile_processes(profile):
        return SingletonVerdict("held", "a live process names the profile")
    return SingletonVerdict("stale", f"SingletonLock -> {target}")


def remove_singletons(profile: Path) -> list[str]:
    removed = []
    for name in SINGLETON_FILES:
        path = profile / name
        if path.is_symlink() or path.exists():
            path.unlink(missing_ok=True)
            removed.append(name)
    return removed


def _pid_alive(pid: int) -> bool:
    try:
        return not _gone(psutil.Process(pid))
    except psutil.NoSuchProcess:
        return False
    except psutil.AccessDenied:  # someone else's process: alive
        return True


def _name_of(pid: int) -> str:
    try:
        name: str = psutil.Process(pid).name()  # psutil is untyped: Any otherwise
    except psutil.Error:
        return "unknown"
    return name
