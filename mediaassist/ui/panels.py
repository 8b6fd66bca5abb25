"""Queue panels (Web | API + polling pools) with per-lane gauges, and per-batch progress with ETA.

The numbers come from ``core.queries.Snapshot`` and ``core.progress``; this module only shows them.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from mediaassist.core.budget import batch_pause_name
from mediaassist.core.messages import Message, is_warning
from mediaassist.core.money import Money
from mediaassist.core.policy import ACCOUNT_DISABLED, ACCOUNT_NEEDS_LOGIN
from mediaassist.core.progress import BatchProgress, Blocked, Estimate
from mediaassist.core.queries import Snapshot
from mediaassist.runtime import LaneView
from mediaassist.ui.core_texts import translated
from mediaassist.ui.fit import ElidedLabel, scrollable
from mediaassist.ui.i18n import labelled, tr
from mediaassist.ui.labels import format_seconds, money_text


@dataclass
class LaneGauge:
    running: int
    limit: int
    pending: int
    done: int
    failed: int


def lane_gauge(lane: LaneView, snap: Snapshot) -> LaneGauge:
    """Running comes from the scheduler (live); the rest from the store snapshot.

    A web lane's pending count is its site's shared queue (any free account takes from it)."""
    if lane.account is not None:
        done = snap.by_account[(lane.account, "success")]
        failed = snap.by_account[(lane.account, "failed")]
    else:
        done = snap.by_route[(lane.route, "success")]
        failed = snap.by_route[(lane.route, "failed")]
    return LaneGauge(running=lane.running, limit=lane.current_limit,
                     pending=snap.by_route[(lane.route, "pending")], done=done, failed=failed)


REASON_CHARS = 40  # a blocked lane's reason in a batch's line


class LaneRow:
    """One lane's two lines in a panel: name, gauge bar and pause/resume; then its counts and
    the reason it is blocked (both elided to the panel's width, whole in their tooltips)."""

    def __init__(self, grid: QGridLayout, row: int, lane: LaneView, on_toggle: Callable[[str], None]) -> None:
        self.lane = lane
        self.name = ElidedLabel(lane.name)
        bold = self.name.font()
        bold.setBold(True)
        self.name.setFont(bold)
        self.gauge = QProgressBar()
        self.gauge.setTextVisible(True)
        self.gauge.setMaximumHeight(16)
        self.counts = ElidedLabel()
        self.status = ElidedLabel()  # a reason can be a long provider message
        self.status.setStyleSheet("color: #c62828")
        self.button = QPushButton()
        self.button.clicked.connect(lambda: on_toggle(lane.name))
        for col, widget in enumerate((self.name, self.gauge, self.button)):
            grid.addWidget(widget, 2 * row, col)
        details = QHBoxLayout()
        details.addWidget(self.counts)
        details.addWidget(self.status, 1)
        grid.addLayout(details, 2 * row + 1, 0, 1, 3)

    def update(self, lane: LaneView, gauge: LaneGauge, paused: bool, blocked: Message | None) -> None:
        self.lane = lane
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
        text = text.format(pending=gauge.pending, done=gauge.done, failed=gauge.failed)
        if self.lane.balance is not None:  # what the account had left when last read (start, after a batch)
            text += " · " + tr("balance {balance}").format(balance=money_text([self.lane.balance]))
        self.counts.setText(text)
        lines = self.lane.notes
        warnings = [translated(line) for line in lines if is_warning(line)]
        # A blocked lane's reason matters most; else the account check's first warning.
        self.status.setText(translated(blocked) if blocked else (warnings[0] if warnings else ""))
        account = "\n".join([self.lane.name, *map(translated, lines)])
        self.name.setToolTip(account)
        self.gauge.setToolTip(account)
        self.button.setText(tr("Resume") if paused else tr("Pause"))


class QueuePanel(QGroupBox):
    def __init__(self, title: str, lanes: list[LaneView], on_toggle: Callable[[str], None],
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
            grid.addWidget(hint, 0, 0, 1, 3)

    def show_snapshot(self, snap: Snapshot, lanes: Mapping[str, LaneView], paused: Mapping[str, Message],
                      blocked: dict[str, Message]) -> None:
        """``lanes``: the runtime's views at this refresh (running counts and limits are live)."""
        for row in self.rows:
            lane = lanes.get(row.lane.name, row.lane)
            row.update(lane, lane_gauge(lane, snap), lane.name in paused, blocked.get(lane.name))


class BatchList(QGroupBox):
    """Progress of the newest batches: unfinished ones first, a few finished ones after.

    Signals (of the labels): a "Log in"/"Enable" link activates ``on_link`` with "accounts"."""

    MAX_SHOWN = 6
    ID_CHARS = 24  # a batch id is <file stem>-<UTC time>-<8 hex>: the stem and the hex tell them apart

    def __init__(self, on_link: Callable[[str], None] | None = None,
                 per_batch: dict[str, Decimal] | None = None) -> None:
        super().__init__(tr("Batches"))
        self._on_link = on_link
        self.per_batch = per_batch or {}  # [budget] per_batch, by currency
        self._snap, self._paused = Snapshot(), dict[str, Message]()
        # The rows scroll: the panel's height is the splitter's, not the number of batches.
        inner = QWidget()
        QVBoxLayout(self).addWidget(scrollable(inner))
        self._layout = QVBoxLayout(inner)
        self._layout.setContentsMargins(2, 2, 2, 2)
        self._rows: list[tuple[QLabel, QProgressBar]] = []
        self._empty = QLabel(tr("No batches yet: drop a task file on the window."))
        self._empty.setWordWrap(True)
        self._layout.addWidget(self._empty)
        self._layout.addStretch(1)

    def show_snapshot(self, snap: Snapshot, eta: Callable[[str], tuple[Estimate, float | None]],
                      paused: dict[str, Message] | None = None) -> None:
        """``paused``: the store's pauses; a batch its budget stopped shows why."""
        self._snap, self._paused = snap, paused or {}
        unfinished = [b for b in snap.batch_order if b in snap.batch_routes]
        finished = [b for b in snap.batch_order if b not in snap.batch_routes]
        shown = (unfinished + finished)[:self.MAX_SHOWN]
        while len(self._rows) < len(shown):
            self._rows.append(self._add_row())
        self._empty.setVisible(not shown)
        for i, (label, bar) in enumerate(self._rows):
            visible = i < len(shown)
            label.setVisible(visible)
            bar.setVisible(visible)
            if visible:
                progress = BatchProgress.of(shown[i], snap.by_batch[shown[i]])
                self._show(progress, eta, label, bar)

    def _add_row(self) -> tuple[QLabel, QProgressBar]:
        label, bar = QLabel(), QProgressBar()
        label.setWordWrap(True)
        label.setTextFormat(Qt.TextFormat.RichText)
        if self._on_link is not None:
            label.linkActivated.connect(self._on_link)
        bar.setMaximumHeight(16)
        at = self._layout.count() - 1  # before the stretch
        self._layout.insertWidget(at, label)
        self._layout.insertWidget(at + 1, bar)
        return label, bar

    def _show(self, progress: BatchProgress, eta: Callable[[str], tuple[Estimate, float | None]],
              label: QLabel, bar: QProgressBar) -> None:
        bar.setMaximum(max(1, progress.total))
        bar.setValue(progress.ended)
        bar.setFormat(f"{progress.ended}/{progress.total}")
        label.setToolTip(progress.batch)
        counts = tr("{done} done · {failed} failed · {canceled} canceled · {running} running · "
                    "{waiting} waiting").format(
            done=progress.done, failed=progress.failed, canceled=progress.canceled, running=progress.running,
            waiting=progress.waiting)
        when = tr("finished") if progress.finished else eta_text(*eta(progress.batch))
        label.setText(f"<b>{html.escape(elide_middle(progress.batch, self.ID_CHARS))}</b><br>"
                      f"{html.escape(counts)} · {when}{self._money_line(progress.batch)}")

    def _money_line(self, batch: str) -> str:
        """Spent (and reserved for running tasks) beside the estimate, what the batch's budget
        leaves, and why its budget stopped it."""
        spent, estimated = self._snap.batch_spent.get(batch), self._snap.batch_estimate.get(batch)
        parts = []
        if spent:
            parts.append(tr("spent {spent} of estimated {estimate}").format(
                spent=money_text(spent.monies()), estimate=money_text(estimated.monies() if estimated else [])))
            left = [Money(cap - spent.get(currency).amount, currency) for currency, cap in self.per_batch.items()
                    if currency in spent.by_currency]
            if left:
                parts.append(tr("budget left {left}").format(left=money_text(left)))
        line = html.escape(" · ".join(parts))
        stopped = self._paused.get(batch_pause_name(batch))
        if stopped:
            line += f'<br><span style="color: #c62828">{html.escape(translated(stopped))}</span>'
        return f"<br>{line}" if line else ""


def elide_end(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def elide_middle(text: str, limit: int, tail: int = 8) -> str:
    """Keep the start (a batch's file name) and the last ``tail`` characters (its hex)."""
    return text if len(text) <= limit else f"{text[:limit - tail - 1]}…{text[-tail:]}"


def eta_text(estimate: Estimate, shown_seconds: float | None) -> str:
    """Rich text: the ETA, or why there is none (with a link to where it is fixed)."""
    if estimate.blocked is not None:
        return blocked_text(estimate.blocked)
    if estimate.measuring is not None:
        return html.escape(tr("ETA: measuring (no {kind} task has finished yet)").format(
            kind=kind_label(estimate.measuring)))
    return html.escape(tr("ETA {t}").format(t=format_seconds(shown_seconds)))


def kind_label(route: str) -> str:
    kind = route.partition(":")[0]
    return {"web": tr("web"), "api": tr("API"), "poll": tr("polling")}.get(kind, kind)


def blocked_text(blocked: Blocked) -> str:
    """"207 web tasks wait: account demo-a needs login → Log in"."""
    whys: list[str] = []
    fix = ""
    for lane, reason in blocked.reasons:
        account = lane.partition(":")[2]
        if reason == ACCOUNT_NEEDS_LOGIN:
            whys.append(html.escape(tr("account {name} needs login").format(name=account)))
            fix = f' → <a href="accounts">{html.escape(tr("Log in"))}</a>'
        elif reason == ACCOUNT_DISABLED:
            whys.append(html.escape(tr("account {name} is disabled").format(name=account)))
            fix = fix or f' → <a href="accounts">{html.escape(tr("Enable it"))}</a>'
        else:
            # the lane's own row shows the whole reason (in its tooltip); here it must wrap in a
            # narrow panel, and one long token (an error code) cannot
            whys.append(html.escape(labelled(lane, elide_end(translated(reason), REASON_CHARS))))
    why = tr("; ").join(whys) or html.escape(tr("no lane in the config takes them"))
    head = html.escape(tr("{n} {kind} tasks wait:").format(n=blocked.waiting, kind=kind_label(blocked.route)))
    return f"<span style='color:#c62828'>{head} {why}</span>{fix}"
