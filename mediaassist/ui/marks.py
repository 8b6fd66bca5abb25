"""Small painted marks for table cells: a colored state dot, an error-kind badge, a video mark.

Painted once per (color, text) and cached: ``data()`` asks for them on every repaint of every
visible cell.
"""

from __future__ import annotations

from functools import lru_cache

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QIcon, QPainter, QPixmap
from PySide6.QtWidgets import QApplication, QStyle

DOT = 10
BADGE_HEIGHT = 16
BADGE_COLOR = QColor("#c62828")


@lru_cache(maxsize=16)
def _dot(color_name: str) -> QIcon:
    pixmap = QPixmap(DOT, DOT)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(QColor(color_name))
    painter.drawEllipse(0, 0, DOT, DOT)
    painter.end()
    return QIcon(pixmap)


def state_icon(color: QColor) -> QIcon:
    return _dot(color.name())


@lru_cache(maxsize=64)
def kind_badge(text: str) -> QPixmap:
    """White text on a red rounded box: the error's kind, read before its reason."""
    font = QFont(QApplication.font())
    font.setPointSizeF(max(6.0, font.pointSizeF() * 0.8))
    font.setBold(True)
    width = QFontMetrics(font).horizontalAdvance(text) + 10
    pixmap = QPixmap(width, BADGE_HEIGHT)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(BADGE_COLOR)
    painter.drawRoundedRect(QRectF(0, 0, width, BADGE_HEIGHT), 4, 4)
    painter.setPen(QColor("white"))
    painter.setFont(font)
    painter.drawText(QRectF(0, 0, width, BADGE_HEIGHT), Qt.AlignmentFlag.AlignCenter, text)
    painter.end()
    return pixmap


@lru_cache(maxsize=1)
def video_icon() -> QIcon:
    return QApplication.style().standardIcon(QStyle.StandardPixmap.SP_MediaPlay)

