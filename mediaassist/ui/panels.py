"""Queue panels (Web | API + polling pools) with per-lane gauges, and per-batch progress with ETA."""

from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGridLayout, QGroupBox, QLabel, QProgressBar, QPushButton, QVBoxLayout

from mediaassist.core.scheduler import Lane, Scheduler
from mediaassist.core.store import Store, Task
from mediaassist.ui.i18n import tr
from mediaassist.ui.labels import format_seconds

FINAL = ("success", "failed", "canceled")
EWMA_WEIGHT = 0.2  # recent service times count more: providers speed up and slow down


class ServiceTimes:
    """Measured seconds per attempt, per route (lanes of one route share a queue)."""

    def __init__(self) -> None:
        self.mean: dict[str, float] = {}

    def on_event(self, event: str, task: Task) -> None:
        if event not in ("success", "failed", "retry") or not task.started_at:
            return
        took = max(0.0, time.time() - task.started_at)
        old = self.mean.get(task.route)
        self.mean[task.route] = took if old is None else old + EWMA_WEIGHT * (took - old)


@dataclass
class Snapshot:
    """One GROUP BY over the store, cut the ways the panels need it."""

    by_route: dict[tuple[str, str], int] = field(default_factory=lambda: defaultdict(int))
    by_account: dict[tuple[str, str], int] = field(default_factory=lambda: defaultdict(int))
    by_batch: dict[str, dict[str, int]] = field(default_factory=dict)
    batch_routes: dict[str, dict[str, int]] = field(default_factory=dict)  # unfinished per route
    batch_order: list[str] = field(default_factory=list)  # newest first

    @classmethod
    def take(cls, store: Store) -> Snapshot:
        snap = cls()
        rows = store.db.execute_sql(
            "SELECT batch_id, route, account, state, COUNT(*), MAX(seq) FROM task "
            "GROUP BY batch_id, route, account, state").fetchall()
        newest: dict[str, int] = {}
        for batch, route, account, state, n, max_seq in rows:
            snap.by_route[(route, state)] += n
            if account:
                snap.by_account[(account, state)] += n
            counts = snap.by_batch.setdefault(batch, defaultdict(int))
            counts[state] += n
            if state not in FINAL:
                routes = snap.batch_routes.setdefault(batch, defaultdict(int))
                routes[route] += n
            newest[batch] = max(newest.get(batch, 0), max_seq)
        snap.batch_order = sorted(newest, key=newest.__getitem__, reverse=True)
        return snap

    def totals(self) -> dict[str, int]:
        out: dict[str, int] = defaultdict(int)
        for (_, state), n in self.by_route.items():
            out[state] += n
        return out


@dataclass
class LaneGauge:
    running: int
    limit: int
    pending: int
    done: int
    failed: int


def lane_gauge(lane: Lane, snap: Snapshot) -> LaneGauge:
    """Running comes from the scheduler (live); the rest from the store snapshot.

    A web lane's pending count is its site's shared queue (any free account takes from it)."""
    if lane.account is not None:
        done = snap.by_account[(lane.account, "success")]
        failed = snap.by_account[(lane.account, "failed")]
    else:
        done = snap.by_route[(lane.route, "success")]
        failed = snap.by_route[(lane.route, "failed")]
    return LaneGauge(running=len(lane.active), limit=lane.current_limit(),
                     pending=snap.by_route[(lane.route, "pending")], done=done, failed=failed)


def batch_eta(batch: str, snap: Snapshot, scheduler: Scheduler, service: ServiceTimes,
              blocked: dict[str, str]) -> float | None:
    """Seconds until the batch ends: per route, its unfinished tasks in waves of the route's
    parallelism, each wave one measured service time; the slowest route decides.

    None while a route has no measurement yet or no lane can take its tasks."""
    worst = 0.0
    for route, remaining in snap.batch_routes.get(batch, {}).items():
        parallel = sum(lane.limit for lane in scheduler.lanes.values()
                       if lane.route == route and lane.name not in blocked)
        mean = service.mean.get(route)
        if parallel == 0 or mean is None:
            return None
        ahead = snap.by_route[(route, "pending")] + snap.by_route[(route, "running")] - remaining
        waves = math.ceil((remaining + max(0, ahead)) / parallel)
        worst = max(worst, waves * mean)
    return worst


class LaneRow:
    """One lane's line in a panel: name, gauge bar, counts, blocked reason, pause/resume."""

    def __init__(self, grid: QGridLayout, row: int, lane: Lane, on_toggle: Callable[[str], None]) -> None:
        self.lane = lane
        self.name = QLabel(f"<b>{lane.name}</b>")
        self.gauge = QProgressBar()
        self.gauge.setTextVisible(True)
        self.gauge.setMaximumHeight(16)
        self.counts = QLabel()
        self.status = QLabel()
        self.status.setStyleSheet("color: #c62828")
        self.button = QPushButton()
        self.button.clicked.connect(lambda: on_toggle(lane.name))
        for col, widget in enumerate((self.name, self.gauge, self.counts, self.status, self.button)):
            grid.addWidget(widget, row, col)

    def update(self, gauge: LaneGauge, paused: bool, blocked: str | None) -> None:
        self.gauge.setMaximum(max(1, gauge.limit))
        self.gauge.setValue(min(gauge.running, gauge.limit))
        if self.lane.kind == "poll":
            self.gauge.setFormat(tr("polled %v/%m"))
            text = tr("waiting {pending} · done {done} · failed {failed}")
        elif self.lane.kind == "web":
            # Every account of a site draws from one shared queue: say so, or two accounts
            # showing "pending 10" each read as 20 tasks.
            self.gauge.setFormat(tr("running %v/%m"))
            text = tr("site queue {pending} · done {done} · failed {failed}")
        else:
            self.gauge.setFormat(tr("running %v/%m"))
            text = tr("pending {pending} · done {done} · failed {failed}")
        self.counts.setText(text.format(pending=gauge.pending, done=gauge.done, failed=gauge.failed))
        self.status.setText(blocked or "")
        self.button.setText(tr("Resume") if paused else tr("Pause"))


class QueuePanel(QGroupBox):
    def __init__(self, title: str, lanes: list[Lane], on_toggle: Callable[[str], None],
                 config_path: str) -> None:
        super().__init__(title)
        grid = QGridLayout(self)
        grid.setColumnStretch(1, 1)
        self.rows = [LaneRow(grid, i, lane, on_toggle) for i, lane in enumerate(lanes)]
        if not lanes:
            # A first start has no config: say where it goes and how to try the app without one.
            hint = QLabel(tr("No lanes of this kind yet. Add them to {config} (see the README), "
                             "or start with: mediaassist --demo").format(config=config_path))
            hint.setWordWrap(True)
            hint.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            grid.addWidget(hint, 0, 0)

    def update(self, snap: Snapshot, paused: dict[str, str], blocked: dict[str, str]) -> None:
        for row in self.rows:
            row.update(lane_gauge(row.lane, snap), row.lane.name in paused, blocked.get(row.lane.name))


class BatchList(QGroupBox):
    """Progress of the newest batches: unfinished ones first, a few finished ones after."""

    MAX_SHOWN = 6

    def __init__(self) -> None:
        super().__init__(tr("Batches"))
        self._layout = QVBoxLayout(self)
        self._rows: list[tuple[QLabel, QProgressBar]] = []
        self._empty = QLabel(tr("No batches yet: drop a task file on the window."))
        self._layout.addWidget(self._empty)

    def update(self, snap: Snapshot, eta: Callable[[str], float | None]) -> None:
        unfinished = [b for b in snap.batch_order if b in snap.batch_routes]
        finished = [b for b in snap.batch_order if b not in snap.batch_routes]
        shown = (unfinished + finished)[:self.MAX_SHOWN]
        while len(self._rows) < len(shown):
            label, bar = QLabel(), QProgressBar()
            bar.setMaximumHeight(16)
            self._layout.addWidget(label)
            self._layout.addWidget(bar)
            self._rows.append((label, bar))
        self._empty.setVisible(not shown)
        for i, (label, bar) in enumerate(self._rows):
            visible = i < len(shown)
            label.setVisible(visible)
            bar.setVisible(visible)
            if visible:
                self._show(shown[i], snap, eta, label, bar)

    @staticmethod
    def _show(batch: str, snap: Snapshot, eta: Callable[[str], float | None], label: QLabel,
              bar: QProgressBar) -> None:
        counts = snap.by_batch[batch]
        total = sum(counts.values())
        final = sum(counts[s] for s in FINAL)
        bar.setMaximum(max(1, total))
        bar.setValue(final)
        bar.setFormat(f"{final}/{total}")
        if final == total:
            when = tr("finished")
        else:
            seconds = eta(batch)
            when = tr("ETA measuring…") if seconds is None else tr("ETA {t}").format(t=format_seconds(seconds))
        label.setText(tr("{batch}: {ok} done, {failed} failed, {running} running · {when}").format(
            batch=batch, ok=counts["success"], failed=counts["failed"], running=counts["running"], when=when))
