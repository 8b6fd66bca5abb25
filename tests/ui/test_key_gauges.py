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
