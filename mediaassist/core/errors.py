"""Failure attribution: every failed task carries one of these kinds."""

from __future__ import annotations

import enum

# The process exit codes (mediaassist/entry.py lists what each means).
EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_DISK_FULL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


# Not enum.StrEnum: that would change str(kind) from "ErrorKind.LOGIN" to "login" (a behaviour change).
class ErrorKind(str, enum.Enum):  # noqa: UP042
    LOGIN = "login"
    ACCOUNT_DISABLED = "account_disabled"
    QUOTA = "quota"
    TIMEOUT = "timeout"
    STALLED = "stalled"
    PROVIDER = "provider"
    NETWORK = "network"
    BAD_INPUT = "bad_input"
    CANCELED = "canceled"
    INTERNAL = "internal"
    # The result exists remotely but its files could not be fetched whole: the remote id is kept,
    # and a retry fetches again without generating.
    DOWNLOAD = "download"


# Kinds worth another attempt: the same input may well succeed next time.
RETRYABLE_KINDS = frozenset(
    {ErrorKind.STALLED, ErrorKind.PROVIDER, ErrorKind.NETWORK, ErrorKind.TIMEOUT, ErrorKind.INTERNAL}
)


class TaskError(Exception):
    """Raised by a provider to end an attempt with a known cause.

    ``retry`` overrides the default for the kind (e.g. a poll-lane time-out is final because the
    remote task may still run). ``pause_lane`` carries a reason when the whole lane (provider or
    account) should stop taking work, e.g. an exhausted quota or a rejected key.
    """

    def __init__(
        self,
        kind: ErrorKind,
        message: str,
        *,
        retry: bool | None = None,
        pause_lane: str | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = ErrorKind(kind)
        self.message = message
        self.retry = (self.kind in RETRYABLE_KINDS) if retry is None else retry
        self.pause_lane = pause_lane

    def __str__(self) -> str:
        return f"{self.kind.value}: {self.message}"


class Requeue(Exception):
    """Raised by a provider to hand its task back to the head of the queue, no attempt used
    (e.g. tasks waiting behind a create gate when the lane has just been paused). With
    ``pause_lane`` the lane is paused too: the task could not even start (no key configured).
    With ``wait_s`` the lane takes no work for that long (nominal seconds): its resource is busy
    elsewhere -- say, another process holds the account's browser profile -- so the task may go
    to another lane meanwhile, and nothing is marked as broken."""

    def __init__(self, message: str, *, pause_lane: str | None = None, wait_s: float | None = None) -> None:
        super().__init__(message)
        self.pause_lane = pause_lane
        self.wait_s = wait_s


class ConfigError(Exception):
    """Config file problems; each names the key and what is allowed. ``problems`` holds them
    all (a config is checked whole, so two typos take one start to find); ``str()`` is one a line.
    No problems at all means "already reported" (a model naming a provider whose own table failed)."""

    def __init__(self, *problems: str) -> None:
        super().__init__("\n".join(problems))
        self.problems = list(problems)


class ImportFileError(Exception):
    """A task file that cannot be read at all (nothing from it is enqueued)."""


class StorageFault(Exception):
    """The task store cannot be used as it is: the disk is full, the file is read-only, corrupt,
    not a database, or was deleted/replaced under us. ``str()`` is the one line for the operator
    (which file, and what to do); ``kind`` is one of the ``FAULT_*`` names below."""

    def __init__(self, kind: str, path: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.path = path
        self.message = message

    @property
    def disk_full(self) -> bool:
        return self.kind == FAULT_FULL


FAULT_FULL = "disk_full"
FAULT_READ_ONLY = "read_only"
FAULT_CORRUPT = "corrupt"
FAULT_NOT_DATABASE = "not_a_database"
FAULT_REPLACED = "replaced"
FAULT_IO = "io"
FAULT_LOCKED = "locked"  # another process kept the write lock past the busy timeout
