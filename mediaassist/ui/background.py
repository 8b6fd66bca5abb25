"""Jobs the window runs next to itself (exports, imports, logins, bulk actions).

On quit each is either awaited (an export or an import must not leave half a file or half a
batch) or cancelled (a login browser closes with the app).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any

log = logging.getLogger("mediaassist.ui")


class BackgroundJobs:
    def __init__(self) -> None:
        self._jobs: dict[asyncio.Future[Any], bool] = {}  # job -> finish it before quitting

    def spawn(self, coro: Coroutine[Any, Any, Any], on_error: Callable[[BaseException], None],
              finish_on_quit: bool) -> asyncio.Future[Any]:
        future = asyncio.ensure_future(coro)
        self._jobs[future] = finish_on_quit

        def done(fut: asyncio.Future[Any]) -> None:
            self._jobs.pop(fut, None)
            if not fut.cancelled() and fut.exception() is not None:
                log.error("background action failed: %s", fut.exception())
                on_error(fut.exception())  # type: ignore[arg-type]

        future.add_done_callback(done)
        return future

    def __len__(self) -> int:
        return len(self._jobs)

    def any_to_finish(self) -> bool:
        return any(self._jobs.values())

    async def finish(self) -> None:
        """Quitting: cancel what may be cancelled, wait for the rest."""
        jobs = dict(self._jobs)
        for job, finish in jobs.items():
            if not finish:
                job.cancel()
        if jobs:
            await asyncio.wait(jobs)
