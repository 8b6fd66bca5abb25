"""Adaptive concurrency and polite back-off, as pure state machines (no I/O, no clock of their own).

``AIMDLimiter`` learns how many requests a provider takes at once, in the style of Netflix's
concurrency-limits: slow start (+1 per success) until the first drop, then additive increase
(+1 per round trip) while latency holds, and a multiplicative cut on a drop (a 429, a time-out or
a latency jump). Two refinements keep the 429s of a hidden hard limit rare:

* the cut goes at least to one below the in-flight count that was rejected -- that count is the
  server's limit plus one;
* the level that was rejected is remembered as a ceiling: growing back to it slows down by half for
  every probe that failed there, so a stable server limit costs fewer and fewer probes.

A drop reported by a request that started before the last cut does not cut again (every request
of one overshoot fails together; that is one signal, not several).

``ProbeBackoff`` spaces the probes sent into a closed rate-limit window: never more than ~10 % of
the time already waited apart, so a reopened window is found within about 10 % of the wait.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

BACKOFF_RATIO = 0.9
LATENCY_JUMP = 2.0  # a success this many times slower than usual counts as a drop
LATENCY_SMOOTHING = 0.1  # weight of a new sample in the usual latency
AUTO_START = 1  # slow start finds the level within a few round trips


@dataclass
class AIMDLimiter:
    max_limit: int
    initial: int = AUTO_START
    min_limit: int = 1
    _limit: float = field(init=False)
    _slow_start: bool = field(default=True, init=False)
    _epoch: int = field(default=0, init=False)
    _served_since_cut: bool = field(default=False, init=False)
    _ceiling: int | None = field(default=None, init=False)  # in-flight count last rejected
    _failed_probes: int = field(default=0, init=False)
    _held_at_ceiling: int = field(default=0, init=False)
    _usual_latency: float | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        if not 1 <= self.min_limit <= self.max_limit:
            raise ValueError(f"limits must satisfy 1 <= min ({self.min_limit}) <= max ({self.max_limit})")
        self._limit = float(self._clamp(self.initial))

    @property
    def limit(self) -> int:
        return self._clamp(int(self._limit))

    @property
    def epoch(self) -> int:
        """Give this to ``on_success``/``on_drop`` as it was when the request was sent."""
        return self._epoch

    def adopt(self, limit: int) -> None:
        """Take a limit learnt elsewhere (the store, another process) as the current one."""
        self._limit = float(self._clamp(limit))
        self._slow_start = False

    def explains(self, in_flight: int) -> bool:
        """Whether a rejection at this in-flight count reads as our own overshoot -- the server
        served us since the last cut, so this level, not a closed window, is the problem: the cut
        is the whole answer and no probe is needed. A second rejection before anything is served
        again (or one at a single request in flight) is a closed window."""
        return self._served_since_cut and in_flight > self.min_limit

    def on_success(self, latency_s: float, in_flight: int, epoch: int) -> None:
        """``in_flight``: requests in flight when this one was sent, itself included."""
        usual = self._usual_latency
        if usual is not None and latency_s > LATENCY_JUMP * usual and in_flight >= self.limit:
            self._usual_latency = usual + LATENCY_SMOOTHING * (latency_s - usual)
            self.on_drop(in_flight, epoch)
            return
        self._usual_latency = latency_s if usual is None else usual + LATENCY_SMOOTHING * (latency_s - usual)
        self._served_since_cut = True
        self._note_ceiling_held(in_flight)
        if in_flight < self.limit:  # the limit did not bind: this success says nothing about more
            return
        self._limit = min(float(self.max_limit), self._limit + self._step())

    def on_drop(self, in_flight: int, epoch: int) -> None:
        """A 429, a time-out or a latency jump of a request sent at ``in_flight``."""
        if epoch < self._epoch:
            return
        self._epoch += 1
        self._slow_start = False
        if self._ceiling is not None and in_flight >= self._ceiling:
            self._failed_probes += 1
        else:
            self._failed_probes = 1
        self._ceiling = in_flight
        self._held_at_ceiling = 0
        self._served_since_cut = False
        self._limit = float(self._clamp(int(min(self._limit * BACKOFF_RATIO, in_flight - 1))))

    def _step(self) -> float:
        if self._slow_start:
            return 1.0
        step = 1.0 / max(1.0, self._limit)
        if self._ceiling is not None and int(self._limit) + 1 >= self._ceiling:
            step /= 2 ** self._failed_probes
        return step

    def _note_ceiling_held(self, in_flight: int) -> None:
        """A whole window served at the old ceiling: the server's limit has grown, forget it."""
        if self._ceiling is None or in_flight < self._ceiling:
            return
        self._held_at_ceiling += 1
        if self._held_at_ceiling >= self._ceiling:
            self._ceiling, self._failed_probes, self._held_at_ceiling = None, 0, 0

    def _clamp(self, value: int) -> int:
        return max(self.min_limit, min(self.max_limit, value))


@dataclass
class ProbeBackoff:
    """Delays between probes into a rate-limit window that gave no usable header."""

    base_s: float
    max_s: float
    share: float = 0.1  # of the time already waited
    jitter: float = 0.1  # +- this fraction, so clients sharing a server do not probe in step

    def delay(self, waited_s: float, rand: random.Random | None = None) -> float:
        """The pause before the next probe, ``waited_s`` into the closed window."""
        nominal = min(self.max_s, max(self.base_s, self.share * waited_s))
        spread = (rand or random).uniform(1.0 - self.jitter, 1.0 + self.jitter)
        return nominal * spread
