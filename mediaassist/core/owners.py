"""Who runs a row: the one owner format, built and judged here and nowhere else.

An owner is ``host:pid:start:token``: the host (``location.host_id``: the host name, or
``MEDIAASSIST_HOST_ID`` when several processes stand in for several machines), the process id, the process's start time
(so a pid the OS reused is not taken for the old process) and a random token per scheduler (so
two schedulers of one process, or a scheduler restarted in the same process, are told apart).

A process on *this* host is judged by the OS: it is dead when its pid is gone, belongs to a
process that started at another time, or is a zombie (exited, not yet reaped by its parent). A
process on *another* host is never judged by its pid (that pid means nothing here): only by
how old the heartbeat of its rows, or of its presence row, is on the store's clock.
"""

from __future__ import annotations

import functools
import os
import uuid
from dataclasses import dataclass

import psutil

from mediaassist.core.location import host_id

# psutil derives a start time from boot time + clock ticks; both may be re-read with a little
# jitter, so "the same process" allows this much difference.
START_TOLERANCE_S = 2.0


@dataclass(frozen=True)
class Owner:
    host: str
    pid: int
    start: float
    token: str

    def __str__(self) -> str:
        return f"{self.host}:{self.pid}:{self.start:.0f}:{self.token}"

    @classmethod
    def parse(cls, text: str) -> Owner | None:
        """The owner written by :func:`new_owner`, or None for anything else (an old or foreign
        format proves nothing, so it is never judged dead)."""
        parts = text.rsplit(":", 3)
        if len(parts) != 4 or not parts[1].isdigit():
            return None
        host, pid, start, token = parts
        try:
            started = float(start)
        except ValueError:
            return None
        return cls(host=host, pid=int(pid), start=started, token=token)


def new_owner() -> Owner:
    """A fresh owner for one scheduler of this process."""
    return Owner(host=host_id(), pid=os.getpid(), start=psutil.Process().create_time(),
                 token=uuid.uuid4().hex[:8])


def owner_is_dead(owner: str, heartbeat_at: float | None = None, now: float | None = None,
                  stale_after_s: float | None = None) -> bool:
    """True only when it is proven.

    Same host: the pid is gone, is another process (other start time), or has exited and waits
    for its parent to reap it (a zombie runs nothing). Another host: only a heartbeat older than
    ``stale_after_s`` proves it (all three must be given); never the pid.
    """
    parsed = Owner.parse(owner)
    if parsed is None:
        return False
    if parsed.host != host_id():
        if heartbeat_at is None or now is None or stale_after_s is None:
            return False
        return now - heartbeat_at > stale_after_s
    return _local_status(parsed) == "dead"


def owner_is_running_here(owner: str) -> bool:
    """True when the owner is a process on this host that exists and is not stopped (Ctrl-Z, a
    debugger) or a zombie: it beats for its own rows, whatever the wall clock says."""
    parsed = Owner.parse(owner)
    return parsed is not None and parsed.host == host_id() and _local_status(parsed) == "running"


def _local_status(owner: Owner) -> str:
    """"dead", "running", or "unknown" (stopped, or the OS would not say) for a process here."""
    try:
        process = psutil.Process(owner.pid)
        if abs(process.create_time() - owner.start) > START_TOLERANCE_S:
            return "dead"  # the pid now belongs to another process
        status = process.status()
    except psutil.NoSuchProcess:  # ZombieProcess is one: the pid's process has exited
        return "dead"
    except psutil.Error:  # e.g. access denied: the process exists, so it is not proven dead
        return "unknown"
    if status in (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD):
        return "dead"
    if status in (psutil.STATUS_STOPPED, psutil.STATUS_TRACING_STOP):
        return "unknown"
    return "running"


@functools.lru_cache(maxsize=64)  # a process's claims name the same few owners, each claim
def owner_host(owner: str) -> str | None:
    """The machine an owner runs on, or None for a text in no owner format."""
    parsed = Owner.parse(owner)
    return parsed.host if parsed else None


def describe_owner(owner: str) -> str:
    """``process 1234 on host`` for messages; the raw text for an unknown format."""
    parsed = Owner.parse(owner)
    if parsed is None:
        return owner
    return f"process {parsed.pid} on {parsed.host}"
