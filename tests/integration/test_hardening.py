"""Issue 9 item 8, outside the importer: exports that carry no live formulas, keys echoed in
answers, a --data-dir that is not ours, and --encoding on the command line."""

from __future__ import annotations

import asyncio
import csv
import json
import os
import stat
import uuid
from pathlib import Path

import pytest
from openpyxl import load_workbook

from mediaassist.core.errors import ErrorKind
from mediaassist.core.export import csv_value
from mediaassist.core.options import DB_NAME
from mediaassist.core.paths import data_dir, make_private_dir
from mediaassist.core.queries import Queries
from mediaassist.core.secrets import register_secret
from mediaassist.core.store import NewTask, Store
from mediaassist.ui.export import export_tasks
from tests.helpers import cli, write_config

HOSTILE = ["=HYPERLINK(\"http://evil.example\",\"click\")", "+1+2", "-3-4", "@SUM(A1:A2)", "\tTAB=1",
           "bell\x07 and nul\x00 and esc\x1b", "plain = fine", "多行\n文本"]


def _export_hostile_results(data_dir: Path, name: str) -> Path:
    """Tasks whose prompts and answers are the hostile strings, exported to ``name``."""
    store = Store(data_dir / "s.sqlite3")
    try:
        ids = [f"h{i}" for i in range(len(HOSTILE))]
        tasks = [NewTask(model="writer", model_kind="api", route="api:sim", prompt=text.replace("\x00", ""),
                         task_id=task_id) for task_id, text in zip(ids, HOSTILE, strict=True)]
        store.enqueue("b", tasks)
        for task in store.claim("api:sim", "me", limit=len(tasks)):
            store.finish_success(task, HOSTILE[int(task.task_id[1:])], [])
        out = data_dir / name
        assert asyncio.run(export_tasks(Queries(store), ids, out)) == len(tasks)
    finally:
        store.close()
    return out


@pytest.mark.parametrize("name", ["cancelled.xlsx", "cancelled.csv"])
def test_a_cancelled_export_stops_its_worker_and_leaves_no_file(data_dir: Path, name: str) -> None:
    """The export runs in a worker thread: a cancelled await (the window quitting) must still
    stop it and leave no partial file behind."""
    store = Store(data_dir / "s.sqlite3")
    try:
        ids = [f"t{i:05d}" for i in range(3000)]
        store.enqueue("b", [NewTask(model="writer", model_kind="api", route="api:sim", prompt=f"p {i}",
                                    task_id=task_id) for i, task_id in enumerate(ids)])
        out = data_dir / name

        async def cancel_it() -> None:
            export = asyncio.ensure_future(export_tasks(Queries(store), ids, out))
            await asyncio.sleep(0)  # it has started: the worker has its first chunk
            export.cancel()
            with pytest.raises(asyncio.CancelledError):
                await export

        asyncio.run(cancel_it())
        assert not out.exists()
        assert asyncio.run(export_tasks(Queries(store), ids, out)) == 3000  # and a whole one still works
    finally:
        store.close()


def test_csv_export_writes_formula_starts_as_text_and_survives_control_characters(data_dir: Path) -> None:
    with _export_hostile_results(data_dir, "export.csv").open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.DictReader(handle))
    results = [row["result_text"] for row in rows]
    assert results[:5] == ["'" + text for text in HOSTILE[:5]]
    assert results[5] == "bell\ufffd and nul\ufffd and esc\ufffd"
    assert results[6:] == ["plain = fine", "多行\n文本"]
    assert not any(cell.startswith(("=", "+", "-", "@")) for row in rows for cell in row.values())


def test_xlsx_export_stores_strings_never_formulas(data_dir: Path) -> None:
    # not data_only: a formula would show as one here
    sheet = load_workbook(_export_hostile_results(data_dir, "export.xlsx")).active
    header = [c.value for c in sheet[1]]
    column = header.index("result_text")
    cells = [row[column] for row in sheet.iter_rows(min_row=2)]
    assert all(cell.data_type == "s" for cell in cells)
    assert [cell.value for cell in cells] == [HOSTILE[0], "+1+2", "-3-4", "@SUM(A1:A2)", "\tTAB=1",
                                              "bell\ufffd and nul\ufffd and esc\ufffd", "plain = fine", "多行\n文本"]


def test_csv_values_that_are_not_text_are_left_alone() -> None:
    assert (csv_value(-1), csv_value(2.5), csv_value(None), csv_value("")) == (-1, 2.5, None, "")


def test_a_key_echoed_in_an_answer_is_redacted_before_it_is_stored(store: Store, tmp_path: Path) -> None:
    key = f"sk-echo-{uuid.uuid4().hex}"
    register_secret(key)
    store.enqueue("b", [NewTask(model="writer", model_kind="api", route="api:sim", task_id="e1")])
    (task,) = store.claim("api:sim", "me")
    assert store.finish_success(task, f"Sure! Your key is {key}, keep it safe.", [])
    result = store.result("e1")
    assert result is not None and result.text == "Sure! Your key is ***, keep it safe."
    store.enqueue("b", [NewTask(model="writer", model_kind="api", route="api:sim", task_id="e2")])
    (task,) = store.claim("api:sim", "me")
    store.finish_failure(task, ErrorKind.PROVIDER, f"echo {key}", retry_at=None)
    failed = store.get("e2")
    assert failed is not None and key not in (failed.error or "")


# --- --data-dir never re-modes a folder it did not make --------------------------------------

def test_an_existing_data_dir_keeps_its_mode(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)  # like /tmp
    assert data_dir(shared) == shared.resolve()
    assert stat.S_IMODE(shared.stat().st_mode) == 0o1777


def test_a_data_dir_we_create_is_private_and_its_parents_are_not_touched(tmp_path: Path) -> None:
    parent = tmp_path / "parent"
    parent.mkdir(mode=0o755)
    parent.chmod(0o755)
    made = data_dir(parent / "new" / "data")
    assert stat.S_IMODE(made.stat().st_mode) == 0o700
    assert stat.S_IMODE(parent.stat().st_mode) == 0o755
    again = make_private_dir(made)  # a second start changes nothing
    assert again == made and stat.S_IMODE(made.stat().st_mode) == 0o700
    (tmp_path / "file").write_text("x")
    with pytest.raises(FileExistsError):
        make_private_dir(tmp_path / "file")


def test_cli_run_on_an_existing_shared_folder_leaves_its_mode(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    config = write_config(tmp_path / "c.toml")
    tasks = tmp_path / "t.txt"
    tasks.write_text("hello\n", encoding="utf-8")
    proc = cli("run", str(tasks), "--model", "writer", "--config", str(config), "--data-dir", str(shared),
               "--speed", "200")
    assert proc.returncode == 0, proc.stderr
    assert stat.S_IMODE(shared.stat().st_mode) == 0o1777


# --- --encoding on the command line ----------------------------------------------------------

def test_cli_run_refuses_an_ambiguous_legacy_file_and_reads_it_with_encoding(tmp_path: Path) -> None:
    config = write_config(tmp_path / "c.toml")
    tasks = tmp_path / "kr.csv"
    tasks.write_bytes("model,prompt\nwriter,안녕하세요\n".encode("euc_kr"))
    common = ("--config", str(config), "--data-dir", str(tmp_path / "d"), "--speed", "200")
    refused = cli("run", str(tasks), *common)
    assert refused.returncode == 2
    assert "could be GB18030 or EUC-KR; name the encoding with --encoding" in refused.stderr
    assert "Traceback" not in refused.stderr
    read = cli("run", str(tasks), "--encoding", "euc_kr", "--json", *common)
    assert read.returncode == 0, read.stderr
    assert json.loads(read.stdout)["success"] == 1
    store = Store(tmp_path / "d" / DB_NAME)
    try:
        assert [t.prompt for t in store.tasks()] == ["안녕하세요"]
    finally:
        store.close()
    bad = cli("run", str(tasks), "--encoding", "nope", *common)
    assert bad.returncode == 2 and "unknown encoding 'nope'" in bad.stderr


def test_os_umask_does_not_widen_a_private_dir(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        made = make_private_dir(tmp_path / "wide-open-umask")
    finally:
        os.umask(old)
    assert stat.S_IMODE(made.stat().st_mode) == 0o700
