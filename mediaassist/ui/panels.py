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
    QLabel,
    QProgressBar,
    QSizePolicy,
    QStyle,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from mediaassist.core.budget import batch_pause_name
from mediaassist.core.messages import Message, is_warning
from mediaassist.core.money import Money
from mediaassist.core.order import order_message
from mediaassist.core.progress import BatchProgress, Blocked, Estimate
from mediaassist.core.queries import Snapshot
from mediaassist.runtime import ACCOUNT_DISABLED, ACCOUNT_NEEDS_LOGIN, LaneView
from mediaassist.ui.core_texts import translated
from mediaassist.ui.fit import ElidedLabel, scrollable
from mediaassist.ui.i18n import labelled, tr
from mediaassist.ui.labels import format_seconds, money_text

PROBLEM_STYLE = "color: #c62828"


@dataclass
class LaneGauge:
    running: int
    limit: int
    pending: int
    done: int
    failed: int


def lane_gauge(lane: LaneView, snap: Snapshot) -> LaneGauge:
    """Running comes from the scheduler (live); the rest from the store snapshot.

    A web lane's pending count is its site's shared queue (any free account takes from it), a
    key's its provider's (any free key takes from it)."""
    if lane.account is not None or lane.key is not None:
        done = snap.by_lane[(lane.name, "success")]
        failed = snap.by_lane[(lane.name, "failed")]
    else:
        done = snap.by_route[(lane.route, "success")]
        failed = snap.by_route[(lane.route, "failed")]
    return LaneGauge(running=lane.running, limit=lane.current_limit,
                     pending=snap.by_route[(lane.route, "pending")], done=done, failed=failed)


REASON_CHARS = 40  # a blocked lane's reason in a batch's line
ENABLE_LINK = "enable:"  # a batch line's link that enables the account named after it
NAME_PX = 96  # an account or provider name is shown whole up to this width
GAUGE_PX = 64  # "100/100": the word (running, polled) is in the tooltip


def fixed_width(label: QLabel) -> QLabel:
    """A label the layout never squeezes: its whole text always shows (a count, never elided)."""
    label.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Preferred)
    return label


class LaneRow:
    """One lane on one line, built for a 1366×768 screen: name, gauge, counts (whole: the failed
    count is never the part cut off), the reason it is blocked (elided to the room left, whole in
    its tooltip) and one icon button to pause or resume it."""

    def __init__(self, grid: QGridLayout, row: int, lane: LaneView, on_toggle: Callable[[str], None]) -> None:
        self.lane = lane
        # The panel's title says the kind: the row names the account or provider -- or the
        # provider and its key, cut at the start: the key's label tells its rows apart.
        self.name = ElidedLabel(lane.name.partition(":")[2] or lane.name,
                                elide=Qt.TextElideMode.ElideLeft if lane.key else Qt.TextElideMode.ElideRight)
        bold = self.name.font()
        bold.setBold(True)
        self.name.setFont(bold)
        # The whole name when it is short; a long one gives way to the counts beside it.
        self.name.setMinimumWidth(min(self.name.fontMetrics().horizontalAdvance(self.name.text()) + 4, NAME_PX))
        self.gauge = QProgressBar()
        self.gauge.setTextVisible(True)
        self.gauge.setMaximumHeight(16)
        self.gauge.setFixedWidth(GAUGE_PX)
        self.counts = fixed_width(QLabel())
        self.status = ElidedLabel()  # a reason can be a long provider message
        self.status.setMinimumWidth(1)  # the room left, if any: the counts and the button come first
        # and the name: a reason or balance asking for its width cut "demo-runninghub" to
        # "demo-runni…" while the panel had room for both to be read
        self.status.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.button = QToolButton()
        self.button.setAutoRaise(True)
        self.button.clicked.connect(lambda: on_toggle(lane.name))
        for col, widget in enumerate((self.name, self.gauge, self.counts, self.status, self.button)):
            grid.addWidget(widget, row, col)

    def update(self, lane: LaneView, gauge: LaneGauge, paused: bool, blocked: Message | None) -> None:
        self.lane = lane
        self.gauge.setMaximum(max(1, gauge.limit))
        self.gauge.setValue(min(gauge.running, gauge.limit))
        # A paused or blocked lane says so where the eye is; its reason is beside it (room
        # permitting) and in the tooltips.
        self.gauge.setFormat(tr("paused") if paused else tr("blocked") if blocked else "%v/%m")
        self.counts.setText(tr("{pending} waiting · {done} done · {failed} failed").format(
            pending=gauge.pending, done=gauge.done, failed=gauge.failed))
        # Every account of a site draws from one shared queue: say so, or two accounts
        # showing "10 waiting" each read as 20 tasks.
        shared_queue = (tr("waiting in the site's shared queue: any of its accounts takes them")
                        if self.lane.kind == "web" else "")
        lines = self.lane.notes
        warnings = [translated(line) for line in lines if is_warning(line)]
        # A blocked lane's reason matters most; else the account check's first warning.
        # what the account had left when last read (start, after a batch), in the room left
        balance = (tr("balance {balance}").format(balance=money_text([self.lane.balance]))
                   if self.lane.balance is not None else "")
        problem = translated(blocked) if blocked else (warnings[0] if warnings else "")
        self.status.setText(problem or balance)
        self.status.setStyleSheet(PROBLEM_STYLE if problem else "")  # a balance is news, not a problem
        account = "\n".join(filter(None, [self.lane.name, *map(translated, lines), balance]))
        self.name.setToolTip(account)
        gauge_text = tr("polled {n} of {limit}") if self.lane.kind == "poll" else tr("running {n} of {limit}")
        self.gauge.setToolTip(account)
        self.counts.setToolTip("\n".join(filter(None, [gauge_text.format(n=gauge.running, limit=gauge.limit),
                                                          translated(order_message(self.lane.order)),
                                                          shared_queue, self.status.text()])))
        style = self.button.style()
        icon = QStyle.StandardPixmap.SP_MediaPlay if paused else QStyle.StandardPixmap.SP_MediaPause
        self.button.setIcon(style.standardIcon(icon))
        self.button.setToolTip(labelled(tr("Resume") if paused else tr("Pause"), self.lane.name))
        self.button.setAccessibleName(tr("Resume") if paused else tr("Pause"))


class QueuePanel(QGroupBox):
    def __init__(self, title: str, lanes: list[LaneView], on_toggle: Callable[[str], None],
                 config_path: str) -> None:
        super().__init__(title)
        grid = QGridLayout(self)
        grid.setContentsMargins(4, 2, 4, 2)
        grid.setVerticalSpacing(2)
        grid.setColumnStretch(3, 1)  # the reason gets the room the name and the counts leave
        self.rows = [LaneRow(grid, i, lane, on_toggle) for i, lane in enumerate(lanes)]
        if lanes:
            grid.setRowStretch(len(lanes), 1)  # rows at the top, not spread over the panel
        else:
            # A first start has no config: say where it goes and how to try the app without one.
            hint = QLabel(tr("No lanes of this kind yet. Add them to {config} (see the README), "
                             "or start with: mediaassist --demo").format(config=config_path))
            hint.setWordWrap(True)
            hint.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            grid.addWidget(hint, 0, 0, 1, 5)

    def show_snapshot(self, snap: Snapshot, lanes: Mapping[str, LaneView], paused: Mapping[str, Message],
                      blocked: dict[str, Message]) -> None:
        """``lanes``: the runtime's views at this refresh (running counts and limits are live)."""
        for row in self.rows:
            lane = lanes.get(row.lane.name, row.lane)
            row.update(lane, lane_gauge(lane, snap), lane.name in paused, blocked.get(lane.name))


@dataclass
class BatchRow:
    """A batch in two short lines: its id and progress bar; then its counts and ETA, or why it
    waits (with a link to the fix)."""

    name: ElidedLabel
    bar: QProgressBar
    detail: QLabel

    def set_visible(self, visible: bool) -> None:
        for widget in (self.name, self.bar, self.detail):
            widget.setVisible(visible)


class BatchList(QGroupBox):
    """Progress of the newest batches, as a compact list: unfinished ones first, a few finished
    ones after.

    Signals (of the labels): a "Log in"/"Enable" link activates ``on_link`` with its target."""

    MAX_SHOWN = 6
    BAR_PX = 150

    def __init__(self, on_link: Callable[[str], None] | None = None,
                 per_batch: dict[str, Decimal] | None = None) -> None:
        super().__init__(tr("Batches"))
        self._on_link = on_link
        self.per_batch = per_batch or {}  # [budget] per_batch, by currency
        self._snap, self._paused = Snapshot(), dict[str, Message]()
        # The rows scroll: the panel's height is the splitter's, not the number of batches.
        inner = QWidget()
        outer = QVBoxLayout(self)
        outer.setContentsMargins(4, 2, 4, 2)
        outer.addWidget(scrollable(inner))
        self._layout = QGridLayout(inner)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setVerticalSpacing(1)
        self._layout.setColumnStretch(0, 1)
        self._rows: list[BatchRow] = []
        self._empty = QLabel(tr("No batches yet: drop a task file on the window."))
        self._empty.setWordWrap(True)
        self._layout.addWidget(self._empty, 0, 0, 1, 2)
        self._layout.setRowStretch(2 * self.MAX_SHOWN + 1, 1)

    def height_for(self, rows: int) -> int:
        """The panel's height that shows ``rows`` batches without scrolling."""
        line = max(self.fontMetrics().height(), 16) + 2
        margins = self.contentsMargins()
        return margins.top() + margins.bottom() + 2 * rows * line + 8

    def show_snapshot(self, snap: Snapshot, eta: Callable[[str], tuple[Estimate, float | None]],
                      paused: dict[str, Message] | None = None) -> None:
        """``paused``: the store's pauses; a batch its budget stopped shows why."""
        self._snap, self._paused = snap, paused or {}
        unfinished = [b for b in snap.batch_order if b in snap.batch_routes]
        finished = [b for b in snap.batch_order if b not in snap.batch_routes]
        shown = (unfinished + finished)[:self.MAX_SHOWN]
        while len(self._rows) < len(shown):
            self._rows.append(self._add_row(len(self._rows)))
        self._empty.setVisible(not shown)
        for i, row in enumerate(self._rows):
            row.set_visible(i < len(shown))
            if i < len(shown):
                self._show(BatchProgress.of(shown[i], snap.by_batch[shown[i]]), eta, row)

    def _add_row(self, index: int) -> BatchRow:
        name = ElidedLabel()
        bold = name.font()
        bold.setBold(True)
        name.setFont(bold)
        bar = QProgressBar()
        bar.setMaximumHeight(16)
        bar.setFixedWidth(self.BAR_PX)
        detail = QLabel()
        detail.setTextFormat(Qt.TextFormat.RichText)
        # One line whatever its length: the whole of it is in the tooltip.
        detail.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        if self._on_link is not None:
            detail.linkActivated.connect(self._on_link)
        self._layout.addWidget(name, 2 * index + 1, 0)
        self._layout.addWidget(bar, 2 * index + 1, 1)
        self._layout.addWidget(detail, 2 * index + 2, 0, 1, 2)
        return BatchRow(name, bar, detail)

    def _show(self, progress: BatchProgress, eta: Callable[[str], tuple[Estimate, float | None]],
              row: BatchRow) -> None:
        row.bar.setMaximum(max(1, progress.total))
        row.bar.setValue(progress.ended)
        row.bar.setFormat(f"{progress.ended}/{progress.total}")
        row.name.setText(progress.batch)
        # The failed count first: it is the one that must not be the part cut off.
        counts = tr("{failed} failed · {done} done · {running} running · {waiting} waiting").format(
            failed=progress.failed, done=progress.done, running=progress.running, waiting=progress.waiting)
        if progress.canceled:
            counts += " · " + tr("{canceled} canceled").format(canceled=progress.canceled)
        when = tr("finished") if progress.finished else eta_text(*eta(progress.batch))
        money = self._money_line(progress.batch)
        # One line: why it waits (its fix's link) first, else the counts first; money after.
        line = f"{when} · {html.escape(counts)}" if "<a " in when else f"{html.escape(counts)} · {when}"
        row.detail.setText(line + (f" · {money}" if money else ""))
        row.detail.setToolTip(f"{html.escape(progress.batch)}<br>{html.escape(counts)}<br>{when}"
                              + (f"<br>{money}" if money else ""))

    def _money_line(self, batch: str) -> str:
        """Spent (and reserved for running tasks) beside the estimate, what the batch's budget
        leaves, and why its budget stopped it (rich text, "" when there is nothing to say)."""
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
            line += (" · " if line else "") + f'<span style="color: #c62828">{html.escape(translated(stopped))}</span>'
        return line


def elide_end(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


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
            # the link does it (with an undo), not only shows where it is done
            fix = fix or f' → <a href="{ENABLE_LINK}{html.escape(account)}">{html.escape(tr("Enable it"))}</a>'
        else:
            # the lane's own row shows the whole reason (in its tooltip); here it must wrap in a
            # narrow panel, and one long token (an error code) cannot
            whys.append(html.escape(labelled(lane, elide_end(translated(reason), REASON_CHARS))))
    why = tr("; ").join(whys) or html.escape(tr("no lane in the config takes them"))
    head = html.escape(tr("{n} {kind} tasks wait").format(n=blocked.waiting, kind=kind_label(blocked.route)))
    # the language's own colon ("等待：原因", no space after a full-width colon)
    return f"<span style='color:#c62828'>{labelled(head, why)}</span>{fix}"
