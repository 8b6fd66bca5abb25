"""The store's clock: anchored to the server's, counted on with monotonic time, re-read now and then,
a host clock far off told once (core/store_clock.py)."""

from __future__ import annotations

import logging

import pytest

from mediaassist.core import store_clock
from mediaassist.core.store_clock import RESYNC_S, RETRY_SYNC_S, ServerClock


class Machine:
    """This machine's clocks, as the module reads them."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, wall: float) -> None:
        self.mono, self.wall = 1000.0, wall
        monkeypatch.setattr(store_clock.time, "monotonic", lambda: self.mono)
        monkeypatch.setattr(store_clock.time, "time", lambda: self.wall)

    def wait(self, seconds: float) -> None:
        self.mono += seconds
        self.wall += seconds


def test_the_server_time_counts_on_with_monotonic_time_whatever_the_wall_clock_does(
        monkeypatch: pytest.MonkeyPatch) -> None:
    machine = Machine(monkeypatch, wall=5_000.0)
    server = {"now": 5_000.0, "reads": 0}

    def read() -> float:
        server["reads"] += 1
        return server["now"] + (machine.mono - 1000.0)

    clock = ServerClock(read, "postgresql://db/queue")
    assert clock.now() == 5_000.0
    machine.wall += 120.0  # the wall clock steps (NTP, a laptop waking): nothing changes
    machine.wait(10.0)
    assert clock.now() == 5_010.0 and server["reads"] == 1
    machine.wait(RESYNC_S)
    assert clock.now() == pytest.approx(5_010.0 + RESYNC_S) and server["reads"] == 2


def test_a_failed_read_counts_on_from_the_last_one_and_tries_again_soon(monkeypatch: pytest.MonkeyPatch) -> None:
    machine = Machine(monkeypatch, wall=0.0)
    answers: list[float | Exception] = [100.0, ConnectionError("gone"), 200.0]

    def read() -> float:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    clock = ServerClock(read, "db")
    assert clock.now() == 100.0
    machine.wait(RESYNC_S)
    assert clock.now() == 100.0 + RESYNC_S  # the read failed: counted on
    machine.wait(RETRY_SYNC_S)
    assert clock.now() == 200.0  # read again a few seconds later
    with pytest.raises(ConnectionError):
        ServerClock(lambda: (_ for _ in ()).throw(ConnectionError("never")), "db").now()  # nothing to count on


def test_a_host_clock_minutes_off_is_told_once(monkeypatch: pytest.MonkeyPatch,
                                               caplog: pytest.LogCaptureFixture) -> None:
    machine = Machine(monkeypatch, wall=10_120.0)
    clock = ServerClock(lambda: 10_000.0 + (machine.mono - 1000.0), "postgresql://db/queue")
    caplog.set_level(logging.WARNING, "mediaassist.store")
    for _ in range(3):
        clock.now()
        machine.wait(RESYNC_S)
    told = [r.getMessage() for r in caplog.records if "clock" in r.getMessage()]
    assert len(told) == 1 and "120 s ahead of the clock of the shared store postgresql://db/queue" in told[0]
    on_time = ServerClock(lambda: machine.wall, "db")
    caplog.clear()
    on_time.now()
    assert not caplog.records
