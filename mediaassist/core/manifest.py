"""A batch's manifest: ``manifest.json`` and ``manifest.csv`` in its output folder, one entry per file.

Written atomically (a temporary file renamed over the old one) while the batch runs and on demand
(``mediaassist outputs manifest BATCH``); ``file`` is relative to the manifest, and ``bytes`` and
``sha256`` are the file's as it was placed; ``cost`` is what its task was charged (every attempt,
per currency, never summed across currencies: a task's files each carry it). A delivery writes
the same two files, listing only what it copied.
"""

from __future__ import annotations

import csv
import io
import json
import os
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from mediaassist.core.config import AppConfig
from mediaassist.core.store import Output, Spend, Store, Task, iso, settled_cost

FIELDS = ("task_id", "row", "group", "parent_id", "model", "provider", "account", "remote_id", "prompt",
          "params", "file", "bytes", "sha256", "media", "width", "height", "duration_s", "started_at",
          "finished_at", "picked", "cost")
JSON_NAME, CSV_NAME = "manifest.json", "manifest.csv"


def provider_of(config: AppConfig, task: Task) -> str:
    """The provider's name (a web model's site), from the config, else from the task's route."""
    model = config.model(task.model)
    if model is not None:
        return model.site or model.provider or ""
    return task.route.partition(":")[2]


def file_entry(config: AppConfig, task: Task, output: Output, folder: Path,
               spend: Sequence[Spend] = ()) -> dict[str, Any]:
    """One manifest entry: the task's fields and the file's, ``file`` relative to ``folder``;
    ``spend``: the task's spend rows (its ``cost``)."""
    provider = provider_of(config, task)
    return {
        "task_id": task.task_id, "row": task.source_row, "group": task.group_key, "parent_id": task.parent_id,
        "model": task.model, "provider": provider, "account": task.account or provider,
        "remote_id": task.remote_id, "prompt": task.prompt, "params": task.params_dict,
        "file": Path(os.path.relpath(output.path, folder)).as_posix(), "bytes": output.bytes,
        "sha256": output.sha256, "media": output.media, "width": output.width, "height": output.height,
        "duration_s": output.duration_s, "started_at": iso(task.started_at), "finished_at": iso(task.finished_at),
        "picked": bool(output.picked), "cost": _cost(spend),
    }


def _cost(spend: Sequence[Spend]) -> list[dict[str, str]]:
    return [{"amount": str(money.amount), "currency": money.currency} for money in settled_cost(spend).monies()]


def batch_entries(store: Store, config: AppConfig, batch_id: str, folder: Path,
                  picked_only: bool = False) -> list[tuple[Task, Output, dict[str, Any]]]:
    """(task, output, entry) for every output file of the batch, in task order."""
    tasks = store.tasks([batch_id])
    outputs = store.outputs_of(t.task_id for t in tasks)
    spend = store.task_spend(outputs)
    return [(task, output, file_entry(config, task, output, folder, spend.get(task.task_id, ())))
            for task in tasks for output in outputs.get(task.task_id, [])
            if output.picked or not picked_only]


def write_manifest(folder: Path, entries: Iterable[dict[str, Any]]) -> Path:
    """``manifest.json`` and ``manifest.csv`` in ``folder``, each replaced whole; the JSON's path."""
    rows = list(entries)
    folder.mkdir(parents=True, exist_ok=True)
    _write_atomically(folder / CSV_NAME, _csv_text(rows))
    _write_atomically(folder / JSON_NAME, json.dumps({"files": rows}, ensure_ascii=False, indent=1) + "\n")
    return folder / JSON_NAME


def _csv_text(rows: list[dict[str, Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=FIELDS, lineterminator="\r\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({key: _cell(row[key]) for key in FIELDS})
    return buffer.getvalue()


def _cell(value: Any) -> Any:
    if isinstance(value, list):  # the cost: "0.35 CNY; 0.02 USD"
        return "; ".join(f"{money['amount']} {money['currency']}" for money in value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    if value is None:
        return ""
    return value


def _write_atomically(path: Path, text: str) -> None:
    # utf-8-sig: Excel opens the CSV with its Chinese prompts readable; json.load reads the BOM-less JSON
    encoding = "utf-8-sig" if path.suffix == ".csv" else "utf-8"
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding=encoding, newline="") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
