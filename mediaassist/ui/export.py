"""Export tasks with their results to CSV (Excel-friendly UTF-8 with BOM) or XLSX.

Every text field goes through ``redact`` so no registered API key can leave in a file; the task's
params are not exported at all (they may carry provider-specific values nobody asked for).
"""

from __future__ import annotations

import asyncio
import csv
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from mediaassist.core.export import csv_row, xlsx_row
from mediaassist.core.queries import Queries, chunks
from mediaassist.core.secrets import redact
from mediaassist.core.store import iso

HEADER = ("task_id", "batch_id", "model", "lane", "state", "attempt", "error_kind", "error",
          "created_at", "started_at", "finished_at", "prompt", "result_text", "result_files")
CHUNK = 100  # rows read on the loop per step: ~6 ms of peewee work


def _rows(queries: Queries, task_ids: Sequence[str]) -> Iterator[list[list[Any]]]:
    for ids in chunks(task_ids, CHUNK):
        yield [[task.task_id, task.batch_id, task.model, task.lane, task.state, task.attempt,
                task.error_kind or "", redact(task.error or ""), iso(task.created_at) or "",
                iso(task.started_at) or "", iso(task.finished_at) or "", redact(task.prompt),
                redact(result.text or "") if result else "", "; ".join(result.file_list) if result else ""]
               for task, result in queries.export_chunk(ids)]


async def export_tasks(queries: Queries, task_ids: Sequence[str], path: Path) -> int:
    """Write the tasks to ``path`` (.xlsx or .csv). Rows are read on the loop a chunk at a time
    (the store's connection lives there); openpyxl's writing runs in a worker thread, since it
    needs ~0.2 s per chunk. A failed or cancelled export leaves no partial file behind."""
    try:
        if path.suffix.lower() == ".xlsx":
            return await _export_xlsx(queries, task_ids, path)
        return await _export_csv(queries, task_ids, path)
    except BaseException:
        path.unlink(missing_ok=True)
        raise


async def _export_xlsx(queries: Queries, task_ids: Sequence[str], path: Path) -> int:
    from openpyxl import Workbook

    book = Workbook(write_only=True)
    sheet = book.create_sheet("tasks")
    sheet.append(list(HEADER))
    written = 0
    for chunk in _rows(queries, task_ids):
        await asyncio.to_thread(_append_all, sheet, chunk)
        written += len(chunk)
    await asyncio.to_thread(book.save, path)
    return written


def _append_all(sheet: Any, rows: list[list[Any]]) -> None:
    for row in rows:
        sheet.append(xlsx_row(sheet, row))


async def _export_csv(queries: Queries, task_ids: Sequence[str], path: Path) -> int:
    written = 0
    with path.open("w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(HEADER)
        for chunk in _rows(queries, task_ids):
            writer.writerows(csv_row(row) for row in chunk)  # ~2 ms a chunk: fine on the loop
            written += len(chunk)
            await asyncio.sleep(0)
    return written
