"""Texts an operator reads whole at 1366×768, in English and Chinese: the Accounts tab's Machine
column (it wrapped "any (not bound yet)" in English and cut it off in Chinese) and the API
panel's lane names (a balance beside one cut "demo-runninghub" to "demo-runni…" though the
panel had room for both)."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

import pytest
from PySide6.QtWidgets import QLabel, QWidget

from mediaassist.core.money import Money
from mediaassist.core.queries import Snapshot
from mediaassist.core.store import Account
from mediaassist.runtime import LaneView
from mediaassist.ui.accounts import AccountsPanel
from mediaassist.ui.i18n import Translations, tr
from mediaassist.ui.panels import QueuePanel

MACHINE_COLUMN = 5
CELL_PADDING = 6  # a table cell's margins around its text
LAPTOP_WIDTH = 1366
API_PANEL_PX = 450  # the API panel's width in the maximized window at 1366 px (a third of it)
DEMO_POLLS = ("demo-runninghub", "demo-openai-videos", "demo-newapi-video", "demo-kling", "demo-minimax-hailuo",
              "demo-dashscope-wan", "demo-gemini-veo")


def shown(widget: QWidget, width: int, qtbot) -> None:  # type: ignore[no-untyped-def]
    qtbot.addWidget(widget)
    widget.resize(width, 700)
    widget.show()
    qtbot.waitExposed(widget)


@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_an_unbound_accounts_machine_shows_whole_on_one_line(qtbot, language: str) -> None:  # type: ignore[no-untyped-def]
    Translations().apply(language)
    accounts = [Account(name="operator-account-01", site="demochat", enabled=True, login_state="needs_login",
                        host=None),
                Account(name="acct-b", site="demochat", enabled=True, login_state="ok", host="studio-pc-2")]
    panel = AccountsPanel(lambda: accounts, lambda _name, _on: None, lambda _name, _keep: None)
    panel.refresh()
    shown(panel, LAPTOP_WIDTH, qtbot)
    table = panel.table
    for row, expected in enumerate((tr("any (not bound yet)"), "studio-pc-2")):
        item = table.item(row, MACHINE_COLUMN)
        assert item is not None and item.text() == expected
        needed = table.fontMetrics().horizontalAdvance(item.text()) + CELL_PADDING
        assert table.columnWidth(MACHINE_COLUMN) >= needed, (language, item.text())


@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_every_demo_lane_name_shows_whole_beside_a_balance(qtbot, language: str) -> None:  # type: ignore[no-untyped-def]
    Translations().apply(language)
    lanes = [LaneView(name="api:demo-openai", kind="api", route="api:demo-openai", account=None, limit=3,
                      current_limit=3, running=0),
             *(LaneView(name=f"poll:{name}", kind="poll", route=f"poll:{name}", account=None, limit=10,
                        current_limit=10, running=0) for name in DEMO_POLLS)]
    lanes[1] = replace(lanes[1], balance=Money(Decimal("177814.52"), "CNY"))
    panel = QueuePanel(tr("API and polling pools"), lanes, lambda _name: None, "config.toml")
    snap = Snapshot()
    for lane in lanes:
        snap.by_route[(lane.route, "success")] = 28
    panel.show_snapshot(snap, {lane.name: lane for lane in lanes}, {}, {})
    shown(panel, API_PANEL_PX, qtbot)
    cut = [row.name.text() for row in panel.rows if not whole(row.name)]
    assert cut == [], language
    assert all(whole(row.counts) for row in panel.rows)
    # the counts and the pause button still come first, the balance gets what is left
    assert all(row.button.geometry().right() < panel.contentsRect().right() for row in panel.rows)


def whole(label: QLabel) -> bool:
    return label.fontMetrics().horizontalAdvance(label.text()) <= label.contentsRect().width()
