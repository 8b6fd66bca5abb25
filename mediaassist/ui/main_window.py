"""The main window: queue panels, batches, the task table with filters and details, accounts.

Everything runs on the qasync loop next to the scheduler. No dialog is ever ``exec()``-ed (a
nested event loop inside a coroutine breaks qasync): dialogs are ``open()``-ed and answer
through their ``finished`` signal.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QItemSelectionModel, QPoint, QSettings, Qt, QTimer, QUrl
from PySide6.QtGui import QAction, QCloseEvent, QDesktopServices, QDragEnterEvent, QDropEvent, QIcon
from PySide6.QtWidgets import (QAbstractItemView, QApplication, QComboBox, QFileDialog, QHBoxLayout,
                               QHeaderView, QLabel, QLineEdit, QMainWindow, QMenu, QMessageBox, QSplitter,
                               QTableView, QTabWidget, QToolBar, QVBoxLayout, QWidget)

from mediaassist.core.errors import StorageFault
from mediaassist.core.paths import RESOURCES, default_config_path, output_dir
from mediaassist.core.secrets import redact
from mediaassist.core.store import STATES, Task
from mediaassist.providers.registry import SIMULATED_SITE
from mediaassist.runtime import Runtime
from mediaassist.ui.accounts import AccountsPanel
from mediaassist.ui.actions import TaskAction, actions_for, applies
from mediaassist.ui.detail import DetailPane
from mediaassist.ui.export import export_tasks
from mediaassist.ui.i18n import Translations, tr
from mediaassist.ui.import_dialog import ImportPreviewDialog, importable
from mediaassist.ui.labels import state_labels
from mediaassist.ui.panels import BatchList, QueuePanel, ServiceTimes, Snapshot, batch_eta
from mediaassist.ui.settings import SettingsDialog
from mediaassist.ui.task_model import COL, TaskFilter, TaskTableModel
from mediaassist.ui.tray import Tray

log = logging.getLogger("mediaassist.ui")

STATS_MS = 1000
STATS_BUDGET = 20  # the stats period is at least this many times what one refresh costs
FILTER_DELAY_MS = 300
ID_CHUNK = 500  # ids per statement in bulk actions (SQLite's variable limit)
COLUMN_WIDTHS = {"task_id": 190, "batch": 270, "model": 110, "lane": 140, "state": 70, "attempt": 60,
                 "error_kind": 90, "heartbeat": 90, "duration": 80}
ICON_PATH = RESOURCES / "icons" / "mediaassist.png"


def action_label(action: TaskAction) -> str:
    return {TaskAction.CANCEL: tr("Cancel"), TaskAction.RETRY: tr("Retry"),
            TaskAction.OPEN_FOLDER: tr("Open output folder"), TaskAction.COPY_PROMPT: tr("Copy prompt"),
            TaskAction.COPY_RESULT: tr("Copy result"), TaskAction.COPY_ERROR: tr("Copy error"),
            TaskAction.COPY_ID: tr("Copy task id"), TaskAction.DELETE: tr("Delete")}[action]


def _chunks(ids: list[str]) -> list[list[str]]:
    return [ids[i:i + ID_CHUNK] for i in range(0, len(ids), ID_CHUNK)]


class MainWindow(QMainWindow):
    def __init__(self, rt: Runtime, settings: QSettings, translations: Translations,
                 use_tray: bool = True) -> None:
        super().__init__()
        self.rt = rt
        self.store, self.scheduler = rt.store, rt.scheduler
        self.settings = settings
        self.translations = translations
        self.confirm_destructive = True
        self.quit_requested: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self.quit_box: QMessageBox | None = None
        self.import_dialog: ImportPreviewDialog | None = None
        self.settings_dialog: SettingsDialog | None = None
        self._import_queue: list[Path] = []
        self._background: dict[asyncio.Future[Any], bool] = {}  # job -> finish it before quitting
        self._closing = False
        self._snapshot = Snapshot()
        self._login_states: dict[str, str] = {}
        self.service = ServiceTimes()
        self._built_language = translations.language
        self.model = TaskTableModel(self.store, self)
        self.scheduler.add_listener(self._on_event)
        self._storage_fault: StorageFault | None = self.scheduler.fault
        self.scheduler.add_fault_listener(self._on_storage_fault)
        self.setAcceptDrops(True)
        self.setWindowIcon(QIcon(str(ICON_PATH)))
        self.tray = Tray(self, QIcon(str(ICON_PATH)), self.toggle_pause_all, self.request_quit, use_tray)
        self._build()
        if not self.restoreGeometry(settings.value("window/geometry", b"")):
            self._default_size()
        self._stats_timer = QTimer(self)
        self._stats_timer.setInterval(STATS_MS)
        self._stats_timer.timeout.connect(self.refresh_stats)
        self.refresh_stats()
        self._stats_timer.start()
        self.model.start()

    # --- building (again on a language switch) -------------------------------------------------
    def _build(self) -> None:
        self.menuBar().clear()
        for bar in self.findChildren(QToolBar):
            self.removeToolBar(bar)
            bar.deleteLater()
        self._build_actions()
        self._build_menus()
        self.tabs = QTabWidget()
        self.tabs.addTab(self._build_queue_tab(), tr("Queue"))
        self.accounts = AccountsPanel(self.store, self.set_account_enabled, self.log_in)
        self.tabs.addTab(self.accounts, tr("Accounts"))
        # The storage banner: the one place a full disk or a vanished database shows.
        self.storage_banner = QLabel()
        self.storage_banner.setWordWrap(True)
        self.storage_banner.setTextFormat(Qt.TextFormat.PlainText)
        self.storage_banner.setStyleSheet("background: #b3261e; color: white; padding: 6px;")
        central = QWidget()
        column = QVBoxLayout(central)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.storage_banner)
        column.addWidget(self.tabs)
        self.setCentralWidget(central)
        self._show_storage_fault()
        self._update_selection_actions()

    def _build_actions(self) -> None:
        self.task_actions: dict[TaskAction, QAction] = {}
        for action in TaskAction:
            qaction = QAction(action_label(action), self)
            qaction.triggered.connect(lambda _=False, a=action: self.run_action(a, self.selected_tasks()))
            self.task_actions[action] = qaction
        self.retry_view = QAction(tr("Retry failed in view"), self, triggered=self.retry_failed_in_view)
        self.cancel_view = QAction(tr("Cancel pending/running in view"), self, triggered=self.cancel_in_view)
        toolbar = self.addToolBar(tr("Tasks"))
        toolbar.setObjectName("tasks-toolbar")
        for action in (TaskAction.CANCEL, TaskAction.RETRY, TaskAction.DELETE, TaskAction.OPEN_FOLDER):
            toolbar.addAction(self.task_actions[action])
        toolbar.addSeparator()
        toolbar.addActions([self.retry_view, self.cancel_view])

    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu(tr("&File"))
        file_menu.addAction(QAction(tr("&Import…"), self, triggered=self.choose_import_file))
        file_menu.addAction(QAction(tr("Export view to CSV/XLSX…"), self, triggered=self.choose_export_file))
        file_menu.addAction(QAction(tr("&Settings…"), self, triggered=self.open_settings))
        file_menu.addSeparator()
        file_menu.addAction(QAction(tr("&Quit"), self, triggered=self.request_quit))
        task_menu = self.menuBar().addMenu(tr("&Tasks"))
        task_menu.addActions(list(self.task_actions.values()))
        task_menu.addSeparator()
        task_menu.addActions([self.retry_view, self.cancel_view])
        lanes_menu = self.menuBar().addMenu(tr("&Lanes"))
        lanes_menu.addAction(QAction(tr("Pause/resume all"), self, triggered=self.toggle_pause_all))

    def _default_size(self) -> None:
        """First start: most of the screen, so the table and the detail pane both have room."""
        screen = self.screen().availableGeometry() if self.screen() else None
        if screen is not None:
            self.resize(int(screen.width() * 0.85), int(screen.height() * 0.85))

    def _build_queue_tab(self) -> QWidget:
        lanes = list(self.scheduler.lanes.values())
        config_path = str(self.rt.config.source or self.rt.options.config_path or default_config_path())
        self.web_panel = QueuePanel(tr("Web"), [l for l in lanes if l.kind == "web"], self.toggle_lane,
                                    config_path)
        self.api_panel = QueuePanel(tr("API and polling pools"), [l for l in lanes if l.kind != "web"],
                                    self.toggle_lane, config_path)
        self.batches = BatchList()
        top = QSplitter(Qt.Orientation.Horizontal)
        for widget in (self.web_panel, self.api_panel, self.batches):
            top.addWidget(widget)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(-1, Qt.SortOrder.AscendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(22)
        header = self.table.horizontalHeader()
        header.setResizeContentsPrecision(50)  # 10x cheaper than measuring every row
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        # The header paints each section asking isColumnSelected() of it and its neighbours: with
        # the table's selection that walks every row's flags (~4 s per paint with 100k rows
        # selected). It only needs a selection for highlighting, so it gets an empty one.
        header.setSelectionModel(QItemSelectionModel(self.model, header))
        for key, width in COLUMN_WIDTHS.items():
            self.table.setColumnWidth(COL[key], width)
        header.restoreState(self.settings.value("window/table_header", b""))
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.table.customContextMenuRequested.connect(self.show_context_menu)
        self.table.selectionModel().selectionChanged.connect(self._update_selection_actions)
        self.detail = DetailPane(self.store)
        lower = QSplitter(Qt.Orientation.Horizontal)
        table_box = QWidget()
        table_layout = QVBoxLayout(table_box)
        table_layout.setContentsMargins(0, 0, 0, 0)
        table_layout.addLayout(self._build_filters())
        self._show_filter(self.model.filter)
        table_layout.addWidget(self.table)
        lower.addWidget(table_box)
        lower.addWidget(self.detail)
        lower.setSizes([900, 380])
        outer = QSplitter(Qt.Orientation.Vertical)
        outer.addWidget(top)
        outer.addWidget(lower)
        outer.setSizes([200, 600])
        return outer

    def _build_filters(self) -> QHBoxLayout:
        row = QHBoxLayout()
        self.state_filter = QComboBox()
        self.lane_filter = QComboBox()
        self.batch_filter = QComboBox()
        self.text_filter = QLineEdit()
        self.text_filter.setPlaceholderText(tr("Search id, prompt, model, error…"))
        self.state_filter.addItem(tr("All states"), None)
        for state in STATES:
            self.state_filter.addItem(state_labels()[state], state)
        self.lane_filter.addItem(tr("All lanes"), None)
        for name in self.scheduler.lanes:
            self.lane_filter.addItem(name, name)
        self.batch_filter.addItem(tr("All batches"), None)
        self._filter_delay = QTimer(self)
        self._filter_delay.setSingleShot(True)
        self._filter_delay.setInterval(FILTER_DELAY_MS)
        self._filter_delay.timeout.connect(self.apply_filter)
        for combo in (self.state_filter, self.lane_filter, self.batch_filter):
            combo.currentIndexChanged.connect(self.apply_filter)
            row.addWidget(combo)
        self.text_filter.textChanged.connect(lambda _text: self._filter_delay.start())
        row.addWidget(self.text_filter, 1)
        return row

    def _show_filter(self, shown: TaskFilter) -> None:
        """Put the model's filter back into freshly built widgets (a language switch rebuilds them)."""
        for combo, value in ((self.state_filter, shown.state), (self.lane_filter, shown.lane),
                             (self.batch_filter, shown.batch)):
            if value is not None and combo.findData(value) < 0:
                combo.addItem(value, value)
            combo.blockSignals(True)
            combo.setCurrentIndex(0 if value is None else combo.findData(value))
            combo.blockSignals(False)
        self.text_filter.blockSignals(True)
        self.text_filter.setText(shown.text)
        self.text_filter.blockSignals(False)

    def apply_filter(self) -> None:
        self.model.set_filter(TaskFilter(state=self.state_filter.currentData(),
                                         lane=self.lane_filter.currentData(),
                                         batch=self.batch_filter.currentData(),
                                         text=self.text_filter.text().strip()))

    # --- live state ----------------------------------------------------------------------------
    def _on_storage_fault(self, fault: StorageFault | None) -> None:
        self._storage_fault = fault
        self._show_storage_fault()
        if fault is not None:
            self.tray.notify(tr("No new work taken"), str(fault))

    def _show_storage_fault(self) -> None:
        fault = self._storage_fault
        self.storage_banner.setVisible(fault is not None)
        if fault is not None:
            self.storage_banner.setText(tr("No new work is taken: {problem}").format(problem=fault))

    def _on_event(self, event: str, task: Task) -> None:
        self.model.mark_dirty([task.seq])
        self.service.on_event(event, task)
        if event == "paused":
            reason = self.store.paused_lanes().get(task.lane) or self.store.paused_lanes().get(task.route, "")
            self.tray.notify(tr("Lane paused"), f"{task.lane}: {reason}")

    def refresh_stats(self) -> None:
        started = time.perf_counter()
        self._refresh_stats()
        # The snapshot is one GROUP BY over the whole store (~0.1 s at 100k rows on a slow box):
        # keep it under ~5 % of the loop's time by stretching the period as the store grows.
        cost_ms = (time.perf_counter() - started) * 1000
        self._stats_timer.setInterval(int(max(STATS_MS, STATS_BUDGET * cost_ms)))

    def _refresh_stats(self) -> None:
        previous = self._snapshot
        snap = self._snapshot = Snapshot.take(self.store)
        paused = self.store.paused_lanes()
        blocked = self.scheduler.blocked_lanes()
        self.web_panel.update(snap, paused, blocked)
        self.api_panel.update(snap, paused, blocked)
        self.batches.update(snap, lambda b: batch_eta(b, snap, self.scheduler, self.service, blocked))
        self._notify_finished_batches(previous, snap)
        self._notify_login_needed()
        totals = snap.totals()
        running = sum(len(lane.active) for lane in self.scheduler.lanes.values())
        self.tray.update(running, totals["pending"], totals["failed"], self._all_paused(paused))
        self._refresh_filter_counts(totals, snap)
        self.accounts.refresh()
        self._update_selection_actions()  # the selected tasks' states may have moved meanwhile

    def _notify_finished_batches(self, previous: Snapshot, snap: Snapshot) -> None:
        for batch in previous.batch_routes:
            if batch in snap.by_batch and batch not in snap.batch_routes:
                counts = snap.by_batch[batch]
                self.tray.notify(tr("Batch finished"), tr("{batch}: {ok} done, {failed} failed").format(
                    batch=batch, ok=counts["success"], failed=counts["failed"]))

    def _notify_login_needed(self) -> None:
        for acct in self.store.accounts():
            before = self._login_states.get(acct.name)
            if acct.login_state == "needs_login" and before not in (None, "needs_login"):
                self.tray.notify(tr("Account needs login"), f"{acct.name} ({acct.site})")
            self._login_states[acct.name] = acct.login_state

    def _refresh_filter_counts(self, totals: dict[str, int], snap: Snapshot) -> None:
        for i in range(1, self.state_filter.count()):
            state = self.state_filter.itemData(i)
            self.state_filter.setItemText(i, f"{state_labels()[state]} ({totals.get(state, 0)})")
        known = {self.batch_filter.itemData(i) for i in range(1, self.batch_filter.count())}
        for batch in reversed(snap.batch_order):
            if batch not in known:
                self.batch_filter.insertItem(1, batch, batch)

    def _all_paused(self, paused: dict[str, str]) -> bool:
        return bool(self.scheduler.lanes) and all(name in paused for name in self.scheduler.lanes)

    # --- lanes and accounts --------------------------------------------------------------------
    def toggle_lane(self, name: str) -> None:
        if name in self.store.paused_lanes():
            self.store.resume_lane(name)
        else:
            self.store.pause_lane(name, tr("paused by operator"))
        self.scheduler.wake()
        self.refresh_stats()

    def toggle_pause_all(self) -> None:
        paused = self.store.paused_lanes()
        resume = self._all_paused(paused)
        for name in self.scheduler.lanes:
            if resume:
                self.store.resume_lane(name)
            elif name not in paused:
                self.store.pause_lane(name, tr("paused by operator"))
        self.scheduler.wake()
        self.refresh_stats()

    def set_account_enabled(self, name: str, enabled: bool) -> None:
        self.store.set_account_enabled(name, enabled)
        self.scheduler.wake()
        self.refresh_stats()

    def log_in(self, name: str) -> None:
        """Open the account's profile headed so the operator can log in (the web lane's job)."""
        acct = self.store.account(name)
        if acct is None:
            return
        if acct.site == SIMULATED_SITE:
            self.store.set_login_state(name, "ok")
            self.tray.notify(tr("Log in"), tr("{name} is a simulated account; it needs no login.").format(name=name))
            return
        try:
            from mediaassist.providers.web import login_account  # type: ignore[attr-defined]
        except ImportError:
            self._message(tr("Log in"), tr("Logging in is not available: the web lane is not installed."))
            return
        self.tray.notify(tr("Log in"), tr("Opening the browser for {name}…").format(name=name))
        self._spawn(login_account(name, self.rt.config, self.rt.data_dir, self.store),
                    lambda exc: self._message(tr("Log in failed"), f"{name}: {exc}"), finish_on_quit=False)

    # --- task actions --------------------------------------------------------------------------
    def _selected_seqs(self) -> list[int]:
        """Row keys of the selection, from its ranges: ``selectedRows()`` asks ``flags()`` of
        every selected cell (1M Python calls at 100k rows)."""
        if not hasattr(self, "table"):
            return []
        ranges = self.table.selectionModel().selection()
        return self.model.seqs_in((r.top(), r.bottom()) for r in ranges)

    def selected_tasks(self) -> list[tuple[str, str]]:
        return self.model.tasks_of(self._selected_seqs())

    def _offered_actions(self) -> tuple[list[TaskAction], list[int]]:
        seqs = self._selected_seqs()
        return actions_for(self.model.states_of(seqs), selected=len(seqs)), seqs

    def _update_selection_actions(self) -> None:
        offered, seqs = self._offered_actions()
        for action, qaction in self.task_actions.items():
            qaction.setEnabled(action in offered)
        if hasattr(self, "detail"):
            single = self.model.tasks_of(seqs) if len(seqs) == 1 else []
            self.detail.show_task(single[0][0] if single else None)

    def context_menu(self) -> QMenu:
        menu = QMenu(self)
        for action in self._offered_actions()[0]:
            menu.addAction(self.task_actions[action])
        return menu

    def show_context_menu(self, pos: QPoint) -> None:
        menu = self.context_menu()
        if not menu.isEmpty():
            menu.popup(self.table.viewport().mapToGlobal(pos))

    def run_action(self, action: TaskAction, tasks: list[tuple[str, str]]) -> None:
        ids = [task_id for task_id, state in tasks if applies(action, state)]
        if not ids:
            return
        if action is TaskAction.CANCEL:
            for chunk in _chunks(ids):
                self.store.cancel(chunk)
        elif action is TaskAction.RETRY:
            for chunk in _chunks(ids):
                self.store.retry(chunk)
        elif action is TaskAction.DELETE:
            self._confirm(tr("Delete {n} tasks with their results and logs?").format(n=len(ids)),
                          lambda: self._delete(ids))
            return
        elif action is TaskAction.OPEN_FOLDER:
            self._open_folder(ids[0])
            return
        else:
            QApplication.clipboard().setText(self._copy_text(action, ids))
            return
        self._after_change()

    def _delete(self, ids: list[str]) -> None:
        for chunk in _chunks(ids):
            self.store.delete(chunk)
        self._after_change()

    def _after_change(self) -> None:
        self.scheduler.wake()
        self.model.mark_dirty(r[0] for r in self.store.db.execute_sql(
            "SELECT seq FROM task WHERE updated_at >= ?", (self.store.now() - 1.0,)))
        self.model.refresh_membership()
        self.model.flush()
        self._update_selection_actions()

    def _copy_text(self, action: TaskAction, ids: list[str]) -> str:
        parts = []
        for task_id in ids:
            task = self.store.get(task_id)
            if task is None:
                continue
            if action is TaskAction.COPY_ID:
                parts.append(task_id)
            elif action is TaskAction.COPY_PROMPT:
                parts.append(redact(task.prompt))
            elif action is TaskAction.COPY_ERROR:
                parts.append(redact(f"{task.error_kind}: {task.error}"))
            elif action is TaskAction.COPY_RESULT:
                result = self.store.result(task_id)
                parts.append(redact(result.text or "") if result else "")
        return "\n".join(parts)

    def _open_folder(self, task_id: str) -> None:
        task = self.store.get(task_id)
        if task is None:
            return
        folder = output_dir(self.rt.data_dir, task.batch_id, task.task_id)
        if not folder.exists():
            self.tray.notify(tr("No outputs"), tr("{id} has no output folder yet.").format(id=task_id))
            return
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder)))

    def retry_failed_in_view(self) -> None:
        tasks = [(tid, "failed") for tid in self._ids_in_view_with_state("failed")]
        self.run_action(TaskAction.RETRY, tasks)

    def cancel_in_view(self) -> None:
        ids = self._ids_in_view_with_state("pending") + self._ids_in_view_with_state("running")
        self._confirm(tr("Cancel {n} tasks?").format(n=len(ids)),
                      lambda: self.run_action(TaskAction.CANCEL, [(i, "pending") for i in ids]))

    def _ids_in_view_with_state(self, state: str) -> list[str]:
        if self.model.filter.state not in (None, state):
            return []
        where, args = TaskFilter(state=state, lane=self.model.filter.lane, batch=self.model.filter.batch,
                                 text=self.model.filter.text).where()
        return [r[0] for r in self.store.db.execute_sql(f"SELECT task_id FROM task{where}", args)]

    # --- import --------------------------------------------------------------------------------
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if any(importable(Path(url.toLocalFile())) for url in event.mimeData().urls() if url.isLocalFile()):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event: QDropEvent) -> None:
        paths = [Path(u.toLocalFile()) for u in event.mimeData().urls() if u.isLocalFile()]
        paths = [p for p in paths if importable(p)]
        if paths:
            event.acceptProposedAction()
            self.open_files(paths)

    def open_files(self, paths: list[Path] | list[str]) -> None:
        """Queue files for the import preview, one dialog at a time."""
        self._import_queue.extend(Path(p) for p in paths)
        self.showNormal()
        self.raise_()
        self._next_import()

    def choose_import_file(self) -> None:
        dialog = QFileDialog(self, tr("Import task file"))
        dialog.setNameFilter(tr("Task files (*.csv *.xlsx *.json *.jsonl *.txt)"))
        dialog.setFileMode(QFileDialog.FileMode.ExistingFiles)
        dialog.filesSelected.connect(self.open_files)
        dialog.open()

    def _next_import(self) -> None:
        if self.import_dialog is not None or not self._import_queue:
            return
        path = self._import_queue.pop(0)
        dialog = ImportPreviewDialog(path, self.rt.config, self.settings.value("import/default_model"), self,
                                     count_stored=self.rt.count_stored)
        dialog.finished.connect(lambda result, d=dialog: self._import_finished(d, result))
        self.import_dialog = dialog
        dialog.open()

    def _import_finished(self, dialog: ImportPreviewDialog, result: int) -> None:
        self.import_dialog = None
        if result == ImportPreviewDialog.DialogCode.Accepted and dialog.report and dialog.report.tasks:
            outcome = self.rt.enqueue_report(dialog.report)
            batch, inserted, skipped = outcome.batch_id, outcome.inserted, outcome.skipped
            if dialog.default_model:
                self.settings.setValue("import/default_model", dialog.default_model)
            message = tr("{n} tasks enqueued as {batch}").format(n=len(inserted), batch=batch)
            if skipped:
                message += tr("; {n} task ids were already in the queue and were skipped").format(n=len(skipped))
            self.tray.notify(tr("Imported"), message)
            self.model.refresh_membership()
            self.model.flush()
            self.refresh_stats()
        dialog.deleteLater()
        self._next_import()

    # --- export, settings ----------------------------------------------------------------------
    def choose_export_file(self) -> None:
        dialog = QFileDialog(self, tr("Export tasks"))
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setNameFilters([tr("Excel workbook (*.xlsx)"), tr("CSV (*.csv)")])
        dialog.fileSelected.connect(self.start_export)
        dialog.open()

    def start_export(self, name: str) -> None:
        self._spawn(self.export_to(Path(name)), self._export_failed, finish_on_quit=True)

    async def export_to(self, path: Path) -> int:
        if path.suffix.lower() not in (".csv", ".xlsx"):
            path = path.with_suffix(".xlsx")
        written = await export_tasks(self.model.matching_task_ids(), path)
        self.tray.notify(tr("Exported"), tr("{n} tasks written to {path}").format(n=written, path=path))
        return written

    def _export_failed(self, exc: BaseException) -> None:
        self._message(tr("Export failed"), str(exc))

    def open_settings(self) -> None:
        dialog = SettingsDialog(self.scheduler, self.settings, str(self.rt.data_dir), self)
        dialog.applied.connect(lambda _edits: self._settings_applied())
        dialog.finished.connect(lambda _r: setattr(self, "settings_dialog", None))
        self.settings_dialog = dialog
        dialog.open()

    def _settings_applied(self) -> None:
        language = str(self.settings.value("app/language", "auto"))
        if self.translations.apply(language) != self._built_language:
            self._built_language = self.translations.language
            self._save_view_state()
            self._build()
            self.tray.retranslate()
        self.refresh_stats()

    # --- helpers -------------------------------------------------------------------------------
    def _spawn(self, coro: Any, on_error: Callable[[BaseException], None], finish_on_quit: bool) -> None:
        """Run a job next to the window; on quit it is awaited (an export) or cancelled (a login
        browser, which closes with it) -- see ``finish_background``."""
        future = asyncio.ensure_future(coro)
        self._background[future] = finish_on_quit

        def done(fut: asyncio.Future[Any]) -> None:
            self._background.pop(fut, None)
            if not fut.cancelled() and fut.exception() is not None:
                log.error("background action failed: %s", fut.exception())
                on_error(fut.exception())  # type: ignore[arg-type]

        future.add_done_callback(done)

    def _message(self, title: str, text: str) -> None:
        box = QMessageBox(QMessageBox.Icon.Information, title, text, QMessageBox.StandardButton.Ok, self)
        box.finished.connect(box.deleteLater)
        box.open()

    def _confirm(self, text: str, then: Callable[[], None]) -> None:
        if not self.confirm_destructive:
            then()
            return
        box = QMessageBox(QMessageBox.Icon.Question, tr("Please confirm"), text,
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, self)
        box.finished.connect(lambda result: then() if result == QMessageBox.StandardButton.Yes else None)
        box.finished.connect(box.deleteLater)
        box.open()

    # --- quitting ------------------------------------------------------------------------------
    def running_count(self) -> int:
        return sum(len(lane.active) for lane in self.scheduler.lanes.values())

    def request_quit(self) -> None:
        """Ask (without blocking) whether running tasks stop or resume next time, then quit."""
        if self.quit_requested.done() or self.quit_box is not None:
            return
        running = self.running_count()
        if running == 0:
            self.quit_requested.set_result(False)
            return
        box = QMessageBox(QMessageBox.Icon.Question, tr("Quit mediaassist"),
                          tr("{n} tasks are running. Stop them now, or leave them to resume at the next start?").format(n=running),
                          QMessageBox.StandardButton.NoButton, self)
        self.quit_stop = box.addButton(tr("Stop them"), QMessageBox.ButtonRole.DestructiveRole)
        self.quit_leave = box.addButton(tr("Resume next start"), QMessageBox.ButtonRole.AcceptRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.finished.connect(lambda _r: self._quit_answered(box))
        self.quit_box = box
        box.open()

    def _quit_answered(self, box: QMessageBox) -> None:
        self.quit_box = None
        clicked = box.clickedButton()
        box.deleteLater()
        if clicked is self.quit_stop:
            self.quit_requested.set_result(True)
        elif clicked is self.quit_leave:
            self.quit_requested.set_result(False)

    def closeEvent(self, event: QCloseEvent) -> None:
        if self._closing:
            event.accept()
            return
        event.ignore()
        self.request_quit()

    async def finish_background(self) -> None:
        """Quitting: exports run to their end (with a notice), other jobs are cancelled."""
        jobs = dict(self._background)
        for job, finish in jobs.items():
            if not finish:
                job.cancel()
        if any(jobs.values()):
            self.tray.notify(tr("Quitting"), tr("Finishing the export before quitting…"))
        if jobs:
            await asyncio.wait(jobs)

    def shutdown(self) -> None:
        """Stop the timers and save the view; the caller then stops the scheduler."""
        self._stats_timer.stop()
        self.model.stop()
        self._save_view_state()
        self.tray.hide()

    def close_for_good(self) -> None:
        self._closing = True
        self.close()

    def _save_view_state(self) -> None:
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.setValue("window/table_header", self.table.horizontalHeader().saveState())
