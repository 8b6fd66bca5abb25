"""Batch progress that tells the truth, and an ETA that moves steadily or says why it can't.

Pure arithmetic over a ``queries.Snapshot`` and the scheduler's lanes: no database, no Qt.
"""

from __future__ import annotations

import dataclasses
import heapq
from collections import Counter, deque
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from mediaassist.core.messages import Message, msg
from mediaassist.core.queries import Snapshot
from mediaassist.core.store import CANCELED, FAILED, PENDING, RUNNING, SUCCESS

EWMA_WEIGHT = 0.2  # recent service times count more: providers speed up and slow down
SHOWN_WEIGHT = 0.2  # how far one refresh pulls the shown ETA toward the new estimate
MEASURED_EVENTS = ("success", "failed", "retry")  # an attempt ended: its service time counts
RUNNING_FLOOR = 0.1  # a running task has at least this part of a service time to go
PACE_WINDOW_S = 120.0  # a batch's ETA follows its throughput over this many recent seconds
PACE_MIN_SPAN_S = 3.0  # ... once it has been seen ending tasks for at least this long


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
    @property
    def order(self) -> str: ...


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


def work_left(count: int, started: Iterable[float], mean: float | None, now: float) -> float:
    """``count`` unfinished tasks as whole tasks of work: each running one (``started``, epoch
    seconds) only as the part of a service time it has still to go, never below
    ``RUNNING_FLOOR`` -- one that has run longer than usual is about to end, not done."""
    starts = list(started)
    if mean is None or mean <= 0:
        return float(count)
    return count - len(starts) + sum(part_to_go(at, mean, now) for at in starts)


def part_to_go(started: float, mean: float, now: float) -> float:
    """The part of a service time a task running since ``started`` has still to go."""
    return max(RUNNING_FLOOR, 1.0 - (now - started) / mean)


def open_slots(route: str, lanes: Iterable[LaneLike], blocked: Mapping[str, Message]) -> int:
    """How many tasks of ``route`` its lanes that may take work run at once."""
    return sum(lane.limit for lane in lanes if lane.route == route and lane.name not in blocked)


def estimate(batch: str, snap: Snapshot, lanes: Iterable[LaneLike], blocked: Mapping[str, Message],
             service: ServiceTimes, now: float) -> Estimate:
    """Seconds until the batch ends: the slowest of its routes (``route_estimate``). A blocked
    route wins over a missing measurement: it is the one the operator can fix."""
    lanes = list(lanes)
    found = [route_estimate(batch, route, snap, lanes, blocked, service, now)
             for route in sorted(snap.batch_routes.get(batch, {}))]
    return slowest(found)


def slowest(found: Iterable[Estimate]) -> Estimate:
    """The batch's estimate from its routes': blocked first, then still measuring, else the longest."""
    found = list(found)
    for one in found:
        if one.blocked is not None:
            return one
    for one in found:
        if one.measuring is not None:
            return one
    return Estimate(seconds=max((one.seconds or 0.0 for one in found), default=0.0))


def route_estimate(batch: str, route: str, snap: Snapshot, lanes: Sequence[LaneLike], blocked: Mapping[str, Message],
                   service: ServiceTimes, now: float) -> Estimate:
    """Seconds until the batch's tasks of ``route`` end: their work left (``work_left``: running
    ones by what they have still to go) plus that of older batches (FIFO, longest: they go first),
    shared by the route's open lanes -- or, where the lanes take batches in turn (``fair``), its
    own work on the slots it gets (``fair_slots``) -- one measured service time a task.
    ``now``: the store's clock."""
    count = snap.batch_routes.get(batch, {}).get(route, 0)
    of_route = [lane for lane in lanes if lane.route == route]
    parallel = open_slots(route, of_route, blocked)
    if parallel == 0:
        return Estimate(blocked=Blocked(route, count, tuple((lane.name, blocked.get(lane.name)) for lane in of_route)))
    mean = service.mean.get(route) or recorded_mean(batch, route, snap)
    if mean is None:
        return Estimate(measuring=route)
    if any(lane.order == "fair" for lane in of_route):
        own = batch_work_left(batch, route, snap, mean, now)
        return Estimate(seconds=own / fair_slots(batch, route, snap, parallel) * mean)
    position = snap.batch_order.index(batch) if batch in snap.batch_order else 0
    work = sum(batch_work_left(b, route, snap, mean, now) for b in [batch, *snap.batch_order[position + 1:]])
    return Estimate(seconds=work / parallel * mean)


def recorded_mean(batch: str, route: str, snap: Snapshot) -> float | None:
    """The mean expected duration of the batch's waiting tasks on ``route`` (from the model's
    record), for a process that has measured no attempt there yet: a ``run`` whose tasks wait
    behind another process's. None when none is known."""
    known = [expected for _priority, expected in snap.pending_expected.get(batch, {}).get(route, []) if expected > 0]
    return sum(known) / len(known) if known else None


def fair_slots(batch: str, route: str, snap: Snapshot, parallel: int) -> float:
    """The slots a batch gets of ``parallel`` when the route's batches take turns (core/order.py
    ``fair_shares``): as many as every other batch waiting there, and one of the slots left over
    when it is among the oldest (they win ties); a share of a slot when there are more batches
    than slots."""
    sharing = [b for b in snap.batch_order if snap.batch_routes.get(b, {}).get(route, 0)] or [batch]
    older = len(sharing) - 1 - sharing.index(batch) if batch in sharing else 0  # batch_order: newest first
    whole, left_over = divmod(parallel, len(sharing))
    return whole + (1 if older < left_over else 0) if whole else parallel / len(sharing)


def tail_bound(batch: str, route: str, snap: Snapshot, lanes: Sequence[LaneLike], blocked: Mapping[str, Message],
               mean: float | None, now: float) -> float:
    """The least the batch's tasks of ``route`` can still take, however fast the pace: its
    running tasks' own time to go, and the waves of the queued ones after the first slot frees.
    A pace spreads work over every slot; a batch's last tasks cannot be spread."""
    if not mean:
        return 0.0
    to_go = [part_to_go(at, mean, now) * mean for b, at, _expected in snap.running_started.get(route, []) if b == batch]
    queued = snap.batch_routes.get(batch, {}).get(route, 0) - len(to_go)
    parallel = open_slots(route, lanes, blocked)
    bound = max(to_go, default=0.0)
    if queued > 0 and parallel > 0:
        bound = max(bound, min(to_go, default=0.0) + mean * -(-queued // parallel))
    return bound


def batch_work_left(batch: str, route: str, snap: Snapshot, mean: float | None, now: float) -> float:
    started = [at for b, at, _expected in snap.running_started.get(route, []) if b == batch]
    return work_left(snap.batch_routes.get(batch, {}).get(route, 0), started, mean, now)


def planned_seconds(batch: str, route: str, snap: Snapshot, lanes: Sequence[LaneLike],
                    blocked: Mapping[str, Message], mean: float | None, now: float) -> float | None:
    """Seconds until the batch's tasks of ``route`` end, task by task, when the batch has the
    route to itself and is small enough to be read so (``Snapshot.pending_expected``): each task
    takes its expected duration (the model's record and its prompt's length; the route's measured
    mean where none is known), a running one what it has still to go (never below RUNNING_FLOOR
    of it), and the waiting ones go in the lanes' order to whichever slot comes free first -- so
    the serial tail of a web lane and the long task started last are in it. None when it cannot
    be said so: a big or shared route (its pace says more), no slot open, nothing known."""
    pending = snap.pending_expected.get(batch)
    slots = open_slots(route, lanes, blocked)
    if pending is None or slots == 0 or _shared(batch, route, snap):
        return None
    queued = pending.get(route, [])
    running = [(at, expected) for b, at, expected in snap.running_started.get(route, []) if b == batch]
    if mean is None and any(expected <= 0 for expected in [*(e for _p, e in queued), *(e for _a, e in running)]):
        return None
    known = mean or 0.0

    def took(expected: float) -> float:
        return expected if expected > 0 else known

    free = [max(RUNNING_FLOOR * took(e), took(e) - (now - at)) for at, e in running]
    free += [0.0] * max(0, slots - len(free))
    heapq.heapify(free)
    if any(lane.order == "longest" for lane in lanes if lane.route == route):
        queued = sorted(queued, key=lambda task: (-task[0], -task[1]))  # unknown (0) last, FIFO among them
    else:
        queued = sorted(queued, key=lambda task: -task[0])  # FIFO within a priority (a stable sort)
    for _priority, expected in queued:
        heapq.heappush(free, heapq.heappop(free) + took(expected))
    return max(free)


def as_taken_by(snap: Snapshot, only: Collection[str]) -> Snapshot:
    """The snapshot as a scheduler that takes only the batches ``only`` (``run FILE``) sees its
    queues: another batch on a route where none of its tasks runs is nobody's work now, not ahead
    of its own; one that runs there is some other process's, which takes its tasks first (FIFO)."""
    running = Counter((b, route) for route, rows in snap.running_started.items() for b, _at, _expected in rows)
    routes = {batch: {route: n for route, n in counts.items() if batch in only or running[(batch, route)]}
              for batch, counts in snap.batch_routes.items()}
    return dataclasses.replace(snap, batch_routes={batch: counts for batch, counts in routes.items() if counts})


def _shared(batch: str, route: str, snap: Snapshot) -> bool:
    """Another batch has unfinished tasks on ``route``: how many slots this one gets depends on
    the order and on who runs them, which its own pace measures."""
    return any(routes.get(route, 0) for other, routes in snap.batch_routes.items() if other != batch)


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


class BatchPace:
    """Each batch's own recent throughput: how many of its tasks ended over the last
    ``window_s`` (real seconds), so its ETA is its work left at its own pace -- right for a
    batch that another process runs beside a big one, which the queue's FIFO order is not."""

    def __init__(self, window_s: float = PACE_WINDOW_S, min_span_s: float = PACE_MIN_SPAN_S) -> None:
        self.window_s, self.min_span_s = window_s, min_span_s
        self._seen: dict[str, deque[tuple[float, int]]] = {}

    def record(self, batch: str, ended: int, now: float) -> None:
        seen = self._seen.setdefault(batch, deque())
        if len(seen) > 1 and seen[-1][1] == ended:
            return  # only ends move the pace: the time since the last one is the running tasks' part
        seen.append((now, ended))
        while len(seen) > 2 and seen[1][0] <= now - self.window_s:  # one sample before the window stays
            seen.popleft()

    def seconds_left(self, batch: str, remaining: float, now: float) -> float | None:
        """``remaining`` tasks' work at the batch's pace; None until the batch has been seen
        ending tasks for at least ``min_span_s``."""
        seen = self._seen.get(batch)
        if not seen or len(seen) < 2:
            return None
        (first_at, first_ended), (last_at, last_ended) = seen[0], seen[-1]
        span, ended = last_at - first_at, last_ended - first_ended
        if span < self.min_span_s or ended <= 0:
            return None
        # The time since the last end is not in the pace: the running tasks' part of
        # ``remaining`` says how far along they are (counting it twice made tails long).
        return remaining * span / ended

    def forget(self, batch: str) -> None:
        self._seen.pop(batch, None)

    def forget_prefix(self, prefix: str) -> None:
        for key in [k for k in self._seen if k.startswith(prefix)]:
            del self._seen[key]


class BatchEta:
    """The ETA to show for a batch, for the window and ``run`` alike. Per route of the batch (a
    mixed batch's fast API tasks say nothing of its web tasks): a small batch alone on the route
    task by task (``planned_seconds``: each task's expected duration over the route's slots);
    else the queue's estimate until the batch is seen ending tasks there, then its own pace
    there over its work left (running tasks by what they have still to go) -- right too for a
    batch another process runs beside a big one, or one sharing its lanes with others. The
    slowest route decides; smoothed so it moves steadily; a blocked batch says why."""

    def __init__(self, only: Collection[str] | None = None) -> None:
        """``only``: the batches the scheduler takes, when not every one (``run FILE``)."""
        self.only = only
        self.service = ServiceTimes()
        self.pace = BatchPace()
        self.smoother = EtaSmoother()

    def attempt_ended(self, event: str, route: str, started_at: float | None, now: float) -> None:
        """A scheduler event: an attempt that ended adds its service time (``now``: store clock)."""
        if event in MEASURED_EVENTS and started_at:
            self.service.record(route, now - started_at)

    def record(self, batch: str, snap: Snapshot, now: float) -> None:
        """What the batch has ended so far, per route (``now``: monotonic)."""
        for route, ended in snap.batch_routes_ended.get(batch, {}).items():
            self.pace.record(_pace_key(batch, route), ended, now)
        for route in snap.batch_routes.get(batch, {}):
            if route not in snap.batch_routes_ended.get(batch, {}):
                self.pace.record(_pace_key(batch, route), 0, now)

    def forget(self, batch: str) -> None:
        self.pace.forget_prefix(_pace_key(batch, ""))
        self.smoother.forget(batch)

    def eta(self, batch: str, snap: Snapshot, lanes: Iterable[LaneLike], blocked: Mapping[str, Message],
            now: float, wall: float) -> tuple[Estimate, float | None]:
        """(the estimate, the seconds to show or None); ``now`` monotonic, ``wall`` the store's
        clock (the running tasks' start times are on it)."""
        lanes = list(lanes)
        if self.only is not None:
            snap = as_taken_by(snap, self.only)
        found: list[Estimate] = []
        for route in sorted(snap.batch_routes.get(batch, {})):
            planned = planned_seconds(batch, route, snap, lanes, blocked, self.service.mean.get(route), wall)
            if planned is not None:
                found.append(Estimate(seconds=planned))
                continue
            queued = route_estimate(batch, route, snap, lanes, blocked, self.service, wall)
            left = batch_work_left(batch, route, snap, self.service.mean.get(route), wall)
            paced = self.pace.seconds_left(_pace_key(batch, route), left, now)
            if paced is not None:
                paced = max(paced, tail_bound(batch, route, snap, lanes, blocked, self.service.mean.get(route), wall))
            found.append(queued if queued.blocked is not None or paced is None else Estimate(seconds=paced))
        result = slowest(found)
        if result.seconds is None:
            self.smoother.forget(batch)
            return result, None
        return result, self.smoother.smooth(batch, result.seconds, now)


def _pace_key(batch: str, route: str) -> str:
    return f"{batch}\x00{route}"


def eta_message(found: Sequence[tuple[Estimate, float | None]]) -> Message | None:
    """One ETA for several batches (a ``run``): why it waits when one is blocked, "measuring"
    before a service time is known, else the slowest batch's; None for no batch."""
    if not found:
        return None
    for estimate_, _shown in found:
        if estimate_.blocked is not None:
            return msg("ETA: {n} task(s) of {route} wait for a lane", n=estimate_.blocked.waiting,
                       route=estimate_.blocked.route)
    slowest = slowest_eta(found)
    return msg("ETA: measuring") if slowest is None else msg("ETA {duration}", duration=duration_message(slowest))


def slowest_eta(found: Sequence[tuple[Estimate, float | None]]) -> float | None:
    """The slowest batch's ETA in seconds, as ``eta_message`` shows it; None when there is no
    batch, one is blocked, or one is still measuring."""
    if not found or any(estimate_.blocked is not None or seconds is None for estimate_, seconds in found):
        return None
    return max(seconds for _estimate, seconds in found if seconds is not None)


def duration_message(seconds: float) -> Message:
    whole = max(0, round(seconds))
    if whole < 60:
        return msg("{s} s", s=whole)
    if whole < 3600:
        return msg("{m} min {s} s", m=whole // 60, s=format(whole % 60, "02d"))
    return msg("{h} h {m} min", h=whole // 3600, m=format(whole % 3600 // 60, "02d"))
