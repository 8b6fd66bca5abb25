"""The queue panels at 1366×768 with 2 web accounts, 1 API and 3 poll lanes (tests/ui/test_panels.py).

    QT_QPA_PLATFORM=offscreen:configfile=SCREENS python -m tests.ui.panels_probe LANGUAGE WORKDIR [SHOT.png]

The window opens maximized on the simulated laptop screen, with thousands of tasks done and
failed per lane (the counts' widest text), a paused lane with a long reason and five batches.
Then every lane row, its counts and its button are checked by geometry against what the panel
shows without scrolling, and the batch list and the Prompt column too. Prints one JSON object:
{"problems": [...], "lanes": n, "batches_seen": n, "prompt_px": n, "done_prompt_px": n, ...}.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import traceback
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_API", "pyside6")

import qasync
from PySide6.QtCore import QPoint, QRect, QSettings
from PySide6.QtWidgets import QAbstractScrollArea, QApplication, QLabel, QWidget

from mediaassist.core.errors import ErrorKind
from mediaassist.core.store import NewTask, Store
from mediaassist.runtime import RuntimeOptions
from mediaassist.ui.app import run_window
from mediaassist.ui.main_window import MainWindow
from mediaassist.ui.task_model import COL
from tests.helpers import toml_table

ACCOUNTS = ("operator-account-01", "operator-account-02")
POLLS = ("runninghub-main", "task-api-b", "sim-poll-c")
LONG_REASON = "RunningHub balance or membership exhausted (416 APIKEY_USER_BALANCE_NOT_ENOUGH); recharge"


def config_text() -> str:
    return "".join([
        toml_table("providers", name="sim-api", kind="api", type="simulated", concurrency=5,
                   min_duration_s=600, max_duration_s=600),
        *(toml_table("providers", name=name, kind="poll", type="simulated", max_polling_tasks=100,
                     min_duration_s=600, max_duration_s=600) for name in POLLS),
        *(toml_table("accounts", name=name, site="simulated") for name in ACCOUNTS),
        toml_table("models", name="writer", kind="api", provider="sim-api"),
        *(toml_table("models", name=f"video-{name}", kind="poll", provider=name) for name in POLLS),
        toml_table("models", name="reasoner", kind="web", site="simulated"),
    ])


def finish_some(store: Store, route: str, done: int, failed: int, account: str | None = None) -> None:
    """Run ``done + failed`` tasks of the route to an end, as a finished lane would have."""
    for task in store.claim(route, "probe", limit=done + failed, account=account)[:done + failed]:
        if done > 0:
            store.finish_success(task, "ok", [])
            done -= 1
        else:
            store.finish_failure(task, ErrorKind.PROVIDER, "refused", None)


def fill(window: MainWindow) -> None:
    store = window.rt.store
    for name in window.rt.lane_names():
        store.pause_lane(name, "paused by operator")  # nothing runs while the counts are made
    routes = {"api:sim-api": "writer", **{f"poll:{n}": f"video-{n}" for n in POLLS}}
    for n, (route, model) in enumerate(routes.items()):
        store.enqueue(f"quarterly-campaign-assets-{n}-20261201T101500Z-{n:08x}", [
            NewTask(model=model, model_kind=route.partition(":")[0], route=route, task_id=f"{route}-{i:05d}",
                    prompt="写一段很长的产品介绍，要有细节 " * 4) for i in range(12_000)])
        finish_some(store, route, done=10_000, failed=1_234)
    store.enqueue("web-batch", [NewTask(model="reasoner", model_kind="web", route="web:simulated",
                                        task_id=f"w{i:05d}", prompt="reason") for i in range(4_000)])
    for account in ACCOUNTS:
        finish_some(store, "web:simulated", done=1_500, failed=345, account=account)
    store.pause_lane(f"poll:{POLLS[0]}", LONG_REASON)
    for name in window.rt.lane_names():
        if name != f"poll:{POLLS[0]}":
            store.resume_lane(name)
    window.rt.wake()
    window.feed.refresh_membership()
    window.refresh_stats()


def visible_in(widget: QWidget, area: QWidget) -> bool:
    """Is all of ``widget`` inside what ``area`` shows?"""
    top_left = widget.mapTo(area.window(), QPoint(0, 0))
    own = QRect(top_left, widget.size())
    shown = QRect(area.mapTo(area.window(), QPoint(0, 0)), area.size())
    return widget.isVisible() and shown.contains(own)


def whole_text(label: QLabel) -> bool:
    return label.fontMetrics().horizontalAdvance(label.text()) <= label.contentsRect().width()


def check(window: MainWindow) -> dict[str, Any]:
    problems: list[str] = []
    lanes = 0
    for panel in (window.web_panel, window.api_panel):
        area = panel.parentWidget().parentWidget()  # the scroll area's viewport, then the area
        assert isinstance(area, QAbstractScrollArea)
        if area.verticalScrollBar().maximum() > 0:
            problems.append(f"{panel.title()}: scrolls ({area.verticalScrollBar().maximum()} px more)")
        for row in panel.rows:
            lanes += 1
            viewport = area.viewport()
            for part, widget in (("name", row.name), ("gauge", row.gauge), ("counts", row.counts),
                                 ("button", row.button)):
                if not visible_in(widget, viewport):
                    problems.append(f"{row.lane.name}: {part} not all shown")
            if not whole_text(row.counts):
                problems.append(f"{row.lane.name}: counts elided: {row.counts.text()!r}")
            if row.button.width() < row.button.minimumSizeHint().width():
                problems.append(f"{row.lane.name}: button clipped")
    batches = window.batches
    seen = [row for row in batches._rows if row.detail.isVisible()
            and visible_in(row.detail, batches) and visible_in(row.bar, batches)]
    if len(seen) < 3:
        problems.append(f"batches: {len(seen)} shown without scrolling")
    prompt = window.table.columnWidth(COL["prompt"])
    return {"problems": problems, "lanes": lanes, "batches_seen": len(seen), "prompt_px": prompt,
            "result_px": window.table.columnWidth(COL["result"]), "error_px": window.table.columnWidth(COL["error"])}


async def done_rows_widths(window: MainWindow) -> dict[str, int]:
    """The Prompt and Result columns' widths with finished rows in view (each has a result)."""
    window.state_filter.setCurrentIndex(window.state_filter.findData("success"))
    await window.apply_filter()
    window.feed.flush()
    await asyncio.sleep(0.5)
    window.refresh_stats()
    await asyncio.sleep(0.5)
    return {"done_prompt_px": window.table.columnWidth(COL["prompt"]),
            "done_result_px": window.table.columnWidth(COL["result"])}


async def main(language: str, workdir: Path, shot: str | None) -> dict[str, Any]:
    (workdir / "config.toml").write_text(config_text(), encoding="utf-8")
    settings = QSettings(str(workdir / "ui.ini"), QSettings.Format.IniFormat)
    settings.setValue("app/language", language)
    outcome: dict[str, Any] = {}
    probes: list[asyncio.Future[None]] = []

    def probe(window: MainWindow) -> None:
        async def run() -> None:
            try:
                fill(window)
                await asyncio.sleep(1.5)  # the counts' read, the layouts and a paint
                window.refresh_stats()
                await asyncio.sleep(0.5)
                outcome.update(check(window), maximized=window.isMaximized(),
                               size=[window.width(), window.height()])
                outcome.update(await done_rows_widths(window))
                if shot:
                    window.grab().save(shot)
            except BaseException:  # reported (a cancellation too), so the test shows it, not an empty outcome
                outcome["problems"] = [traceback.format_exc()]
            finally:
                window.quit_requested.set_result(False)
        probes.append(asyncio.ensure_future(run()))

    await run_window([], RuntimeOptions(config_path=workdir / "config.toml", data_dir=workdir / "data"), settings,
                     use_tray=False, on_window=probe)
    return outcome


if __name__ == "__main__":
    app = QApplication(sys.argv[:1])
    with asyncio.Runner(loop_factory=lambda: qasync.QEventLoop(app)) as runner:
        result = runner.run(main(sys.argv[1], Path(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else None))
    print(json.dumps(result, ensure_ascii=False))
