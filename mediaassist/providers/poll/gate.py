"""The create gate: one create at a time per provider, in FIFO order, with back-off and pacing.

Held in the store (``Store.try_gate``), so it holds across every process on the store: two
``mediaassist run``s and the window never create at once on one provider, and a "come back
later" seen by one of them (the gate's shared ``not_before``) holds for all. Inside one process
an asyncio lock (FIFO-fair) keeps arrival order, so only the lock's holder contends for the
store's gate. Behind the small ``CreateGate`` interface, so the lane does not care which gate.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Protocol

from mediaassist.core.clock import Clock
from mediaassist.core.owners import new_owner

if TYPE_CHECKING:
    from mediaassist.core.lane_store import LaneStore

LEASE_S = 30.0  # real seconds; renewed every third of it while held
CONTEND_S = 0.05  # real seconds between tries while another process holds the gate


class CreateGate(Protocol):
    def turn(self) -> contextlib.AbstractAsyncContextManager[None]:
        """Hold the gate: the holder is the head of the FIFO; waiters keep arrival order."""
        ...

    def mark(self) -> int:
        """A token for ``wait_capacity``: how many of our remote tasks had ended so far."""
        ...

    async def wait_capacity(self, delay_s: float, mark: int) -> None:
        """Back off for ``delay_s`` real seconds (for everyone on the gate), or less once one of
        our tasks ended since ``mark``."""
        ...

    def slot_freed(self) -> None:
        """One of our remote tasks ended (capacity may be back)."""
        ...

    async def pace(self) -> None:
        """Wait until the next request may be sent (the shared back-off, a minimum spacing)."""
        ...


class StoreCreateGate:
    def __init__(self, store: LaneStore, name: str, clock: Clock, min_interval_s: float = 0.0) -> None:
        self.store = store
        self.name = name
        self.clock = clock
        self.min_interval_s = min_interval_s
        self.owner = str(new_owner())
        self._lock = asyncio.Lock()
        self._freed = asyncio.Event()
        self._frees = 0
        self._last_send = float("-inf")

    @contextlib.asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        async with self._lock:
            while not self.store.try_gate(self.name, self.owner, LEASE_S):
                await asyncio.sleep(CONTEND_S)
            renewer = asyncio.ensure_future(self._renew())
            try:
                yield
            finally:
                renewer.cancel()
                await asyncio.gather(renewer, return_exceptions=True)
                self.store.release_gate(self.name, self.owner)

    async def _renew(self) -> None:
        while True:
            await asyncio.sleep(LEASE_S / 3)
            self.store.renew_gate(self.name, self.owner, LEASE_S)

    def mark(self) -> int:
        return self._frees

    async def wait_capacity(self, delay_s: float, mark: int) -> None:
        self.store.set_gate_not_before(self.name, self.store.now() + delay_s)
        if self._frees != mark:
            self.store.set_gate_not_before(self.name, 0.0)
            return  # one of ours ended while we asked: capacity is back already
        try:
            await asyncio.wait_for(self._freed.wait(), delay_s)
        except TimeoutError:
            return
        self.store.set_gate_not_before(self.name, 0.0)  # freed early: nobody needs to wait longer

    def slot_freed(self) -> None:
        self._frees += 1
        self._freed.set()
        self._freed = asyncio.Event()

    async def pace(self) -> None:
        shared = self.store.gate_not_before(self.name) - self.store.now()
        spacing = self._last_send + self.clock.real(self.min_interval_s) - self.clock.monotonic()
        wait = max(shared, spacing)
        if wait > 0:
            await asyncio.sleep(wait)
        self._last_send = self.clock.monotonic()
