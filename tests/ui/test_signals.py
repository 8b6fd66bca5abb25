"""The window started from a terminal quits in order on Ctrl-C or SIGTERM: no traceback, 130."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.harness import wait_until_sync

pytestmark = [pytest.mark.slow, pytest.mark.browser]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_window_quits_in_order_on_a_signal(tmp_path: Path, sig: signal.Signals) -> None:
    log = tmp_path / "stderr.log"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    with log.open("w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "mediaassist", "--demo", "--data-dir", str(tmp_path),
                                 "-v"], stderr=err, stdout=subprocess.DEVNULL, env=env)
    try:

        def window_open() -> bool:
            assert proc.poll() is None, log.read_text()
            return "window open" in log.read_text()
        wait_until_sync(window_open, 90, "the window to open")
        proc.send_signal(sig)
        code = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    text = log.read_text()
    assert code == 130, text
    assert f"{sig.name}: quitting" in text
    assert "Traceback" not in text
