"""Window parts built over a bare store, as the window builds them from its runtime; a probe run
in its own process on a laptop's screen."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from mediaassist.core.queries import Queries
from mediaassist.core.store import Store
from mediaassist.ui.feed import TaskFeed
from mediaassist.ui.task_model import TaskTableModel


def table_model(store: Store) -> TaskTableModel:
    """The table over its own feed (``model.feed``), as the window builds them (no timer running)."""
    queries = Queries(store)
    return TaskTableModel(TaskFeed(queries, queries.off_loop()))


def close_table(model: TaskTableModel) -> None:
    model.feed.stop()
    model.stop()


ROOT = Path(__file__).resolve().parents[2]
LAPTOP_SCREEN = {"screens": [{"name": "laptop", "x": 0, "y": 0, "width": 1366, "height": 768,
                              "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]}


def probe_on_a_laptop_screen(module: str, language: str, tmp_path: Path) -> dict[str, Any]:
    """The report of ``python -m tests.ui.MODULE LANGUAGE TMP_PATH`` (the JSON of its last line of
    output), run in its own process on Qt's offscreen platform with one 1366×768 screen (the screen
    is fixed when Qt starts); it must exit 0."""
    screens = tmp_path / "screens.json"
    screens.write_text(json.dumps(LAPTOP_SCREEN))
    env = dict(os.environ, QT_QPA_PLATFORM=f"offscreen:configfile={screens}",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, "-m", f"tests.ui.{module}", language, str(tmp_path)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=240, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return report
