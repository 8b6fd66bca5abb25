"""The window and every dialog fit a 1366×768 laptop, in English and Chinese, with paused lanes,
long reasons and several batches (issue 11 item 2). Each language runs tests/ui/fit_probe.py in
its own process on Qt's offscreen platform with a 1366×768 screen."""

from __future__ import annotations

import tomllib
from pathlib import Path
from types import SimpleNamespace

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QLabel

from mediaassist.core.config import parse_config
from mediaassist.ui.fit import ElidedLabel
from mediaassist.ui.settings import SettingsDialog
from tests.helpers import sim_config_text, toml_table
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


def _settings_of_thirteen_providers(tmp_path: Path) -> SettingsDialog:
    """The settings dialog, shown, of the simulated config's providers and twelve more."""
    extra = "".join(toml_table("providers", name=f"video-service-{i:02d}", kind="poll", type="simulated")
                    for i in range(12))
    rt = SimpleNamespace(config=parse_config(tomllib.loads(sim_config_text() + extra)))
    dialog = SettingsDialog(rt, QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat),  # type: ignore[arg-type]
                            str(tmp_path / "data"))
    dialog.show()
    return dialog


def test_the_settings_dialog_with_many_providers_fits_a_laptop_screen(qtbot: object, tmp_path: Path) -> None:
    """The demo's eleven providers made it 1,816 px tall: its OK button below a 768-px screen."""
    dialog = _settings_of_thirteen_providers(tmp_path)
    assert dialog.height() <= 700 and dialog.minimumSizeHint().height() <= 700
    assert len(dialog.edits) == 2 + 4 * 13  # every provider's limits, in the scrolling part
    last = dialog.edits[("video-service-11", "timeout_s")]
    assert dialog.providers.isAncestorOf(last)
    dialog.providers.ensureWidgetVisible(last)
    assert not last.visibleRegion().isEmpty()
    dialog.close()


def test_the_settings_dialog_gives_its_providers_the_screens_height(qtbot: object, tmp_path: Path) -> None:
    """At its size hint it was 530 px tall on a 768-px screen, two and a half of the demo's
    thirteen provider boxes in view."""
    dialog = _settings_of_thirteen_providers(tmp_path)
    screen = dialog.screen().availableGeometry()
    assert screen.height() * 3 // 4 <= dialog.height() <= screen.height()
    dialog.close()
