from __future__ import annotations

import pytest
from PySide6.QtCore import QAbstractTableModel

from mediaassist.core.store import Store
from mediaassist.ui.actions import TaskAction as A
from mediaassist.ui.actions import actions_for
from tests.ui.ui_helpers import table_model


@pytest.mark.parametrize("states,expected", [
    (["pending"], [A.CANCEL, A.COPY_PROMPT, A.COPY_ID]),
    (["running"], [A.CANCEL, A.OPEN_FOLDER, A.COPY_PROMPT, A.COPY_ID]),
    (["success"], [A.OPEN_FOLDER, A.COPY_PROMPT, A.COPY_RESULT, A.COPY_ID, A.DELETE]),
    (["failed"], [A.RETRY, A.OPEN_FOLDER, A.COPY_PROMPT, A.COPY_ERROR, A.COPY_ID, A.DELETE]),
    (["canceled"], [A.RETRY, A.COPY_PROMPT, A.COPY_ID, A.DELETE]),
    (["pending", "failed"], [A.CANCEL, A.RETRY, A.COPY_PROMPT, A.COPY_ID, A.DELETE]),
    (["success", "success"], [A.COPY_PROMPT, A.COPY_ID, A.DELETE]),
    ([], []),
])
def test_actions_are_a_function_of_the_selected_states(states: list[str], expected: list[A]) -> None:
    assert actions_for(states) == expected


def test_python_side_emits_do_not_crash_this_pyside6(qtbot, store: Store) -> None:
    """PySide6 6.12.0 aborts after ~560 Python-side emits on CPython 3.11 (the pin in pyproject.toml says why)."""
    model = table_model(store)
    for _ in range(2000):
        model.layoutChanged.emit()
    assert isinstance(model, QAbstractTableModel)


def test_distinct_states_of_a_large_selection_offer_no_single_task_verbs() -> None:
    assert actions_for({"failed"}, selected=100_000) == [A.RETRY, A.COPY_PROMPT, A.COPY_ID, A.DELETE]
    assert actions_for({"failed"}, selected=1)[0] == A.RETRY and A.COPY_ERROR in actions_for({"failed"}, 1)
