"""What the operator does to tasks: cancel, retry, delete, copy, open the output folder, export.

Bulk changes run in steps of ID_CHUNK ids with the loop running between them, so cancelling or
deleting 100,000 tasks never freezes the window or the scheduler.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QApplication

from mediaassist.core.queries import chunks
from mediaassist.core.secrets import redact
from mediaassist.runtime import Runtime
from mediaassist.ui.actions import TaskAction, actions_for, applies
from mediaassist.ui.background import BackgroundJobs
from mediaassist.ui.export import export_tasks
from mediaassist.ui.feed import TaskFeed
from mediaassist.ui.i18n import tr
from mediaassist.ui.opener import open_externally

ID_CHUNK = 500  # ids per statement and per loop step in bulk actions

Confirm = Callable[[str, Callable[[], object]], None]


def action_label(action: TaskAction) -> str:
    return {TaskAction.CANCEL: tr("Cancel"), TaskAction.RETRY: tr("Retry"),
            TaskAction.OPEN_FOLDER: tr("Open output folder"), TaskAction.COPY_PROMPT: tr("Copy prompt"),
            TaskAction.COPY_RESULT: tr("Copy result"), TaskAction.COPY_ERROR: tr("Copy error"),
            TaskAction.COPY_ID: tr("Copy task id"), TaskAction.DELETE: tr("Delete")}[action]


# Shortcuts for the common verbs (QAction shows them in menus); copy ones keep the table's Ctrl+C.
ACTION_SHORTCUTS = {TaskAction.CANCEL: "Ctrl+.", TaskAction.RETRY: "Ctrl+R", TaskAction.DELETE: "Del",
                    TaskAction.OPEN_FOLDER: "Ctrl+Shift+O", TaskAction.COPY_ID: "Ctrl+Shift+C"}


class TaskActions(QObject):
    """Signals:
        changed(): an action's writes are done and shown in the table; counts are due.
        notice(str, str): a title and a line for the tray / status bar.
        message(str, str): a title and a text the operator must read (a dialog).
    """

    changed = Signal()
    notice = Signal(str, str)
    message = Signal(str, str)

    def __init__(self, rt: Runtime, feed: TaskFeed, selected_seqs: Callable[[], list[int]],
                 confirm: Confirm, jobs: BackgroundJobs, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.rt = rt
        self.feed = feed
        self.selected_seqs = selected_seqs
        self.confirm = confirm
        self.jobs = jobs

    # --- what is offered ---------------------------------------------------------------------
    def selected_tasks(self) -> list[tuple[str, str]]:
        return self.feed.tasks_of(self.selected_seqs())

    def offered(self, seqs: list[int] | None = None) -> tuple[list[TaskAction], list[int]]:
        """The actions for the selection (or the rows ``seqs``), and its row keys."""
        seqs = self.selected_seqs() if seqs is None else seqs
        return self._offered_for(seqs, self.feed.states_of(seqs)), seqs

    async def offered_off_loop(self, seqs: list[int]) -> tuple[list[TaskAction], list[int]]:
        """``offered`` with the states read in the table's reader thread: for a large selection
        (a shift-click over 50,000 rows is a read of 50,000 states)."""
        return self._offered_for(seqs, await self.feed.reader.run(self.feed.states_of, seqs)), seqs

    def _offered_for(self, seqs: list[int], states: set[str]) -> list[TaskAction]:
        offered = actions_for(states, selected=len(seqs))
        if TaskAction.OPEN_FOLDER in offered and not self._has_outputs(seqs):
            offered.remove(TaskAction.OPEN_FOLDER)  # "Open folder" only where files exist
        return offered

    def _has_outputs(self, seqs: list[int]) -> bool:
        folder = self._output_folder(self.feed.tasks_of(seqs)[0][0]) if seqs else None
        return folder is not None and folder.is_dir() and any(folder.iterdir())

    def _output_folder(self, task_id: str) -> Path | None:
        return self.rt.output_folder(task_id)

    # --- doing it ----------------------------------------------------------------------------
    def run_on_selection(self, action: TaskAction) -> asyncio.Future[None] | None:
        seqs = self.selected_seqs()
        if len(seqs) <= ID_CHUNK:
            return self.run(action, self.feed.tasks_of(seqs))
        # A large selection's (id, state) pairs are read in the table's reader thread first.
        return self.jobs.spawn(self._run_read_off_loop(action, seqs),
                               lambda exc: self.message.emit(tr("Action failed"), str(exc)), finish_on_quit=False)

    async def _run_read_off_loop(self, action: TaskAction, seqs: list[int]) -> None:
        job = self.run(action, await self.feed.reader.run(self.feed.tasks_of, seqs))
        if job is not None:
            await job

    def run(self, action: TaskAction, tasks: list[tuple[str, str]]) -> asyncio.Future[None] | None:
        """Act on the tasks the action applies to; bulk verbs return the job doing it."""
        ids = [task_id for task_id, state in tasks if applies(action, state)]
        if not ids:
            return None
        if action is TaskAction.DELETE:
            self.confirm(tr("Delete {n} tasks with their results and logs?").format(n=len(ids)),
                         lambda: self._bulk(self.rt.delete, ids))
            return None
        if action in (TaskAction.CANCEL, TaskAction.RETRY):
            return self._bulk(self.rt.cancel if action is TaskAction.CANCEL else self.rt.retry, ids)
        if action is TaskAction.OPEN_FOLDER:
            self.open_folder(ids[0])
        else:
            QApplication.clipboard().setText(self.copy_text(action, ids))
        return None

    def _bulk(self, change: Callable[[list[str]], object], ids: list[str]) -> asyncio.Future[None]:
        return self.jobs.spawn(self._in_steps(change, ids),
                               lambda exc: self.message.emit(tr("Action failed"), str(exc)), finish_on_quit=True)

    async def _in_steps(self, change: Callable[[list[str]], object], ids: list[str]) -> None:
        started = self.rt.now()
        for chunk in chunks(ids, ID_CHUNK):
            change(list(chunk))
            await asyncio.sleep(0)
        # The table's next tick (off the loop) moves the rows in place: Qt's persistent indexes
        # keep the selection on them.
        self.feed.mark_changed_since(started - 1.0)
        self.feed.refresh_membership()
        self.changed.emit()

    def copy_text(self, action: TaskAction, ids: list[str]) -> str:
        parts = []
        for task_id in ids:
            task = self.rt.task(task_id)
            if task is None:
                continue
            if action is TaskAction.COPY_ID:
                parts.append(task_id)
            elif action is TaskAction.COPY_PROMPT:
                parts.append(redact(task.prompt))
            elif action is TaskAction.COPY_ERROR:
                parts.append(redact(f"{task.error_kind}: {task.error}"))
            elif action is TaskAction.COPY_RESULT:
                result = self.rt.result(task_id)
                parts.append(redact(result.text or "") if result else "")
        return "\n".join(parts)

    def open_folder(self, task_id: str) -> asyncio.Future[None] | None:
        folder = self._output_folder(task_id)
        if folder is None or not folder.exists():
            self.notice.emit(tr("No outputs"), tr("{id} has no output folder yet.").format(id=task_id))
            return None
        return self.jobs.spawn(self._open(folder), lambda exc: self.message.emit(tr("Cannot open"), str(exc)),
                               finish_on_quit=False)

    async def _open(self, folder: Path) -> None:
        reason = await open_externally(folder)  # says so when no file manager takes it
        if reason is not None:
            self.message.emit(tr("Cannot open"), reason)

    # --- the whole view ----------------------------------------------------------------------
    def retry_failed_in_view(self) -> asyncio.Future[None] | None:
        return self.run(TaskAction.RETRY, [(i, "failed") for i in self.feed.matching_task_ids("failed")])

    def cancel_in_view(self) -> None:
        ids = self.feed.matching_task_ids("pending") + self.feed.matching_task_ids("running")
        if ids:
            self.confirm(tr("Cancel {n} tasks?").format(n=len(ids)),
                         lambda: self.run(TaskAction.CANCEL, [(i, "pending") for i in ids]))

    def start_export(self, name: str) -> None:
        self.jobs.spawn(self.export_to(Path(name)),
                        lambda exc: self.message.emit(tr("Export failed"), str(exc)), finish_on_quit=True)

    async def export_to(self, path: Path) -> int:
        if path.suffix.lower() not in (".csv", ".xlsx"):
            path = path.with_suffix(".xlsx")
        # Every matching id (a read over the whole view) in the table's reader thread, not here.
        ids = await self.feed.reader.run(self.feed.queries.task_ids, self.feed.filter, self.feed.order)
        written = await export_tasks(self.feed.queries, ids, path)
        self.notice.emit(tr("Exported"), tr("{n} tasks written to {path}").format(n=written, path=path))
        return written
