"""Window parts built over a bare store, as the window builds them from its runtime."""

from __future__ import annotations

from mediaassist.core.queries import Queries
from mediaassist.core.store import Store
from mediaassist.ui.task_model import TaskTableModel


def table_model(store: Store) -> TaskTableModel:
    queries = Queries(store)
    return TaskTableModel(queries, queries.off_loop())
