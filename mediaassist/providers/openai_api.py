"""OpenAI-compatible API provider: chat completions and image generations over one httpx client.

One attempt = one logical request. The scheduler's lane limit bounds how many run at once; this
module adds the quota rules learnt in production:

* 429/503 is the server asking us to slow down. The attempt waits (``Retry-After``, else a
  growing delay with jitter) and asks again, without counting as a failed attempt. The wait is
  provider-wide: every attempt checks the same "not before" deadline before each request, while
  keeping its slot -- more requests into a rate limit only extend it.
* An exhausted quota or a rejected key fails the task *and pauses the provider*: the rest of the
  batch would only fail the same way (and burn the retry budget).

Anything the server says is passed through ``redact`` before it reaches a log or the store.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import random
import re
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

from mediaassist.core.clock import Clock
from mediaassist.core.config import API_CONCURRENCY_RANGE, ProviderConfig
from mediaassist.core.errors import ErrorKind, Requeue, TaskError
from mediaassist.core.secrets import redact, resolve_api_key
from mediaassist.providers.base import TaskContext, TaskResult

ENDPOINTS = {"chat": "chat/completions", "images": "images/generations"}
RATE_LIMIT_STATUSES = frozenset({429, 503})
LOGIN_STATUSES = frozenset({401, 403})
BAD_INPUT_STATUSES = frozenset({400, 404, 413, 422})
# How providers word "the money is gone" (OpenAI, DeepSeek, Anthropic-compatible proxies, CN gateways).
QUOTA_MARKERS = (
    "insufficient_quota", "insufficient_balance", "quota_exceeded", "billing_hard_limit",
    "exceeded your current quota", "insufficient balance", "credit balance is too low", "余额不足",
)
MAX_RATE_LIMIT_WAITS = 20  # per attempt; then it fails as ``provider`` and the scheduler retries later
BACKOFF_BASE_S = 2.0  # nominal; doubles per consecutive rate limit of one attempt
BACKOFF_MAX_S = 60.0
MAX_RETRY_AFTER_S = 3600.0
DETAIL_CHARS = 300
IMAGE_DOWNLOAD_TRIES = 3  # the image is generated (billed) by then: worth asking its host again
IMAGE_DOWNLOAD_RETRY_S = 2.0  # nominal; times the try number
# Above the highest lane limit, so the pool never queues a request the lane already admitted
# (an image download may briefly hold a second connection).
POOL_LIMITS = httpx.Limits(max_connections=2 * API_CONCURRENCY_RANGE[1],
                           max_keepalive_connections=2 * API_CONCURRENCY_RANGE[1])


def parse_retry_after(value: str | None, now: float) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or HTTP-date), or None."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            seconds = parsedate_to_datetime(value).timestamp() - now
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
    return min(MAX_RETRY_AFTER_S, max(0.0, seconds))


class OpenAIProvider:
    def __init__(self, prov: ProviderConfig, clock: Clock) -> None:
        self.prov = prov
        self.clock = clock
        self._client: httpx.AsyncClient | None = None
        self._auth: dict[str, str] = {}
        self._not_before = 0.0  # monotonic; no request goes to this provider before it

    async def start(self) -> None:
        key = resolve_api_key(self.prov.name, self.prov.api_key, self.prov.api_key_env)
        self._auth = {"Authorization": f"Bearer {key}"} if key else {}
        # No client-wide timeout: each request gets one overall deadline in ``_send`` instead.
        self._client = httpx.AsyncClient(timeout=None, limits=POOL_LIMITS, follow_redirects=False)

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def run(self, ctx: TaskContext) -> TaskResult:
        if not self._auth:
            where = f"environment variable {self.prov.api_key_env}" if self.prov.api_key_env else "api_key_env"
            reason = f"no API key for provider {self.prov.name} (set {where}, the OS keyring or api_key)"
            raise Requeue(reason, pause_lane=reason)  # nothing was tried: no task fails for it
        endpoint = ctx.model.options.get("endpoint", "chat")
        if endpoint not in ENDPOINTS:
            raise TaskError(ErrorKind.BAD_INPUT, f"endpoint {endpoint!r} is not one of: chat, images", retry=False)
        if not ctx.task.prompt.strip():
            raise TaskError(ErrorKind.BAD_INPUT, "the prompt is empty", retry=False)
        try:
            if endpoint == "images":
                return await self._images(ctx)
            return await self._chat(ctx)
        except asyncio.CancelledError:
            # httpx closes the connection of a cancelled request, so nothing is left half-read.
            ctx.log(f"stopped ({ctx.stop_reason or 'cancelled'}); the request in flight was dropped")
            raise

    # --- endpoints -------------------------------------------------------------------------
    async def _chat(self, ctx: TaskContext) -> TaskResult:
        data = await self._call(ctx, "chat", {"messages": self._messages(ctx)})
        return TaskResult(text=_chat_text(data))

    async def _images(self, ctx: TaskContext) -> TaskResult:
        data = await self._call(ctx, "images", {"prompt": ctx.task.prompt})
        items = data.get("data")
        if not isinstance(items, list) or not items:
            raise TaskError(ErrorKind.PROVIDER, "image response has no data[] entries")
        out = ctx.make_output_dir()
        files = []
        for number, item in enumerate(items, 1):
            content = await self._image_bytes(ctx, item)
            path = out / f"image-{number}{_extension(content)}"
            path.write_bytes(content)
            files.append(str(path))
        ctx.log(f"{len(files)} image(s) saved to {out}")
        return TaskResult(files=files)

    def _messages(self, ctx: TaskContext) -> list[dict[str, str]]:
        system = ctx.task.system_prompt or ctx.model.options.get("system_prompt")
        messages = []
        # Reasoning models answer worse with instructions: they get the user content only.
        if system and not ctx.model.need_empty_prompt:
            messages.append({"role": "system", "content": system})
        messages.append({"role": "user", "content": ctx.task.prompt})
        return messages

    async def _image_bytes(self, ctx: TaskContext, item: Any) -> bytes:
        if isinstance(item, dict) and isinstance(item.get("b64_json"), str):
            try:
                return base64.b64decode(item["b64_json"], validate=True)
            except (binascii.Error, ValueError):
                raise TaskError(ErrorKind.PROVIDER, "image data[].b64_json is not valid base64") from None
        if isinstance(item, dict) and isinstance(item.get("url"), str):
            return await self._download_image(ctx, item["url"])
        raise TaskError(ErrorKind.PROVIDER, "image data[] entry has neither b64_json nor url")

    async def _download_image(self, ctx: TaskContext, url: str) -> bytes:
        """A few tries, redirects followed; after that the task fails for good: a retry of the
        attempt would pay for the generation again."""
        problem = ""
        for attempt in range(1, IMAGE_DOWNLOAD_TRIES + 1):
            try:
                # No Authorization header: the URL is often a CDN (or redirects to one) that must
                # never see the key.
                response = await self._send("GET", url, follow_redirects=True)
            except TaskError as exc:
                problem = exc.message
            else:
                if response.status_code == 200:
                    return response.content
                problem = f"HTTP {response.status_code}"
            if attempt < IMAGE_DOWNLOAD_TRIES:
                ctx.log(f"image download failed ({problem}); trying again")
                await ctx.clock.sleep(IMAGE_DOWNLOAD_RETRY_S * attempt)
        raise TaskError(ErrorKind.PROVIDER, f"the image was generated (and billed) but its download failed "
                                            f"{IMAGE_DOWNLOAD_TRIES} times ({problem}); not retried, so it is "
                                            f"not paid for twice: {redact(url)}", retry=False)

    # --- one logical request, with the rate-limit loop --------------------------------------
    async def _call(self, ctx: TaskContext, endpoint: str, fields: dict[str, Any]) -> dict[str, Any]:
        body = {**self._params(ctx), "model": ctx.model.options.get("remote_model", ctx.model.name), **fields}
        url = f"{self.prov.base_url}/{ENDPOINTS[endpoint]}"
        for wait in range(1, MAX_RATE_LIMIT_WAITS + 1):
            response = await self._send("POST", url, json=body, headers=self._auth)
            if response.status_code not in RATE_LIMIT_STATUSES or _says_quota(response):
                return _parse(response)
            delay = self._back_off(response, wait)
            ctx.log(f"HTTP {response.status_code} (rate limited): no request to {self.prov.name} "
                    f"for {delay:.1f} s")
        raise TaskError(ErrorKind.PROVIDER, f"still rate limited after {MAX_RATE_LIMIT_WAITS} waits")

    @staticmethod
    def _params(ctx: TaskContext) -> dict[str, Any]:
        defaults = ctx.model.options.get("defaults", {})
        if not isinstance(defaults, dict):
            raise TaskError(ErrorKind.BAD_INPUT, f"model {ctx.model.name}: defaults must be a table", retry=False)
        return {**defaults, **ctx.task.params_dict}

    async def _send(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        if self._client is None:
            raise RuntimeError(f"provider {self.prov.name} used before start()")
        await self._wait_turn()
        timeout = self.clock.real(self.prov.timeout_s)
        try:
            async with asyncio.timeout(timeout):
                return await self._client.request(method, url, **kwargs)
        except (TimeoutError, httpx.TimeoutException):
            raise TaskError(ErrorKind.TIMEOUT, f"no response within {timeout:.1f} s (timeout_s)") from None
        except httpx.HTTPError as exc:
            raise TaskError(ErrorKind.NETWORK, redact(f"{type(exc).__name__}: {exc}")) from None

    async def _wait_turn(self) -> None:
        # Real seconds, not the scaled clock: Retry-After is the server's wall-clock deadline.
        while (remaining := self._not_before - self.clock.monotonic()) > 0:
            await asyncio.sleep(remaining)

    def _back_off(self, response: httpx.Response, wait: int) -> float:
        """Push the provider-wide deadline out; returns this wait in real seconds."""
        delay = parse_retry_after(response.headers.get("retry-after"), self.clock.now())
        if delay is None:
            nominal = min(BACKOFF_MAX_S, BACKOFF_BASE_S * 2 ** (wait - 1)) * random.uniform(0.8, 1.2)
            delay = self.clock.real(nominal)
        self._not_before = max(self._not_before, self.clock.monotonic() + delay)
        return delay


# --- reading responses ----------------------------------------------------------------------
def _parse(response: httpx.Response) -> dict[str, Any]:
    """The JSON body of a success; every other outcome becomes the TaskError that names it."""
    status = response.status_code
    if 200 <= status < 300:
        try:
            data = response.json()
        except ValueError:
            raise TaskError(ErrorKind.PROVIDER, f"HTTP {status} but the body is not JSON: "
                                                f"{_snippet(response.text)}") from None
        if not isinstance(data, dict):
            raise TaskError(ErrorKind.PROVIDER, f"HTTP {status} but the body is not a JSON object")
        return data
    detail = _error_detail(response)
    if status == 402 or _says_quota(response):
        raise TaskError(ErrorKind.QUOTA, f"HTTP {status}: {detail}", pause_lane=f"quota exhausted: {detail}")
    if status in LOGIN_STATUSES:
        raise TaskError(ErrorKind.LOGIN, f"HTTP {status}, API key rejected: {detail}",
                        pause_lane=f"API key rejected (HTTP {status}): {detail}")
    if status in BAD_INPUT_STATUSES:
        raise TaskError(ErrorKind.BAD_INPUT, f"HTTP {status}: {detail}", retry=False)
    if status == 408:
        raise TaskError(ErrorKind.TIMEOUT, f"HTTP 408: {detail}")
    raise TaskError(ErrorKind.PROVIDER, f"HTTP {status}: {detail}")


def _says_quota(response: httpx.Response) -> bool:
    if response.status_code not in RATE_LIMIT_STATUSES | LOGIN_STATUSES:
        return False
    text = response.text.lower()
    return any(marker in text for marker in QUOTA_MARKERS)


def _error_detail(response: httpx.Response) -> str:
    """The server's own words: ``error.message`` (+ code) when JSON, else the start of the body."""
    try:
        data = response.json()
    except ValueError:
        return _snippet(response.text) or response.reason_phrase
    error = data.get("error", data) if isinstance(data, dict) else data
    if isinstance(error, dict):
        message = str(error.get("message") or error.get("msg") or "")
        code = error.get("code") or error.get("type")
        return _snippet(f"{message} ({code})" if code and message else message or str(code or data))
    return _snippet(str(error))


def _snippet(text: str) -> str:
    # Redacted before it is cut: a cut key no longer matches, and its start would be kept.
    return re.sub(r"\s+", " ", redact(text)).strip()[:DETAIL_CHARS]


def _chat_text(data: dict[str, Any]) -> str:
    try:
        choice = data["choices"][0]
        content = choice["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise TaskError(ErrorKind.PROVIDER, "response has no choices[0].message.content") from None
    if isinstance(content, list):  # content parts, as some compatible servers send them
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    if not isinstance(content, str) or not content.strip():
        reason = choice.get("finish_reason") if isinstance(choice, dict) else None
        raise TaskError(ErrorKind.PROVIDER, f"empty answer (finish_reason={reason})")
    return content


_MAGIC = ((b"\x89PNG", ".png"), (b"\xff\xd8\xff", ".jpg"), (b"GIF8", ".gif"))


def _extension(content: bytes) -> str:
    if content[:4] == b"RIFF" and content[8:12] == b"WEBP":
        return ".webp"
    return next((ext for magic, ext in _MAGIC if content.startswith(magic)), ".bin")

