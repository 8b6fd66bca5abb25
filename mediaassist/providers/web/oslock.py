"""The OS-level lock on one account's profile, held for as long as its browser lives.

The kernel drops the lock when the holder dies (even on kill -9), so a crashed run never leaves
the profile locked. The file name carries a hash of the OS user name, so two users whose data
dirs meet on a shared path never fight over one lock. The holder writes who it is into the file,
so the one who is refused can say whom to look for.
"""

from __future__ import annotations

import getpass
import hashlib
import json
import os
import sys
import time
from pathlib import Path
from typing import IO, Any

from mediaassist.core.paths import make_private_dir


class ProfileBusy(Exception):
    """Another process holds the profile's lock; the message says which one."""


def user_hash() -> str:
    return hashlib.sha256(getpass.getuser().encode("utf-8")).hexdigest()[:12]


def lock_path(profile: Path) -> Path:
    return profile.parent / ".locks" / f"{profile.name}-{user_hash()}.lock"


class ProfileLock:
    def __init__(self, profile: Path) -> None:
        self.path = lock_path(profile)
        self._file: IO[str] | None = None

    @property
    def held(self) -> bool:
        return self._file is not None

    def acquire(self) -> None:
        """Take the lock now or raise ProfileBusy naming the holder; never waits."""
        if self._file is not None:
            return
        make_private_dir(self.path.parent)
        # no `with`: the open handle *is* the lock, kept until release()
        handle = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115
        try:
            _lock_nowait(handle)
        except OSError:
            handle.close()
            raise ProfileBusy(self._holder_text()) from None
        self._file = handle
        self.record()

    def record(self, **extra: Any) -> None:
        """Write who holds the lock (and the browser pid once known) into the file."""
        if self._file is None:
            return
        info = {"pid": os.getpid(), "program": " ".join(sys.argv[:3]), "since": time.time(), **extra}
        self._file.seek(0)
        self._file.truncate()
        self._file.write(json.dumps(info))
        self._file.flush()

    def holder_elsewhere(self) -> dict[str, Any] | None:
        """Who holds the lock when another process does ({"pid", "program", ...}; {} when it
        did not say), else None. Takes and drops the lock to find out; never waits."""
        try:
            self.acquire()
        except ProfileBusy:
            return self._holder_info()
        self.release()
        return None

    def _holder_info(self) -> dict[str, Any]:
        try:
            info = json.loads(self.path.read_text(encoding="utf-8") or "{}")
        except (OSError, ValueError):
            return {}
        return info if isinstance(info, dict) else {}

    def release(self) -> None:
        if self._file is None:
            return
        try:
            self._file.seek(0)
            self._file.truncate()
            _unlock(self._file)
        finally:
            self._file.close()
            self._file = None

    def _holder_text(self) -> str:
        info = self._holder_info()
        if not info:
            return f"another process holds {self.path}"
        text = f"process {info.get('pid')} ({info.get('program') or 'unknown program'})"
        if info.get("browser_pid"):
            text += f" with browser pid {info['browser_pid']}"
        return text


# sys.platform, not os.name == "nt": the same test, and the one type checkers understand
if sys.platform == "win32":
    import msvcrt

    def _lock_nowait(handle: IO[str]) -> None:
        handle.seek(0)
        msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)

    def _unlock(handle: IO[str]) -> None:
        handle.seek(0)
        msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)
else:
    import fcntl

    def _lock_nowait(handle: IO[str]) -> None:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)

    def _unlock(handle: IO[str]) -> None:
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
