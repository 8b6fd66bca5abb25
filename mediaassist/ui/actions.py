"""What the operator may do with tasks, as a pure function of their states (menus and toolbar)."""

from __future__ import annotations

import enum
from collections.abc import Collection


class TaskAction(enum.StrEnum):
    CANCEL = "cancel"
    RETRY = "retry"
    OPEN_FOLDER = "open_folder"
    COPY_PROMPT = "copy_prompt"
    COPY_RESULT = "copy_result"
    COPY_ERROR = "copy_error"
    COPY_ID = "copy_id"
    DELETE = "delete"


_BY_STATE: dict[str, frozenset[TaskAction]] = {
    "pending": frozenset({TaskAction.CANCEL, TaskAction.COPY_PROMPT, TaskAction.COPY_ID}),
    "running": frozenset({TaskAction.CANCEL, TaskAction.OPEN_FOLDER, TaskAction.COPY_PROMPT,
                          TaskAction.COPY_ID}),
    "success": frozenset({TaskAction.OPEN_FOLDER, TaskAction.COPY_RESULT, TaskAction.COPY_PROMPT,
                          TaskAction.COPY_ID, TaskAction.DELETE}),
    "failed": frozenset({TaskAction.RETRY, TaskAction.COPY_ERROR, TaskAction.OPEN_FOLDER,
                         TaskAction.COPY_PROMPT, TaskAction.COPY_ID, TaskAction.DELETE}),
    "canceled": frozenset({TaskAction.RETRY, TaskAction.COPY_PROMPT, TaskAction.COPY_ID,
                           TaskAction.DELETE}),
}
# Verbs that act on each selected task; the copy/open ones read a single task.
BULK = frozenset({TaskAction.CANCEL, TaskAction.RETRY, TaskAction.DELETE, TaskAction.COPY_ID,
                  TaskAction.COPY_PROMPT})


def applies(action: TaskAction, state: str) -> bool:
    return action in _BY_STATE.get(state, frozenset())


def actions_for(states: Collection[str], selected: int | None = None) -> list[TaskAction]:
    """Actions offered for a selection: any that applies to one of the selected tasks, in menu
    order; single-task verbs (open folder, copy result/error) only for a single selection.
    ``selected`` counts the tasks when ``states`` holds only the distinct states."""
    offered = [a for a in TaskAction if any(applies(a, s) for s in states)]
    if (len(states) if selected is None else selected) != 1:
        offered = [a for a in offered if a in BULK]
    return offered
