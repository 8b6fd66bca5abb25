"""A provider that only takes time: for benchmarks and for tests of the scheduler itself.

Service times are drawn from a generator seeded with the task id, so every policy compared in
one benchmark sees the same durations. ``params`` may fix the behaviour of one task:
``sim_duration_s`` (nominal seconds) and ``sim_fail`` (an error kind raised after the wait).
"""

from __future__ import annotations

import random
import zlib

from mediaassist.core.clock import Clock
from mediaassist.core.errors import ErrorKind, TaskError
from mediaassist.core.messages import msg
from mediaassist.providers.base import TaskContext, TaskResult


def service_time(task_id: str, low: float, high: float) -> float:
    return random.Random(zlib.crc32(task_id.encode())).uniform(low, high)


class SimulatedProvider:
    def __init__(self, clock: Clock, min_duration_s: float, max_duration_s: float) -> None:
        self.clock = clock
        self.low, self.high = min_duration_s, max_duration_s
        self.in_flight = 0
        self.max_in_flight = 0

    async def start(self) -> None:
        pass

    async def close(self) -> None:
        pass

    async def run(self, ctx: TaskContext) -> TaskResult:
        params = ctx.task.params_dict
        duration = float(params.get("sim_duration_s", service_time(ctx.task.task_id, self.low, self.high)))
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await self.clock.sleep(duration)
        finally:
            self.in_flight -= 1
        if "sim_fail" in params:
            raise TaskError(ErrorKind(params["sim_fail"]), msg("simulated failure"))
        return TaskResult(text=msg("[{model}] {prompt} ({seconds} s)",
                                   model=ctx.task.model, prompt=ctx.task.prompt[:60],
                                   seconds=format(duration, ".0f")))
