from __future__ import annotations

import asyncio
import threading

import pytest
from PySide6.QtCore import QItemSelectionModel, Qt, QTimer
from PySide6.QtTest import QAbstractItemModelTester

from mediaassist.core.queries import TaskFilter
from mediaassist.core.store import Store, Task
from mediaassist.ui.task_model import COL, StateRole, TaskTableModel
from tests.ui.ui_helpers import close_table, table_model

from .conftest import api_tasks

# The model paints its state dots and badges (QPixmap): Qt aborts without a QApplication.
pytestmark = pytest.mark.usefixtures("qapp")


def _claim(store: Store, n: int) -> list[Task]:
    return store.claim("api:sim-api", "me", n)


def test_model_passes_qt_model_tester(qtmodeltester, filled_store: Store) -> None:
    model = table_model(filled_store)
    qtmodeltester.check(model)
    assert model.rowCount() == 300


def test_updates_are_in_place_and_keep_the_tester_happy(qtbot, filled_store: Store) -> None:
    model = table_model(filled_store)
    QAbstractItemModelTester(model, QAbstractItemModelTester.FailureReportingMode.Fatal)
    resets: list[bool] = []
    model.modelReset.connect(lambda: resets.append(True))
    changed: list[tuple[int, int]] = []
    model.dataChanged.connect(lambda a, b, roles=None: changed.append((a.row(), b.row())))
    claimed = _claim(filled_store, 3)
    model.feed.mark_dirty(t.seq for t in claimed)
    model.feed.flush()
    assert (0, 2) in changed  # one coalesced range for the three neighbours
    assert model.index(0, COL["state"]).data(StateRole) == "running"
    assert resets == []


def test_state_filter_moves_rows_in_and_out_without_reset(qtbot, filled_store: Store) -> None:
    model = table_model(filled_store)
    QAbstractItemModelTester(model, QAbstractItemModelTester.FailureReportingMode.Fatal)
    model.feed.set_filter(TaskFilter(state="running"))
    assert model.rowCount() == 0
    resets: list[bool] = []
    model.modelReset.connect(lambda: resets.append(True))
    claimed = _claim(filled_store, 5)
    model.feed.mark_dirty(t.seq for t in claimed)
    model.feed.refresh_membership()
    model.feed.flush()
    assert model.rowCount() == 5
    filled_store.finish_success(claimed[1], "ok", [])
    model.feed.mark_dirty([claimed[1].seq])
    model.feed.refresh_membership()
    model.feed.flush()
    assert [model.feed.task_id_at(r) for r in range(model.rowCount())] == [
        t.task_id for i, t in enumerate(claimed) if i != 1]
    assert resets == []


@pytest.mark.asyncio
@pytest.mark.parametrize("column", ["task_id", "state", "duration", "lane", "prompt"])
async def test_sort_is_done_in_sql_both_ways(qtbot, filled_store: Store, column: str) -> None:
    model = table_model(filled_store)
    QAbstractItemModelTester(model, QAbstractItemModelTester.FailureReportingMode.Fatal)
    _claim(filled_store, 4)
    model.sort(COL[column], Qt.SortOrder.DescendingOrder)
    await model.feed.sorting
    assert model.rowCount() == 300
    if column == "task_id":
        assert model.feed.task_id_at(0) == "t00299"
    model.sort(COL[column], Qt.SortOrder.AscendingOrder)
    await model.feed.sorting
    if column == "task_id":
        assert model.feed.task_id_at(0) == "t00000"
    close_table(model)


def test_text_filter_matches_prompt_and_escapes_wildcards(qtbot, store: Store) -> None:
    store.enqueue("b1", api_tasks(20))
    store.enqueue("b2", api_tasks(2, prefix="pct_"))
    model = table_model(store)
    model.feed.set_filter(TaskFilter(text="prompt 1"))
    assert model.rowCount() == 1 + 10 + 1  # "prompt 1", "prompt 10".."19", pct_ "prompt 1"
    model.feed.set_filter(TaskFilter(text="pct_"))
    assert model.rowCount() == 2
    model.feed.set_filter(TaskFilter(text="%"))
    assert model.rowCount() == 0
    model.feed.set_filter(TaskFilter(batch="b2", text="prompt"))
    assert model.rowCount() == 2


def test_new_and_deleted_rows_arrive_through_the_sweep(qtbot, filled_store: Store) -> None:
    model = table_model(filled_store)
    QAbstractItemModelTester(model, QAbstractItemModelTester.FailureReportingMode.Fatal)
    filled_store.enqueue("b2", api_tasks(10, prefix="new"))
    model.feed._last_sweep = 0.0
    model.feed.flush()
    assert model.rowCount() == 310
    # newest batch first, each batch in queue order
    assert [model.feed.task_id_at(r) for r in (0, 9, 10, 309)] == ["new00000", "new00009", "t00000", "t00299"]
    filled_store.cancel(["t00003"])
    filled_store.delete(["t00003"])
    model.feed._last_sweep = 0.0
    model.feed.flush()
    assert model.rowCount() == 309
    assert model.feed.task_id_at(13) == "t00004"


@pytest.mark.parametrize("old,new,blocks", [
    ([1, 2, 3], [1, 2, 3, 4, 5], [(3, [4, 5])]),
    ([1, 2, 3], [9, 1, 2, 3], [(0, [9])]),
    ([1, 2, 3, 4], [1, 7, 8, 2, 3, 9, 4], [(1, [7, 8]), (5, [9])]),
    ([], [5, 6], [(0, [5, 6])]),
    ([1, 2, 3], [1, 3, 4, 5], None),  # 2 was removed
    ([1, 2, 3], [2, 1, 3, 4], None),  # reordered
    ([1, 2, 3], [1, 2, 3], None),  # nothing new
])
def test_inserted_blocks_are_found_or_refused(old: list[int], new: list[int], blocks: object) -> None:
    from mediaassist.ui.feed import _inserted_blocks

    assert _inserted_blocks(old, new) == blocks


def test_rows_inserted_in_blocks_keep_the_model_consistent(qtbot, store: Store) -> None:
    store.enqueue("old", api_tasks(5, prefix="o"), created_at=1.0)
    model = table_model(store)
    QAbstractItemModelTester(model, QAbstractItemModelTester.FailureReportingMode.Fatal)
    for step in range(3):  # one batch arriving in steps: each lands after the one before
        store.enqueue("new", api_tasks(2, prefix=f"n{step}-"), created_at=2.0)
        model.feed.refresh_membership()
        model.feed.flush()
    assert [model.feed.task_id_at(r) for r in range(model.rowCount())] == [
        "n0-00000", "n0-00001", "n1-00000", "n1-00001", "n2-00000", "n2-00001",
        "o00000", "o00001", "o00002", "o00003", "o00004"]


def _hold_reader(model: TaskTableModel) -> threading.Event:
    """Keep the model's reader thread busy until the returned event is set: what a long ORDER
    BY at 100k rows does, made deterministic."""
    release = threading.Event()
    model.feed.reader._pool.submit(release.wait, 60)
    return release


def _shown_ids(model: TaskTableModel) -> list[str | None]:
    return [model.feed.task_id_at(r) for r in range(model.rowCount())]


@pytest.mark.asyncio
async def test_a_header_click_sorts_off_the_loop(qtbot, filled_store: Store) -> None:
    model = table_model(filled_store)
    QAbstractItemModelTester(model, QAbstractItemModelTester.FailureReportingMode.Fatal)
    before = _shown_ids(model)
    release = _hold_reader(model)
    model.sort(COL["task_id"], Qt.SortOrder.DescendingOrder)
    fired = asyncio.Event()
    QTimer.singleShot(0, fired.set)  # the loop keeps running while the sort is read
    await asyncio.wait_for(fired.wait(), 30)
    assert not model.feed.sorting.done()
    assert _shown_ids(model) == before  # nothing moved yet: the rows move when the keys arrive
    release.set()
    await model.feed.sorting
    assert _shown_ids(model) == sorted(before, reverse=True)
    close_table(model)


@pytest.mark.asyncio
async def test_a_newer_click_supersedes_a_sort_still_being_read(qtbot, filled_store: Store) -> None:
    model = table_model(filled_store)
    QAbstractItemModelTester(model, QAbstractItemModelTester.FailureReportingMode.Fatal)
    release = _hold_reader(model)
    model.sort(COL["task_id"], Qt.SortOrder.DescendingOrder)
    first = model.feed.sorting
    model.sort(COL["prompt"], Qt.SortOrder.AscendingOrder)
    release.set()
    await asyncio.gather(first, model.feed.sorting)
    prompts = [model.index(r, COL["prompt"]).data() for r in range(model.rowCount())]
    assert prompts == sorted(prompts)  # the newest click's order, not the first one's
    assert model.feed.order.key == "prompt"
    close_table(model)


@pytest.mark.asyncio
async def test_a_sort_and_a_search_landing_together_agree(qtbot, filled_store: Store) -> None:
    model = table_model(filled_store)
    QAbstractItemModelTester(model, QAbstractItemModelTester.FailureReportingMode.Fatal)
    release = _hold_reader(model)
    model.sort(COL["task_id"], Qt.SortOrder.DescendingOrder)
    searching = asyncio.ensure_future(model.feed.set_filter_off_loop(TaskFilter(text="prompt 1")))
    release.set()
    await asyncio.gather(model.feed.sorting, searching)
    shown = _shown_ids(model)
    assert len(shown) == 1 + 10 + 100  # "prompt 1", "prompt 10".."19", "prompt 100".."199"
    assert shown == sorted(shown, reverse=True)  # the search's rows in the click's order
    close_table(model)


@pytest.mark.asyncio
async def test_sorting_moves_the_selection_with_its_rows(qtbot, filled_store: Store) -> None:
    model = table_model(filled_store)
    selection = QItemSelectionModel(model)
    selection.select(model.index(3, 0), QItemSelectionModel.SelectionFlag.Select
                     | QItemSelectionModel.SelectionFlag.Rows)
    chosen = model.feed.task_id_at(3)
    model.sort(COL["task_id"], Qt.SortOrder.DescendingOrder)
    await model.feed.sorting
    rows = [index.row() for index in selection.selectedRows()]
    assert [model.feed.task_id_at(r) for r in rows] == [chosen]
    assert rows == [model.rowCount() - 1 - 3]
    close_table(model)
