"""The import child's steps: every row once, in order, each step sized to the CPU budget, and
the window's turn (``between``) after every step but the last."""

from __future__ import annotations

import time
from collections.abc import Sequence

from mediaassist.core.import_process import STEP_BUDGET_S, STEP_ROWS, in_budgeted_steps

FEWEST, FIRST, MOST = STEP_ROWS


def _burn(cpu_s: float) -> None:
    """Spend this much CPU of this thread (what a step's SQLite and Python work costs)."""
    end = time.thread_time() + cpu_s
    while time.thread_time() < end:
        pass


def test_cheap_steps_grow_to_the_most_and_cover_every_item_in_order() -> None:
    items = list(range(10_000))
    seen: list[int] = []
    sizes: list[int] = []

    def step(chunk: Sequence[int]) -> None:
        sizes.append(len(chunk))
        seen.extend(chunk)

    in_budgeted_steps(items, step)
    assert seen == items
    assert sizes[0] == FIRST
    assert max(sizes) == MOST  # appending ints costs far below the budget


def test_costly_steps_shrink_to_the_budget_and_the_window_has_a_turn_between_them() -> None:
    per_item = STEP_BUDGET_S / 10  # the budget fits 10 items: the floor applies
    events: list[str] = []
    sizes: list[int] = []
    took: list[float] = []

    def step(chunk: Sequence[int]) -> None:
        events.append("step")
        sizes.append(len(chunk))
        _burn(per_item * len(chunk))

    def between(seconds: float) -> None:
        events.append("turn")
        took.append(seconds)

    in_budgeted_steps(list(range(FIRST + 3 * FEWEST)), step, between)
    assert sizes == [FIRST, FEWEST, FEWEST, FEWEST]
    assert events == ["step", "turn"] * 3 + ["step"]  # none after the last: nothing is waiting
    assert took[0] >= per_item * FIRST  # what the step took, wall time at least its CPU


def test_no_items_no_step() -> None:
    calls: list[Sequence[int]] = []
    in_budgeted_steps([], calls.append, calls.append)
    assert calls == []
