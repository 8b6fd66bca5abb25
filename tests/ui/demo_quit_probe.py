"""The demo window at work, then a normal quit (tests/ui/test_demo_quit.py).

    QT_QPA_PLATFORM=offscreen python -m tests.ui.demo_quit_probe WORKDIR

Enqueues API and web tasks on the demo providers, waits until some are running or done at
the demo servers, then quits the way the Quit menu does ("resume next start"). Whatever the
process prints on stderr is the test's to judge.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

os.environ.setdefault("QT_API", "pyside6")

import qasync
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication

from mediaassist.core.store import NewTask
from mediaassist.demo import DEMO_API_MODEL, DEMO_WEB_MODEL
from mediaassist.runtime import RuntimeOptions
from mediaassist.ui.app import run_window
from mediaassist.ui.main_window import MainWindow
from tests.harness import wait_until


async def main(workdir: Path) -> None:
    settings = QSettings(str(workdir / "ui.ini"), QSettings.Format.IniFormat)
    jobs: list[asyncio.Future[None]] = []

    def work(window: MainWindow) -> None:
        async def run() -> None:
            store = window.rt.store
            web = window.rt.config.model(DEMO_WEB_MODEL)
            assert web is not None
            try:
                store.enqueue("demo-batch", [
                    *(NewTask(model=DEMO_API_MODEL, model_kind="api", route="api:demo-openai", task_id=f"a{i}",
                              prompt=f"write line {i}") for i in range(8)),
                    *(NewTask(model=DEMO_WEB_MODEL, model_kind="web", route=web.route,
                              task_id=f"w{i}", prompt=f"ask {i}") for i in range(2))])
                window.rt.wake()
                await wait_until(lambda: sum(t.state == "success" for t in store.tasks()) >= 2, timeout=90)
            finally:
                window.request_quit()  # with tasks running: the question, answered "resume next start"
                if window.quit_box is not None:
                    window.quit_leave.click()
        jobs.append(asyncio.ensure_future(run()))

    await run_window([], RuntimeOptions(demo=True, speed=20, data_dir=workdir / "demo"), settings, use_tray=False,
                     on_window=work)
    print("quit done", flush=True)


if __name__ == "__main__":
    app = QApplication(sys.argv[:1])
    with asyncio.Runner(loop_factory=lambda: qasync.QEventLoop(app)) as runner:
        runner.run(main(Path(sys.argv[1])))
