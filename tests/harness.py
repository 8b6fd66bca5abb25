"""The one test harness: a scheduler (built, running, or running one batch), one way to wait for a
condition, and the task factories the lane tests share.

Every test that needs the real scheduler gets it here, so a change to how the scheduler is built or
stopped is made once; every wait has one deadline rule and one message, sync or async.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

from mediaassist.core.clock import Clock
from mediaassist.core.config import AppConfig
from mediaassist.core.scheduler import Scheduler
from mediaassist.core.store import NewTask, Store, Task
from mediaassist.providers.base import Provider
from mediaassist.providers.registry import build_providers

POLL_S = 0.02  # how often a wait looks again: short beside every time-out, long beside a sleep(0)
BATCH_TIMEOUT_S = 90.0  # a batch that has not ended by then is a hung test, not a slow one


# --- waiting ---------------------------------------------------------------------------------------
class Deadline:
    """``timeout`` seconds of real time from now; ``check`` fails the test, naming ``what``, once past."""

    def __init__(self, timeout: float, what: str) -> None:
        self.timeout, self.what = timeout, what
        self.at = time.monotonic() + timeout

    def met(self, predicate: Callable[[], object]) -> bool:
        if predicate():
            return True
        if time.monotonic() > self.at:
            raise AssertionError(f"{self.what} not reached within {self.timeout} s")
        return False


def wait_until_sync(predicate: Callable[[], object], timeout: float = 30.0, what: str = "the condition") -> None:
    """Block until ``predicate()`` is true: for tests that drive real processes from plain code."""
    deadline = Deadline(timeout, what)
    while not deadline.met(predicate):
        time.sleep(POLL_S)


async def wait_until(predicate: Callable[[], object], timeout: float = 30.0, what: str = "the condition") -> None:
    """Await until ``predicate()`` is true, yielding to the running loop (qasync's too: ``qtbot.wait*``
    would nest an event loop inside a coroutine)."""
    deadline = Deadline(timeout, what)
    while not deadline.met(predicate):
        await asyncio.sleep(POLL_S)


# --- the scheduler -----------------------------------------------------------------------------------
def make_scheduler(store: Store, config: AppConfig, data_dir: Path, clock: Clock | float,
                   providers: dict[str, Provider] | None = None) -> Scheduler:
    """A scheduler on ``config``'s real providers (or on ``providers``), not started; ``clock`` is a
    Clock or the speed of a new one."""
    if not isinstance(clock, Clock):
        clock = Clock(speed=clock)
    if providers is None:
        providers = build_providers(config, clock, data_dir)
    return Scheduler(store, config, providers, data_dir, clock)


@asynccontextmanager
async def _started(sched: Scheduler) -> AsyncIterator[Scheduler]:
    await sched.start()
    try:
        yield sched
    finally:  # also when the test fails inside the block: no lane task outlives its test
        await sched.stop()


def scheduler_running(store: Store, config: AppConfig, data_dir: Path, clock: Clock | float,
                      providers: dict[str, Provider] | None = None) -> AbstractAsyncContextManager[Scheduler]:
    """A started scheduler (``make_scheduler``'s), stopped on leaving the block."""
    return _started(make_scheduler(store, config, data_dir, clock, providers))


async def run_to_end(sched: Scheduler, batch: str = "b1", timeout: float = BATCH_TIMEOUT_S) -> None:
    """Start a built scheduler, wait until nothing more of ``batch`` can run, stop it."""
    async with _started(sched):
        await asyncio.wait_for(sched.wait_for_batches([batch]), timeout)


async def run_batch(store: Store, config: AppConfig, data_dir: Path, tasks: list[NewTask], clock: Clock | float, *,
                    batch: str = "b1", providers: dict[str, Provider] | None = None,
                    during: Callable[[Scheduler, list[str]], Awaitable[None]] | None = None,
                    timeout: float = BATCH_TIMEOUT_S) -> list[Task]:
    """Enqueue one batch, run a fresh scheduler until nothing more of it can run, stop it; the batch's
    tasks. ``during(scheduler, ids)`` runs while the batch does (to cancel, pause, kill ...)."""
    async with scheduler_running(store, config, data_dir, clock, providers) as sched:
        ids, _ = store.enqueue(batch, tasks)
        sched.wake()
        if during is not None:
            await during(sched, ids)
        await asyncio.wait_for(sched.wait_for_batches([batch]), timeout)
    return store.tasks([batch])


# --- tasks -------------------------------------------------------------------------------------------
def numbered_tasks(n: int, model: str, kind: str, route: str, prefix: str, *, id_digits: int = 3,
                   prompt: str | None = None, account: str | None = None, **params: Any) -> list[NewTask]:
    """``n`` tasks with ids ``<prefix>000..`` and prompts ``"<prompt or prefix> 0.."``, each with
    ``params`` (and pinned to ``account`` if given)."""
    return [NewTask(model=model, model_kind=kind, route=route, prompt=f"{prompt or prefix} {i}",
                    task_id=f"{prefix}{i:0{id_digits}d}", account=account, params=dict(params))
            for i in range(n)]


def sim_api_tasks(n: int, prefix: str = "a", **options: Any) -> list[NewTask]:
    """Tasks for the simulated config's API model (tests/helpers.py ``sim_config``)."""
    return numbered_tasks(n, "writer", "api", "api:sim-api", prefix, **options)


def sim_web_tasks(n: int, prefix: str = "w", **options: Any) -> list[NewTask]:
    """Tasks for the simulated config's web model."""
    return numbered_tasks(n, "reasoner", "web", "web:simulated", prefix, **options)


def task_log(store: Store, task_id: str) -> str:
    """A task's log lines, as one text to search."""
    return "\n".join(line.line for line in store.logs(task_id))
