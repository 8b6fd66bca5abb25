"""A normal quit of the demo window at work prints no traceback (issue 27 item 9): the probe runs
the demo window in its own process with API and web tasks on the demo servers and quits it the
way the Quit menu does; its stderr is captured whole."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_quitting_the_demo_window_prints_no_traceback(tmp_path: Path) -> None:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, "-m", "tests.ui.demo_quit_probe", str(tmp_path)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=200, check=False)
    assert done.returncode == 0 and "quit done" in done.stdout, done.stderr[-3000:]
    assert "Traceback" not in done.stderr and "Error" not in done.stderr, done.stderr[-3000:]
