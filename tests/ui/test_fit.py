"""The window and every dialog fit a 1366×768 laptop, in English and Chinese, with paused lanes,
long reasons and several batches (issue 11 item 2). Each language runs tests/ui/fit_probe.py in
its own process on Qt's offscreen platform with a 1366×768 screen."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QLabel

from mediaassist.ui.fit import ElidedLabel
from tests.ui.ui_helpers import probe_on_a_laptop_screen

EXPECTED = {"first window", "first window, table", "maximized window, table",
            "settings", "import preview", "image preview", "video preview", "edit and run again", "compare",
            "quit question"}


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_window_and_dialogs_fit_a_1366x768_screen(tmp_path: Path, language: str) -> None:
    report = probe_on_a_laptop_screen("fit_probe", language, tmp_path)
    assert set(report["checked"]) >= EXPECTED, report["checked"]
    assert sum(name.startswith("window, tab") for name in report["checked"]) == 3
    assert report["problems"] == []


def test_an_elided_label_asks_for_little_room_and_keeps_the_whole_text(qtbot: object) -> None:
    reason = "RunningHub balance or membership exhausted (416 APIKEY_USER_BALANCE_NOT_ENOUGH); " * 3
    label = ElidedLabel(reason)
    plain = QLabel(reason)
    assert label.minimumSizeHint().width() < 100 < plain.minimumSizeHint().width()
    assert label.sizeHint().width() <= 4 * label.minimumSizeHint().width()
    assert label.toolTip() == reason and label.text() == reason
