"""A task file read, and then enqueued, by a child process: the window's import.

Parsing and validating 100,000 rows is seconds of Python. In a thread of the window's process it
competes for the GIL with the loop, and every call from Qt into Python (each cell a view paints,
each timer) waits for its turn: the loop lagged 100-400 ms however the work was cut up. A child
process has a GIL of its own.

Only what the preview shows comes back (counts, the first rows and errors): a pickled
100,000-task report takes ~0.8 s to unpickle, all of it holding the GIL. So the child that read
the file is also the one that enqueues it, one short transaction at a time.

Enqueuing goes in lockstep with the window's loop: after each step the child waits for the
window's go, which the loop sends once it has had a turn -- so the scheduler's writes find the
write lock free between steps instead of meeting the next one (on its own, the child made the
loop wait in SQLite's busy handler: import p99 98 ms against 36-50 ms in lockstep).

The protocol: pickled messages; the request, then at most one "enqueue" and the "next" after
each step, on the child's stdin; replies on its stdout. End of stdin ends a child that is not
enqueuing; one that is enqueuing goes on alone, pausing after each step as long as it took.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import pickle
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal, TypeVar

from mediaassist.core.budget import BatchEstimate, Budgeter, estimate_batch
from mediaassist.core.config import AppConfig
from mediaassist.core.errors import ImportFileError, MessageError, StorageFault
from mediaassist.core.importer import ImportReport, RowError, derive_missing_ids, new_batch_id, read_task_file
from mediaassist.core.messages import Message, msg
from mediaassist.core.secrets import redacted
from mediaassist.core.store import NewTask, Store

PREVIEW_ROWS = 200  # the good rows and the bad rows a preview shows: a preview, not a copy
# One step's CPU, and the fewest, first and most rows of a step: a fixed 500 rows cost ~15 ms
# on a 100k-task store and ~10x that once its pages are cold or the box is loaded.
STEP_BUDGET_S = 0.005
STEP_ROWS = (50, 100, 2000)
ENQUEUE = "enqueue"
NEXT_STEP = "next"  # the window's go for the next step, sent after its loop has had a turn
# Not ``-m``: run as __main__, the child's replies would unpickle as classes of __main__.
_CHILD_MAIN = "from mediaassist.core.import_process import main; raise SystemExit(main())"
# Where this mediaassist was imported from: the child imports the very same one.
_IMPORT_ROOT = str(Path(__file__).resolve().parents[2])
T = TypeVar("T")
R = TypeVar("R")
log = logging.getLogger("mediaassist.import")  # SecretFilter masks keys in its records

FailureKind = Literal["file", "store", "bug"]


@dataclass(frozen=True)
class ReadRequest:
    path: Path
    config: AppConfig
    store_location: Path | str  # the store the window uses: the stored ids are skipped
    default_model: str | None = None


@dataclass(frozen=True)
class ImportPreview:
    total_rows: int
    task_count: int
    error_count: int
    tasks: list[NewTask]  # the first PREVIEW_ROWS good rows
    errors: list[RowError]  # the first PREVIEW_ROWS bad rows
    warnings: list[Message]
    any_inputs: bool  # some good row names input files
    stored: int  # good rows the store already has: skipped, not run twice
    estimate: BatchEstimate | None = None  # what the good rows will probably cost (core.budget)


@dataclass(frozen=True)
class ImportedBatch:
    batch_id: str
    inserted: int
    skipped: int


@dataclass(frozen=True)
class Progress:
    inserted: int  # so far


@dataclass(frozen=True)
class Failure:
    """The child's reply for an ``ImportFailed`` (an exception with its own arguments does not
    survive pickling)."""

    kind: FailureKind
    text: Message
    detail: str = ""


class ImportFailed(MessageError):
    """Reading or enqueuing stopped. ``kind``: "file" (the file cannot be imported; the text,
    the importer's, names it), "store" (the store refused; its one-line fault) or "bug"
    (anything else: the text is its type and message)."""

    def __init__(self, kind: FailureKind, text: Message) -> None:
        super().__init__(text)
        self.kind = kind


# --- the window's side ------------------------------------------------------------------------

class ImportReading:
    """One child process reading one file: ``await preview()``, then ``await enqueue()`` or
    ``close()``. ``close`` ends a child that is still reading; one that is enqueuing finishes."""

    def __init__(self, request: ReadRequest) -> None:
        self._request = request
        # -P: not the current folder first on the child's path, where a folder named
        # "mediaassist" (an old checkout, say) would be imported instead.
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [_IMPORT_ROOT, os.environ.get("PYTHONPATH")])))
        self._child = subprocess.Popen([sys.executable, "-P", "-c", _CHILD_MAIN], stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, close_fds=True, env=env)
        assert self._child.stdin is not None and self._child.stdout is not None
        self._requests, self._replies = self._child.stdin, self._child.stdout
        self._enqueuing = False
        self._closed = False

    async def preview(self) -> ImportPreview:
        # In a thread: a config bigger than the pipe's buffer waits for the child to start reading.
        await asyncio.to_thread(self._send, self._request)
        return _expected(await self._reply(), ImportPreview)

    async def enqueue(self, on_progress: Callable[[int], object]) -> ImportedBatch:
        """Enqueue the read tasks as one batch; ``on_progress(inserted so far)`` after each step."""
        self._enqueuing = True
        self._send(ENQUEUE)
        try:
            while isinstance(reply := await self._reply(), Progress):
                on_progress(reply.inserted)
                await asyncio.sleep(0)  # the loop's turn (its own writes) before the next step
                self._send(NEXT_STEP)
        finally:
            self._enqueuing = False
            if self._closed:
                self._end()
        return _expected(reply, ImportedBatch)

    def close(self) -> None:
        """End the child, unless it is enqueuing: the operator asked for that batch, so it goes
        on alone, and ``enqueue`` ends it once it is done. Never waits."""
        self._closed = True
        with contextlib.suppress(OSError):
            self._requests.close()
        if not self._enqueuing:
            self._end()

    def _end(self) -> None:
        if self._child.poll() is None:
            self._child.kill()
        threading.Thread(target=self._reap, name="import-reaper", daemon=True).start()

    def _reap(self) -> None:
        self._child.wait()
        self._replies.close()  # after the child's end: a reader thread still waiting gets EOF first

    def _send(self, message: object) -> None:
        try:
            pickle.dump(message, self._requests)
            self._requests.flush()
        except (OSError, ValueError):  # ValueError: closed on our side
            pass  # the child has ended, or goes on alone: the next reply says how

    async def _reply(self) -> object:
        try:
            reply = await asyncio.to_thread(pickle.load, self._replies)
        except (EOFError, OSError, ValueError):  # ValueError: our side was closed
            code = await asyncio.to_thread(self._child.wait)
            raise ImportFailed("bug", msg("the import process ended early (exit code {code})", code=code)) from None
        except Exception as exc:  # a reply cut short or not ours
            log.exception("unreadable reply from the import process")
            raise ImportFailed("bug", msg("unreadable reply from the import process ({error}: {detail})",
                                          error=type(exc).__name__, detail=exc)) from None
        if isinstance(reply, Failure):
            if reply.detail:  # a bug in the child: its traceback, for whoever fixes it
                log.error("the import process failed:\n%s", reply.detail)
            raise ImportFailed(reply.kind, redacted(reply.text))  # the child knows no key: masked here
        return reply


def _expected(reply: object, kind: type[R]) -> R:
    if not isinstance(reply, kind):
        raise ImportFailed("bug", msg("unexpected reply from the import process: {reply}", reply=type(reply).__name__))
    return reply


# --- the child's side -------------------------------------------------------------------------

def in_budgeted_steps(items: Sequence[T], step: Callable[[Sequence[T]], object],
                      between: Callable[[float], object] = lambda _took: None) -> None:
    """``step`` over slices of ``items``, each sized from the CPU the last one took per item
    (thread time: waiting for a core on a loaded box is no cost of ours) so that a step stays
    near STEP_BUDGET_S; after each but the last, ``between(seconds the step took)``."""
    fewest, size, most = STEP_ROWS
    start = 0
    while start < len(items):
        chunk = items[start:start + size]
        began, began_cpu = time.perf_counter(), time.thread_time()
        step(chunk)
        spent = time.thread_time() - began_cpu
        start += len(chunk)
        per_item = spent / len(chunk)
        size = most if per_item <= 0 else max(fewest, min(most, int(STEP_BUDGET_S / per_item)))
        if start < len(items):
            between(time.perf_counter() - began)


def stored_count(store: Store, report: ImportReport) -> int:
    """How many of the report's tasks the store already has (one read: no loop waits on it here)."""
    ids = [task.task_id for task in report.tasks if task.task_id]
    return len(ids) - len(store.missing(ids))


def enqueue_in_steps(store: Store, report: ImportReport, on_progress: Callable[[int], object],
                     between: Callable[[float], object]) -> ImportedBatch:
    """The report's tasks as one batch with one creation time, a short transaction at a time:
    ``on_progress(inserted so far)`` after each, then ``between(seconds it took)``."""
    batch_id = new_batch_id(report.source)
    created_at = store.now()
    counts = [0, 0]

    def step(chunk: Sequence[NewTask]) -> None:
        inserted, skipped = store.enqueue(batch_id, chunk, created_at=created_at)
        counts[0] += len(inserted)
        counts[1] += len(skipped)
        on_progress(counts[0])

    in_budgeted_steps(report.tasks, step, between)
    return ImportedBatch(batch_id, counts[0], counts[1])


def preview_of(report: ImportReport, stored: int, estimate: BatchEstimate | None = None) -> ImportPreview:
    return ImportPreview(
        total_rows=report.total_rows, task_count=len(report.tasks), error_count=len(report.errors),
        tasks=report.tasks[:PREVIEW_ROWS], errors=report.errors[:PREVIEW_ROWS], warnings=report.warnings,
        any_inputs=any(task.inputs for task in report.tasks), stored=stored, estimate=estimate)


def _failure(exc: Exception) -> Failure:
    if isinstance(exc, ImportFileError):
        return Failure("file", exc.message)
    if isinstance(exc, StorageFault):  # a full disk, a read-only or unreachable store
        return Failure("store", exc.message)
    if isinstance(exc, OSError):  # the file, gone or changed since the importer read it
        return Failure("file", msg("{path}: cannot read the file ({reason})",
                                   path=getattr(exc, "filename", None) or "", reason=exc.strerror or exc))
    return Failure("bug", msg("the import process failed: {error}: {detail}", error=type(exc).__name__, detail=exc),
                   "".join(traceback.format_exception(exc)))


class _Window:
    """The child's link to the window. Once the window has closed its side, steps no longer wait
    for its go, and once it has gone, replies are dropped: an import under way still finishes
    (the operator asked for it)."""

    def __init__(self, requests: IO[bytes], replies: IO[bytes]) -> None:
        self.requests = requests
        self.replies: IO[bytes] | None = replies
        self.alone = False

    def receive(self) -> Any:
        """The window's next message; EOFError once it has gone."""
        return pickle.load(self.requests)

    def send(self, message: object) -> None:
        if self.replies is None:
            return
        try:
            pickle.dump(message, self.replies)
            self.replies.flush()
        except OSError:
            self.replies = None

    def wait_for_next_step(self, took: float) -> None:
        if not self.alone:
            try:
                if self.receive() == NEXT_STEP:
                    return
            except EOFError:
                self.alone = True
        time.sleep(took)  # alone: the lock is free as long as it was held


def serve(window: _Window) -> None:
    request: ReadRequest = window.receive()
    try:
        report = read_task_file(request.path, request.config, request.default_model)
        derive_missing_ids(report)
        store = Store(request.store_location)
    except Exception as exc:
        window.send(_failure(exc))
        return
    try:
        estimate = estimate_batch(Budgeter(store, request.config), report.tasks)
        window.send(preview_of(report, stored_count(store, report), estimate))
        try:
            command = window.receive()
        except EOFError:
            return  # closed without importing
        if command == ENQUEUE:
            window.send(enqueue_in_steps(store, report, lambda n: window.send(Progress(n)),
                                         window.wait_for_next_step))
    except Exception as exc:
        window.send(_failure(exc))
    finally:
        store.close()


CHILD_NICENESS = 10  # background work: on a 2-core box the window's threads come first


def main() -> int:
    if hasattr(os, "nice"):
        os.nice(CHILD_NICENESS)
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # a stray print must not corrupt the replies
    serve(_Window(sys.stdin.buffer, replies))
    return 0
