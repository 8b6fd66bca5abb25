"""The window's import steps: every row once, in order, the loop running between steps, and
each step sized to the CPU budget."""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

import pytest

from mediaassist.runtime import IMPORT_STEP_BUDGET_S, IMPORT_STEP_ROWS, in_budgeted_steps

FEWEST, FIRST, MOST = IMPORT_STEP_ROWS


def _burn(cpu_s: float) -> None:
    """Spend this much CPU of this thread (what a step's SQLite and Python work costs)."""
    end = time.thread_time() + cpu_s
    while time.thread_time() < end:
        pass


class LoopTurns:
    """Counts the loop's turns while ``running`` (``pause_s``: how long each turn sleeps)."""

    def __init__(self, pause_s: float = 0.0) -> None:
        self.count = 0
        self.pause_s = pause_s
        self.running: asyncio.Future[None] | None = None

    def start(self) -> None:
        self.running = asyncio.ensure_future(self._turn())

    def stop(self) -> None:
        assert self.running is not None
        self.running.cancel()

    async def _turn(self) -> None:
        while True:
            self.count += 1
            await asyncio.sleep(self.pause_s)


@pytest.mark.asyncio
async def test_cheap_steps_grow_to_the_most_and_cover_every_item_in_order() -> None:
    items = list(range(10_000))
    seen: list[int] = []
    sizes: list[int] = []

    def step(chunk: Sequence[int]) -> None:
        sizes.append(len(chunk))
        seen.extend(chunk)

    await in_budgeted_steps(items, step)
    assert seen == items
    assert sizes[0] == FIRST
    assert max(sizes) == MOST  # appending ints costs far below the budget


@pytest.mark.asyncio
async def test_costly_steps_shrink_to_the_budget_and_the_loop_runs_between_them() -> None:
    per_item = IMPORT_STEP_BUDGET_S / 10  # the budget fits 10 items: the floor applies
    sizes: list[int] = []
    between: list[int] = []
    turns = LoopTurns()

    def step(chunk: Sequence[int]) -> None:
        between.append(turns.count)
        sizes.append(len(chunk))
        _burn(per_item * len(chunk))

    turns.start()
    await asyncio.sleep(0)
    await in_budgeted_steps(list(range(FIRST + 3 * FEWEST)), step)
    turns.stop()
    assert sizes == [FIRST, FEWEST, FEWEST, FEWEST]
    assert all(later > earlier for earlier, later in itertools.pairwise(between))


@pytest.mark.asyncio
async def test_no_items_no_step() -> None:
    calls: list[Sequence[int]] = []
    await in_budgeted_steps([], calls.append)
    assert calls == []


@pytest.mark.asyncio
async def test_steps_run_through_a_worker_thread_while_the_loop_keeps_running() -> None:
    """The window's import steps run in a worker thread (its own store connection): the loop
    runs *during* a step, not only between steps."""
    loop_thread = threading.get_ident()
    turns = LoopTurns(pause_s=0.001)
    step_threads: set[int] = set()
    turns_during: list[int] = []
    seen: list[int] = []

    def step(chunk: Sequence[int]) -> None:
        step_threads.add(threading.get_ident())
        before = turns.count
        deadline = time.monotonic() + 30
        while turns.count < before + 3 and time.monotonic() < deadline:  # until the loop has turned meanwhile
            time.sleep(0.001)
        turns_during.append(turns.count - before)
        seen.extend(chunk)

    with ThreadPoolExecutor(max_workers=1) as pool:
        async def run(call: Callable[..., float], *args: object) -> float:
            return await asyncio.get_running_loop().run_in_executor(pool, call, *args)

        turns.start()
        items = list(range(FIRST + 2 * FEWEST))
        await in_budgeted_steps(items, step, run)
        turns.stop()
    assert seen == items
    assert loop_thread not in step_threads and len(step_threads) == 1
    assert all(during >= 3 for during in turns_during)
