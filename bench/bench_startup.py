"""Start-up benchmark: prints figures and ratios measured in the same run, asserts nothing.

Two pairs, each run as whole processes, A and B in turn (A B A B ...) so a drift in the machine's
speed touches both alike; the ratio is the median of the pair-by-pair ratios:

* ``--version``   ``python -m mediaassist --version`` against ``python -c pass`` (target <= 2x);
* ``first paint`` the time from starting ``python -m mediaassist`` until its start window has
                  painted, against a bare PySide6 window's first paint (target <= 2.5x). Both on
                  Qt's offscreen platform unless ``--platform`` says otherwise.

    python -m bench.bench_startup [--runs 15]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

BARE_WINDOW = """
import sys
from PySide6.QtWidgets import QApplication, QWidget

class Window(QWidget):
    def paintEvent(self, event):
        super().paintEvent(event)
        print("first paint", flush=True)
        QApplication.instance().exit(0)

app = QApplication(sys.argv[:1])
window = Window()
window.resize(420, 200)
window.show()
sys.exit(app.exec())
"""


def run_to_exit(command: list[str], env: dict[str, str]) -> float:
    """Wall seconds from start to exit."""
    started = time.perf_counter()
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def run_to_first_paint(command: list[str], env: dict[str, str]) -> float:
    """Wall seconds from start until the process prints "first paint" (then it is left to end)."""
    started = time.perf_counter()
    with subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.strip() == "first paint":
                took = time.perf_counter() - started
                break
        else:
            raise RuntimeError(f"{command} ended without painting (exit {proc.wait()})")
        proc.wait(timeout=60)
    return took


def pairs(runs: int, measure_a: Callable[[], float], measure_b: Callable[[], float]) -> list[tuple[float, float]]:
    measure_a(), measure_b()  # warm-up: the file cache, compiled bytecode
    return [(measure_a(), measure_b()) for _ in range(runs)]


def report(title: str, label_a: str, label_b: str, measured: list[tuple[float, float]], target: float) -> None:
    a = [pair[0] for pair in measured]
    b = [pair[1] for pair in measured]
    ratios = [x / y for x, y in measured]
    print(f"{title}: {label_a} median {statistics.median(a) * 1000:.0f} ms, "
          f"{label_b} median {statistics.median(b) * 1000:.0f} ms, "
          f"ratio median {statistics.median(ratios):.2f}x (min {min(ratios):.2f}, max {max(ratios):.2f}; "
          f"target <= {target}x) over {len(measured)} pairs")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--platform", default="offscreen", help="QT_QPA_PLATFORM for both windows")
    args = parser.parse_args()
    python = sys.executable
    env = dict(os.environ, QT_QPA_PLATFORM=args.platform)
    # An installed app starts from its cached bytecode: with PYTHONDONTWRITEBYTECODE set (some
    # shells set it) every start would compile the project's modules again, and that is what
    # would be measured (15 ms of compile() on this box). The warm-up runs write the cache.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryDirectory() as home:
        env.update(MEDIAASSIST_HOME=home, XDG_CONFIG_HOME=str(Path(home) / "config"),
                   MEDIAASSIST_STARTUP_PROBE="1")
        version = pairs(args.runs, lambda: run_to_exit([python, "-m", "mediaassist", "--version"], env),
                        lambda: run_to_exit([python, "-c", "pass"], env))
        report("--version", "mediaassist --version", "python -c pass", version, 2.0)
        paint = pairs(args.runs, lambda: run_to_first_paint([python, "-m", "mediaassist"], env),
                      lambda: run_to_first_paint([python, "-c", BARE_WINDOW], env))
        report("first paint", "mediaassist", "bare PySide6 window", paint, 2.5)


if __name__ == "__main__":
    main()
