"""A config the window cannot start with: every problem, with "did you mean", in a dialog that
opens the file, reads it again once fixed, or starts the demo (issue 27 item 1)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from mediaassist.runtime import RuntimeOptions
from mediaassist.ui.config_problems import ConfigProblemsDialog, options_after_config_problems
from tests.helpers import sim_config_text

ROOT = Path(__file__).resolve().parents[2]
TYPOS = {"concurency": "concurrency", "langauge": "language", "pol": "poll"}


def write_bad_config(path: Path) -> None:
    path.write_text('[app]\nlangauge = "en"\n'
                    '[[providers]]\nname = "p1"\nkind = "api"\ntype = "simulated"\nconcurency = 3\n'
                    '[[providers]]\nname = "p2"\nkind = "pol"\ntype = "simulated"\n'
                    '[[models]]\nname = "m2"\nkind = "poll"\nprovider = "p2"\n', encoding="utf-8")


def answer_dialog(click: str, before: object = None) -> list[str]:
    """Click ``click`` of the config dialog once it is open; returns the problems it showed."""
    shown: list[str] = []

    def act() -> None:
        dialog = next((w for w in QApplication.topLevelWidgets()
                       if isinstance(w, ConfigProblemsDialog) and w.isVisible()), None)
        if dialog is None:
            QTimer.singleShot(20, act)
            return
        shown.extend(dialog.problems.toPlainText().splitlines())
        if callable(before):
            before(dialog)
        getattr(dialog, click).click()
    QTimer.singleShot(0, act)
    return shown


def test_every_problem_is_listed_with_did_you_mean_and_the_demo_can_start(qtbot: object, tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    write_bad_config(config)
    opened: list[Path] = []
    shown = answer_dialog("demo_button", before=lambda dialog: dialog.open_button.click())
    chosen = options_after_config_problems(RuntimeOptions(config_path=config, data_dir=tmp_path / "data"),
                                           open_file=opened.append)
    assert len(shown) == 3, shown  # all of them at once; the model of the broken provider is not told again
    for typo, meant in TYPOS.items():
        assert any(repr(typo) in line or f".{typo}:" in line for line in shown), typo
        assert any(f'did you mean "{meant}"?' in line for line in shown), meant
    assert all("allowed:" in line for line in shown)
    assert opened == [config]
    assert chosen is not None and chosen.demo and chosen.data_dir is not None and chosen.data_dir.name == "demo"


def test_a_fixed_config_is_read_again_and_quit_starts_nothing(qtbot: object, tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    write_bad_config(config)
    options = RuntimeOptions(config_path=config, data_dir=tmp_path / "data")
    answer_dialog("retry_button", before=lambda _dialog: config.write_text(sim_config_text()))
    assert options_after_config_problems(options) is options
    write_bad_config(config)
    answer_dialog("quit_button")
    assert options_after_config_problems(options) is None


def test_the_cli_prints_every_problem_on_stderr(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    write_bad_config(config)
    done = subprocess.run([sys.executable, "-m", "mediaassist", "status", "--config", str(config),
                           "--data-dir", str(tmp_path / "data")], cwd=ROOT, capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 3 and all(line.startswith("mediaassist: config error: ") for line in lines), lines
    assert 'did you mean "concurrency"?' in done.stderr and "Traceback" not in done.stderr
