"""The operator's commands on tasks (the window, the CLI): cancel, retry, delete, pick."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import peewee as pw

from mediaassist.core.errors import ErrorKind
from mediaassist.core.store.connection import StoreConnection
from mediaassist.core.store.database import sql_marks
from mediaassist.core.store.lifecycle import holder_kept
from mediaassist.core.store.tables import (
    AUTO_RETRIES,
    CANCELED,
    CANCELED_BEFORE_IT_RAN,
    CRASH_RETRIES,
    FAILED,
    FINAL_STATES,
    PENDING,
    PENDING_ROW,
    RUNNING_ROW,
    SUCCESS,
    Output,
    Result,
    Task,
    TaskLog,
)

REMOTE_FINAL_KINDS = ("provider", "bad_input", "canceled")


def _scope(task_ids: Iterable[str] | None, batch_id: str | None) -> pw.Expression:
    if batch_id is not None:
        return Task.batch_id == batch_id
    return Task.task_id.in_(list(task_ids or []))


class OperatorCommands(StoreConnection):
    """The operator's actions on tasks: cancel, retry, delete, pick an output."""

    def set_picked(self, task_id: str, n: int | None, picked: bool) -> int:
        """Mark (or unmark) output ``n`` of a task -- every output of it when ``n`` is None; how many changed."""
        scope = Output.task_id == task_id
        if n is not None:
            scope &= Output.n == n
        changed: int = Output.update(picked=picked).where(scope).execute()
        if changed:
            Task.update(updated_at=self.now()).where(Task.task_id == task_id).execute()  # the window's sweep sees it
        return changed

    # --- operator actions ------------------------------------------------------------------
    def cancel(self, task_ids: Iterable[str] | None = None, batch_id: str | None = None) -> dict[str, int]:
        """Pending → canceled at once; running → cancel_requested (the lane writes the end)."""
        scope = _scope(task_ids, batch_id)
        now = self.now()
        with self.db.atomic():
            canceled = (Task.update(state=CANCELED, finished_at=now, updated_at=now,
                                    error_kind=ErrorKind.CANCELED.value, error=str(CANCELED_BEFORE_IT_RAN),
                                    error_message=CANCELED_BEFORE_IT_RAN.to_json())
                        .where(scope & PENDING_ROW).execute())
            flagged = (Task.update(cancel_requested=True, updated_at=now)
                       .where(scope & RUNNING_ROW).execute())
        return {"canceled": canceled, "cancel_requested": flagged}

    def retry(self, task_ids: Iterable[str] | None = None, batch_id: str | None = None,
              all_failed: bool = False) -> int:
        """A fresh try on the same row (attempt + 1, pending): failed or canceled tasks of a
        batch or of the whole store (``all_failed``: failed only); tasks named by id may also be
        successes, to generate them again on purpose (the old result stays until replaced)."""
        if all_failed:
            scope = Task.state == FAILED
        elif batch_id is not None:
            scope = (Task.batch_id == batch_id) & Task.state.in_((FAILED, CANCELED))
        else:
            scope = Task.task_id.in_(list(task_ids or [])) & Task.state.in_(FINAL_STATES)
        now = self.now()
        mark = self.db.param
        remote_ended = f"state = {mark} OR error_kind IN ({sql_marks(mark, len(REMOTE_FINAL_KINDS))})"
        ended = [SUCCESS, *REMOTE_FINAL_KINDS]
        changes: dict[Any, Any] = {
            Task.state: PENDING, Task.attempt: Task.attempt + 1, Task.retries_left: AUTO_RETRIES,
            Task.crash_retries_left: CRASH_RETRIES,
            Task.not_before: 0.0, Task.cancel_requested: False, Task.finished_at: None,
            Task.started_at: None, Task.owner: None, Task.updated_at: now,
            # A remote task that ended (succeeded, failed or was canceled there) is done for good:
            # the operator's retry creates a new one. Any other remote id -- a local time-out, a
            # lost poll -- may still be running, so the retry resumes polling it, never resubmits
            # (with the key that created it: the row keeps it).
            Task.remote_id: pw.SQL(f"CASE WHEN {remote_ended} THEN NULL ELSE remote_id END", ended),
            # a fresh try may go to any account or key unless the task file pinned one
            Task.account: holder_kept(pw.SQL(f"remote_id IS NOT NULL AND NOT ({remote_ended})", ended)),
            Task.error_kind: None, Task.error: None, Task.error_message: None,
            # The operator checked the service (the error said to) and asks for a new create.
            Task.create_hold_until: None,
        }
        updated: int = Task.update(changes).where(scope).execute()
        return updated

    def delete(self, task_ids: Iterable[str]) -> int:
        """Delete finished tasks (with their results and logs). A pending or running task is
        left alone: the operator's view may be stale, and deleting queued work is a cancel."""
        ids = list(task_ids)
        with self.db.atomic():
            deleted: int = Task.delete().where(Task.task_id.in_(ids) & Task.state.in_(FINAL_STATES)).execute()
            Result.delete().where(Result.task_id.in_(ids) & ~Result.task_id.in_(
                Task.select(Task.task_id))).execute()
            TaskLog.delete().where(TaskLog.task_id.in_(ids) & ~TaskLog.task_id.in_(
                Task.select(Task.task_id))).execute()
            Output.delete().where(Output.task_id.in_(ids) & ~Output.task_id.in_(
                Task.select(Task.task_id))).execute()
        return deleted
