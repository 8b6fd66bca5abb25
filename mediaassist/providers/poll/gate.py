"""The create gate: one create at a time per provider, in FIFO order, with back-off and pacing.

Behind a small interface so a store-held gate (shared by every process on the store) can take
this one's place without touching the lane.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Protocol

from mediaassist.core.clock import Clock


class CreateGate(Protocol):
    def turn(self) -> contextlib.AbstractAsyncContextManager[None]:
        """Hold the gate: the holder is the head of the FIFO; waiters keep arrival order."""
        ...

    def mark(self) -> int:
        """A token for ``wait_capacity``: how many of our remote tasks had ended so far."""
        ...

    async def wait_capacity(self, delay_s: float, mark: int) -> None:
        """Back off for ``delay_s`` real seconds, or less once one of our tasks ended since ``mark``."""
        ...

    def slot_freed(self) -> None:
        """One of our remote tasks ended (capacity may be back)."""
        ...

    async def pace(self) -> None:
        """Wait until the next request may be sent (a minimum spacing between sends)."""
        ...


class LocalCreateGate:
    """The gate inside one process: an asyncio lock (FIFO-fair) and a "slot freed" event."""

    def __init__(self, clock: Clock, min_interval_s: float = 0.0) -> None:
        self.clock = clock
        self.min_interval_s = min_interval_s
        self._lock = asyncio.Lock()
        self._freed = asyncio.Event()
        self._frees = 0
        self._last_send = float("-inf")

    @contextlib.asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        async with self._lock:
            yield

    def mark(self) -> int:
        return self._frees

    async def wait_capacity(self, delay_s: float, mark: int) -> None:
        if self._frees != mark:
            return  # one of ours ended while we asked: capacity is back already
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._freed.wait(), delay_s)

    def slot_freed(self) -> None:
        self._frees += 1
        self._freed.set()
        self._freed = asyncio.Event()

    async def pace(self) -> None:
        wait = self._last_send + self.clock.real(self.min_interval_s) - self.clock.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)
        self._last_send = self.clock.monotonic()
