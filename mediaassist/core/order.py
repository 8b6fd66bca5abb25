"""The order a lane takes its queue in, as pure functions over plain data (the store's claim asks them).

Priority always comes first. Within a priority a lane's ``order`` decides:

- ``fifo``: first in, first out (the default for API and poll lanes);
- ``longest``: the longest expected task first, unknown ones after in FIFO order (the default for
  web lanes). With K accounts, a long task started last is what leaves the other accounts idle at
  the end of a batch; longest-first (LPT) keeps the makespan within a few per cent of its bound.
  The expected duration is a line fitted to the model's recorded durations against their
  prompts' lengths (``fit_durations``), set on each task at enqueue and refreshed for the model's
  pending web tasks when one of its web tasks succeeds;
- ``fair``: batches served round-robin (``fair_shares``: the batch running fewest tasks on the
  lane's queue first), FIFO within each batch, so a small batch is not stuck behind a large one.

Nothing here reads the store or the clock (tests/unit/test_order.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from mediaassist.core.messages import Message, msg

ORDERS = ("fifo", "longest", "fair")
# A lane kind's order when its config names none.
DEFAULT_ORDER = {"web": "longest", "api": "fifo", "poll": "fifo"}
# How ``status`` and the window name each order to the operator.
ORDER_MESSAGES = {"fifo": msg("order: first in, first out"), "longest": msg("order: longest expected first"),
                  "fair": msg("order: batches in turn")}
# The recorded durations a fit reads: the model's latest successes.
HISTORY_SAMPLES = 50
# No task is expected to take less: a fitted line never goes below it, as 0 means "not known".
# (Small: a scaled clock's tests record durations of milliseconds.)
MIN_EXPECTED_S = 0.001


def order_message(order: str) -> Message:
    """The order a lane takes its queue in, in the operator's language."""
    return ORDER_MESSAGES[order]


@dataclass(frozen=True)
class DurationFit:
    """Expected seconds = ``base_s + per_char_s * prompt characters`` (never below MIN_EXPECTED_S)."""

    base_s: float
    per_char_s: float = 0.0

    def expected(self, chars: int) -> float:
        return max(MIN_EXPECTED_S, self.base_s + self.per_char_s * chars)


def fit_durations(samples: Sequence[tuple[int, float]]) -> DurationFit | None:
    """The least-squares line through (prompt characters, seconds) of a model's recorded tasks, or
    None when none is recorded. The slope is never negative (a longer prompt is never expected to
    be quicker); where the line would start below MIN_EXPECTED_S it is pinned there and passes
    through the mean instead, so every prompt length gets a positive expectation."""
    points = [(float(chars), seconds) for chars, seconds in samples if seconds >= 0]
    if not points:
        return None
    n = len(points)
    mean_c = sum(c for c, _ in points) / n
    mean_d = sum(d for _, d in points) / n
    var = sum((c - mean_c) ** 2 for c, _ in points)
    slope = max(0.0, sum((c - mean_c) * (d - mean_d) for c, d in points) / var) if var > 0 else 0.0
    base = mean_d - slope * mean_c
    if base < MIN_EXPECTED_S:
        base = MIN_EXPECTED_S
        slope = max(0.0, (mean_d - MIN_EXPECTED_S) / mean_c) if mean_c > 0 else 0.0
    return DurationFit(base, slope)


def order_key(order: str, priority: int, expected_s: float, seq: int) -> tuple[float, float, int]:
    """How ``fifo`` and ``longest`` sort two tasks of one queue (smallest first); ``fair`` sorts
    FIFO within a batch. An unknown expectation (0) sorts after every known one."""
    if order == "longest":
        return (-priority, -expected_s, seq)
    return (-priority, 0.0, seq)


@dataclass(frozen=True)
class BatchQueue:
    """One batch's due tasks of one priority on a lane's queue: how many, and its oldest's seq."""

    batch: str
    priority: int
    pending: int
    head_seq: int


def fair_shares(queues: Sequence[BatchQueue], running: Mapping[str, int], count: int) -> dict[str, int]:
    """How many of ``count`` free slots each batch gets, slot by slot: the highest priority waiting
    first; among equals the batch with the fewest tasks running on the queue (those given in this
    round included), then the batch whose oldest task waited longest. A batch with nothing due gets
    nothing; the shares never exceed what is due."""
    left = {(q.batch, q.priority): q.pending for q in queues if q.pending > 0}
    heads = {(q.batch, q.priority): q.head_seq for q in queues}
    busy = dict(running)
    shares: dict[str, int] = {}
    for _ in range(count):
        if not left:
            break
        batch, priority = min(left, key=lambda g: (-g[1], busy.get(g[0], 0), heads[g], g[0]))
        shares[batch] = shares.get(batch, 0) + 1
        busy[batch] = busy.get(batch, 0) + 1
        left[(batch, priority)] -= 1
        if not left[(batch, priority)]:
            del left[(batch, priority)]
    return shares
