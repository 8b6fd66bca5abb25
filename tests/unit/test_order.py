"""The order a lane takes its queue in, on plain data: the duration fit, the sort keys, fair shares."""

from __future__ import annotations

import pytest

from mediaassist.core.order import (
    MIN_EXPECTED_S,
    BatchQueue,
    DurationFit,
    fair_shares,
    fit_durations,
    order_key,
)

# --- expected durations ------------------------------------------------------------------------


def test_nothing_recorded_means_nothing_expected() -> None:
    assert fit_durations([]) is None


def test_a_line_through_exact_points_is_found() -> None:
    fit = fit_durations([(10, 30.0), (20, 50.0), (40, 90.0)])
    assert fit is not None
    assert fit.base_s == pytest.approx(10.0)
    assert fit.per_char_s == pytest.approx(2.0)
    assert fit.expected(30) == pytest.approx(70.0)


def test_one_prompt_length_only_gives_its_mean_for_every_prompt() -> None:
    fit = fit_durations([(12, 100.0), (12, 200.0)])
    assert fit == DurationFit(150.0, 0.0)
    assert fit.expected(1) == fit.expected(500) == 150.0


def test_a_longer_prompt_is_never_expected_to_be_quicker() -> None:
    fit = fit_durations([(10, 90.0), (20, 50.0), (40, 30.0)])
    assert fit is not None
    assert fit.per_char_s == 0.0
    assert fit.expected(10) == fit.expected(100) == pytest.approx(170 / 3)


def test_a_line_that_would_start_below_the_floor_is_pinned_to_it_through_the_mean() -> None:
    fit = fit_durations([(100, 10.0), (200, 110.0)])  # the least-squares line starts at -90 s
    assert fit is not None
    assert fit.base_s == MIN_EXPECTED_S
    assert fit.expected(150) == pytest.approx(60.0)  # through the mean
    assert fit.expected(0) == MIN_EXPECTED_S  # every prompt gets a positive expectation


# --- sort keys ---------------------------------------------------------------------------------

QUEUE = [  # (id, priority, expected_s, seq); 0 = not known
    ("old-short", 0, 40.0, 1), ("unknown-1", 0, 0.0, 2), ("long", 0, 300.0, 3), ("urgent-short", 5, 10.0, 4),
    ("unknown-2", 0, 0.0, 5), ("mid", 0, 120.0, 6),
]


def _sorted(order: str) -> list[str]:
    return [t[0] for t in sorted(QUEUE, key=lambda t: order_key(order, t[1], t[2], t[3]))]


def test_fifo_is_priority_then_arrival() -> None:
    assert _sorted("fifo") == ["urgent-short", "old-short", "unknown-1", "long", "unknown-2", "mid"]


def test_longest_is_priority_then_the_longest_expected_then_the_unknown_in_fifo_order() -> None:
    assert _sorted("longest") == ["urgent-short", "long", "mid", "old-short", "unknown-1", "unknown-2"]


def test_longest_with_nothing_known_is_fifo() -> None:
    unknown = [(i, 0, 0.0, seq) for i, seq in (("c", 3), ("a", 1), ("b", 2))]
    assert [t[0] for t in sorted(unknown, key=lambda t: order_key("longest", t[1], t[2], t[3]))] == ["a", "b", "c"]


# --- fair shares -------------------------------------------------------------------------------


def test_a_small_batch_gets_a_slot_beside_a_large_one_that_came_first() -> None:
    big, small = BatchQueue("big", 0, 10_000, head_seq=1), BatchQueue("small", 0, 3, head_seq=10_001)
    assert fair_shares([big, small], running={"big": 1}, count=1) == {"small": 1}
    assert fair_shares([big, small], running={}, count=1) == {"big": 1}  # equal: the older head
    assert fair_shares([big, small], running={}, count=4) == {"big": 2, "small": 2}


def test_shares_never_exceed_what_is_due() -> None:
    queues = [BatchQueue("big", 0, 100, 1), BatchQueue("small", 0, 2, 200), BatchQueue("tiny", 0, 1, 300)]
    assert fair_shares(queues, running={}, count=10) == {"big": 7, "small": 2, "tiny": 1}
    assert fair_shares(queues[1:], running={}, count=10) == {"small": 2, "tiny": 1}
    assert fair_shares([], running={"big": 3}, count=5) == {}


def test_priority_comes_before_fairness() -> None:
    queues = [BatchQueue("big", 0, 100, 1), BatchQueue("big", 5, 2, 50), BatchQueue("small", 0, 5, 200)]
    # big's two urgent tasks first, though it runs more; then small until it catches up
    assert fair_shares(queues, running={"big": 3}, count=5) == {"big": 2, "small": 3}


def test_the_batch_running_fewest_catches_up_first() -> None:
    queues = [BatchQueue(name, 0, 50, seq) for name, seq in (("a", 1), ("b", 2), ("c", 3))]
    assert fair_shares(queues, running={"a": 4, "b": 1}, count=6) == {"b": 3, "c": 3}
