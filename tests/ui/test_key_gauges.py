"""A provider with several keys shows one gauge per key: each key's own done and failed counts
(its rows name it), and the provider's shared queue as what is pending -- any free key takes it."""

from __future__ import annotations

from mediaassist.core.errors import ErrorKind
from mediaassist.core.queries import Queries
from mediaassist.core.store import NewTask, Store
from mediaassist.runtime import LaneView
from mediaassist.ui.panels import lane_gauge

ROUTE = "api:acme"


def key_lane(label: str, running: int = 0) -> LaneView:
    return LaneView(name=f"{ROUTE}/{label}", kind="api", route=ROUTE, account=None, limit=2, current_limit=2,
                    running=running, key=label)


def test_each_key_counts_its_own_rows_and_shares_the_queue(store: Store) -> None:
    store.enqueue("b1", [NewTask(model="writer", model_kind="api", route=ROUTE, prompt=f"p{n}") for n in range(7)])
    for label, successes, failures in (("team-a", 3, 0), ("team-b", 1, 1)):
        for task in store.claim(ROUTE, "owner-1", successes + failures, lane_limit=2 + successes, key=label):
            if successes:
                successes -= 1
                assert store.finish_success(task, "ok", [], None, [])
            else:
                assert store.finish_failure(task, ErrorKind.PROVIDER, "boom", retry_at=None) == "failed"

    snap = Queries(store).snapshot()
    a, b = lane_gauge(key_lane("team-a", running=1), snap), lane_gauge(key_lane("team-b"), snap)
    assert (a.done, a.failed, a.running, a.limit) == (3, 0, 1, 2)
    assert (b.done, b.failed) == (1, 1)
    assert a.pending == b.pending == 2  # the provider's queue, shared by its keys


def test_a_keyed_task_names_its_key_in_the_lane_column_and_the_lane_filter_finds_it(store: Store) -> None:
    from mediaassist.core.queries import TaskFilter, TaskOrder
    from mediaassist.ui.task_model import lane_text

    store.enqueue("b1", [NewTask(model="writer", model_kind="api", route=ROUTE, prompt=f"p{n}") for n in range(3)])
    store.claim(ROUTE, "owner-1", 1, lane_limit=2, key="team-b")
    queries = Queries(store)
    rows = queries.rows(queries.seqs(TaskFilter(), TaskOrder("created")))
    assert sorted(lane_text(row) for row in rows) == ["acme", "acme", "acme/team-b"]
    on_key = queries.seqs(TaskFilter(lane=f"{ROUTE}/team-b"), TaskOrder("created"))
    assert [row.account for row in queries.rows(on_key)] == ["team-b"]


def test_a_key_lane_row_keeps_the_key_label_when_its_name_is_cut(qtbot) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QGridLayout, QWidget

    from mediaassist.ui.panels import LaneRow

    host = QWidget()
    qtbot.addWidget(host)
    grid = QGridLayout(host)
    rows = [LaneRow(grid, n, key_lane(label), lambda _name: None) for n, label in enumerate(("team-a", "team-b"))]
    assert [row.name.text() for row in rows] == ["acme/team-a", "acme/team-b"]
    narrow = rows[0].name.fontMetrics().horizontalAdvance("…team-a") + 2
    shown = [row.name.fontMetrics().elidedText(row.name.text(), row.name.elide, narrow) for row in rows]
    assert shown[0] != shown[1] and shown[0].endswith("team-a") and shown[1].endswith("team-b")
    assert rows[0].name.elide == Qt.TextElideMode.ElideLeft
