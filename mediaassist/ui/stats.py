"""The window's periodic read of the counts: panels, batch progress and ETA, tray, notices."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from PySide6.QtCore import QObject, QTimer, Signal

from mediaassist.core.messages import Message
from mediaassist.core.progress import BatchEta, BatchProgress, Estimate
from mediaassist.core.queries import Snapshot
from mediaassist.core.store import Task
from mediaassist.runtime import LaneView, Runtime
from mediaassist.ui.core_texts import translated
from mediaassist.ui.i18n import labelled, tr

STATS_MS = 1000
STATS_BUDGET = 20  # the stats period is at least this many times what one refresh costs


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
        self.etas = BatchEta()
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
            self.etas.record(batch, snap, now)
        self._notify_finished_batches(previous, self.view)
        self._notify_login_needed()
        self.refreshed.emit(self.view)
        # The snapshot is one GROUP BY over the whole store (~0.1 s at 100k rows on a slow box):
        # keep it under ~5 % of the time by stretching the period as the store grows.
        self._timer.setInterval(int(max(STATS_MS, STATS_BUDGET * cost_s * 1000)))

    def eta(self, batch: str) -> tuple[Estimate, float | None]:
        """The batch's estimate and, when there is one, the smoothed seconds to show (core.progress.BatchEta)."""
        return self.etas.eta(batch, self.view.snap, self.view.lanes.values(), self.view.blocked,
                             time.monotonic(), self.rt.now())

    def _on_event(self, event: str, task: Task) -> None:
        self.etas.attempt_ended(event, task.route, task.started_at, self.rt.now())
        if event == "paused":
            paused = self.rt.paused_lane_reasons()
            reason = paused.get(task.lane) or paused.get(task.route)
            self.notice.emit(tr("Lane paused"), labelled(task.lane, translated(reason)))

    def _notify_finished_batches(self, previous: StatsView, now: StatsView) -> None:
        for batch in previous.snap.batch_routes:
            progress = now.progress(batch)
            if batch in now.snap.by_batch and progress.finished:
                self.etas.forget(batch)
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
