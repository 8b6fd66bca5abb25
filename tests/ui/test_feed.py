"""The window's one feed of task state (issue 20 item 2): one cycle's reads serve the table, the
counts, the detail pane and the tray; what another process does reaches all of them through it."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from PySide6.QtTest import QAbstractItemModelTester

from mediaassist.core.events import TaskEvent, TaskEventKind
from mediaassist.core.options import RuntimeOptions
from mediaassist.core.queries import TaskFilter, TaskOrder
from mediaassist.core.store import Store
from mediaassist.runtime import Runtime
from mediaassist.ui.detail import DetailPane
from mediaassist.ui.disk_thumbnails import DiskThumbnails
from mediaassist.ui.feed import TaskFeed
from mediaassist.ui.stats import StatsController
from mediaassist.ui.task_model import COL, StateRole, TaskTableModel
from tests.harness import wait_until
from tests.helpers import sim_config_text, write_config

from .conftest import api_tasks

ROOT = Path(__file__).resolve().parents[2]
READER = "store-reads"  # the name of the feed's reader thread

# Another process (a `run`, a second window) takes the queue's head and finishes it.
FINISH_ELSEWHERE = """
import sys
from mediaassist.core.store import Store
store = Store(sys.argv[1])
for task in store.claim("api:sim-api", "elsewhere:1:2:run", int(sys.argv[2])):
    store.finish_success(task, "written elsewhere", [])
store.close()
"""


class StoreReads:
    """Every SQL statement the real store runs, with the thread that ran it (a spy: the
    statements still run)."""

    def __init__(self, store: Store) -> None:
        self.seen: list[tuple[str, str]] = []
        run = store.db.execute_sql

        def recorded(sql: str, *args: Any, **kwargs: Any) -> Any:
            self.seen.append((threading.current_thread().name, sql))
            return run(sql, *args, **kwargs)

        store.db.execute_sql = recorded  # type: ignore[method-assign]

    def by_reader(self) -> list[str]:
        return [sql for thread, sql in self.seen if thread.startswith(READER)]

    def counts_reads(self) -> int:
        """GROUP BYs over the whole store: the counts (tasks per batch, route and state; spend)."""
        return sum("GROUP BY" in sql for _thread, sql in self.seen)


@pytest_asyncio.fixture
async def rt(tmp_path: Path) -> AsyncIterator[Runtime]:
    """A real runtime on an SQLite file; its scheduler only runs where a test starts it."""
    config = write_config(tmp_path / "config.toml", sim_config_text(api_s=(0.2, 0.2)))
    async with Runtime(RuntimeOptions(config_path=config, data_dir=tmp_path / "data", speed=20)) as runtime:
        yield runtime


def detail_pane(rt: Runtime, feed: TaskFeed, tmp_path: Path) -> DetailPane:
    return DetailPane(rt, DiskThumbnails(tmp_path / "thumbnails"), feed)


async def finish_in_another_process(rt: Runtime, n: int) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    other = await asyncio.create_subprocess_exec(sys.executable, "-c", FINISH_ELSEWHERE, str(rt.store_location), str(n),
                                                 env=env, stderr=asyncio.subprocess.PIPE)
    _out, err = await asyncio.wait_for(other.communicate(), 60)
    assert other.returncode == 0, err.decode()


def shown_ids(feed: TaskFeed) -> list[str | None]:
    return [feed.task_id_at(row) for row in range(len(feed.ids))]


@pytest.mark.asyncio
async def test_one_cycle_reads_for_every_subscriber_once(rt: Runtime, tmp_path: Path) -> None:
    rt.store.enqueue("b1", api_tasks(30))
    feed = TaskFeed.of(rt)
    model = TaskTableModel(feed)
    reads = StoreReads(rt.store)

    async def one_cycle() -> list[str]:
        """A cycle that reads everything but the sweep: the row keys and the counts."""
        reads.seen.clear()
        feed.refresh_membership()
        feed.read_counts_soon()
        assert feed.cycling is not None
        await feed.cycling
        return reads.by_reader()

    alone = await one_cycle()
    assert reads.counts_reads() == 2
    stats = [StatsController(rt, feed), StatsController(rt, feed)]  # the panels' and a second one
    detail = detail_pane(rt, feed, tmp_path)
    detail.show_task("t00000")
    together = await one_cycle()
    assert together == alone  # the same reads, however many views listen
    assert reads.counts_reads() == 2  # still one read of the counts: no view polls them itself
    assert all(controller.view.snap is feed.last_counts for controller in stats)
    assert "t00000" in detail.header.text()
    assert model.rowCount() == 30
    feed.stop()
    model.stop()
    detail.close_media()


@pytest.mark.asyncio
async def test_a_task_finished_by_another_process_reaches_table_detail_and_counts(rt: Runtime,
                                                                                  tmp_path: Path) -> None:
    rt.store.enqueue("b1", api_tasks(3))
    feed = TaskFeed.of(rt)
    model = TaskTableModel(feed)
    stats = StatsController(rt, feed)
    detail = detail_pane(rt, feed, tmp_path)
    detail.show_task("t00000")
    assert detail.result.toPlainText() == ""
    feed.start()
    await finish_in_another_process(rt, 1)
    await wait_until(lambda: model.index(0, COL["state"]).data(StateRole) == "success")
    assert model.index(0, COL["result"]).data() == "written elsewhere"
    await wait_until(lambda: detail.result.toPlainText() == "written elsewhere")
    await wait_until(lambda: stats.view.snap.totals().get("success") == 1)
    feed.stop()
    model.stop()
    detail.close_media()


@pytest.mark.asyncio
async def test_the_detail_pane_follows_its_row_without_waiting_for_the_counts(rt: Runtime, tmp_path: Path) -> None:
    rt.store.enqueue("b1", api_tasks(2))
    feed = TaskFeed.of(rt)
    detail = detail_pane(rt, feed, tmp_path)
    detail.show_task("t00000")
    reads = StoreReads(rt.store)
    [task] = rt.store.claim("api:sim-api", "me", 1)
    rt.store.finish_success(task, "done here", [])
    feed.mark_changed_since(0)  # what the sweep finds: the row changed
    feed.flush()
    assert detail.result.toPlainText() == "done here"
    assert reads.counts_reads() == 0
    feed.stop()
    detail.close_media()


@pytest.mark.asyncio
async def test_rows_another_process_takes_leave_a_state_filter_in_place(rt: Runtime) -> None:
    rt.store.enqueue("b1", api_tasks(5))
    feed = TaskFeed.of(rt)
    model = TaskTableModel(feed)
    QAbstractItemModelTester(model, QAbstractItemModelTester.FailureReportingMode.Fatal)
    feed.set_filter(TaskFilter(state="pending"))
    resets: list[bool] = []
    model.modelReset.connect(lambda: resets.append(True))
    removed: list[tuple[int, int]] = []
    model.rowsRemoved.connect(lambda _parent, first, last: removed.append((first, last)))
    feed.start()
    await finish_in_another_process(rt, 2)
    await wait_until(lambda: model.rowCount() == 3)
    assert shown_ids(feed) == ["t00002", "t00003", "t00004"]
    assert removed == [(0, 1)] and resets == []  # one range out, no reset
    feed.stop()
    model.stop()


@pytest.mark.asyncio
async def test_the_schedulers_events_reach_the_subscribers_typed(rt: Runtime) -> None:
    rt.store.enqueue("b1", api_tasks(1, sim_fail="bad_input", sim_duration_s=0.1))
    feed = TaskFeed.of(rt)
    model = TaskTableModel(feed)
    events: list[TaskEvent] = []
    feed.task_event.connect(events.append)
    feed.start()
    await rt.start()
    try:
        await wait_until(lambda: any(e.kind == TaskEventKind.FAILED for e in events))
        [failed] = [e for e in events if e.kind == TaskEventKind.FAILED]
        assert (failed.task_id, failed.state, failed.route, failed.error_kind) == (
            "t00000", "failed", "api:sim-api", "bad_input")
        await wait_until(lambda: model.index(0, COL["state"]).data(StateRole) == "failed")
    finally:
        await rt.stop()
        feed.stop()
        model.stop()


@pytest.mark.asyncio
async def test_a_sort_asked_for_after_the_feed_stopped_ends_quietly(rt: Runtime) -> None:
    """A window closing set off a header sort after its feed had stopped: the read went to a
    shut-down thread pool and the app exited with "cannot schedule new futures after shutdown"."""
    rt.store.enqueue("b1", api_tasks(3))
    feed = TaskFeed.of(rt)
    feed.start()
    feed.stop()
    feed.sort(TaskOrder(key="prompt"))
    assert feed.sorting is not None
    with pytest.raises(asyncio.CancelledError):
        await feed.sorting
    assert feed.sorting.cancelled()
