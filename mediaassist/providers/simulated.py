"""A provider that only takes time: for benchmarks and for tests of the scheduler itself.

Service times are drawn from a generator seeded with the task id, so every policy compared in
one benchmark sees the same durations; with ``by_prompt`` they grow with the prompt's length instead
(``prompt_service_time``: a web answer takes longer for a longer question, as the expected durations
of core/order.py assume). ``params`` may fix the behaviour of one task:
``sim_duration_s`` (nominal seconds) and ``sim_fail`` (an error kind raised after the wait).
"""

from __future__ import annotations

import random
import zlib

from mediaassist.core.clock import Clock
from mediaassist.core.errors import ErrorKind, TaskError
from mediaassist.core.messages import msg
from mediaassist.providers.base import TaskContext, TaskResult

# The prompt length at which a ``by_prompt`` task takes the whole range.
PROMPT_FULL_CHARS = 100


def service_time(task_id: str, low: float, high: float) -> float:
    return random.Random(zlib.crc32(task_id.encode())).uniform(low, high)


def prompt_service_time(task_id: str, prompt: str, low: float, high: float) -> float:
    """``low`` for an empty prompt up to ``high`` at PROMPT_FULL_CHARS characters and beyond,
    within ±10 % drawn per task id (kept within low..high)."""
    share = min(1.0, len(prompt) / PROMPT_FULL_CHARS)
    return min(high, max(low, (low + (high - low) * share) * service_time(task_id, 0.9, 1.1)))


class SimulatedProvider:
    def __init__(self, clock: Clock, min_duration_s: float, max_duration_s: float, by_prompt: bool = False) -> None:
        self.clock = clock
        self.low, self.high = min_duration_s, max_duration_s
        self.by_prompt = by_prompt
        self.in_flight = 0
        self.max_in_flight = 0

    async def start(self) -> None:
        pass

    async def close(self) -> None:
        pass

    async def run(self, ctx: TaskContext) -> TaskResult:
        params = ctx.task.params_dict
        task = ctx.task
        drawn = (prompt_service_time(task.task_id, task.prompt, self.low, self.high) if self.by_prompt
                 else service_time(task.task_id, self.low, self.high))
        duration = _duration(params, drawn)
        fail = _failure(params)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await self.clock.sleep(duration)
        finally:
            self.in_flight -= 1
        if fail is not None:
            raise TaskError(fail, msg("simulated failure"))
        return TaskResult(text=msg("[{model}] {prompt} ({seconds} s)",
                                   model=ctx.task.model, prompt=ctx.task.prompt[:60],
                                   seconds=format(duration, ".0f")))


def _duration(params: dict[str, object], drawn: float) -> float:
    """``sim_duration_s`` as the task gives it; a value that is no duration is the task's bad
    input (one line, not retried), not a bug of the provider."""
    raw = params.get("sim_duration_s", drawn)
    try:
        duration = float(raw) if isinstance(raw, (int, float, str)) and not isinstance(raw, bool) else -1.0
    except ValueError:  # a text that is no number
        duration = -1.0
    if not 0 <= duration < float("inf"):
        raise TaskError(ErrorKind.BAD_INPUT, msg("params: sim_duration_s must be a number of seconds >= 0, not {value}",
                                                 value=repr(raw)), retry=False)
    return duration


def _failure(params: dict[str, object]) -> ErrorKind | None:
    if "sim_fail" not in params:
        return None
    try:
        return ErrorKind(params["sim_fail"])
    except ValueError:
        allowed = ", ".join(kind.value for kind in ErrorKind)
        raise TaskError(ErrorKind.BAD_INPUT, msg("params: sim_fail must be one of {allowed}, not {value}",
                                                 allowed=allowed, value=repr(params["sim_fail"])),
                        retry=False) from None
