"""How the ETA is shown (issue 27 item 4): each batch at its own pace once it is seen ending
tasks, so a small batch run by another process beside a big one is not given the big one's
minutes; and the shown value moves steadily."""

from __future__ import annotations

import asyncio
import itertools

import pytest

from mediaassist.core.progress import BatchPace, EtaSmoother
from mediaassist.core.store import NewTask
from tests.harness import wait_until

from .test_window import App, start_app, stop_app, writer_tasks


def test_a_batch_pace_is_its_own_remaining_tasks_at_its_own_throughput() -> None:
    pace = BatchPace(window_s=60.0, min_span_s=3.0)
    assert pace.seconds_left("b", 10, 0.0) is None  # not seen yet
    pace.record("b", 0, 0.0)
    pace.record("b", 2, 2.0)
    assert pace.seconds_left("b", 18, 2.0) is None  # too short a look to trust
    pace.record("b", 4, 4.0)
    assert pace.seconds_left("b", 16, 4.0) == pytest.approx(16.0)  # 1 task/s
    for t in range(5, 200):  # long past the window: the old samples are dropped
        pace.record("b", 4 + 2 * (t - 4), float(t))
    assert pace.seconds_left("b", 100, 199.0) == pytest.approx(50.0, rel=0.05)  # 2 tasks/s now


def test_the_shown_eta_moves_steadily_when_the_estimate_jitters() -> None:
    """A pace with waves (four tasks end at once every four seconds) shown once a second."""
    pace, smoother = BatchPace(window_s=120.0, min_span_s=3.0), EtaSmoother()
    shown: list[float] = []
    remaining = 2000
    for t in range(0, 300):
        if t % 4 == 0:
            remaining -= 4
        pace.record("big", 2000 - remaining, float(t))
        seconds = pace.seconds_left("big", remaining, float(t))
        if seconds is not None:
            shown.append(smoother.smooth("big", seconds, float(t)))
    steps = [abs(b - a) for a, b in itertools.pairwise(shown[60:])]
    assert max(steps) < 0.02 * shown[60], max(steps)  # no jump of minutes from one second to the next


@pytest.mark.asyncio
async def test_a_small_run_beside_a_big_batch_gets_its_own_eta(tmp_path, ui_settings) -> None:
    app: App = await start_app(tmp_path, ui_settings, duration=600.0, speed=1.0)
    window = app.window
    try:
        app.enqueue(writer_tasks(2000, prefix="big"), batch="big")  # the window's lane is busy with these
        app.enqueue([NewTask(model="writer", model_kind="api", route="api:sim-api", task_id=f"s{i:02d}",
                             prompt="small") for i in range(40)], batch="small")
        store = window.rt.store

        async def another_process_runs_the_small_batch() -> None:
            while True:
                for task in store.claim("api:sim-api", "otherhost:1:2:run", limit=1, batch_ids=["small"]):
                    store.finish_success(task, "ok", [])
                await asyncio.sleep(0.25)
        runner = asyncio.ensure_future(another_process_runs_the_small_batch())
        try:
            def small_eta() -> float | None:
                window.refresh_stats()
                return window.stats.eta("small")[1]
            await wait_until(lambda: small_eta() is not None, timeout=60)
            seconds = small_eta()
            left = sum(t.state == "pending" for t in store.tasks(["small"]))
            # about a task each quarter second; the big batch's 2,000 tasks are no part of it
            assert seconds is not None and seconds < 5 * left + 5, (seconds, left)
            assert window.stats.eta("big")[1] is None  # nothing of it has ended: still measuring
        finally:
            runner.cancel()
    finally:
        await stop_app(app)
