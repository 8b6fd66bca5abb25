"""The tray as a glance (issue 11 item 8): counts per lane kind, Pause all / Resume all, notices."""

from __future__ import annotations

from collections import Counter

import pytest

from mediaassist.core.store import NewTask
from mediaassist.ui.labels import error_kind_labels
from mediaassist.ui.tray import FailureBursts, KindCounts, kind_counts
from tests.harness import wait_until

from .test_window import App, app, writer_tasks  # noqa: F401  (the app fixture)


def test_counts_per_lane_kind_take_running_waiting_and_failed() -> None:
    counts = kind_counts({("api", "running"): 2, ("api", "pending"): 5, ("poll", "failed"): 1,
                          ("web", "pending"): 7, ("web", "success"): 9})
    assert counts == {"web": KindCounts(0, 7, 0), "api": KindCounts(2, 5, 0), "poll": KindCounts(0, 0, 1)}
    assert kind_counts({})["web"] == KindCounts()  # every kind has a line, even an empty one


def test_a_burst_of_failures_is_told_once_then_quiet() -> None:
    bursts = FailureBursts(threshold=3, window_s=60, quiet_s=300)
    assert bursts.record(0, "provider") is None
    assert bursts.record(10, "timeout") is None
    assert bursts.record(100, "provider") is None  # the first two left the window
    assert bursts.record(110, "provider") is None
    assert bursts.record(120, "quota") == Counter({"provider": 2, "quota": 1})
    assert bursts.record(130, "quota") is None  # the same burst goes on: quiet
    for t in (450, 451):
        assert bursts.record(t, "network") is None
    assert bursts.record(452, None) == Counter({"network": 2, "internal": 1})


@pytest.mark.asyncio
async def test_menu_and_tooltip_show_counts_per_kind_and_pause_resume_all(app: App) -> None:  # noqa: F811
    window, tray = app.window, app.window.tray
    window.lanes.pause_all()
    app.enqueue(writer_tasks(3))
    app.enqueue([NewTask(model="video", model_kind="poll", route="poll:sim-poll", task_id="v1")], batch="b2")
    window.refresh_stats()
    lines = [a.text() for a in tray.count_actions.values()]
    assert lines == ["Web: 0 running · 0 waiting · 0 failed", "API: 0 running · 3 waiting · 0 failed",
                     "Polling: 0 running · 1 waiting · 0 failed"]
    assert tray.tooltip.splitlines()[1:] == lines
    # information, not greyed-out choices: a click brings the window up
    assert all(a.isEnabled() for a in tray.count_actions.values())
    window.showMinimized()
    tray.count_actions["api"].trigger()
    assert not window.isMinimized()
    assert "4 waiting" in tray.tooltip.splitlines()[0] and "Paused" in tray.tooltip
    assert not tray.pause_all.isEnabled() and tray.resume_all.isEnabled()
    tray.resume_all.trigger()
    assert window.rt.store.paused_lanes() == {}
    await wait_until(lambda: tray.pause_all.isEnabled())  # the counts follow on their next refresh
    assert not tray.resume_all.isEnabled()
    await wait_until(lambda: all(t.state == "success" for t in window.rt.store.tasks()), timeout=20)
    window.refresh_stats()
    assert "API: 0 running · 0 waiting · 0 failed" in tray.tooltip
    tray.pause_all.trigger()
    assert set(window.rt.store.paused_lanes()) == set(window.rt.scheduler.lanes)


@pytest.mark.asyncio
async def test_a_failure_burst_reaches_the_operator_once(app: App) -> None:  # noqa: F811
    window = app.window
    app.enqueue(writer_tasks(8, sim_fail="provider", sim_duration_s=0.1))
    # Three attempts each, 0.5 s and 1.5 s apart at speed 20: seconds on a quiet box, far more on
    # a loaded one, where the window's loop shares two cores with the rest of the suite.
    await wait_until(lambda: sum(t.state == "failed" for t in window.rt.store.tasks()) == 8, timeout=90)
    bursts = [n for n in window.tray.notices if n.title == "Failures"]
    assert len(bursts) == 1
    assert "5 tasks failed within a minute (provider 5)" in bursts[0].text


@pytest.mark.asyncio
async def test_the_failure_notice_names_the_kind_the_rows_show(app: App) -> None:  # noqa: F811
    """A first attempt's failure (no retry for bad input) reached the tray as "internal"."""
    window = app.window
    app.enqueue(writer_tasks(5, sim_fail="bad_input", sim_duration_s=0.1))
    await wait_until(lambda: sum(t.state == "failed" for t in window.rt.store.tasks()) == 5, timeout=60)
    assert {t.error_kind for t in window.rt.store.tasks()} == {"bad_input"}
    [burst] = [n for n in window.tray.notices if n.title == "Failures"]
    assert f"5 tasks failed within a minute ({error_kind_labels()['bad_input']} 5)" in burst.text
