"""``--demo`` stays apart from the real app: its own settings file, no demo folder as the real
data dir, and a single-instance socket of its own (issue 11 item 7)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from mediaassist.core.clock import Clock
from mediaassist.core.options import RuntimeOptions
from mediaassist.core.paths import demo_data_dir, is_demo_dir
from mediaassist.core.store import Store
from mediaassist.runtime import Runtime
from mediaassist.ui.app import saved_data_dir, ui_settings
from mediaassist.ui.settings import SettingsDialog
from mediaassist.ui.single_instance import SingleInstance, server_name
from tests.harness import make_scheduler, wait_until
from tests.helpers import sim_config


def test_demo_dir_is_marked_and_recognised_with_its_sub_folders(tmp_path: Path) -> None:
    demo = demo_data_dir(tmp_path / "real")
    assert demo == (tmp_path / "real" / "demo").resolve()
    assert is_demo_dir(demo) and is_demo_dir(demo / "outputs")
    assert not is_demo_dir(tmp_path / "real")
    assert not is_demo_dir(tmp_path / "elsewhere")


def test_default_demo_dir_counts_even_before_a_demo_ran(tmp_path: Path) -> None:
    # MEDIAASSIST_HOME is tmp_path/home in every test (tests/conftest.py)
    assert is_demo_dir(tmp_path / "home" / "demo")


def test_demo_window_settings_live_in_the_demo_folder(tmp_path: Path) -> None:
    demo = demo_data_dir(tmp_path / "real")
    demo_settings = ui_settings(RuntimeOptions(data_dir=demo, demo=True))
    real_settings = ui_settings(RuntimeOptions())
    assert Path(demo_settings.fileName()).parent == demo
    assert not is_demo_dir(real_settings.fileName())
    assert demo_settings.fileName() != real_settings.fileName()


def test_a_saved_demo_folder_is_not_used_as_the_real_data_dir(tmp_path: Path) -> None:
    settings = QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat)
    settings.setValue("app/data_dir", str(demo_data_dir(tmp_path / "real")))
    assert saved_data_dir(settings) is None
    settings.setValue("app/data_dir", str(tmp_path / "work"))
    assert saved_data_dir(settings) == tmp_path / "work"


@pytest.fixture
def rt(store: Store, data_dir: Path) -> Runtime:
    """A runtime around parts built here (the dialog only reads the config and sets limits)."""
    runtime = Runtime(RuntimeOptions(data_dir=data_dir))
    runtime.config = sim_config()
    runtime.store = store
    runtime.scheduler = make_scheduler(store, runtime.config, data_dir, Clock())
    return runtime


def test_settings_refuse_a_demo_folder_as_data_dir(qtbot: object, tmp_path: Path, rt: Runtime,
                                                   ui_settings: QSettings) -> None:
    dialog = SettingsDialog(rt, ui_settings, str(tmp_path / "data"))
    assert dialog.data_dir.text() == ""  # the folder in use is only a hint, never pre-filled
    demo = demo_data_dir(tmp_path / "real")
    dialog.data_dir.setText(str(demo / "outputs"))
    dialog.try_apply()
    assert "demo" in dialog.errors.text() and str(demo / "outputs") in dialog.errors.text()
    assert ui_settings.value("app/data_dir") is None
    dialog.data_dir.setText(str(tmp_path / "work"))
    dialog.try_apply()
    assert ui_settings.value("app/data_dir") == str(tmp_path / "work")


def test_demo_settings_dialog_never_saves_a_data_dir(qtbot: object, tmp_path: Path, rt: Runtime,
                                                     ui_settings: QSettings) -> None:
    demo = demo_data_dir(tmp_path / "real")
    dialog = SettingsDialog(rt, ui_settings, str(demo), demo=True)
    assert not dialog.data_dir.isEnabled() and dialog.data_dir.text() == ""
    dialog.try_apply()
    assert dialog.errors.text() == ""
    assert ui_settings.value("app/data_dir") is None


@pytest.mark.asyncio
async def test_demo_and_real_instances_never_hand_files_to_each_other(tmp_path: Path) -> None:
    folder = tmp_path / "shared"
    assert server_name(folder, demo=True) != server_name(folder)
    demo = SingleInstance(server_name(folder, demo=True))
    assert demo.listen()
    received: list[list[str]] = []
    demo.files_received.connect(received.append)
    real = SingleInstance(server_name(folder))
    assert not real.hand_over([tmp_path / "batch.csv"])  # nobody of its own kind answers
    other_demo = SingleInstance(server_name(folder, demo=True))
    assert other_demo.hand_over([tmp_path / "demo.csv"])
    await wait_until(lambda: received)
    assert received == [[str(tmp_path / "demo.csv")]]
    demo.close()

