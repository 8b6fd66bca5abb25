"""The media a task carries: its inputs (issue 12) and its output files, as one list per task.

The gallery, the detail pane and the import preview all show media the same way; this module
is what they read, so none of them touches the store's tables itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from mediaassist.core.store import Output, Result, Task

MEDIA_SUFFIXES = {
    "image": {".png", ".jpg", ".jpeg", ".webp", ".gif", ".bmp"},
    "video": {".mp4", ".mov", ".webm", ".mkv", ".m4v"},
    "audio": {".mp3", ".wav", ".m4a", ".aac", ".ogg", ".flac"},
}
OUTPUT, INPUT = "output", "input"
ID_CHUNK = 500  # ids per statement (SQLite's variable limit)


def media_kind(name: str) -> str:
    """image, video, audio or other, from the file name (our outputs are named by their type)."""
    suffix = Path(name.split("?", 1)[0]).suffix.lower()
    return next((kind for kind, suffixes in MEDIA_SUFFIXES.items() if suffix in suffixes), "other")


@dataclass(frozen=True)
class MediaItem:
    """One picture, clip or sound of a task. ``path`` for a local file, else ``url``."""

    task_id: str
    role: str  # OUTPUT, or INPUT
    media: str  # image | video | audio | other
    name: str  # the input's column name, or the output's file name
    path: str | None = None
    url: str | None = None
    # what the gallery's captions, filters, compare view and pick mark need (the task's, for both roles)
    n: int | None = None  # the output's 1-based index within its task
    row: int | None = None
    model: str = ""
    prompt: str = ""
    batch_id: str = ""
    group: str | None = None
    picked: bool = False
    rerun: bool = False  # its task was edited and run again from another

    @property
    def location(self) -> str:
        return self.path or self.url or ""

    @property
    def is_local(self) -> bool:
        return self.path is not None


def input_items(task_id: str, inputs: dict[str, list[dict[str, Any]]]) -> list[MediaItem]:
    """Entries as the importer stores them (``{"path"|"url", "media", ...}``), in column order."""
    return [MediaItem(task_id, INPUT, str(entry.get("media") or media_kind(entry.get("path") or entry.get("url", ""))),
                      name, path=entry.get("path"), url=entry.get("url"))
            for name, entries in inputs.items() for entry in entries]


def output_items(task_id: str, files: Iterable[str]) -> list[MediaItem]:
    return [MediaItem(task_id, OUTPUT, media_kind(f), Path(f).name, path=f, n=n) for n, f in enumerate(files, 1)]


def task_media(task: Task, result: Result | None, placed: list[Output] | None = None) -> list[MediaItem]:
    """Inputs first, then outputs: what went in reads beside what came out. ``placed``: the
    result's output records (with their pick marks), when it has them."""
    if placed:
        outputs = [MediaItem(task.task_id, OUTPUT, o.media if o.media in MEDIA_SUFFIXES else media_kind(o.path),
                             Path(o.path).name, path=o.path, n=o.n, picked=bool(o.picked)) for o in placed]
    else:
        outputs = output_items(task.task_id, result.file_list if result else [])
    return [replace(item, row=task.source_row, model=task.model, prompt=task.prompt, batch_id=task.batch_id,
                    group=task.group_key or task.task_id, rerun=task.parent_id is not None)
            for item in input_items(task.task_id, task.inputs_dict) + outputs]


def iter_media(task_ids: list[str], roles: tuple[str, ...] = (INPUT, OUTPUT),
               chunk_size: int = ID_CHUNK) -> Iterator[list[MediaItem]]:
    """The media of these tasks in the given order, one list per chunk of ids read (a caller on
    the window's loop lets it breathe between chunks)."""
    for start in range(0, len(task_ids), chunk_size):
        chunk = task_ids[start:start + chunk_size]
        tasks = {t.task_id: t for t in Task.select().where(Task.task_id.in_(chunk))}
        results = {r.task_id: r for r in Result.select().where(Result.task_id.in_(chunk))}
        placed: dict[str, list[Output]] = {}
        if OUTPUT in roles:
            for output in Output.select().where(Output.task_id.in_(chunk)).order_by(Output.task_id, Output.n):
                placed.setdefault(output.task_id, []).append(output)
        yield [item for task_id in chunk if task_id in tasks
               for item in task_media(tasks[task_id], results.get(task_id), placed.get(task_id))
               if item.role in roles]


def group_outputs(batch_id: str, group: str) -> list[MediaItem]:
    """The outputs of one row of a batch -- its fan-out and its reruns -- in task order: what the
    compare view shows side by side."""
    ids = [t.task_id for t in Task.select(Task.task_id).where(
        (Task.batch_id == batch_id) & ((Task.group_key == group) | (Task.task_id == group))).order_by(Task.seq)]
    return [item for chunk in iter_media(ids, (OUTPUT,)) for item in chunk]
