"""UI under load: 100,000 tasks in the table while ~100 tasks per second change state.

    QT_QPA_PLATFORM=offscreen .venv/bin/python -m bench.bench_ui [--tasks N] [--seconds S]

Runs the real window on the qasync loop with the real scheduler: a simulated poll lane with a
pool of 50 and 1 s service time gives ~50 starts + ~50 finishes per second. Prints event-loop lag
(p50/p99/max) idle (baseline, same run) and under load, the time to sort and to filter, to select
every row (Ctrl+A, with the toolbar/detail update it triggers), the loop lag while the whole
table is exported to XLSX and CSV, and -- with tasks running -- the loop lag and the time to
preview while a 10,000- and a 100,000-row CSV file are dropped, previewed and imported.

``--gallery N`` instead measures the gallery of N output images (1024×576, half PNG, half JPEG),
each recorded as an output with its row, model and prompt (as a run leaves them; one in ten
picked): time to the first screenful of thumbnails and to all of them (cold, then from the disk
cache), and the loop lag while they are made, against an idle baseline and against the table's own
first screen and scroll to the end over the same tasks, in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import cProfile
import gc
import os
import pstats
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("QT_API", "pyside6")

import qasync
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QApplication, QScrollBar

from mediaassist.core.options import DB_NAME, RuntimeOptions
from mediaassist.core.queries import TaskFilter
from mediaassist.core.store import NewTask, Store
from mediaassist.ui.app import run_window
from mediaassist.ui.main_window import MainWindow
from mediaassist.ui.task_model import COL

CONFIG = """
[[providers]]
name = "bench-poll"
kind = "poll"
type = "simulated"
max_polling_tasks = 50
min_duration_s = 1.0
max_duration_s = 1.0

[[models]]
name = "bench-video"
kind = "poll"
provider = "bench-poll"
"""
PROBE_S = 0.01
SETTLE_S = 3.0


async def lag_samples(seconds: float, samples: list[float] | None = None,
                      cpu: list[float] | None = None) -> list[float]:
    """How late a 10 ms sleep wakes up, in ms: the loop's responsiveness as the operator feels it.
    ``cpu``: the loop thread's own CPU over each sleep, in ms -- what the loop's work costs on
    any box, while the lag also counts waiting for a core on a loaded one."""
    samples = [] if samples is None else samples
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        start, start_cpu = time.perf_counter(), time.thread_time()
        await asyncio.sleep(PROBE_S)
        samples.append((time.perf_counter() - start - PROBE_S) * 1000)
        if cpu is not None:
            cpu.append((time.thread_time() - start_cpu) * 1000)
    return samples


class GcPauses:
    """The collector's pauses on the loop's thread (gc.callbacks), by generation: what a full
    collection over the app's objects costs is a loop stall no timer of ours shows."""

    def __init__(self) -> None:
        self.pauses: list[tuple[int, float]] = []
        self._started = 0.0
        gc.callbacks.append(self._on_gc)

    def _on_gc(self, phase: str, info: dict[str, int]) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.pauses.append((info["generation"], (time.perf_counter() - self._started) * 1000))

    def take(self) -> str:
        """The pauses since the last call, as "gen: count, max ms"."""
        pauses, self.pauses = self.pauses, []
        parts = []
        for gen in (0, 1, 2):
            times = [ms for g, ms in pauses if g == gen]
            if times:
                parts.append(f"gen{gen} {len(times)}x max {max(times):5.1f} ms")
        return ", ".join(parts) or "none"


class StallStacks:
    """What the loop's thread was doing whenever the loop was late by more than ``threshold_ms``:
    a watchdog thread samples the loop thread's stack while a 5 ms heartbeat is overdue, so
    a step that holds the loop shows up by where it is, not only by how long."""

    def __init__(self, threshold_ms: float) -> None:
        self.threshold_s = threshold_ms / 1000
        self.stacks: collections.Counter[str] = collections.Counter()
        self.slow_callbacks: collections.Counter[str] = collections.Counter()
        self._beat = time.perf_counter()
        self._loop_thread = threading.main_thread().ident
        self._loop_stat = Path(f"/proc/self/task/{threading.main_thread().native_id}/stat")
        self._beating = asyncio.ensure_future(self._heartbeat())
        threading.Thread(target=self._watch, daemon=True).start()

    async def _heartbeat(self) -> None:
        while True:
            self._beat = time.perf_counter()
            await asyncio.sleep(0.005)

    def _watch(self) -> None:
        while True:
            time.sleep(0.005)
            if time.perf_counter() - self._beat > self.threshold_s:
                frame = sys._current_frames().get(self._loop_thread)
                if frame is not None:
                    self.stacks[f"[{self._thread_state()}] {self._describe(frame)}"] += 1

    def _thread_state(self) -> str:
        """R: on a core or waiting for one; S: asleep (the GIL, a lock, I/O); D: disk wait."""
        try:
            return self._loop_stat.read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return "?"

    @staticmethod
    def _describe(frame) -> str:  # type: ignore[no-untyped-def]
        lines = []
        while frame is not None and len(lines) < 12:
            code = frame.f_code
            lines.append(f"{Path(code.co_filename).name}:{frame.f_lineno} {code.co_name}")
            frame = frame.f_back
        return " <- ".join(lines)

    def count_slow_callbacks(self) -> None:
        """Also note every asyncio callback that took more than the threshold of the loop
        thread's CPU, by the coroutine it ran."""
        slow = self.slow_callbacks
        run = asyncio.events.Handle._run
        threshold = self.threshold_s

        def timed_run(handle: asyncio.events.Handle) -> None:
            began = time.thread_time()
            run(handle)
            took = time.thread_time() - began
            if took > threshold:
                callback = getattr(handle._callback, "__self__", None)
                coro = callback.get_coro() if isinstance(callback, asyncio.Task) else None
                where = coro.cr_code.co_qualname if coro is not None and hasattr(coro, "cr_code") else repr(handle)
                slow[f"{where} ({took * 1000 // 20 * 20:.0f}+ ms)"] += 1

        asyncio.events.Handle._run = timed_run  # type: ignore[method-assign]

    def report(self) -> None:
        for where, count in self.slow_callbacks.most_common(10):
            print(f"  slow callback {count:4d}x  {where}")
        print(f"loop stalls over {self.threshold_s * 1000:.0f} ms, by stack (5 ms samples):")
        for stack, count in self.stacks.most_common(8):
            print(f"  {count:5d}  {stack}")
        self.stacks.clear()
        self.slow_callbacks.clear()

    def stop(self) -> None:
        self._beating.cancel()


def p99(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def summary(samples: list[float]) -> str:
    ordered = sorted(samples)
    return f"p50 {statistics.median(ordered):6.1f} ms  p99 {p99(ordered):6.1f} ms  max {ordered[-1]:6.1f} ms"


def timed(label: str, action) -> float:
    start = time.perf_counter()
    action()
    took = (time.perf_counter() - start) * 1000
    print(f"{label:<42} {took:8.1f} ms")
    return took


async def drive(window: MainWindow, seconds: float, export: bool = True, stalls_ms: float = 0,
                imports_only: bool = False, profile_imports: bool = False) -> None:
    window.resize(1400, 900)
    stalls = StallStacks(stalls_ms) if stalls_ms else None
    if stalls is not None:
        stalls.count_slow_callbacks()
    gc_pauses = GcPauses()
    window.lanes.toggle_pause_all()
    # The window's start-up (the table's first reads, the counts) is over before the idle
    # baseline: it measures the window at rest, not the window starting.
    await asyncio.sleep(SETTLE_S)
    if stalls is not None:
        stalls.stacks.clear()
        stalls.slow_callbacks.clear()
    idle_cpu: list[float] = []
    idle = await lag_samples(3.0, cpu=idle_cpu)
    idle_gc = gc_pauses.take()
    if stalls is not None:
        print("--- while the window was idle:")
        stalls.report()
    window.lanes.toggle_pause_all()
    done_before = window.rt.store.db.execute_sql("SELECT COUNT(*) FROM task WHERE state='success'").fetchone()[0]
    started = time.perf_counter()
    busy = await lag_samples(seconds)
    elapsed = time.perf_counter() - started
    busy_gc = gc_pauses.take()
    if stalls is not None:
        print("--- while tasks ran:")
        stalls.report()
    done = window.rt.store.db.execute_sql("SELECT COUNT(*) FROM task WHERE state='success'").fetchone()[0] - done_before
    print(f"rows in table: {window.model.rowCount():,}")
    print(f"state changes under load: {2 * done / elapsed:,.0f} per second ({done / elapsed:.0f} finished/s)")
    print(f"loop lag idle (baseline):  {summary(idle)}; loop CPU per tick {summary(idle_cpu)}")
    print(f"loop lag under load:       {summary(busy)}")
    print(f"p99 ratio load/idle: {p99(busy) / max(0.1, p99(idle)):.1f}x")
    print(f"GC pauses idle: {idle_gc}; under load: {busy_gc}; objects frozen at start-up: {gc.get_freeze_count():,}")
    if not imports_only:
        await table_steps(window, export)
    for rows in (10_000, 100_000):
        await import_lag(window, rows, p99(idle), p99(busy), profile_imports and rows == 100_000, stalls)
    if stalls is not None:
        stalls.stop()
    window.quit_requested.set_result(False)


async def table_steps(window: MainWindow, export: bool) -> None:
    """Sorting, filtering, select-all and the exports of the whole table, while tasks run."""
    model, feed = window.model, window.feed
    await sort_lag(window, "sort by state (reader thread, layoutChanged)", COL["state"], Qt.SortOrder.AscendingOrder)
    await sort_lag(window, "sort by duration descending", COL["duration"], Qt.SortOrder.DescendingOrder)
    await sort_lag(window, "back to queue order", -1, Qt.SortOrder.AscendingOrder)
    timed("filter state = success", lambda: feed.set_filter(TaskFilter(state="success")))
    timed("filter text 'prompt 9999' (LIKE over prompts)", lambda: feed.set_filter(TaskFilter(text="prompt 9999")))
    timed("clear filter", lambda: feed.set_filter(TaskFilter()))
    timed("stats snapshot (GROUP BY for panels)", window.feed.queries.snapshot)
    feed._last_sweep = 0.0
    timed("model sweep (updated_at scan)", feed.flush)
    model.sort(COL["state"], Qt.SortOrder.AscendingOrder)
    await feed.sorting
    timed("select all (sorted by state, + actions/repaint)", lambda: (window.table.selectAll(), window.repaint()))
    timed("stats refresh with all rows selected", window.refresh_stats)
    window.table.clearSelection()
    model.sort(-1)
    await feed.sorting
    print(f"counts period now {window.feed.counts_period_s * 1000:.0f} ms")
    if export:
        window.lanes.toggle_pause_all()  # a quiet loop: the lag below is the export's own
        with tempfile.TemporaryDirectory() as out:
            for name in ("all.xlsx", "all.csv"):
                await export_lag(window, Path(out) / name)
        window.lanes.toggle_pause_all()  # tasks run again while files are dropped


async def until(predicate, timeout: float = 600.0) -> None:
    deadline = time.perf_counter() + timeout
    while not predicate():
        if time.perf_counter() > deadline:
            raise TimeoutError("bench step did not finish")
        await asyncio.sleep(0.01)


async def scroll_to_end(bar: QScrollBar, loading: Callable[[], bool]) -> None:
    """Scroll ``bar`` to its end page by page, each screenful made (``loading()`` false) before the next."""
    while bar.value() < bar.maximum():
        bar.setValue(min(bar.maximum(), bar.value() + bar.pageStep()))
        await asyncio.sleep(0.02)
        while loading():
            await asyncio.sleep(0.005)


def profiled(profile: cProfile.Profile | None, label: str) -> None:
    if profile is not None:
        profile.disable()
        print(f"--- cProfile of the loop's thread: {label}")
        pstats.Stats(profile).sort_stats("tottime").print_stats(20)
        pstats.Stats(profile).sort_stats("cumulative").print_stats(30)


async def import_lag(window: MainWindow, rows: int, idle_p99: float, running_p99: float, profile: bool = False,
                     stalls: StallStacks | None = None) -> None:
    """Drop a CSV of ``rows`` new tasks while the poll lane runs: preview, then import
    (``profile``: cProfile the loop's thread in each; ``stalls``: where it was when late, in each)."""
    with tempfile.TemporaryDirectory() as out:
        path = Path(out) / f"import-{rows}.csv"
        path.write_text("task_id,model,prompt\n" + "".join(
            f"imp{rows}-{i:06d},bench-video,imported prompt {i}\n" for i in range(rows)), encoding="utf-8")
        samples: list[float] = []
        cpu: list[float] = []
        probe = asyncio.ensure_future(lag_samples(3600, samples, cpu))
        previewing = cProfile.Profile() if profile else None
        if previewing is not None:
            previewing.enable()
        started = time.perf_counter()
        window.open_files([path])
        await until(lambda: window.importer.dialog is not None and window.importer.dialog.preview is not None)
        preview_s = time.perf_counter() - started
        profiled(previewing, f"preview of {rows:,} rows")
        if stalls is not None:
            print(f"--- while {rows:,} rows were previewed:")
            stalls.report()
        preview_lag, preview_cpu = list(samples), list(cpu)
        dialog = window.importer.dialog
        importing_profile = cProfile.Profile() if profile else None
        if importing_profile is not None:
            importing_profile.enable()
        started = time.perf_counter()
        dialog.import_button.click()
        await until(lambda: len(window.jobs) == 0)
        import_s = time.perf_counter() - started
        profiled(importing_profile, f"import of {rows:,} rows")
        if stalls is not None:
            print(f"--- while {rows:,} rows were imported:")
            stalls.report()
        probe.cancel()
    importing, importing_cpu = samples[len(preview_lag):], cpu[len(preview_cpu):]
    # The files are dropped while tasks run: that phase (same run, no import) is the baseline that
    # shows what the import adds; idle is the window at rest.
    phases = ((f"preview {rows:,} rows: {preview_s:5.2f} s until shown;", preview_lag, preview_cpu),
              (f"import  {rows:,} rows: {import_s:5.2f} s in steps;    ", importing, importing_cpu))
    for label, lag, cpu_ticks in phases:
        print(f"{label} loop lag {summary(lag)}  p99/running {p99(lag) / max(0.1, running_p99):.1f}x"
              f"  p99/idle {p99(lag) / max(0.1, idle_p99):.1f}x; loop CPU per tick {summary(cpu_ticks)}")


async def sort_lag(window: MainWindow, label: str, column: int, order: Qt.SortOrder) -> None:
    """A header click while tasks run: time until the rows have moved, and the loop lag meanwhile."""
    samples: list[float] = []
    probe = asyncio.ensure_future(lag_samples(3600, samples))
    started = time.perf_counter()
    window.table.sortByColumn(column, order)
    await window.feed.sorting
    took = (time.perf_counter() - started) * 1000
    probe.cancel()
    print(f"{label:<46} {took:7.1f} ms to the new order; loop lag {summary(samples)}")


async def export_lag(window: MainWindow, path: Path) -> None:
    samples: list[float] = []
    probe = asyncio.ensure_future(lag_samples(3600, samples))
    started = time.perf_counter()
    written = await window.tasks.export_to(path)
    took = time.perf_counter() - started
    probe.cancel()
    print(f"export {path.suffix} {written:,} rows {took:5.1f} s; loop lag {summary(samples)}")


def make_images(folder: Path, n: int) -> list[str]:
    """Output-like pictures: a gradient with the number in it, so no two decode alike."""
    from PySide6.QtGui import QColor, QImage, QPainter

    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(n):
        image = QImage(1024, 576, QImage.Format.Format_RGB32)
        image.fill(QColor.fromHsv(i * 37 % 360, 160, 220))
        painter = QPainter(image)
        painter.drawText(image.rect(), Qt.AlignmentFlag.AlignCenter, f"output {i}")
        painter.end()
        path = folder / (f"{i:05d}.png" if i % 2 else f"{i:05d}.jpg")
        image.save(str(path), quality=90)  # PNG: light compression, as generators write them
        paths.append(str(path))
    return paths


def finish_with_images(store: Store, paths: list[str]) -> None:
    from mediaassist.core.outputs import describe_output

    store.enqueue("gallery", [NewTask(model="bench-video", model_kind="poll", route="poll:bench-poll",
                                      prompt=f"picture {i} of a long series of product shots", task_id=f"pic-{i:05d}",
                                      row=i + 2, group=f"row-{i + 2}") for i in range(len(paths))])
    for task, path in zip(store.claim("poll:bench-poll", "bench", limit=len(paths)), paths, strict=True):
        store.finish_success(task, None, [path], None, [describe_output(1, Path(path))])
        if task.source_row % 10 == 0:
            store.set_picked(task.task_id, 1, True)


async def gallery_round(window: MainWindow, label: str) -> None:
    """Open the gallery on a fresh model: first screenful, then scroll to the end, all made."""
    from mediaassist.ui.gallery import MediaModel

    gallery = window.gallery
    gallery.model.close()
    gallery.model = MediaModel(window.thumbnails, window.thumbnails.size, gallery)
    gallery.view.setModel(gallery.model)
    samples: list[float] = []
    probe = asyncio.ensure_future(lag_samples(3600, samples))
    started = time.perf_counter()
    await gallery.reload()
    listed = time.perf_counter() - started
    while gallery.model.made == 0 or gallery.model.loading:  # what the first screen asked for
        await asyncio.sleep(0.005)
    first_screen, on_screen = time.perf_counter() - started, gallery.model.made
    await scroll_to_end(gallery.view.verticalScrollBar(), lambda: gallery.model.loading)
    everything = time.perf_counter() - started
    probe.cancel()
    print(f"gallery {label}: {gallery.model.rowCount():,} images listed {listed * 1000:6.0f} ms, first screen "
          f"({on_screen} thumbnails) {first_screen * 1000:6.0f} ms, all ({gallery.model.made}) {everything:5.1f} s; "
          f"loop lag {summary(samples)}")


async def table_round(window: MainWindow) -> None:
    """The table over the same tasks: its first screen (with the output thumbnails it asks for),
    then scrolled to the end page by page -- the figures the gallery's are read against."""
    table, model = window.table, window.model
    samples: list[float] = []
    probe = asyncio.ensure_future(lag_samples(3600, samples))
    started = time.perf_counter()
    model.feed.refresh_membership()
    model.feed.flush()
    await until(lambda: model.rowCount() > 0)
    table.viewport().repaint()
    await until(lambda: not model.thumbnails.loading)
    first_screen = time.perf_counter() - started
    await scroll_to_end(table.verticalScrollBar(), lambda: model.thumbnails.loading)
    everything = time.perf_counter() - started
    probe.cancel()
    print(f"table: {model.rowCount():,} rows, first screen {first_screen * 1000:6.0f} ms, scrolled to the end "
          f"{everything:5.1f} s; loop lag {summary(samples)}")


async def drive_gallery(window: MainWindow) -> None:
    window.resize(1366, 768)
    window.lanes.toggle_pause_all()  # a quiet scheduler: the lag below is the gallery's own
    idle = await lag_samples(3.0)
    print(f"loop lag idle (baseline): {summary(idle)}")
    await table_round(window)
    window.tabs.setCurrentWidget(window.gallery)
    await gallery_round(window, "cold cache")
    await gallery_round(window, "disk cache")
    window.quit_requested.set_result(False)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=100_000)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--no-export", action="store_true", help="skip the XLSX/CSV export step")
    parser.add_argument("--gallery", type=int, metavar="N", help="measure the gallery of N images instead")
    parser.add_argument("--stalls", type=float, metavar="MS", default=0,
                        help="print where the loop's thread was whenever the loop was MS late")
    parser.add_argument("--profile", action="store_true",
                        help="cProfile the loop's thread while the 100,000-row file is previewed and imported")
    parser.add_argument("--imports-only", action="store_true",
                        help="skip sorting, filtering and exports: only the previews and imports")
    args = parser.parse_args()
    if args.gallery:
        return gallery_main(args.gallery)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "config.toml").write_text(CONFIG)
        started = time.perf_counter()
        store = Store(root / "data" / DB_NAME)
        store.enqueue("bench", [NewTask(model="bench-video", model_kind="poll", route="poll:bench-poll",
                                        prompt=f"prompt {i}", task_id=f"bench-{i:06d}")
                                for i in range(args.tasks)])
        store.close()
        print(f"enqueued {args.tasks:,} tasks in {time.perf_counter() - started:.1f} s")
        app = QApplication.instance() or QApplication([])
        settings = QSettings(str(root / "ui.ini"), QSettings.Format.IniFormat)
        options = RuntimeOptions(config_path=root / "config.toml", data_dir=root / "data")
        runs: list[asyncio.Future[None]] = []

        def on_window(window: MainWindow) -> None:
            runs.append(asyncio.ensure_future(drive(window, args.seconds, export=not args.no_export,
                                                    stalls_ms=args.stalls, imports_only=args.imports_only,
                                                    profile_imports=args.profile)))

        started = time.perf_counter()
        with asyncio.Runner(loop_factory=lambda: qasync.QEventLoop(app)) as runner:
            runner.run(run_window([], options, settings, use_tray=False, on_window=on_window))
        runs[0].result()
    return 0


def gallery_main(n: int) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "config.toml").write_text(CONFIG)
        app = QApplication.instance() or QApplication([])
        started = time.perf_counter()
        store = Store(root / "data" / DB_NAME)
        finish_with_images(store, make_images(root / "images", n))
        store.close()
        print(f"made {n:,} images and their tasks in {time.perf_counter() - started:.1f} s")
        settings = QSettings(str(root / "ui.ini"), QSettings.Format.IniFormat)
        options = RuntimeOptions(config_path=root / "config.toml", data_dir=root / "data")
        runs: list[asyncio.Future[None]] = []
        with asyncio.Runner(loop_factory=lambda: qasync.QEventLoop(app)) as runner:
            runner.run(run_window([], options, settings, use_tray=False,
                                  on_window=lambda w: runs.append(asyncio.ensure_future(drive_gallery(w)))))
        runs[0].result()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
