"""Each lane row of the window names the order its lane takes its queue in (core/order.py), beside
what waits there: the kind's default or the one the config sets, in the window's language."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from mediaassist.ui.panels import LaneRow
from tests.helpers import toml_table

from .test_window import App, start_app, stop_app

ORDER_TEXTS = {
    "en": {"fifo": "order: first in, first out", "longest": "order: longest expected first",
           "fair": "order: batches in turn"},
    "zh_CN": {"fifo": "顺序：先进先出", "longest": "顺序：预计最久的优先", "fair": "顺序：各批次轮流"},
}


def _rows(app: App) -> dict[str, LaneRow]:
    return {row.lane.name: row for panel in (app.window.web_panel, app.window.api_panel) for row in panel.rows}


@pytest.mark.asyncio
@pytest.mark.timeout(90)
@pytest.mark.parametrize("language", ["en", "zh_CN"])
async def test_each_lane_row_names_its_order(tmp_path: Path, ui_settings: QSettings, language: str) -> None:
    ui_settings.setValue("app/language", language)
    fair = toml_table("providers", name="fair-api", kind="api", type="simulated", order="fair")
    app = await start_app(tmp_path, ui_settings, extra_config=fair)
    try:
        app.window.refresh_stats()
        rows = _rows(app)
        texts = ORDER_TEXTS[language]
        expected = {"web:acct-a": "longest", "api:sim-api": "fifo", "poll:sim-poll": "fifo", "api:fair-api": "fair"}
        for lane, order in expected.items():
            tooltip = rows[lane].counts.toolTip()
            assert texts[order] in tooltip, (lane, tooltip)
            assert not [other for other in texts.values() if other != texts[order] and other in tooltip]
    finally:
        await stop_app(app)
