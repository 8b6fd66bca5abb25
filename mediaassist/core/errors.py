"""Failure attribution: every failed task carries one of these kinds."""

from __future__ import annotations

import enum

from mediaassist.core.messages import Message, as_message, msg, one_per_line, verbatim

# The process exit codes (mediaassist/entry.py lists what each means).
EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_DISK_FULL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
EXIT_BROKEN_PIPE = 141  # as a shell reports a process ended by SIGPIPE: its reader closed the pipe


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


# How a kind reads inside a text ("attempt 2 failed (provider): ..."): its value in English,
# its label in Chinese.
KIND_TEXTS = {
    ErrorKind.LOGIN: msg("login"), ErrorKind.ACCOUNT_DISABLED: msg("account_disabled"), ErrorKind.QUOTA: msg("quota"),
    ErrorKind.TIMEOUT: msg("timeout"), ErrorKind.STALLED: msg("stalled"), ErrorKind.PROVIDER: msg("provider"),
    ErrorKind.NETWORK: msg("network"), ErrorKind.BAD_INPUT: msg("bad_input"), ErrorKind.CANCELED: msg("canceled"),
    ErrorKind.INTERNAL: msg("internal"), ErrorKind.DOWNLOAD: msg("download"),
}


# Kinds worth another attempt: the same input may well succeed next time.
RETRYABLE_KINDS = frozenset(
    {ErrorKind.STALLED, ErrorKind.PROVIDER, ErrorKind.NETWORK, ErrorKind.TIMEOUT, ErrorKind.INTERNAL}
)


class TaskError(Exception):
    """Raised by a provider to end an attempt with a known cause.

    ``retry`` overrides the default for the kind (e.g. a poll-lane time-out is final because the
    remote task may still run). ``pause_lane`` carries a reason when the whole lane (provider or
    account) should stop taking work, e.g. an exhausted quota or a rejected key. ``message`` is a
    ``Message``; ``str()`` of the error is its English.
    """

    def __init__(
        self,
        kind: ErrorKind,
        message: Message | str,
        *,
        retry: bool | None = None,
        pause_lane: Message | str | None = None,
    ) -> None:
        self.message = as_message(message)
        super().__init__(str(self.message))
        self.kind = ErrorKind(kind)
        self.retry = (self.kind in RETRYABLE_KINDS) if retry is None else retry
        self.pause_lane = None if pause_lane is None else as_message(pause_lane)

    def __str__(self) -> str:
        return f"{self.kind.value}: {self.message}"


class Requeue(Exception):
    """Raised by a provider to hand its task back to the head of the queue, no attempt used
    (e.g. tasks waiting behind a create gate when the lane has just been paused). With
    ``pause_lane`` the lane is paused too: the task could not even start (no key configured).
    With ``wait_s`` the lane takes no work for that long (nominal seconds): its resource is busy
    elsewhere -- say, another process holds the account's browser profile -- so the task may go
    to another lane meanwhile, and nothing is marked as broken."""

    def __init__(self, message: Message | str, *, pause_lane: Message | str | None = None,
                 wait_s: float | None = None) -> None:
        self.message = as_message(message)
        super().__init__(str(self.message))
        self.pause_lane = None if pause_lane is None else as_message(pause_lane)
        self.wait_s = wait_s


class MessageError(Exception):
    """An error whose text is a ``Message``: ``str()`` is the English, ``message`` renders in the
    reader's language (the CLI's, the window's)."""

    def __init__(self, message: Message | str) -> None:
        self.message = as_message(message)
        super().__init__(str(self.message))


class ConfigError(MessageError):
    """Config file problems; each names the key and what is allowed. ``problems`` holds them
    all (a config is checked whole, so two typos take one start to find); ``str()`` and
    ``message`` are one a line. No problems at all means "already reported" (a model naming a
    provider whose own table failed)."""

    def __init__(self, *problems: Message | str) -> None:
        self.problems = [as_message(problem) for problem in problems]
        super().__init__(one_per_line(self.problems) if self.problems else verbatim(""))


class ImportFileError(MessageError):
    """A task file that cannot be read at all (nothing from it is enqueued)."""


class StorageFault(MessageError):
    """The task store cannot be used as it is: the disk is full, the file is read-only, corrupt,
    not a database, or was deleted/replaced under us. ``str()`` is the one line for the operator
    (which file, and what to do); ``kind`` is one of the ``FAULT_*`` names below."""

    def __init__(self, kind: str, path: str, message: Message | str) -> None:
        super().__init__(message)
        self.kind = kind
        self.path = path

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
