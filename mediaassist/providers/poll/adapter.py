"""What a submit-then-poll service plugs into the poll lane: an adapter and its answers.

The lane (``lane.py``) owns everything that is the same for every such service -- the FIFO
create gate and its back-off, the remote-id-first discipline, polling, the local time-out,
cancel and downloads. An adapter only speaks its service's HTTP and says what each answer
means, by returning a value or raising one of the answers below (or a ``TaskError`` for a
failure of the task itself).
"""

from __future__ import annotations

import enum
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

import httpx

from mediaassist.core.config import ProviderConfig
from mediaassist.core.errors import ErrorKind
from mediaassist.core.lane_api import TaskContext
from mediaassist.core.media import iter_file_chunks
from mediaassist.core.messages import Message, msg
from mediaassist.core.money import Money, Produced
from mediaassist.core.secrets import redact
from mediaassist.providers.poll.lean_http import LeanClient, LeanHTTPError, LeanResponse


class RemoteState(enum.StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    SUCCESS = "success"
    FAILED = "failed"
    CANCELED = "canceled"


TERMINAL_STATES = frozenset({RemoteState.SUCCESS, RemoteState.FAILED, RemoteState.CANCELED})


@dataclass
class RemoteOutput:
    url: str
    # True only for the service's own content endpoint: the key never travels to a CDN host.
    with_key: bool = False
    suffix: str = ""  # for the file name when the URL has none (".mp4")
    expires_at: float | None = None  # epoch seconds after which the service no longer serves it


@dataclass
class RemoteStatus:
    state: RemoteState
    label: str = ""  # the service's own word, for the log ("RUNNING", "in_progress")
    progress: float | None = None  # 0..100
    error: str | None = None  # why it failed (or was canceled), as the service says it
    outputs: list[RemoteOutput] | None = None  # when the status answer carries them
    usage: dict[str, int] | None = None  # the figures the service reported (tokens, seconds, credits)
    body: Any = None  # the answer itself, for an adapter that needs more requests to find the results
    produced: Produced | None = None  # a finished task's charge as the service reported it (RunningHub)


@dataclass
class Created:
    remote_id: str
    label: str = ""  # the service's first status word
    # The service created (and may bill) the task but says its inputs are wrong: it is saved
    # first, then the task fails as bad input.
    rejected: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class Busy(Exception):
    """ "Full, come back later" (RunningHub 421, HTTP 429, a job limit): the head of the FIFO
    keeps its place and backs off. ``delay_s`` is the nominal first delay; ``retry_after_s``
    is the service's own wish when it gave one."""

    def __init__(self, reason: str, delay_s: float = 10.0, retry_after_s: float | None = None) -> None:
        super().__init__(reason)
        self.delay_s = delay_s
        self.retry_after_s = retry_after_s


class Unusable(Exception):
    """A reply we could not read (network error, non-JSON, 5xx): worth asking again. For a
    create it means the request may have arrived: it is never repeated blindly."""


class NotSent(Unusable):
    """The request never reached the service (connect failed), or the service said for sure
    that nothing was created (a transient error code): a create is safe to repeat."""


class PauseLane(Exception):
    """The key or the account cannot work (rejected key, no balance): the whole lane stops
    until the operator resumes it, instead of failing one task after another."""

    def __init__(self, kind: ErrorKind, reason: Message) -> None:
        super().__init__(str(reason))
        self.kind = kind
        self.reason = reason


# A service's own status words (a profile's [status.states], RunningHub's taskStatus), shown in
# the reader's language when known (matched in lower case); an unknown word stays as sent.
STATUS_WORDS = {
    "queued": msg("queued"), "submitted": msg("submitted"), "pending": msg("pending"), "not_start": msg("not_start"),
    "create": msg("create"), "in_progress": msg("in_progress"), "processing": msg("processing"),
    "running": msg("running"), "completed": msg("completed"), "succeeded": msg("succeeded"), "success": msg("success"),
    "failed": msg("failed"), "failure": msg("failure"), "expired": msg("expired"), "cancelled": msg("cancelled"),
    "canceled": msg("canceled"), "cancel": msg("cancel"),
}


def status_text(word: str) -> Message | str:
    return STATUS_WORDS.get(word.lower(), word)


class HttpAdapter:
    """What every adapter keeps: its provider's config, the loop's two clients and the key."""

    def __init__(self, prov: ProviderConfig) -> None:
        self.prov = prov
        self._client: httpx.AsyncClient | None = None
        self._poll_client: LeanClient | None = None
        self._api_key: str | None = None
        self.last_balance: Money | None = None  # as the pre-flight or read_balance last saw it
        self.concurrent_limit: int | None = None  # what the service says the key runs at once, if it tells

    def open(self, client: httpx.AsyncClient, poll_client: LeanClient | None, api_key: str | None) -> None:
        self._client, self._poll_client, self._api_key = client, poll_client, api_key

    def key_headers(self) -> dict[str, str]:
        """The headers that carry the key."""
        return {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}

    def download_headers(self, url: str) -> dict[str, str]:
        """For a result URL that needs the key: the key only on the service's own host, never on
        a storage/CDN host (asked again at every redirect)."""
        return self.key_headers() if same_origin(url, self.prov.base_url) else {}

    def _live_client(self) -> httpx.AsyncClient:
        if self._client is None:
            raise NotSent("provider is closed")
        return self._client


class PollAdapter(Protocol):
    service: str  # how messages name it: "RunningHub", "openai-videos"
    # True: local media inputs are uploaded first (``upload``) and the create names them;
    # False: they travel inside the create request itself.
    uploads_inputs: bool
    last_balance: Money | None  # the account's balance as last seen (pre-flight), if it tells
    concurrent_limit: int | None  # what the key runs at once, as the pre-flight read it, if it tells

    def open(self, client: httpx.AsyncClient, poll_client: LeanClient | None, api_key: str | None) -> None:
        """The clients of the running loop: httpx for everything, the lean one (when there is
        one) for the status requests of ``status``."""
        ...

    async def preflight(self) -> list[Message]:
        """Read-only look at the account at lane start; lines worth showing (warnings start
        with "warning:")."""
        ...

    async def read_balance(self) -> Money | None:
        """What the account has left, where the service says (None: it does not)."""
        ...

    async def upload(self, entry: dict[str, Any]) -> str:
        """Upload one local media input (streamed from disk); returns the service's name for it."""
        ...

    async def create(self, ctx: TaskContext, uploads: dict[str, list[str]]) -> Created: ...

    async def status(self, ctx: TaskContext, remote_id: str) -> RemoteStatus: ...

    async def results(self, ctx: TaskContext, remote_id: str,
                      status: RemoteStatus) -> tuple[list[RemoteOutput], Message]:
        """A succeeded task's files to download and the result text (outputs, cost); sets
        ``status.produced`` when the answers tell what the task was billed."""
        ...

    async def cancel(self, remote_id: str) -> None:
        """Ask the service to cancel; returns once it accepted, raises ``Unusable`` saying why not."""
        ...

    def where_to_check(self, remote_id: str | None) -> str: ...

    def download_headers(self, url: str) -> dict[str, str]:
        """The headers for downloading a result that needs the key (none for other hosts)."""
        ...


def same_origin(url: str, base_url: str) -> bool:
    """Same scheme, host and port (a relative URL is on the base's origin)."""
    joined, base = urlsplit(str(httpx.URL(base_url).join(url))), urlsplit(base_url)
    return (joined.scheme, joined.netloc) == (base.scheme, base.netloc)


async def send(client: httpx.AsyncClient, method: str, path: str, **kwargs: Any) -> httpx.Response:
    """One request; transport failures become NotSent (nothing left) or Unusable (maybe arrived)."""
    try:
        return await client.request(method, path, **kwargs)
    except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout, httpx.UnsupportedProtocol) as exc:
        raise NotSent(f"{type(exc).__name__}: {redact(str(exc))}") from None
    except httpx.LocalProtocolError as exc:
        # Refused by our own HTTP stack before a byte left (an illegal header value, e.g. a
        # control character in the key). No detail: it would quote the header, key included.
        raise NotSent(f"{type(exc).__name__}: the request could not be built (a stray character "
                      "in the API key?)") from None
    except httpx.HTTPError as exc:
        raise Unusable(f"{type(exc).__name__}: {redact(str(exc)) or 'no detail'}") from None


async def send_poll(poll_client: LeanClient | None, client: httpx.AsyncClient, method: str, path: str, *,
                    json: Any = None, headers: dict[str, str]) -> httpx.Response | LeanResponse:
    """A status request: on the lean client when there is one (a fraction of httpx's CPU), else httpx."""
    if poll_client is None:
        return await send(client, method, path, json=json, headers=headers)
    try:
        return await poll_client.request(method, path, json_body=json, headers=headers)
    except LeanHTTPError as exc:
        raise (Unusable if exc.sent else NotSent)(redact(str(exc))) from None


class MultipartBody:
    """A multipart/form-data body streamed from disk in 1 MiB pieces (``core.media.iter_file_chunks``).

    httpx's own multipart writer sends files in 64 KiB pieces, which cost ~100 ms of CPU per MB on
    this box; with 1 MiB pieces an upload is bound by the network, and no file is ever whole in
    memory. ``files`` are (field, file name, path, mime)."""

    def __init__(self, fields: dict[str, str], files: list[tuple[str, str, Path, str]]) -> None:
        self.boundary = secrets.token_hex(16)
        self._parts: list[bytes | Path] = []
        for name, value in fields.items():
            self._parts.append(self._part_head(name, None, None) + value.encode() + b"\r\n")
        for name, file_name, path, mime in files:
            self._parts += [self._part_head(name, file_name, mime), path, b"\r\n"]
        self._parts.append(f"--{self.boundary}--\r\n".encode())

    def _part_head(self, name: str, file_name: str | None, mime: str | None) -> bytes:
        disposition = f'form-data; name="{_quoted(name)}"'
        if file_name is not None:
            disposition += f'; filename="{_quoted(file_name)}"'
        head = f"--{self.boundary}\r\nContent-Disposition: {disposition}\r\n"
        if mime is not None:
            head += f"Content-Type: {mime}\r\n"
        return (head + "\r\n").encode()

    @property
    def headers(self) -> dict[str, str]:
        length = sum(p.stat().st_size if isinstance(p, Path) else len(p) for p in self._parts)
        return {"Content-Type": f"multipart/form-data; boundary={self.boundary}", "Content-Length": str(length)}

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for part in self._parts:
            if isinstance(part, Path):
                for chunk in iter_file_chunks(part):
                    yield chunk
            else:
                yield part


def _quoted(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', "%22").replace("\r", "%0D").replace("\n", "%0A")
