"""Shared by the poll-lane tests: their clock speed, enqueueing, task states (the scheduler and
waiting: tests/harness.py)."""

from __future__ import annotations

import uuid
from typing import Any

from mediaassist.core.store import NewTask, Store

SPEED = 50.0  # client clock: a 5 s poll interval takes 0.1 s, a 10 s back-off 0.2 s


def enqueue(store: Store, prompts: list[str], *, route: str, model: str = "video",
            params: dict[str, Any] | None = None) -> tuple[str, list[str]]:
    batch = uuid.uuid4().hex[:8]
    ids, _ = store.enqueue(batch, [NewTask(model=model, model_kind="poll", route=route, prompt=p,
                                           params=params or {}) for p in prompts])
    return batch, ids


def states(store: Store, ids: list[str]) -> list[str]:
    return [store.get(i).state for i in ids]
