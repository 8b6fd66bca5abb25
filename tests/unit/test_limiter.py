"""The pure adaptive-concurrency and probe-spacing algorithms (core/limiter.py), without I/O."""

from __future__ import annotations

import heapq
import random

import pytest

from mediaassist.core.limiter import AIMDLimiter, ProbeBackoff


def simulate(limiter: AIMDLimiter, hidden: int, tasks: int, latency: float = 0.4,
             seed: int = 7) -> tuple[int, int, float, list[int]]:
    """A server that rejects (at once) any request past ``hidden`` in flight, driven by the
    limiter like the API lane drives it. Returns (requests, rejections, makespan, limits seen)."""
    rand = random.Random(seed)
    events: list[tuple[float, int, bool, int, int]] = []
    waiting, requests, rejected, now, seq = tasks, 0, 0, 0.0, 0
    limits = []

    def fill() -> None:
        nonlocal waiting, requests, seq
        while waiting and len(events) < limiter.limit:
            waiting -= 1
            requests += 1
            seq += 1
            in_flight = len(events) + 1
            served = in_flight <= hidden
            took = latency * rand.uniform(0.97, 1.03) if served else 0.002
            heapq.heappush(events, (now + took, seq, served, in_flight, limiter.epoch))

    fill()
    while events:
        now, _, served, in_flight, epoch = heapq.heappop(events)
        if served:
            limiter.on_success(latency, in_flight, epoch)
        else:
            limiter.on_drop(in_flight, epoch)
            rejected += 1
            waiting += 1
        limits.append(limiter.limit)
        fill()
    return requests, rejected, now, limits


@pytest.mark.parametrize("hidden", [1, 2, 4, 7, 12])
def test_learns_a_hidden_limit_within_one_and_rarely_overshoots(hidden):
    limiter = AIMDLimiter(max_limit=20)
    tasks = 60 * hidden + 300  # the slow start's few round trips are a small share of the run
    requests, rejected, makespan, limits = simulate(limiter, hidden, tasks)

    assert abs(limiter.limit - hidden) <= 1
    assert all(limit <= hidden + 1 for limit in limits[len(limits) // 4:])  # after the first quarter
    assert rejected / requests <= 0.05
    ideal = tasks * 0.4 / hidden
    assert ideal / makespan >= 0.85


def test_never_above_max_nor_below_one():
    limiter = AIMDLimiter(max_limit=3)
    for _ in range(200):
        limiter.on_success(0.1, limiter.limit, limiter.epoch)
    assert limiter.limit == 3
    for _ in range(50):
        limiter.on_drop(limiter.limit, limiter.epoch)
    assert limiter.limit == 1


def test_drops_of_one_overshoot_cut_once():
    limiter = AIMDLimiter(max_limit=20, initial=8)
    limiter.adopt(8)
    sent_epoch = limiter.epoch  # eight requests sent together, all rejected together
    for _ in range(8):
        limiter.on_drop(8, sent_epoch)
    assert limiter.limit == 7  # one cut: to one below the rejected in-flight count


def test_only_a_binding_limit_grows():
    limiter = AIMDLimiter(max_limit=20)
    limiter.adopt(5)
    for _ in range(100):
        limiter.on_success(0.1, 2, limiter.epoch)  # the lane had 2 in flight: the limit of 5 never bound
    assert limiter.limit == 5


def test_a_latency_jump_counts_as_a_drop():
    limiter = AIMDLimiter(max_limit=20)
    limiter.adopt(6)
    for _ in range(20):
        limiter.on_success(0.2, 6, limiter.epoch)
    before = limiter.limit
    limiter.on_success(1.0, before, limiter.epoch)  # five times the usual latency
    assert limiter.limit < before


def test_only_the_first_rejection_after_service_reads_as_an_overshoot():
    limiter = AIMDLimiter(max_limit=20)
    assert not limiter.explains(2)  # nothing served yet: a closed window
    limiter.on_success(0.1, 1, limiter.epoch)
    assert limiter.explains(2)
    assert not limiter.explains(1)  # one request in flight cannot be too many
    limiter.on_drop(2, limiter.epoch)
    assert not limiter.explains(2)  # rejected again before anything was served: a closed window


def test_rejects_impossible_bounds():
    with pytest.raises(ValueError, match="min"):
        AIMDLimiter(max_limit=0)


def test_probes_find_a_reopened_window_within_about_ten_percent():
    backoff = ProbeBackoff(base_s=1.0, max_s=60.0)
    rand = random.Random(3)
    for reopens_at in (0.5, 3.7, 17.5, 36.3, 90.0, 300.0):
        waited, probes = 0.0, 0
        while waited < reopens_at:
            waited += backoff.delay(waited, rand)
            probes += 1
        assert waited - reopens_at <= max(1.1, 0.11 * reopens_at)  # the base delay, or ~10 %
        assert probes <= 60


def test_probe_delays_are_jittered_and_capped():
    backoff = ProbeBackoff(base_s=1.0, max_s=60.0)
    rand = random.Random(5)
    delays = {round(backoff.delay(10.0, rand), 6) for _ in range(20)}
    assert len(delays) > 10  # clients sharing a server do not probe in step
    assert max(backoff.delay(10_000.0, rand) for _ in range(50)) <= 66.0
