"""One injectable clock for every timer, so tests and benchmarks can run scaled time.

Timestamps stay real (wall-clock epoch seconds) so the store never holds future dates; only
*durations* -- sleeps, intervals, deadlines -- are divided by ``speed``.
"""

from __future__ import annotations

import asyncio
import time


class Clock:
    def __init__(self, speed: float = 1.0) -> None:
        if speed <= 0:
            raise ValueError("speed must be > 0")
        self.speed = speed

    def now(self) -> float:
        """Wall-clock epoch seconds (real time)."""
        return time.time()

    def monotonic(self) -> float:
        return time.monotonic()

    def real(self, seconds: float) -> float:
        """Real seconds that a nominal duration takes at this speed."""
        return seconds / self.speed

    def after(self, seconds: float) -> float:
        """Epoch timestamp a nominal duration from now."""
        return self.now() + self.real(seconds)

    def ago(self, seconds: float) -> float:
        return self.now() - self.real(seconds)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, self.real(seconds)))
