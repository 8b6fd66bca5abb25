"""Shared by the poll-lane tests: a scheduler on a scaled clock, waiting helpers, enqueueing."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mediaassist.core.clock import Clock
from mediaassist.core.config import AppConfig
from mediaassist.core.scheduler import Scheduler
from mediaassist.core.store import NewTask, Store
from mediaassist.providers.registry import build_providers

SPEED = 50.0  # client clock: a 5 s poll interval takes 0.1 s, a 10 s back-off 0.2 s


def enqueue(store: Store, prompts: list[str], *, route: str, model: str = "video",
            params: dict[str, Any] | None = None) -> tuple[str, list[str]]:
    batch = uuid.uuid4().hex[:8]
    ids, _ = store.enqueue(batch, [NewTask(model=model, model_kind="poll", route=route, prompt=p,
                                           params=params or {}) for p in prompts])
    return batch, ids


@asynccontextmanager
async def running(store: Store, config: AppConfig, data_dir: Path, speed: float = SPEED) -> AsyncIterator[Scheduler]:
    clock = Clock(speed=speed)
    sched = Scheduler(store, config, build_providers(config, clock, data_dir), data_dir, clock)
    await sched.start()
    try:
        yield sched
    finally:
        await sched.stop()


async def until(predicate: Callable[[], bool], timeout: float = 20.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.02)


def states(store: Store, ids: list[str]) -> list[str]:
    return [store.get(i).state for i in ids]


def log_text(store: Store, task_id: str) -> str:
    return "\n".join(line.line for line in store.logs(task_id))
