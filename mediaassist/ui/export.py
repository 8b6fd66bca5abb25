"""Export tasks with their results to CSV (Excel-friendly UTF-8 with BOM) or XLSX.

Every text field goes through ``redact`` so no registered API key can leave in a file; the task's
params are not exported at all (they may carry provider-specific values nobody asked for).
"""

from __future__ import annotations

import csv
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from mediaassist.core.export import csv_row, xlsx_row
from mediaassist.core.queries import Queries, TaskMoney, chunks
from mediaassist.core.secrets import redact
from mediaassist.core.store import Spend, iso

HEADER = ("task_id", "batch_id", "model", "lane", "state", "attempt", "error_kind", "error",
          "created_at", "started_at", "finished_at", "prompt", "result_text", "result_files",
          # money: exact decimals as text, one per currency ("; " between), never summed across them
          "cost", "cost_currency", "cost_source", "estimate", "estimate_currency")
CHUNK = 100  # rows read per statement


class ExportStopped(Exception):
    """The export was cancelled (the window quit, the job was stopped) between two chunks."""


def _rows(queries: Queries, task_ids: Sequence[str], stop: threading.Event) -> Iterator[list[list[Any]]]:
    for ids in chunks(task_ids, CHUNK):
        if stop.is_set():
            raise ExportStopped("export stopped")
        spend = queries.task_spend(ids)
        yield [[task.task_id, task.batch_id, task.model, task.lane, task.state, task.attempt,
                task.error_kind or "", redact(task.error or ""), iso(task.created_at) or "",
                iso(task.started_at) or "", iso(task.finished_at) or "", redact(task.prompt),
                redact(result.text or "") if result else "", "; ".join(result.file_list) if result else "",
                *_money_cells(spend.get(task.task_id))]
               for task, result in queries.export_chunk(ids)]


def _money_cells(spend: list[Spend] | None) -> list[str]:
    if not spend:
        return [""] * 5
    money = TaskMoney.of(spend)
    return ["; ".join(str(m.amount) for m in money.cost), "; ".join(m.currency for m in money.cost),
            "; ".join(money.sources), "; ".join(str(m.amount) for m in money.estimate),
            "; ".join(m.currency for m in money.estimate)]


async def export_tasks(queries: Queries, task_ids: Sequence[str], path: Path) -> int:
    """Write the tasks to ``path`` (.xlsx or .csv). Everything -- reading the rows, openpyxl's
    writing, the XLSX's zip -- runs in a worker thread with its own store connection, so the
    loop only waits (openpyxl needs ~0.2 s per 100 rows; an XLSX of 100,000 rows written from
    the loop held it up to ~0.6 s). A failed or cancelled export leaves no partial file behind."""
    write = _write_xlsx if path.suffix.lower() == ".xlsx" else _write_csv
    stop = threading.Event()
    worker = queries.off_loop()
    written: int | None = None
    try:
        written = await worker.run(write, queries, task_ids, path, stop)
        return written
    except BaseException:
        stop.set()  # a cancelled await: the worker ends at its next chunk
        raise
    finally:
        worker.close()  # waits for the worker, so the file is not unlinked while it writes
        if written is None:
            path.unlink(missing_ok=True)


def _write_xlsx(queries: Queries, task_ids: Sequence[str], path: Path, stop: threading.Event) -> int:
    from openpyxl import Workbook

    book = Workbook(write_only=True)
    sheet = book.create_sheet("tasks")
    sheet.append(list(HEADER))
    written = 0
    try:
        for chunk in _rows(queries, task_ids, stop):
            for row in chunk:
                sheet.append(xlsx_row(sheet, row))
            written += len(chunk)
    except ExportStopped:
        sheet.close()  # ends its row writer and temporary file now, not in the collector
        raise
    book.save(path)
    return written


def _write_csv(queries: Queries, task_ids: Sequence[str], path: Path, stop: threading.Event) -> int:
    written = 0
    with path.open("w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(HEADER)
        for chunk in _rows(queries, task_ids, stop):
            writer.writerows(csv_row(row) for row in chunk)
            written += len(chunk)
    return written
