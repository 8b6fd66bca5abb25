"""``mediaassist [--demo] [FILE...]``: the desktop app on a qasync loop, scheduler on the same loop.

The first thing on screen is the start window (the app's name and a busy bar): it paints before
the store, the window's own modules, the providers, the browsers and the demo servers are imported
or started, so a start that waits for a browser or a remote service shows at once that it is coming.
"""

from __future__ import annotations

import faulthandler
import logging
import os
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

os.environ.setdefault("QT_API", "pyside6")  # qasync picks its binding from this (qasync #23)

import qasync
from PySide6.QtCore import QCoreApplication, QEventLoop, QSettings, Qt, QTimer
from PySide6.QtGui import QIcon, QPaintEvent
from PySide6.QtWidgets import QApplication, QLabel, QProgressBar, QVBoxLayout, QWidget

from mediaassist.core.options import RuntimeOptions
from mediaassist.core.paths import RESOURCES, is_demo_dir
from mediaassist.core.paths import data_dir as resolve_data_dir
from mediaassist.ui.config_problems import options_after_config_problems
from mediaassist.ui.i18n import Translations
from mediaassist.ui.single_instance import SingleInstance, server_name

if TYPE_CHECKING:
    import asyncio

log = logging.getLogger("mediaassist.ui")
EXIT_INTERRUPTED = 130  # the shell's code for SIGINT
EXIT_BAD_CONFIG = 2  # the CLI's code for bad input or config

DEMO_SETTINGS = "ui.ini"
ICON_PATH = RESOURCES / "icons" / "mediaassist.png"
# bench/bench_startup.py: print "first paint" once the start window is on screen, and quit there.
STARTUP_PROBE = "MEDIAASSIST_STARTUP_PROBE"
# The window reads in threads (the table's keys, the counts, exports). A thread doing Python
# work keeps the GIL for up to the switch interval (5 ms by default) each time the loop's thread
# asks for it back -- after every SQLite call and stat() -- so a scheduler pass of ~20 such calls
# waited ~100 ms while a 100k-row sort was read. Handing the GIL over sooner bounds that wait:
# 0.5 ms took that pass to ~17 ms; 0.1 ms roughly halved the lag while a 100,000-row file was
# previewed in a thread (p99 249-420 -> 103-174 ms in bench_ui.py A/B runs; docs/performance.md), before
# import files went to a child process of their own.
GIL_SWITCH_INTERVAL_S = 0.0001


def ui_settings(options: RuntimeOptions) -> QSettings:
    """The operator's window settings; a demo window keeps its own inside the demo data dir, so
    ``--demo`` never writes the real ones (its data dir, language, limits)."""
    if options.demo:
        assert options.data_dir is not None  # the CLI always gives the demo its own folder
        return QSettings(str(Path(options.data_dir) / DEMO_SETTINGS), QSettings.Format.IniFormat)
    return QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, "mediaassist", "mediaassist-ui")


def saved_data_dir(settings: QSettings) -> Path | None:
    """The data dir chosen in Settings; a demo folder saved there by an older version is ignored."""
    saved = str(settings.value("app/data_dir") or "")
    if not saved:
        return None
    if is_demo_dir(saved):
        log.warning("saved data dir %s is a demo folder; using the default data dir", saved)
        return None
    return Path(saved)


async def run_window(files: list[Path], options: RuntimeOptions, settings: QSettings,
                     instance: SingleInstance | None = None, use_tray: bool = True,
                     on_window: object = None, start: QWidget | None = None) -> int:
    """The app's life: runtime up, window until a quit is decided, then an orderly stop.

    ``start``: the start window already on screen, closed once the window shows.
    ``on_window(window)`` is called once the window shows (tests and the screenshot script)."""
    start = start or StartWindow.painted_on_screen()
    try:
        return await _session(files, options, settings, instance, use_tray, on_window, start)
    finally:
        start.close()  # also when the runtime could not start (a config error, a store refused)


async def _session(files: list[Path], options: RuntimeOptions, settings: QSettings, instance: SingleInstance | None,
                   use_tray: bool, on_window: object, start: QWidget) -> int:
    # Only now: the window's modules and the store; the runtime then builds the providers
    # (browsers, HTTP clients) and, with --demo, starts the demo servers.
    from mediaassist.runtime import Runtime
    from mediaassist.ui.main_window import MainWindow
    from mediaassist.ui.settings import apply_saved

    sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)
    translations = Translations()
    async with Runtime(options) as rt:
        # The window's own choice (settings dialog) wins; else the config's [app] language.
        translations.apply(str(settings.value("app/language", rt.config.app.language)))
        for refused in apply_saved(settings, rt):
            log.warning("saved setting ignored: %s", refused)
        await rt.start()
        window = MainWindow(rt, settings, translations, use_tray=use_tray)
        decided = window.quit_requested
        # Before "window open" is logged: a signal sent on reading it must find our handlers
        # (it came between the log line and the handlers under load: a KeyboardInterrupt instead).
        signals = QuitOnSignals(decided)
        try:
            if instance is not None:
                instance.files_received.connect(window.open_files)
                instance.login_requested.connect(window.lanes.log_in)  # `accounts login` from a shell
            window.show_in_place()
            start.close()
            log.info("window open on %s", rt.data_dir)
            if files:
                window.open_files(files)
            if callable(on_window):
                on_window(window)
            await decided
        finally:
            signals.close()
            await window.finish_background()  # an export finishes, a login browser closes
            window.shutdown()
            # Running tasks end as canceled, or go back to pending to resume next start; either
            # way the rows are written and the providers (browsers) are closed before we return.
            stop_running = decided.done() and not decided.cancelled() and decided.result()
            await rt.stop(cancel_running=stop_running)
            settings.sync()
            window.close_for_good()
    return 0 if signals.received is None else EXIT_INTERRUPTED


class StartWindow(QWidget):
    """The app's name and a busy bar while the store opens and the lanes start; ``painted``
    resolves once it is on screen. No text to translate: the language is the config's, not read yet."""

    def __init__(self) -> None:
        super().__init__()
        self.setWindowTitle("mediaassist")
        self.setWindowIcon(QIcon(str(ICON_PATH)))
        name = QLabel("mediaassist")
        font = name.font()
        font.setPointSizeF(font.pointSizeF() * 2)
        name.setFont(font)
        name.setAlignment(Qt.AlignmentFlag.AlignCenter)
        busy = QProgressBar()
        busy.setRange(0, 0)  # nothing to count: it only says "working"
        busy.setTextVisible(False)
        layout = QVBoxLayout(self)
        layout.addStretch(1)
        layout.addWidget(name)
        layout.addWidget(busy)
        layout.addStretch(1)
        self.resize(420, 200)
        self.painted = False

    @classmethod
    def painted_on_screen(cls) -> StartWindow:
        """Shown, and back once Qt has painted it (its events run here: no asyncio loop needed)."""
        start = cls()
        start.show()
        while not start.painted:
            QApplication.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents)
        return start

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        self.painted = True


class QuitOnSignals:
    """SIGINT (Ctrl-C in the starting terminal) and SIGTERM (logout, ``kill``) quit like the
    window's Quit with "leave running tasks queued": an orderly stop, every row written.

    Python runs signal handlers only between bytecodes, and Qt's loop may idle in C++ for long,
    so a timer lets the interpreter in. A signal ignored at start (nohup, a background job of a
    script) stays ignored."""

    def __init__(self, decided: asyncio.Future[bool]) -> None:
        self.received: int | None = None
        self._decided = decided
        import asyncio

        self._loop = asyncio.get_running_loop()
        self._previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
        for sig, handler in self._previous.items():
            if handler is not signal.SIG_IGN:
                signal.signal(sig, self._on_signal)
        self._pump = QTimer()
        self._pump.timeout.connect(lambda: None)
        self._pump.start(250)

    def _on_signal(self, signum: int, _frame: object) -> None:
        self._loop.call_soon_threadsafe(self._quit, signum)

    def _quit(self, signum: int) -> None:
        if self.received is None:
            self.received = signum
            print(f"mediaassist: {signal.Signals(signum).name}: quitting; running tasks go back to the queue",
                  file=sys.stderr)
        if not self._decided.done():
            self._decided.set_result(False)

    def close(self) -> None:
        self._pump.stop()
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)


def hand_login_to_window(options: RuntimeOptions, account: str, timeout_s: float,
                         keep_login: bool = False) -> tuple[bool, str] | None:
    """``mediaassist accounts login`` while the window runs on the same data dir: the window logs
    the account in inside its lane's browser (which holds the profile) and answers here; None
    when no window runs there."""
    QCoreApplication.instance() or QCoreApplication(sys.argv[:1])
    data_dir = options.data_dir if options.data_dir is not None else saved_data_dir(ui_settings(options))
    window = SingleInstance(server_name(resolve_data_dir(data_dir), demo=options.demo))
    return window.request_login(account, timeout_s, keep_login)


def run_gui(files: list[Path], options: RuntimeOptions) -> int:
    """Entry point for ``mediaassist`` with no subcommand."""
    faulthandler.enable()
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)  # instance() is typed QCoreApplication; this process only makes widget apps
    app.setApplicationName("mediaassist")
    app.setOrganizationName("mediaassist")
    app.setQuitOnLastWindowClosed(False)
    # A config the window cannot start with is shown in a dialog (in the operator's language).
    Translations().apply(str(ui_settings(options).value("app/language", "auto")))
    chosen = options_after_config_problems(options)
    if chosen is None:
        return EXIT_BAD_CONFIG
    options = chosen
    settings = ui_settings(options)
    if options.data_dir is None:
        options.data_dir = saved_data_dir(settings)
    instance = SingleInstance(server_name(resolve_data_dir(options.data_dir), demo=options.demo))
    if instance.claim(files):
        print("mediaassist is already running; the files were handed to its window.")
        return 0
    start = StartWindow.painted_on_screen()
    if os.environ.get(STARTUP_PROBE):
        print("first paint", flush=True)
        return 0
    import asyncio  # the loop only once the start window shows


    try:
        with asyncio.Runner(loop_factory=lambda: qasync.QEventLoop(app)) as runner:
            return runner.run(run_window(files, options, settings, instance, start=start))
    except KeyboardInterrupt:
        # Ctrl-C before the window's own handlers are in place: the runner has cancelled
        # run_window, whose finally blocks stopped the scheduler and wrote every row.
        print("mediaassist: interrupted; running tasks go back to the queue", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        instance.close()
