"""The window's import: a real child process reads the file, previews it and enqueues it into a
real store, in lockstep with the loop; every way it can stop is an ``ImportFailed``."""

from __future__ import annotations

import asyncio
import io
import logging
import pickle
import time
from pathlib import Path

import pytest

from mediaassist.core import import_process
from mediaassist.core.import_process import (
    ENQUEUE,
    PREVIEW_ROWS,
    STEP_ROWS,
    Failure,
    ImportedBatch,
    ImportFailed,
    ImportPreview,
    ImportReading,
    ReadRequest,
)
from mediaassist.core.secrets import register_secret
from mediaassist.core.store import Store
from tests.harness import wait_until
from tests.helpers import import_children, sim_config, write_csv

FEWEST, FIRST, MOST = STEP_ROWS


def reading(path: Path, store_location: str | Path, default_model: str | None = None) -> ImportReading:
    return ImportReading(ReadRequest(path, sim_config(), store_location, default_model))


def rows_csv(path: Path, n: int, bad_every: int = 0) -> Path:
    return write_csv(path, [{"task_id": f"r{i:06d}", "prompt": f"p {i}",
                             "model": "nosuchmodel" if bad_every and i % bad_every == 0 else "writer"}
                            for i in range(n)])


@pytest.mark.asyncio
async def test_a_file_is_previewed_then_enqueued_as_one_batch_and_a_second_reading_skips_it(
        tmp_path: Path, store_location: str) -> None:
    path = rows_csv(tmp_path / "many.csv", 1234, bad_every=100)
    first = reading(path, store_location)
    preview = await first.preview()
    assert (preview.total_rows, preview.task_count, preview.error_count, preview.stored) == (1234, 1221, 13, 0)
    assert len(preview.tasks) == PREVIEW_ROWS and preview.tasks[0].task_id == "r000001"
    assert preview.errors[0].row == 2 and "nosuchmodel" in preview.errors[0].reason  # the header is row 1
    progress: list[int] = []
    batch = await first.enqueue(progress.append)
    first.close()
    assert (batch.inserted, batch.skipped) == (1221, 0)
    assert progress[0] == FIRST and progress[-1] == 1221 and progress == sorted(progress)
    store = Store(store_location)
    tasks = store.tasks()
    assert len(tasks) == 1221 and {t.batch_id for t in tasks} == {batch.batch_id}
    assert len({t.created_at for t in tasks}) == 1  # the window groups a batch by its creation time
    again = reading(path, store_location)
    assert (await again.preview()).stored == 1221
    second = await again.enqueue(lambda _n: None)
    again.close()
    assert (second.inserted, second.skipped) == (0, 1221)
    assert len(store.tasks()) == 1221
    store.close()


@pytest.mark.asyncio
async def test_each_step_waits_for_the_windows_go(tmp_path: Path, store_location: str) -> None:
    """While the window has not answered a step, the child writes nothing more: the loop's own
    writes meet a free lock between steps."""
    path = rows_csv(tmp_path / "steps.csv", FIRST + 3 * FEWEST)
    child = reading(path, store_location)
    await child.preview()
    store = Store(store_location)
    seen: list[tuple[int, int]] = []

    def on_progress(inserted: int) -> None:
        if len(seen) < 2:
            time.sleep(0.3)  # the loop busy for a while: the child must not run ahead
            seen.append((inserted, sum(store.counts().values())))

    await child.enqueue(on_progress)
    child.close()
    assert seen and all(reported == stored for reported, stored in seen)
    assert sum(store.counts().values()) == FIRST + 3 * FEWEST
    store.close()


@pytest.mark.sqlite_only
@pytest.mark.asyncio
async def test_closing_a_reading_ends_its_child_and_an_enqueuing_child_finishes_alone(
        tmp_path: Path, store_location: str) -> None:
    big = rows_csv(tmp_path / "big.csv", 200_000)
    abandoned = reading(big, store_location)
    preview = asyncio.ensure_future(abandoned.preview())
    await wait_until(lambda: bool(import_children()))
    abandoned.close()  # the operator changed the default model, or closed the dialog
    with pytest.raises(ImportFailed, match="ended early"):
        await preview
    await wait_until(lambda: not import_children())

    path = rows_csv(tmp_path / "some.csv", 5000)
    child = reading(path, store_location)
    await child.preview()
    # Closed at the first step (the window quits mid-import): the child goes on without the
    # window's go and still reports, and it ends once the batch is whole.
    batch = await child.enqueue(lambda _inserted: child.close())
    assert (batch.inserted, batch.skipped) == (5000, 0)
    await wait_until(lambda: not import_children())
    store = Store(store_location)
    assert sum(store.counts().values()) == 5000
    store.close()


@pytest.mark.sqlite_only
@pytest.mark.asyncio
async def test_a_child_killed_mid_read_is_an_error_not_a_hang(tmp_path: Path, store_location: str) -> None:
    child = reading(rows_csv(tmp_path / "big.csv", 200_000), store_location)
    preview = asyncio.ensure_future(child.preview())
    await wait_until(lambda: bool(import_children()))
    for process in import_children():
        process.kill()
    with pytest.raises(ImportFailed, match=r"ended early \(exit code -9\)") as failed:
        await preview
    assert failed.value.kind == "bug"
    child.close()


@pytest.mark.sqlite_only
@pytest.mark.asyncio
async def test_files_and_stores_that_cannot_be_used_say_why(tmp_path: Path, store_location: str) -> None:
    register_secret("sk-import-secret-1234")
    old = tmp_path / "sk-import-secret-1234.xls"
    old.write_bytes(b"\xd0\xcf\x11\xe0")
    folder = tmp_path / "folder.csv"
    folder.mkdir()
    not_a_store = tmp_path / "garbage.sqlite3"
    not_a_store.write_bytes(b"this is no database" * 100)
    good = rows_csv(tmp_path / "good.csv", 3)
    cases = [(old, store_location, "file", "old .xls workbooks"),
             (folder, store_location, "file", "cannot read the file (Is a directory)"),
             (good, not_a_store, "store", "garbage.sqlite3")]
    for path, store, kind, words in cases:
        child = reading(path, store)
        with pytest.raises(ImportFailed) as failed:
            await child.preview()
        child.close()
        assert failed.value.kind == kind and words in str(failed.value)
        assert "sk-import-secret-1234" not in str(failed.value)  # the child knows no key: masked here


@pytest.mark.sqlite_only
def test_a_reader_bug_is_reported_with_its_traceback(tmp_path: Path, store_location: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    def crash(*_args: object) -> None:
        raise KeyError("column lookup went wrong")

    monkeypatch.setattr(import_process, "read_task_file", crash)
    requests = io.BytesIO(pickle.dumps(ReadRequest(tmp_path / "x.csv", sim_config(), store_location)))
    replies = io.BytesIO()
    import_process.serve(import_process._Window(requests, replies))
    replies.seek(0)
    failure = pickle.load(replies)
    assert isinstance(failure, Failure) and failure.kind == "bug"
    assert str(failure.text) == "the import process failed: KeyError: 'column lookup went wrong'"
    assert "in crash" in failure.detail


@pytest.mark.sqlite_only
def test_a_closed_window_means_no_import(tmp_path: Path, store_location: str) -> None:
    """Read, previewed, then the window's side ends without "enqueue": nothing is written."""
    requests = io.BytesIO(pickle.dumps(ReadRequest(rows_csv(tmp_path / "a.csv", 10), sim_config(), store_location)))
    replies = io.BytesIO()
    import_process.serve(import_process._Window(requests, replies))
    replies.seek(0)
    assert isinstance(pickle.load(replies), ImportPreview)
    store = Store(store_location)
    assert sum(store.counts().values()) == 0
    store.close()
    requests = io.BytesIO(pickle.dumps(ReadRequest(tmp_path / "a.csv", sim_config(), store_location))
                          + pickle.dumps(ENQUEUE))
    replies = io.BytesIO()
    import_process.serve(import_process._Window(requests, replies))  # the window gone after "enqueue"
    replies.seek(0)
    assert isinstance(pickle.load(replies), ImportPreview)
    while not isinstance(reply := pickle.load(replies), ImportedBatch):
        pass
    assert reply.inserted == 10


@pytest.mark.sqlite_only
@pytest.mark.asyncio
async def test_the_child_imports_this_mediaassist_not_a_folder_of_that_name_where_the_window_started(
        tmp_path: Path, store_location: str, monkeypatch: pytest.MonkeyPatch) -> None:
    decoy = tmp_path / "started-here" / "mediaassist"
    decoy.mkdir(parents=True)
    (decoy / "__init__.py").write_text("raise ImportError('an old checkout, not this program')\n")
    monkeypatch.chdir(decoy.parent)
    child = reading(rows_csv(tmp_path / "a.csv", 3), store_location)
    assert (await child.preview()).task_count == 3
    child.close()


@pytest.mark.sqlite_only
@pytest.mark.asyncio
async def test_a_bug_in_the_child_is_an_error_here_with_its_traceback_in_the_log(
        tmp_path: Path, store_location: str, caplog: pytest.LogCaptureFixture) -> None:
    child = ImportReading(ReadRequest(rows_csv(tmp_path / "a.csv", 3), None, store_location))  # type: ignore[arg-type]
    with caplog.at_level(logging.ERROR, logger="mediaassist.import"), pytest.raises(ImportFailed) as failed:
        await child.preview()
    child.close()
    assert failed.value.kind == "bug" and str(failed.value).startswith("the import process failed: AttributeError: ")
    assert "the import process failed" in caplog.text and "Traceback" in caplog.text
