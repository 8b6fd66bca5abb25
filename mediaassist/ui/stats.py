"""The counts as the window shows them: panels, batch progress and ETA, tray, notices."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from PySide6.QtCore import QObject, Signal

from mediaassist.core.events import TaskEvent, TaskEventKind
from mediaassist.core.messages import Message
from mediaassist.core.progress import BatchEta, BatchProgress, Estimate
from mediaassist.core.queries import Snapshot
from mediaassist.runtime import LaneView, Runtime
from mediaassist.ui.core_texts import translated
from mediaassist.ui.feed import TaskFeed
from mediaassist.ui.i18n import labelled, tr


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
    """The feed's counts with the lanes' state beside them, and the notices they give.

    Signals:
        refreshed(StatsView): new numbers (whenever the feed has new counts).
        notice(str, str): a batch finished, an account needs login, a lane paused itself.
    """

    refreshed = Signal(object)
    notice = Signal(str, str)

    def __init__(self, rt: Runtime, feed: TaskFeed, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.rt = rt
        self.etas = BatchEta()
        self.view = StatsView()
        self._login_states: dict[str, str] = {}
        feed.counts.connect(self._publish)
        feed.task_event.connect(self._on_event)

    def _publish(self, snap: Snapshot) -> None:
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

    def eta(self, batch: str) -> tuple[Estimate, float | None]:
        """The batch's estimate and, when there is one, the smoothed seconds to show (core.progress.BatchEta)."""
        return self.etas.eta(batch, self.view.snap, self.view.lanes.values(), self.view.blocked,
                             time.monotonic(), self.rt.now())

    def _on_event(self, event: TaskEvent) -> None:
        self.etas.attempt_ended(event.kind, event.route, event.started_at, self.rt.now())
        if event.kind == TaskEventKind.PAUSED:
            paused = self.rt.paused_lane_reasons()
            reason = paused.get(event.lane) or paused.get(event.route)
            self.notice.emit(tr("Lane paused"), labelled(event.lane, translated(reason)))

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
