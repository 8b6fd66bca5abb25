"""The main window: layout and wiring only.

What the window does lives in controller objects with signals (the shape of qutebrowser's
download manager): ``TaskActions`` (cancel, retry, delete, copy, export), ``ImportController``,
``LanesController`` (lanes and accounts) and ``StatsController`` (counts, progress, ETA,
notices). One ``TaskFeed`` does all reading and polling of task state; the table, the counts,
the detail pane, the gallery and the tray hear it.

Everything runs on the qasync loop next to the scheduler. No dialog is ever ``exec()``-ed (a
nested event loop inside a coroutine breaks qasync): dialogs are ``open()``-ed and answer
through their ``finished`` signal.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QByteArray, QItemSelectionModel, QPoint, QSettings, QSize, Qt, QTimer
from PySide6.QtGui import QAction, QCloseEvent, QDragEnterEvent, QDropEvent, QIcon, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMenu,
    QMessageBox,
    QPushButton,
    QSplitter,
    QTableView,
    QTabWidget,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from mediaassist.core.errors import StorageFault
from mediaassist.core.media_items import OUTPUT, MediaItem
from mediaassist.core.paths import RESOURCES, default_config_path
from mediaassist.core.queries import TaskFilter
from mediaassist.core.store import STATES
from mediaassist.runtime import Runtime
from mediaassist.ui.accounts import AccountsPanel
from mediaassist.ui.actions import TaskAction
from mediaassist.ui.background import BackgroundJobs
from mediaassist.ui.core_texts import translated
from mediaassist.ui.detail import DetailPane
from mediaassist.ui.disk_thumbnails import DiskThumbnails
from mediaassist.ui.feed import TaskFeed
from mediaassist.ui.file_dialogs import documents_folder, file_dialog
from mediaassist.ui.fit import scrollable
from mediaassist.ui.gallery import GalleryView
from mediaassist.ui.i18n import Translations, labelled, tr
from mediaassist.ui.import_dialog import importable
from mediaassist.ui.importing import ImportController
from mediaassist.ui.labels import state_labels
from mediaassist.ui.lanes import LanesController
from mediaassist.ui.outputs_ui import OutputsController
from mediaassist.ui.panels import ENABLE_LINK, BatchList, QueuePanel
from mediaassist.ui.settings import SettingsDialog
from mediaassist.ui.stats import StatsController, StatsView
from mediaassist.ui.task_actions import ACTION_SHORTCUTS, ID_CHUNK, TaskActions, action_label
from mediaassist.ui.task_model import COLUMNS, THUMB, TaskTableModel, column_label
from mediaassist.ui.tray import NOTICE_MS, Tray, bring_forward

FILTER_DELAY_MS = 300
ROW_HEIGHT = THUMB + 4
ICON_PATH = RESOURCES / "icons" / "mediaassist.png"
HEADER_KEY = "task_table_header_v2"  # the column set changed: older saved states don't apply
SPLITTER_KEYS = ("panels_splitter", "top_splitter", "table_splitter")
BATCHES_SHOWN = 3  # the batch list shows this many without scrolling
MAXIMIZE_UP_TO_PX = 1440  # a first start on a screen this wide or narrower opens maximized
HIDDEN_KEY = "window/hidden_columns"


def saved_bytes(settings: QSettings, key: str) -> QByteArray | bytes:
    """A saved geometry or header state (Qt stores a QByteArray), or b"" when there is none."""
    value = settings.value(key, b"")
    return value if isinstance(value, QByteArray | bytes) else b""


class MainWindow(QMainWindow):
    def __init__(self, rt: Runtime, settings: QSettings, translations: Translations,
                 use_tray: bool = True) -> None:
        super().__init__()
        self.rt = rt
        self.settings = settings
        self.demo = rt.options.demo  # a demo window never writes the operator's settings
        self.translations = translations
        self.confirm_destructive = True
        self.quit_requested: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self.quit_box: QMessageBox | None = None
        self.settings_dialog: SettingsDialog | None = None
        self.undo_button: QPushButton | None = None
        self._closing = False
        self._offering: asyncio.Future[None] | None = None  # the actions of a large selection, being read
        self._built_language = translations.language
        self.jobs = BackgroundJobs()
        self.feed = TaskFeed.of(rt, self)
        self.model = TaskTableModel(self.feed, self)
        self.thumbnails = DiskThumbnails(self.rt.data_dir / "thumbnails")
        self.tasks = TaskActions(rt, self.feed, self._selected_seqs, self._confirm, self.jobs, self)
        self.importer = ImportController(rt, settings, self.jobs, self, self.thumbnails)
        self.lanes = LanesController(rt, self.jobs, self)
        self.stats = StatsController(rt, self.feed, self)
        self.outputs = OutputsController(rt, self._selected_or_view_task_ids, self)
        self._storage_fault: StorageFault | None = rt.storage_fault
        rt.add_fault_listener(self._on_storage_fault)
        self.setAcceptDrops(True)
        self.setWindowIcon(QIcon(str(ICON_PATH)))
        self.tray = Tray(self, QIcon(str(ICON_PATH)), self.lanes.pause_all, self.lanes.resume_all, self.request_quit,
                         use_tray)
        self._wire()
        self._build()
        self.statusBar()  # made before the window shows: one made later stayed hidden, notices unseen
        self.start_maximized = self._restore_place()
        self.feed.start()

    def _wire(self) -> None:
        for controller in (self.tasks, self.importer, self.lanes, self.stats, self.outputs):
            controller.notice.connect(self.tray.notify)
        for controller in (self.tasks, self.importer, self.lanes, self.outputs):
            controller.message.connect(self._message)
        self.outputs.changed.connect(self._rows_added)
        self.tasks.changed.connect(self.feed.read_counts_soon)
        self.importer.imported.connect(lambda _batch, _n: self._rows_added())
        self.importer.progress.connect(lambda text: self.statusBar().showMessage(text, NOTICE_MS))
        self.lanes.changed.connect(self.feed.read_counts_soon)
        self.stats.refreshed.connect(self._show_stats)
        self.feed.task_event.connect(self.tray.task_event)
        self.feed.filter_changed.connect(self._reload_gallery_if_shown)
        self.model.modelReset.connect(self._selection_reset)

    # --- building (again on a language switch) -------------------------------------------------
    def _build(self) -> None:
        if hasattr(self, "gallery"):  # a language switch: the old views stop loading first
            self._close_media()
        self.menuBar().clear()
        for bar in self.findChildren(QToolBar):
            self.removeToolBar(bar)
            bar.deleteLater()
        self._build_actions()
        self._build_menus()
        self.tabs = QTabWidget()
        self.tabs.addTab(self._build_queue_tab(), tr("Queue"))
        self.accounts = AccountsPanel(self.rt.accounts, self.lanes.set_account_enabled,
                                      lambda name, keep: self.lanes.log_in(name, keep_login=keep))
        self.tabs.addTab(self.accounts, tr("Accounts"))
        self.gallery = GalleryView(self.thumbnails, self.feed.matching_task_ids, pick=self.outputs.pick,
                                   compare=self.outputs.compare, rerun=self.outputs.edit_and_run_again,
                                   table_filter=self.filter_in_words)
        self.outputs.gallery_toggle = self.gallery.toggle_pick
        self.tabs.addTab(self.gallery, tr("Gallery"))
        self.tabs.currentChanged.connect(lambda _i: self._reload_gallery_if_shown())
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

    def _action(self, text: str, slot: Callable[[], object], shortcut: str | None = None) -> QAction:
        action = QAction(text, self)
        action.triggered.connect(lambda _checked=False: slot())
        if shortcut:
            action.setShortcut(QKeySequence(shortcut))
        return action

    def _build_actions(self) -> None:
        self.task_actions: dict[TaskAction, QAction] = {
            action: self._action(action_label(action), functools.partial(self.tasks.run_on_selection, action),
                                 ACTION_SHORTCUTS.get(action))
            for action in TaskAction}
        self.retry_view = self._action(tr("Retry failed in view"), self.tasks.retry_failed_in_view, "Ctrl+Shift+R")
        self.cancel_view = self._action(tr("Cancel pending/running in view"), self.tasks.cancel_in_view)
        toolbar = self.addToolBar(tr("Tasks"))
        toolbar.setObjectName("tasks-toolbar")
        for action in (TaskAction.CANCEL, TaskAction.RETRY, TaskAction.DELETE, TaskAction.OPEN_FOLDER):
            toolbar.addAction(self.task_actions[action])
        toolbar.addSeparator()
        toolbar.addActions([self.retry_view, self.cancel_view])
        self.rerun_action = self._action(tr("Edit and run again…"), self._rerun_selected)
        self.compare_action = self._action(tr("Compare row outputs…"), self._compare_selected)
        self.deliver_action = self._action(tr("Deliver picked…"), self.outputs.choose_delivery_folder)

    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu(tr("&File"))
        file_menu.addAction(self._action(tr("&Import…"), self.importer.choose_file, "Ctrl+O"))
        file_menu.addAction(self._action(tr("Export view to CSV/XLSX…"), self.choose_export_file, "Ctrl+E"))
        file_menu.addAction(self._action(tr("&Settings…"), self.open_settings, "Ctrl+,"))
        file_menu.addSeparator()
        file_menu.addAction(self._action(tr("&Quit"), self.request_quit, "Ctrl+Q"))
        task_menu = self.menuBar().addMenu(tr("&Tasks"))
        task_menu.addAction(self._action(tr("Find…"), self._focus_search, "Ctrl+F"))
        task_menu.addSeparator()
        task_menu.addActions(list(self.task_actions.values()))
        task_menu.addSeparator()
        task_menu.addActions([self.retry_view, self.cancel_view])
        task_menu.addSeparator()
        task_menu.addActions([self.rerun_action, self.compare_action, self.deliver_action])
        lanes_menu = self.menuBar().addMenu(tr("&Lanes"))
        lanes_menu.addAction(self._action(tr("Pause/resume all"), self.lanes.toggle_pause_all, "Ctrl+P"))

    # --- the window's place, kept per screen size -----------------------------------------------
    def _place_key(self, key: str) -> str:
        """``window/1366x768/geometry``: a laptop's layout is not squeezed onto by a big monitor's."""
        size = self.screen().size()
        return f"window/{size.width()}x{size.height()}/{key}"

    def _restore_place(self) -> bool:
        """The saved geometry on this screen; at a first start most of the screen, or all of it
        (maximized) on a small one. Returns whether the window opens maximized."""
        if self.restoreGeometry(saved_bytes(self.settings, self._place_key("geometry"))):
            return str(self.settings.value(self._place_key("maximized"), "false")).lower() == "true"
        screen = self.screen().availableGeometry()
        self.resize(int(screen.width() * 0.85), int(screen.height() * 0.85))
        return screen.width() <= MAXIMIZE_UP_TO_PX

    def show_in_place(self) -> None:
        if self.start_maximized:
            self.showMaximized()
        else:
            self.show()

    def _restore_splitters(self) -> None:
        for key, splitter in zip(SPLITTER_KEYS, self.splitters, strict=True):
            splitter.restoreState(saved_bytes(self.settings, self._place_key(key)))

    def _build_queue_tab(self) -> QWidget:
        lanes = self.rt.lane_views()
        config_path = str(self.rt.config.source or self.rt.options.config_path or default_config_path())
        self.web_panel = QueuePanel(tr("Web"), [lane for lane in lanes if lane.kind == "web"], self.lanes.toggle_lane,
                                    config_path)
        self.api_panel = QueuePanel(tr("API and polling pools"), [lane for lane in lanes if lane.kind != "web"],
                                    self.lanes.toggle_lane, config_path)
        self.batches = BatchList(on_link=self._on_batch_link, per_batch=self.rt.config.budget.per_batch)
        top = QSplitter(Qt.Orientation.Horizontal)
        top.setChildrenCollapsible(False)
        for panel in (self.web_panel, self.api_panel):
            top.addWidget(scrollable(panel))  # more lanes than room: they scroll
        top.addWidget(self.batches)  # its rows scroll under its title
        top.setSizes([1000, 1000, 1000])  # a third each
        self.table = self._build_table()
        self.detail = DetailPane(self.rt, self.thumbnails, self.feed)
        lower = QSplitter(Qt.Orientation.Horizontal)
        table_box = QWidget()
        table_layout = QVBoxLayout(table_box)
        table_layout.setContentsMargins(0, 0, 0, 0)
        table_layout.addLayout(self._build_filters())
        self._show_filter(self.feed.filter)
        table_layout.addWidget(self.table)
        lower.addWidget(table_box)
        lower.addWidget(self.detail)
        lower.setSizes([1000, 320])  # the table's text columns get the room; the pane's fields wrap
        outer = QSplitter(Qt.Orientation.Vertical)
        outer.addWidget(top)
        outer.addWidget(lower)
        # The panels as tall as their lanes (and three batches) need; the table the rest.
        # (at most 40 % of the screen: more lanes than that scroll); the table takes what the
        # window gains or loses (stretch), the panels keep their height.
        panels = min(max(self.web_panel.sizeHint().height(), self.api_panel.sizeHint().height(),
                         self.batches.height_for(BATCHES_SHOWN)), int(self.screen().availableGeometry().height() * 0.4))
        outer.setSizes([panels, 4 * panels])
        outer.setStretchFactor(0, 0)
        outer.setStretchFactor(1, 1)
        self.splitters = (outer, top, lower)
        self._restore_splitters()
        return outer

    def _build_table(self) -> QTableView:
        table = QTableView()
        table.setModel(self.model)
        table.setSortingEnabled(True)
        table.sortByColumn(-1, Qt.SortOrder.AscendingOrder)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        table.setWordWrap(False)
        table.setTextElideMode(Qt.TextElideMode.ElideRight)
        table.verticalHeader().setVisible(False)
        table.verticalHeader().setDefaultSectionSize(ROW_HEIGHT)
        table.setIconSize(QSize(THUMB, THUMB))
        header = table.horizontalHeader()
        header.setResizeContentsPrecision(50)  # 10x cheaper than measuring every row
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(False)
        header.setSectionsMovable(True)
        # The header paints each section asking isColumnSelected() of it and its neighbours: with
        # the table's selection that walks every row's flags (~4 s per paint with 100k rows
        # selected). It only needs a selection for highlighting, so it gets an empty one.
        header.setSelectionModel(QItemSelectionModel(self.model, header))
        for i, column in enumerate(COLUMNS):  # never narrower than the title, in either language
            table.setColumnWidth(i, max(column.width, header.sectionSizeHint(i)))
        header.restoreState(saved_bytes(self.settings, self._place_key(HEADER_KEY)))
        for i, column in enumerate(COLUMNS):  # after the restore: a saved state never makes them scroll
            if column.stretch:
                header.setSectionResizeMode(i, QHeaderView.ResizeMode.Stretch)
        hidden = self._hidden_columns()
        for i, column in enumerate(COLUMNS):
            table.setColumnHidden(i, column.key in hidden)
        header.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        header.customContextMenuRequested.connect(self._show_column_chooser)
        table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        table.customContextMenuRequested.connect(self.show_context_menu)
        table.selectionModel().selectionChanged.connect(self._update_selection_actions)
        return table

    def _build_filters(self) -> QHBoxLayout:
        row = QHBoxLayout()
        self.state_filter = QComboBox()
        self.lane_filter = QComboBox()
        self.batch_filter = QComboBox()
        for combo in (self.state_filter, self.lane_filter, self.batch_filter):
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(12)
        self.text_filter = QLineEdit()
        self.text_filter.setPlaceholderText(tr("Search id, prompt, model, error…"))
        self.text_filter.setClearButtonEnabled(True)
        self.state_filter.addItem(tr("All states"), None)
        for state in STATES:
            self.state_filter.addItem(state_labels()[state], state)
        self.lane_filter.addItem(tr("All lanes"), None)
        for name in self.rt.lane_names():
            self.lane_filter.addItem(name, name)
        self.batch_filter.addItem(tr("All batches"), None)
        self._filter_delay = self._single_shot(FILTER_DELAY_MS, self.apply_filter)
        for combo in (self.state_filter, self.lane_filter, self.batch_filter):
            combo.currentIndexChanged.connect(self.apply_filter)
            row.addWidget(combo)
        self.text_filter.textChanged.connect(lambda _text: self._filter_delay.start())
        row.addWidget(self.text_filter, 1)
        return row

    def _single_shot(self, ms: int, slot: Callable[[], object]) -> QTimer:
        timer = QTimer(self)
        timer.setSingleShot(True)
        timer.setInterval(ms)
        timer.timeout.connect(slot)
        return timer

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

    def apply_filter(self) -> asyncio.Future[None]:
        """The filter widgets' choice, applied off the loop (the table follows when it is read)."""
        wanted = TaskFilter(state=self.state_filter.currentData(), lane=self.lane_filter.currentData(),
                            batch=self.batch_filter.currentData(), text=self.text_filter.text().strip())
        return self.jobs.spawn(self._filter(wanted), lambda exc: self._message(tr("Search failed"), str(exc)),
                               finish_on_quit=False)

    async def _filter(self, wanted: TaskFilter) -> None:
        await self.feed.set_filter_off_loop(wanted)  # the gallery follows (feed.filter_changed)

    def filter_in_words(self) -> str:
        """The table's filter as the gallery names it ("State: pending · "cat""), "" for none."""
        shown = self.feed.filter
        parts = [labelled(tr("State"), state_labels()[shown.state]) if shown.state else "",
                 labelled(tr("Lane"), shown.lane) if shown.lane else "",
                 labelled(tr("Batch"), shown.batch) if shown.batch else "",
                 f"“{shown.text}”" if shown.text else ""]
        return " · ".join(part for part in parts if part)

    def _reload_gallery_if_shown(self) -> None:
        """The gallery shows the table's view; it reads only while someone looks at it."""
        if self.tabs.currentWidget() is self.gallery:
            self.gallery.reload()

    def _close_media(self) -> None:
        self.gallery.close_media()
        self.detail.close_media()

    def _focus_search(self) -> None:
        self.tabs.setCurrentIndex(0)
        self.text_filter.setFocus()
        self.text_filter.selectAll()

    # --- the column chooser --------------------------------------------------------------------
    def _hidden_columns(self) -> set[str]:
        saved = self.settings.value(HIDDEN_KEY)
        if saved is None:
            return {c.key for c in COLUMNS if not c.shown} | (set() if self.rt.shared_store else {"machine"})
        return {str(key) for key in (saved if isinstance(saved, list) else [saved]) if key}

    def column_chooser(self) -> QMenu:
        menu = QMenu(self)
        for i, column in enumerate(COLUMNS):
            action = menu.addAction(column_label(column.key))
            action.setCheckable(True)
            action.setChecked(not self.table.isColumnHidden(i))
            action.toggled.connect(lambda shown, col=i: self.set_column_shown(col, shown))
        return menu

    def _show_column_chooser(self, pos: QPoint) -> None:
        self.column_chooser().popup(self.table.horizontalHeader().mapToGlobal(pos))

    def set_column_shown(self, column: int, shown: bool) -> None:
        self.table.setColumnHidden(column, not shown)
        hidden = [c.key for i, c in enumerate(COLUMNS) if self.table.isColumnHidden(i)]
        if not self.demo:
            # An empty list reads back as None from an INI file: "" marks "nothing hidden".
            self.settings.setValue(HIDDEN_KEY, hidden or [""])

    # --- live state ----------------------------------------------------------------------------
    def _on_storage_fault(self, fault: StorageFault | None) -> None:
        self._storage_fault = fault
        self._show_storage_fault()
        if fault is not None:
            self.tray.notify(tr("No new work taken"), translated(fault.message))

    def _show_storage_fault(self) -> None:
        fault = self._storage_fault
        self.storage_banner.setVisible(fault is not None)
        if fault is not None:
            self.storage_banner.setText(tr("No new work is taken: {problem}").format(problem=translated(fault.message)))

    def refresh_stats(self) -> None:
        self.feed.read_counts()

    def _show_stats(self, view: StatsView) -> None:
        self.web_panel.show_snapshot(view.snap, view.lanes, view.paused, view.blocked)
        self.api_panel.show_snapshot(view.snap, view.lanes, view.paused, view.blocked)
        self.batches.show_snapshot(view.snap, self.stats.eta, view.paused)
        totals = view.snap.totals()
        self.tray.update(view.snap.totals_by_kind(), view.all_paused, bool(view.paused))
        self._refresh_filter_counts(totals, view)
        self.accounts.refresh()
        self.fit_text_columns()
        self._update_selection_actions()  # the selected tasks' states may have moved meanwhile

    def _refresh_filter_counts(self, totals: dict[str, int], view: StatsView) -> None:
        for i in range(1, self.state_filter.count()):
            state = self.state_filter.itemData(i)
            self.state_filter.setItemText(i, f"{state_labels()[state]} ({totals.get(state, 0)})")
        known = {self.batch_filter.itemData(i) for i in range(1, self.batch_filter.count())}
        for batch in reversed(view.snap.batch_order):
            if batch not in known:
                self.batch_filter.insertItem(1, batch, batch)

    def fit_text_columns(self) -> None:
        """Result and Error as wide as their default while a row in view has one, else only as
        wide as their title: the Prompt column (which stretches) gets the room they do not need.
        Where the table is too narrow for their defaults they share the room left with the
        Prompt: at 1366 px a 200-px Result left the Prompt 80 px ("为「秋季新…")."""
        header = self.table.horizontalHeader()
        last = self.table.rowAt(self.table.viewport().height() - 1)
        rows = range(max(0, self.table.rowAt(0)), (last if last >= 0 else self.model.rowCount() - 1) + 1)
        shown = [i for i in range(len(COLUMNS)) if not self.table.isColumnHidden(i)]
        used = {i for i in shown if COLUMNS[i].fit and any(self.model.index(row, i).data() for row in rows)}
        fixed = sum(header.sectionSizeHint(i) if COLUMNS[i].fit else header.sectionSize(i)
                    for i in shown if not COLUMNS[i].stretch and i not in used)
        share = (self.table.viewport().width() - fixed) // (len(used) + 1)
        for i in shown:
            if not COLUMNS[i].fit:
                continue
            title = header.sectionSizeHint(i)
            wanted = max(title, min(COLUMNS[i].width, share)) if i in used else title
            if header.sectionSize(i) != wanted:
                header.resizeSection(i, wanted)

    def _on_batch_link(self, target: str) -> None:
        """"Enable it" enables the account (with an undo); "Log in" opens the Accounts tab."""
        if target.startswith(ENABLE_LINK):
            name = target.removeprefix(ENABLE_LINK)
            self.lanes.set_account_enabled(name, True)
            self.offer_undo(tr("Account {name} enabled").format(name=name),
                            lambda: self.lanes.set_account_enabled(name, False))
        else:
            self.tabs.setCurrentWidget(self.accounts)

    def offer_undo(self, text: str, undo: Callable[[], None]) -> None:
        """``text`` in the status bar with an Undo button beside it, for as long as the notice shows."""
        self.statusBar().showMessage(text, NOTICE_MS)
        if self.undo_button is not None:
            self.statusBar().removeWidget(self.undo_button)
            self.undo_button.deleteLater()
        button = QPushButton(tr("Undo"))
        self.undo_button = button

        def undone() -> None:
            undo()
            self.statusBar().clearMessage()
            button.hide()
        button.clicked.connect(undone)
        self.statusBar().addPermanentWidget(button)
        button.show()
        QTimer.singleShot(NOTICE_MS, button, button.hide)  # (not once the button is gone)

    def _rows_added(self) -> None:
        """The table's next tick reads the new keys off the loop, as do the counts."""
        self.feed.refresh_membership()
        self.feed.read_counts_soon()

    # --- selection -----------------------------------------------------------------------------
    def _selected_seqs(self) -> list[int]:
        """Row keys of the selection, from its ranges: ``selectedRows()`` asks ``flags()`` of
        every selected cell (1M Python calls at 100k rows)."""
        if not hasattr(self, "table"):
            return []
        ranges = self.table.selectionModel().selection()
        spans = (ranges.at(i) for i in range(ranges.size()))  # by index: QItemSelection's stub has no __iter__
        return self.feed.seqs_in((r.top(), r.bottom()) for r in spans)

    def selected_tasks(self) -> list[tuple[str, str]]:
        return self.tasks.selected_tasks()

    def _selection_reset(self) -> None:
        """A reset (a new filter) drops the table's selection without selectionChanged: the detail
        pane and the task actions went on showing a task the filter had taken away."""
        if hasattr(self, "detail") and (self.detail.task_id is not None
                                        or any(a.isEnabled() for a in self.task_actions.values())):
            self._update_selection_actions()

    def _update_selection_actions(self) -> None:
        if self._offering is not None:
            self._offering.cancel()  # a newer selection supersedes one still being read
            self._offering = None
        seqs = self._selected_seqs()
        if len(seqs) <= ID_CHUNK:
            self._show_offered(*self.tasks.offered(seqs))
        else:  # a large selection's states are read off the loop
            self._offering = asyncio.ensure_future(self._offer_off_loop(seqs))

    async def _offer_off_loop(self, seqs: list[int]) -> None:
        self._show_offered(*await self.tasks.offered_off_loop(seqs))

    def _show_offered(self, offered: list[TaskAction], seqs: list[int]) -> None:
        for action, qaction in self.task_actions.items():
            qaction.setEnabled(action in offered)
        single_finished = len(seqs) == 1 and TaskAction.DELETE in offered  # a finished task
        self.rerun_action.setEnabled(single_finished)
        self.compare_action.setEnabled(len(seqs) == 1)
        if hasattr(self, "detail"):
            single = self.feed.tasks_of(seqs) if len(seqs) == 1 else []
            self.detail.show_task(single[0][0] if single else None)

    def context_menu(self) -> QMenu:
        menu = QMenu(self)
        for action in self.tasks.offered()[0]:
            menu.addAction(self.task_actions[action])
        if self.rerun_action.isEnabled() or self.compare_action.isEnabled():
            menu.addSeparator()
            menu.addActions([a for a in (self.rerun_action, self.compare_action) if a.isEnabled()])
        return menu

    def _selected_or_view_task_ids(self) -> list[str]:
        """What "Deliver picked…" takes: the selected tasks, else every task of the current view."""
        return [task_id for task_id, _state in self.feed.tasks_of(self._selected_seqs())] \
            or self.feed.matching_task_ids()

    def _selected_task_id(self) -> str | None:
        seqs = self._selected_seqs()
        tasks = self.feed.tasks_of(seqs) if len(seqs) == 1 else []
        return tasks[0][0] if tasks else None

    def _rerun_selected(self) -> None:
        task_id = self._selected_task_id()
        if task_id is not None:
            self.outputs.edit_and_run_again(task_id)

    def _compare_selected(self) -> None:
        task_id = self._selected_task_id()
        task = self.rt.task(task_id) if task_id is not None else None
        if task is not None:
            self.outputs.compare(MediaItem(task.task_id, OUTPUT, "other", "", batch_id=task.batch_id,
                                           group=task.group_key or task.task_id))

    def show_context_menu(self, pos: QPoint) -> None:
        menu = self.context_menu()
        if not menu.isEmpty():
            menu.popup(self.table.viewport().mapToGlobal(pos))

    # --- import and export ---------------------------------------------------------------------
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
        """Files dropped or handed over by a second launch: the window comes up with the preview,
        keeping its size (maximized stays maximized)."""
        bring_forward(self)
        self.importer.open_files(paths)

    def choose_export_file(self) -> QFileDialog:
        folder = self.rt.outputs_root  # exports sit beside the outputs they describe
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError:  # a read-only or vanished disk: the documents folder then
            folder = documents_folder()
        dialog = file_dialog(self, tr("Export tasks"), folder)
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setNameFilters([tr("Excel workbook (*.xlsx)"), tr("CSV (*.csv)")])
        dialog.fileSelected.connect(self.tasks.start_export)
        dialog.open()
        return dialog

    # --- settings ------------------------------------------------------------------------------
    def open_settings(self) -> None:
        dialog = SettingsDialog(self.rt, self.settings, str(self.rt.data_dir), self.demo, self)
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
        self.feed.read_counts_soon()  # the GROUP BY in the reader thread, not on the loop

    # --- dialogs -------------------------------------------------------------------------------
    def _message(self, title: str, text: str) -> None:
        box = QMessageBox(QMessageBox.Icon.Information, title, text, QMessageBox.StandardButton.Ok, self)
        box.finished.connect(box.deleteLater)
        box.open()

    def _confirm(self, text: str, then: Callable[[], object]) -> None:
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
        return self.rt.running_count()

    def request_quit(self) -> None:
        """Ask (without blocking) whether running tasks stop or resume next time, then quit."""
        if self.quit_requested.done() or self.quit_box is not None:
            return
        own = self.running_count()
        if own == 0:
            self.quit_requested.set_result(False)
            return
        # The count the title shows (the store's running rows, read now for both), so the
        # question and the title agree; the tasks another process runs go on either way.
        self.feed.read_counts()
        running = max(own, self.stats.view.snap.totals().get("running", 0))
        text = tr("{n} tasks are running. Stop them now, or leave them to resume at the next start?").format(n=running)
        if running > own:
            text += " " + tr("{n} of them are run by another process and go on whatever you choose.").format(
                n=running - own)
        box = QMessageBox(QMessageBox.Icon.Question, tr("Quit mediaassist"), text,
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
        """Quitting: exports and imports run to their end (with a notice), other jobs are cancelled."""
        if self.jobs.any_to_finish():
            self.tray.notify(tr("Quitting"), tr("Finishing the export before quitting…"))
        await self.jobs.finish()

    def shutdown(self) -> None:
        """Stop the timers and save the view; the caller then stops the scheduler."""
        # No more reads of the selection's actions: the feed's reader thread ends next.
        self.table.selectionModel().selectionChanged.disconnect(self._update_selection_actions)
        self.model.modelReset.disconnect(self._selection_reset)
        if self._offering is not None:
            self._offering.cancel()
        self.feed.stop()
        self.model.stop()
        self._close_media()
        self.thumbnails.close()
        self._save_view_state()
        self.tray.hide()

    def close_for_good(self) -> None:
        self._closing = True
        self.close()

    def _save_view_state(self) -> None:
        if self.demo:
            return
        self.settings.setValue(self._place_key("geometry"), self.saveGeometry())
        self.settings.setValue(self._place_key("maximized"), self.isMaximized())
        self.settings.setValue(self._place_key(HEADER_KEY), self.table.horizontalHeader().saveState())
        for key, splitter in zip(SPLITTER_KEYS, self.splitters, strict=True):
            self.settings.setValue(self._place_key(key), splitter.saveState())

