"""The window's periodic read of the counts: panels, batch progress and ETA, tray, notices."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from dataclasses import dataclass, field

from PySide6.QtCore import QObject, QTimer, Signal

from mediaassist.core.messages import Message
from mediaassist.core.progress import BatchProgress, Estimate, EtaSmoother, ServiceTimes, estimate
from mediaassist.core.queries import Snapshot
from mediaassist.core.store import Task
from mediaassist.runtime import LaneView, Runtime
from mediaassist.ui.core_texts import translated
from mediaassist.ui.i18n import labelled, tr

STATS_MS = 1000
STATS_BUDGET = 20  # the stats period is at least this many times what one refresh costs
MEASURED_EVENTS = ("success", "failed", "retry")  # an attempt ended: its service time counts
PACE_WINDOW_S = 120.0  # a batch's ETA follows its throughput over this many recent seconds
PACE_MIN_SPAN_S = 3.0  # ... once it has been seen ending tasks for at least this long


@dataclass
class StatsView:
    """One refresh's numbers, for every widget that shows them."""

    snap: Snapshot = field(default_factory=Snapshot)
    paused: dict[str, Message] = field(default_factory=dict)
    blocked: dict[str, Message] = field(default_factory=dict)
    running: int = 0
    all_paused: bool = False
    lanes: dict[str, LaneView] = field(default_factory=dict)

    def progress(self, batch: str) -> BatchProgress:
        return BatchProgress.of(batch, self.snap.by_batch.get(batch, {}))


class BatchPace:
    """Each batch's own recent throughput: how many of its tasks ended over the last
    ``window_s`` (real seconds), so its ETA is its remaining tasks at its own pace."""

    def __init__(self, window_s: float = PACE_WINDOW_S, min_span_s: float = PACE_MIN_SPAN_S) -> None:
        self.window_s, self.min_span_s = window_s, min_span_s
        self._seen: dict[str, deque[tuple[float, int]]] = {}

    def record(self, batch: str, ended: int, now: float) -> None:
        seen = self._seen.setdefault(batch, deque())
        seen.append((now, ended))
        while len(seen) > 2 and seen[1][0] <= now - self.window_s:  # one sample before the window stays
            seen.popleft()

    def seconds_left(self, batch: str, remaining: int, now: float) -> float | None:
        """None until the batch has been seen ending tasks for at least ``min_span_s``."""
        seen = self._seen.get(batch)
        if not seen or len(seen) < 2:
            return None
        (first_at, first_ended), (last_at, last_ended) = seen[0], seen[-1]
        span, ended = now - first_at, last_ended - first_ended
        if last_at - first_at < self.min_span_s or ended <= 0:
            return None
        return remaining * span / ended

    def forget(self, batch: str) -> None:
        self._seen.pop(batch, None)


class StatsController(QObject):
    """Signals:
        refreshed(StatsView): new numbers (every STATS_MS or more, and after any change).
        notice(str, str): a batch finished, an account needs login, a lane paused itself.
    """

    refreshed = Signal(object)
    notice = Signal(str, str)

    def __init__(self, rt: Runtime, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.rt = rt
        self.queries = rt.queries()
        self.reader = rt.off_loop_reader()
        self._reading: asyncio.Future[None] | None = None
        self.service = ServiceTimes()
        self.smoother = EtaSmoother()
        self.pace = BatchPace()
        self.view = StatsView()
        self._login_states: dict[str, str] = {}
        rt.add_listener(self._on_event)
        self._timer = QTimer(self)
        self._timer.setInterval(STATS_MS)
        self._timer.timeout.connect(self._tick)

    @property
    def interval_ms(self) -> int:
        return self._timer.interval()

    def start(self) -> None:
        self.refresh()
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()
        if self._reading is not None:
            self._reading.cancel()
        self.reader.close()

    def refresh(self) -> None:
        """Now, on the loop: after the operator changed something, the numbers follow at once."""
        started = time.perf_counter()
        snap = self.queries.snapshot()
        self._publish(snap, time.perf_counter() - started)

    def refresh_soon(self) -> None:
        """After an operator action: new numbers as soon as the reader thread has them."""
        self._tick()

    def _tick(self) -> None:
        if self._reading is None or self._reading.done():
            self._reading = asyncio.ensure_future(self._refresh_off_loop())

    async def _refresh_off_loop(self) -> None:
        self._publish(*await self.reader.run(self._timed_snapshot))

    def _timed_snapshot(self) -> tuple[Snapshot, float]:
        """Worker thread: the snapshot and the CPU it took (its wall time includes waiting for
        a core on a busy machine, which is no cost of ours)."""
        started = time.thread_time()
        snap = self.queries.snapshot()
        return snap, time.thread_time() - started

    def _publish(self, snap: Snapshot, cost_s: float) -> None:
        previous = self.view
        paused = self.rt.paused_lane_reasons()
        self.view = StatsView(snap=snap, paused=paused, blocked=self.rt.blocked_lanes(),
                              running=self.rt.running_count(), all_paused=self.rt.all_paused(paused),
                              lanes={lane.name: lane for lane in self.rt.lane_views()})
        now = time.monotonic()
        for batch in snap.batch_routes:  # the unfinished ones
            self.pace.record(batch, self.view.progress(batch).ended, now)
        self._notify_finished_batches(previous, self.view)
        self._notify_login_needed()
        self.refreshed.emit(self.view)
        # The snapshot is one GROUP BY over the whole store (~0.1 s at 100k rows on a slow box):
        # keep it under ~5 % of the time by stretching the period as the store grows.
        self._timer.setInterval(int(max(STATS_MS, STATS_BUDGET * cost_s * 1000)))

    def eta(self, batch: str) -> tuple[Estimate, float | None]:
        """The batch's estimate and, when there is one, the smoothed seconds to show.

        Once the batch itself is seen ending tasks, its own pace decides: its remaining tasks at
        its recent throughput. The scheduler's estimate counts the tasks of older batches as
        ahead of it, which is wrong for a batch another process runs (a 20-task `run` beside a
        10,000-task batch showed 14 minutes and took 29 s). A blocked batch says why, always."""
        now = time.monotonic()
        found = estimate(batch, self.view.snap, self.view.lanes.values(), self.view.blocked, self.service)
        progress = self.view.progress(batch)
        paced = self.pace.seconds_left(batch, progress.total - progress.ended, now)
        if found.blocked is None and paced is not None:
            found = Estimate(seconds=paced)
        if found.seconds is None:
            self.smoother.forget(batch)
            return found, None
        return found, self.smoother.smooth(batch, found.seconds, now)

    def _on_event(self, event: str, task: Task) -> None:
        if event in MEASURED_EVENTS and task.started_at:
            self.service.record(task.route, time.time() - task.started_at)
        if event == "paused":
            paused = self.rt.paused_lane_reasons()
            reason = paused.get(task.lane) or paused.get(task.route)
            self.notice.emit(tr("Lane paused"), labelled(task.lane, translated(reason)))

    def _notify_finished_batches(self, previous: StatsView, now: StatsView) -> None:
        for batch in previous.snap.batch_routes:
            progress = now.progress(batch)
            if batch in now.snap.by_batch and progress.finished:
                self.smoother.forget(batch)
                self.pace.forget(batch)
                self.notice.emit(tr("Batch finished"),
                                 tr("{batch}: {ok} done, {failed} failed, {canceled} canceled").format(
                                     batch=batch, ok=progress.done, failed=progress.failed,
                                     canceled=progress.canceled))

    def _notify_login_needed(self) -> None:
        for acct in self.rt.accounts():
            before = self._login_states.get(acct.name)
            if acct.login_state == "needs_login" and before not in (None, "needs_login"):
                self.notice.emit(tr("Account needs login"), f"{acct.name} ({acct.site})")
            self._login_states[acct.name] = acct.login_state
