"""What a provider sees of the scheduler, and what it gives back.

It lives in the core because both sides need it: the scheduler (core) drives providers through
it, and providers implement it; the core must never import a provider. ``providers/base.py``
re-exports it for the providers.

A provider runs one attempt of one task in ``run(ctx)``. The scheduler owns the slot, the row,
the heartbeat and cancellation: when it stops the work, it first sets ``ctx.stop_reason`` and
then cancels the coroutine with ``asyncio.CancelledError``; the provider's
``finally``/``except CancelledError`` blocks do the clean-up that reason calls for (close the
page, cancel the remote task) before the scheduler writes the row's end.
A provider ends an attempt badly by raising ``TaskError``; any other exception is ``internal``.
"""

from __future__ import annotations

import enum
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from mediaassist.core.clock import Clock
from mediaassist.core.config import ModelConfig
from mediaassist.core.lane_store import LaneStore
from mediaassist.core.messages import Message, msg
from mediaassist.core.money import Money, Produced

if TYPE_CHECKING:
    from mediaassist.core.store import Task


class StopReason(enum.StrEnum):
    """Why the scheduler stopped an attempt; the one vocabulary of scheduler and providers."""

    CANCEL = "cancel"  # operator cancel: clean up remotely too, the row ends canceled
    SHUTDOWN = "shutdown"  # the app quits: leave remote work running, resume from remote_id
    STALLED = "stalled"  # the row was reaped: nothing more is written by this attempt


@dataclass
class TaskResult:
    text: Message | str | None = None  # the answer, or a summary of what was made (a message)
    files: list[str] = field(default_factory=list)  # absolute paths under ctx.output_dir
    usage: dict[str, int] | None = None  # token counts as the provider reported them
    # What the task made and what the provider charged for it, where the provider knows more
    # than the token counts (images, billed seconds, coins): what its actual cost is priced on.
    produced: Produced | None = None


@dataclass
class TaskContext:
    task: Task
    model: ModelConfig
    clock: Clock
    store: LaneStore  # only what a lane needs of the store, nothing more (core/lane_store.py)
    output_dir: Path
    logger: logging.LoggerAdapter[logging.Logger]  # lane-prefixed
    stop_reason: StopReason | None = None
    # Set by a provider whose clean-up after an operator cancel fell short (e.g. the remote
    # task could not be cancelled), or whose remote task was canceled elsewhere: the scheduler
    # writes it as the canceled task's error.
    cancel_note: Message | None = None

    def log(self, message: Message | str) -> None:
        """A line for the task's own log (detail pane) and the lane log."""
        self.logger.info("%s: %s", self.task.task_id, message)
        self.store.log(self.task.task_id, message)

    def current_remote_id(self) -> str | None:
        """The row's remote id as the store holds it now (another attempt or process may have
        saved one since this attempt was claimed); also refreshes ``task.remote_id``."""
        remote_id = self.store.remote_id_of(self.task.task_id)
        if remote_id:
            self.task.remote_id = remote_id
        return remote_id

    def save_remote_id(self, remote_id: str) -> bool:
        """Persist the remote task id at once: a task with one is never submitted again.

        False when the row already holds another remote id (a second create raced this one):
        the caller must cancel the extra remote task."""
        if not self.store.save_remote_id(self.task, remote_id):
            return False
        self.log(msg("remote task id {remote_id} saved", remote_id=remote_id))
        return True

    def hold_create(self, hold_s: float) -> None:
        """A create is about to be sent: its slot is held for ``hold_s`` real seconds unless
        its reply is read first (``Store.hold_create``)."""
        self.store.hold_create(self.task, hold_s)

    def release_create(self) -> None:
        """The create's reply said nothing was created."""
        self.store.release_create(self.task)

    def save_upload(self, key: str, name: str) -> None:
        """Persist an upload at once (``key`` = ``provider:sha256``): a retry or a restart reuses
        ``name`` while it is fresh instead of uploading the file again."""
        self.store.save_upload(self.task, key, name)
        self.log(msg("uploaded {file} as {name}", file=self._file_of(key), name=name))

    def _file_of(self, key: str) -> str:
        """The file name behind an upload key, for the log (never the key's provider secret)."""
        sha256 = key.rpartition(":")[2]
        for entries in self.task.inputs_dict.values():
            for entry in entries:
                if entry.get("sha256") == sha256:
                    return Path(entry["path"]).name
        return f"file {sha256[:12]}"

    def make_output_dir(self) -> Path:
        self.output_dir.mkdir(parents=True, exist_ok=True)
        return self.output_dir


class Provider(Protocol):
    """One per api/poll provider, one per web site; shared by the lanes that use it."""

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    async def run(self, ctx: TaskContext) -> TaskResult: ...


@runtime_checkable
class BalanceReported(Protocol):
    """A provider whose service tells what the account has left (RunningHub ``remainCoins``):
    ``balance`` as last read (None: not known) at ``balance_read_at`` (epoch seconds)."""

    balance: Money | None
    balance_read_at: float

    async def read_balance(self) -> Money | None: ...


@runtime_checkable
class LimitReported(Protocol):
    """A provider whose service tells how many tasks its key runs at once (RunningHub's
    ``queue/status`` ``concurrentLimit``), as read when it started; None: not told."""

    @property
    def reported_limit(self) -> int | None: ...


@runtime_checkable
class AccountChecked(Protocol):
    """A provider that looks at its account when it starts (the poll lane's pre-flight): the
    lines it found (a warning's English starts with "warning:")."""

    preflight_lines: list[Message]
