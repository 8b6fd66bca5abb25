"""Widgets that keep the window within a laptop screen (1280×720 and up).

``ElidedLabel`` never sets the window's width: long text is elided to the room it gets, and the
whole text is in its tooltip. A plain ``QLabel`` asks for the width of its whole text, so one
long batch id or lane reason made the window wider than the screen (1,928 px with "paused by
operator" reasons). ``scrollable`` lets a panel scroll instead of setting the window's height.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import QFrame, QLabel, QScrollArea, QSizePolicy, QWidget

MIN_CHARS = 8  # room asked for at least: a few characters and the ellipsis


class ElidedLabel(QLabel):
    """Plain text only (ids and reasons are data, never markup), cut at the end -- or, with
    ``elide = ElideLeft``, at the start, where the end is what tells one from its neighbours."""

    def __init__(self, text: str = "", parent: Any = None,
                 elide: Qt.TextElideMode = Qt.TextElideMode.ElideRight) -> None:
        super().__init__(parent)
        self.elide = elide
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        self.setText(text)

    def setText(self, text: str) -> None:
        if text == self.text():
            return
        super().setText(text)
        self.setToolTip(text)
        self.update()

    def minimumSizeHint(self) -> QSize:
        metrics = self.fontMetrics()
        return QSize(metrics.averageCharWidth() * MIN_CHARS, metrics.height())

    def sizeHint(self) -> QSize:
        hint = super().sizeHint()
        return QSize(min(hint.width(), self.minimumSizeHint().width() * 4), hint.height())

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        rect = self.contentsRect()
        shown = self.fontMetrics().elidedText(self.text(), self.elide, rect.width())
        painter.setPen(self.palette().color(self.foregroundRole()))
        painter.drawText(rect, int(self.alignment() | Qt.AlignmentFlag.AlignVCenter), shown)
        painter.end()


def scrollable(widget: QWidget) -> QScrollArea:
    """``widget`` in a frameless vertical scroll area: it is as tall as there is room for, and
    scrolls when its content is taller (more lanes, wrapped reasons, a long detail pane)."""
    area = QScrollArea()
    area.setWidget(widget)
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    return area
