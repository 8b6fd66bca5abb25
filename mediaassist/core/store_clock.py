"""The store's clock: every time written to a shared store and judged against it comes from here.

On PostgreSQL that is the database server's clock, so hosts whose own clocks disagree (one two
minutes ahead, one that NTP just stepped) still agree on how old a heartbeat, a lease or a back-off
is. Asking the server for every timestamp would cost a round trip per statement, so the clock is
*anchored*: it reads the server's ``clock_timestamp()`` once, then counts on with this process's
monotonic clock (which no wall-clock step moves) and reads the server again every
``RESYNC_S``. The error stays within half a round trip plus the monotonic clock's drift over that
time -- milliseconds, beside heartbeats judged in tens of seconds.

A host whose own wall clock is more than ``SKEW_WARN_S`` off the server's is told so once in its
log; nothing it does depends on that clock.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

log = logging.getLogger("mediaassist.store")

RESYNC_S = 30.0  # real seconds between reads of the server's clock
RETRY_SYNC_S = 5.0  # after a read that failed
SKEW_WARN_S = 60.0  # a host clock this far off the server's is worth a line in the log


class ServerClock:
    """Epoch seconds on the server's clock. ``read_server`` returns the server's time now."""

    def __init__(self, read_server: Callable[[], float], where: str) -> None:
        self._read_server = read_server
        self._where = where
        self._anchor: float | None = None  # the server's time at ...
        self._anchored_at = 0.0  # ... this monotonic instant
        self._next_sync = 0.0  # monotonic
        self._warned = False

    def now(self) -> float:
        if self._anchor is None or time.monotonic() >= self._next_sync:
            self._sync()
        assert self._anchor is not None  # _sync sets it or raises
        return self._anchor + (time.monotonic() - self._anchored_at)

    def _sync(self) -> None:
        before = time.monotonic()
        try:
            server = self._read_server()
        except Exception:
            if self._anchor is None:
                raise  # nothing to count on from: the caller's statement would fail the same way
            # Count on from the last reading (monotonic time does not step); read again soon.
            self._next_sync = before + RETRY_SYNC_S
            return
        after = time.monotonic()
        self._anchor, self._anchored_at = server, (before + after) / 2
        self._next_sync = after + RESYNC_S
        self._tell_skew(time.time() - server - (after - before) / 2)

    def _tell_skew(self, skew_s: float) -> None:
        if self._warned or abs(skew_s) < SKEW_WARN_S:
            return
        self._warned = True
        direction = "ahead of" if skew_s > 0 else "behind"
        log.warning("this machine's clock is %.0f s %s the clock of the shared store %s; mediaassist times "
                    "heartbeats, leases and retries by the store's clock, so this changes nothing it does "
                    "(but fix the machine's time: NTP, timedatectl)", abs(skew_s), direction, self._where)
