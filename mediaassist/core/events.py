"""What happened to a task, as data: the scheduler's events for whoever shows or records them.

A ``TaskEvent`` names its kind, the task (seq, id, lane, route) and the state the row is in now, and
carries the event's user-facing text as a ``Message`` where there is one (why it failed, why
the lane paused) -- so a listener never parses English to learn what happened.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from mediaassist.core.messages import Message


class TaskEventKind(enum.StrEnum):
    STARTED = "started"
    SUCCESS = "success"
    FAILED = "failed"  # for good
    RETRY = "retry"  # failed; back in the queue for another attempt
    CANCELED = "canceled"
    RELEASED = "released"  # handed back to the queue, no attempt used
    PAUSED = "paused"  # the task's lane stopped taking work


# The state a row is in once the event has happened (a pause leaves the task as it was).
STATE_AFTER = {TaskEventKind.STARTED: "running", TaskEventKind.SUCCESS: "success", TaskEventKind.FAILED: "failed",
               TaskEventKind.RETRY: "pending", TaskEventKind.CANCELED: "canceled", TaskEventKind.RELEASED: "pending"}


@dataclass(frozen=True)
class TaskEvent:
    kind: TaskEventKind
    seq: int
    task_id: str
    lane: str
    state: str
    message: Message | None = None
    route: str = ""  # the queue the task was taken from
    error_kind: str | None = None  # why it failed (an ErrorKind value), for a failure
    started_at: float | None = None  # when this attempt started (store clock): its service time
