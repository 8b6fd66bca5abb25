"""Handing outputs over, and running a task again with edits.

* ``rebuild_manifest``: a batch's manifest written now from the store (``outputs manifest``).
* ``deliver``: a batch's files (all, or only the picked ones, or some tasks') copied to a folder
  under their template names, never over a file already there, with a manifest of only those.
* ``rerun``: a new task made from an old one -- same row, inputs and group, the prompt, model or
  params edited -- whose ``parent_id`` is the old one; the old task and its files stay. With
  ``remix`` a ``/v1/videos`` profile's remix route makes it from the parent's remote video
  instead of a new create.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mediaassist.core.config import AppConfig
from mediaassist.core.errors import MessageError
from mediaassist.core.manifest import batch_entries, write_manifest
from mediaassist.core.messages import Message, msg
from mediaassist.core.outputs import batch_folder, move_unique
from mediaassist.core.store import SUCCESS, NewTask, Store, Task


class DeliveryError(MessageError, ValueError):
    """An operator's request that cannot be done as asked; the message says why and what to do."""


def known_batch(store: Store, batch_id: str) -> list[Task]:
    tasks = store.tasks([batch_id])
    if not tasks:
        raise DeliveryError(_no_such_batch(store, batch_id))
    return tasks


def _no_such_batch(store: Store, batch_id: str) -> Message:
    """Why ``batch_id`` names no batch, with the ids it may have meant: a batch's name starts
    with its task file's name, so those that start with what was typed come first."""
    candidates = store.recent_batches(batch_id) or store.recent_batches()
    if not candidates:
        return msg("no batch {batch}: this store holds no batch yet (--demo work is kept apart: add --demo "
                   "for it)", batch=repr(batch_id))
    return msg("no batch {batch} (batches in this store, latest first: {batches})", batch=repr(batch_id),
               batches=", ".join(candidates))


def rebuild_manifest(store: Store, config: AppConfig, root: Path, batch_id: str) -> tuple[Path, int]:
    """(the manifest's path, how many files it lists)."""
    known_batch(store, batch_id)
    folder = batch_folder(root, batch_id)
    entries = [entry for _task, _output, entry in batch_entries(store, config, batch_id, folder)]
    return write_manifest(folder, entries), len(entries)


@dataclass
class Delivery:
    folder: Path
    files: list[Path] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # outputs whose file is gone from disk


def deliver(store: Store, config: AppConfig, root: Path, batch_id: str, to: Path, picked_only: bool,
            task_ids: Iterable[str] | None = None) -> Delivery:
    """Copy the batch's files into ``to`` (each under its path inside the batch's folder), then
    write ``to``'s manifest of only what was copied."""
    known_batch(store, batch_id)
    wanted = set(task_ids) if task_ids is not None else None
    source_folder = batch_folder(root, batch_id)
    chosen = [(output, entry) for task, output, entry in batch_entries(store, config, batch_id, source_folder,
                                                                       picked_only)
              if wanted is None or task.task_id in wanted]
    if not chosen and picked_only:
        raise DeliveryError(msg("batch {batch} has no picked outputs to deliver (pick some first: mediaassist "
                                "outputs pick TASK_ID)", batch=batch_id))
    if not chosen:
        raise DeliveryError(msg("batch {batch} has no outputs to deliver", batch=batch_id))
    delivery = Delivery(to)
    entries: list[dict[str, Any]] = []
    to.mkdir(parents=True, exist_ok=True)
    for output, entry in chosen:
        source = Path(output.path)
        if not source.is_file():
            delivery.missing.append(output.path)
            continue
        relative = os.path.relpath(source, source_folder)
        if relative.startswith(".."):
            relative = source.name  # a file placed before templates, outside the batch's folder
        target = _copy_unique(source, to / relative)
        delivery.files.append(target)
        entries.append({**entry, "file": target.relative_to(to).as_posix()})
    write_manifest(to, entries)
    return delivery


def _copy_unique(source: Path, target: Path) -> Path:
    """A copy of ``source`` at ``target`` (or ``target-2`` ...): written under a temporary name
    first, so a half-copied file never carries the delivered name."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=".delivering-", dir=target.parent)
    os.close(handle)
    try:
        shutil.copy2(source, temporary)
        return move_unique(Path(temporary), target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def rerun(store: Store, config: AppConfig, task_id: str, *, prompt: str | None = None, model: str | None = None,
          params: dict[str, Any] | None = None, remix: bool = False) -> str:
    """The new task's id: ``task_id`` edited and queued again as its child."""
    parent = store.get(task_id)
    if parent is None:
        raise DeliveryError(msg("no task {task}", task=repr(task_id)))
    model_name = model or parent.model
    chosen = config.model(model_name)
    if chosen is None:
        names = ", ".join(m.name for m in config.models)
        raise DeliveryError(msg("no model {model} in the config (models: {names})", model=repr(model_name),
                                names=names or msg("none configured")))
    remix_of = _remix_source(config, parent, model_name) if remix else None
    new_id = _child_id(store, parent.task_id)
    account = parent.account if parent.account_pinned and chosen.kind == "web" else None
    child = NewTask(model=chosen.name, model_kind=chosen.kind, route=chosen.route,
                    prompt=parent.prompt if prompt is None else prompt, task_id=new_id, account=account,
                    system_prompt=parent.system_prompt, params={**parent.params_dict, **(params or {})},
                    priority=parent.priority, inputs=parent.inputs_dict, row=parent.source_row,
                    group=parent.group_key or parent.task_id, parent_id=parent.task_id, cells=parent.cells_dict,
                    remix_of=remix_of)
    store.enqueue(parent.batch_id, [child])
    return new_id


def _remix_source(config: AppConfig, parent: Task, model_name: str) -> str:
    """The parent's remote video id, when its service can remix it."""
    model = config.model(model_name)
    provider = config.provider(model.provider or "") if model is not None else None
    profile = provider.task_profile if provider is not None else None
    if profile is None or profile.remix is None:
        raise DeliveryError(msg("--remix needs a task-API model whose profile has a [remix] route (like "
                                "openai-videos); {model} has none", model=repr(model_name)))
    if model_name != parent.model:
        raise DeliveryError(msg("--remix keeps the model: a video is remixed by the service that made it"))
    if parent.state != SUCCESS or not parent.remote_id:
        raise DeliveryError(msg("task {task} is {state}; only a succeeded video can be remixed", task=parent.task_id,
                                state=parent.state))
    return str(parent.remote_id)


def _child_id(store: Store, parent_id: str) -> str:
    """``<parent>-r2``, ``-r3`` ...: the first free one (ids of reruns of reruns grow by one step each)."""
    base = parent_id.rsplit("-r", 1)[0] if parent_id.rsplit("-r", 1)[-1].isdigit() else parent_id
    number = 2
    while store.get(f"{base}-r{number}") is not None:
        number += 1
    return f"{base}-r{number}"
