"""Batch progress that tells the truth, and an ETA that moves steadily or says why it can't.

Pure arithmetic over a ``queries.Snapshot`` and the scheduler's lanes: no database, no Qt.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from mediaassist.core.messages import Message
from mediaassist.core.queries import Snapshot
from mediaassist.core.store import CANCELED, FAILED, PENDING, RUNNING, SUCCESS

EWMA_WEIGHT = 0.2  # recent service times count more: providers speed up and slow down
SHOWN_WEIGHT = 0.2  # how far one refresh pulls the shown ETA toward the new estimate


@dataclass(frozen=True)
class BatchProgress:
    """Every task of a batch counted once: done + failed + canceled + running + waiting = total."""

    batch: str
    done: int = 0
    failed: int = 0
    canceled: int = 0
    running: int = 0
    waiting: int = 0

    @classmethod
    def of(cls, batch: str, counts: Mapping[str, int]) -> BatchProgress:
        return cls(batch, done=counts.get(SUCCESS, 0), failed=counts.get(FAILED, 0),
                   canceled=counts.get(CANCELED, 0), running=counts.get(RUNNING, 0),
                   waiting=counts.get(PENDING, 0))

    @property
    def total(self) -> int:
        return self.done + self.failed + self.canceled + self.running + self.waiting

    @property
    def ended(self) -> int:
        return self.done + self.failed + self.canceled

    @property
    def finished(self) -> bool:
        """Nothing waits and nothing runs (an all-canceled batch is finished too)."""
        return self.running == 0 and self.waiting == 0


class LaneLike(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def route(self) -> str: ...
    @property
    def limit(self) -> int: ...


class ServiceTimes:
    """Measured seconds per attempt, per route (lanes of one route share a queue), smoothed."""

    def __init__(self) -> None:
        self.mean: dict[str, float] = {}

    def record(self, route: str, seconds: float) -> None:
        took = max(0.0, seconds)
        old = self.mean.get(route)
        self.mean[route] = took if old is None else old + EWMA_WEIGHT * (took - old)


@dataclass(frozen=True)
class Blocked:
    """Tasks of ``route`` wait and no lane can take them; ``reasons``: (lane, why) per lane of
    the route (empty: the config has no lane for it)."""

    route: str
    waiting: int
    reasons: tuple[tuple[str, Message | None], ...] = ()


@dataclass(frozen=True)
class Estimate:
    """Exactly one of: ``seconds``; ``blocked`` (why not); ``measuring`` (the route still without
    a measured attempt)."""

    seconds: float | None = None
    blocked: Blocked | None = None
    measuring: str | None = None


def estimate(batch: str, snap: Snapshot, lanes: Iterable[LaneLike], blocked: Mapping[str, Message],
             service: ServiceTimes) -> Estimate:
    """Seconds until the batch ends: per route, the batch's unfinished tasks plus those of older
    batches (FIFO: they go first) shared by the route's open lanes, one measured service time
    each; the slowest route decides. A blocked route wins over a missing measurement: it is
    the one the operator can fix."""
    lanes = list(lanes)
    remaining = snap.batch_routes.get(batch, {})
    position = snap.batch_order.index(batch) if batch in snap.batch_order else 0
    older = snap.batch_order[position + 1:]
    worst, measuring = 0.0, None
    for route, count in sorted(remaining.items()):
        of_route = [lane for lane in lanes if lane.route == route]
        parallel = sum(lane.limit for lane in of_route if lane.name not in blocked)
        if parallel == 0:
            return Estimate(blocked=Blocked(route, count, tuple((lane.name, blocked.get(lane.name))
                                                                for lane in of_route)))
        mean = service.mean.get(route)
        if mean is None:
            measuring = measuring or route
            continue
        ahead = sum(snap.batch_routes.get(b, {}).get(route, 0) for b in older)
        worst = max(worst, (count + ahead) / parallel * mean)
    if measuring is not None:
        return Estimate(measuring=measuring)
    return Estimate(seconds=worst)


@dataclass
class EtaSmoother:
    """The shown ETA counts down with the clock and is pulled a little toward each new estimate,
    so it moves steadily instead of jumping with every finished wave."""

    weight: float = SHOWN_WEIGHT
    _shown: dict[str, tuple[float, float]] = field(default_factory=dict)  # batch -> (seconds, at)

    def smooth(self, batch: str, seconds: float, now: float) -> float:
        previous = self._shown.get(batch)
        if previous is None:
            shown = seconds
        else:
            projected = max(0.0, previous[0] - (now - previous[1]))
            shown = projected + self.weight * (seconds - projected)
        self._shown[batch] = (shown, now)
        return shown

    def forget(self, batch: str) -> None:
        self._shown.pop(batch, None)
