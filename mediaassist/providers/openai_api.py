"""OpenAI-compatible API provider: chat completions and image generations over one httpx client.

One attempt = one logical request. The scheduler's lane limit bounds how many attempts run at
once; ``Traffic`` bounds what goes to the server, for all of them together:

* ``concurrency = "auto"``: an ``AIMDLimiter`` (core/limiter.py) learns the provider's limit from
  429s, time-outs and latency; it is kept in the store, so restarts and other processes on the
  same store start from it, and the scheduler claims against it.
* 429/503 is the server asking us to slow down. ``retry-after-ms`` / ``Retry-After`` are obeyed
  provider-wide, by every process on the store (the deadline is kept in the store, on its
  clock). Without a usable header the window counts as closed: one probe goes first, the others
  wait for its answer, and the probes are spaced so that a reopened window is found within
  ~10 % of the wait (``ProbeBackoff``). With ``auto``, the first 429 after the server has served us
  since the last cut reads as our own overshoot: the limit is cut and the request goes again when
  a slot frees. ``x-ratelimit-remaining-requests`` / ``-reset-requests`` pace the requests before a
  429 happens; ``x-should-retry: false`` is respected.
* An exhausted quota or budget, or a rejected key, fails the task *and pauses the provider*: the
  rest of the batch would only fail the same way (and burn the retry budget).
* ``stream = true`` answers are read to ``[DONE]`` (any answer sent as ``text/event-stream`` is);
  a stream that breaks is one failed attempt.

Anything the server says is passed through ``redact`` before it reaches a log or the store.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import logging
import re
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx

from mediaassist.core.clock import Clock
from mediaassist.core.config import MAX_CONCURRENCY_RANGE, ProviderConfig
from mediaassist.core.errors import ErrorKind, Requeue, TaskError
from mediaassist.core.limiter import AIMDLimiter, ProbeBackoff
from mediaassist.core.messages import Message, msg
from mediaassist.core.money import DEFAULT_MEGAPIXELS, Money, Produced, megapixels_of
from mediaassist.core.outputs import image_problem
from mediaassist.core.secrets import redact, resolve_api_key
from mediaassist.providers.base import MAX_RETRY_AFTER_S, TaskContext, TaskResult, parse_retry_after
from mediaassist.providers.gateway_balance import BalanceUnreadable, read_gateway_balance
from mediaassist.providers.openai_media import (
    Payload,
    edit_payload,
    image_parts,
    input_entries,
    json_payload,
)
from mediaassist.providers.proxy import http_client

log = logging.getLogger("mediaassist.openai")

ENDPOINTS = {"chat": "chat/completions", "images": "images/generations", "images_edit": "images/edits"}
RATE_LIMIT_STATUSES = frozenset({429, 503})
LOGIN_STATUSES = frozenset({401, 403})
BAD_INPUT_STATUSES = frozenset({400, 404, 413, 422})
# How providers word "the money is gone" (OpenAI, DeepSeek, Anthropic-compatible proxies, CN
# gateways, LiteLLM's budgets).
QUOTA_MARKERS = (
    "insufficient_quota", "insufficient_balance", "quota_exceeded", "billing_hard_limit",
    "exceeded your current quota", "insufficient balance", "credit balance is too low", "余额不足",
    "budget_exceeded", "budget has been exceeded", "exceeded budget", "exceeded_budget",
)
MAX_RATE_LIMIT_WAITS = 40  # per attempt; then it fails as ``provider`` and the scheduler retries later
PROBE_BASE_S = 1.0  # nominal; the first probe into a closed window
BACKOFF_MAX_S = 60.0  # nominal; the most between two probes
PACE_BELOW_REMAINING = 2  # pace once fewer than this many times the requests in flight remain
LIMIT_SYNC_S = 1.0  # real seconds between reads of the learned limit from the store
PARTIAL_NOTE_S = 5.0  # nominal; how often a stream's text so far goes to the task log
PARTIAL_TAIL_CHARS = 160
CHOICE_SEPARATOR = "\n\n---\n\n"  # between the answers of n > 1
DETAIL_CHARS = 300
IMAGE_DOWNLOAD_TRIES = 3  # the image is generated (billed) by then: worth asking its host again
IMAGE_DOWNLOAD_RETRY_S = 2.0  # nominal; times the try number
# Above the highest lane limit, so the pool never queues a request the lane already admitted
# (an image download may briefly hold a second connection).
POOL_LIMITS = httpx.Limits(max_connections=2 * MAX_CONCURRENCY_RANGE[1],
                           max_keepalive_connections=2 * MAX_CONCURRENCY_RANGE[1])
# How a request through the gate ended, for the limiter.
SERVED, LIMITED, TIMED_OUT, LOST = "served", "limited", "timed_out", "lost"


@dataclass
class Ticket:
    """One request let through the gate: what the limiter needs to judge its outcome."""

    in_flight: int  # requests in flight when it was sent, itself included
    epoch: int
    probe: bool  # the one request sent into a closed window
    sent_at: float  # monotonic


class Traffic:
    """Who may send to the provider now, for every attempt of the provider at once: the learned
    limit (a fixed one is the scheduler's lane gate alone), a closed window and its single probe,
    and the pacing the ``x-ratelimit-*`` headers ask for. Deadlines are real seconds: they are
    the server's wall-clock."""

    def __init__(self, clock: Clock, limiter: AIMDLimiter | None) -> None:
        self.clock = clock
        self.limiter = limiter
        self.in_flight = 0
        self._not_before = 0.0
        self._next_start = 0.0
        self._pace_s = 0.0
        self._closed_at: float | None = None  # a header-less 429 closed the window at this time
        self._probe_out = False
        self._changed = asyncio.Event()
        self._backoff = ProbeBackoff(base_s=clock.real(PROBE_BASE_S), max_s=clock.real(BACKOFF_MAX_S))

    async def acquire(self) -> Ticket:
        while (hold := self._hold()) is not None:
            changed = self._changed
            try:
                async with asyncio.timeout(hold or None):
                    await changed.wait()
            except TimeoutError:
                pass
        now = self.clock.monotonic()
        probe = self._closed_at is not None
        self._probe_out = self._probe_out or probe
        self.in_flight += 1
        self._next_start = now + self._pace_s
        return Ticket(self.in_flight, self.limiter.epoch if self.limiter else 0, probe, now)

    def _hold(self) -> float | None:
        """None when a request may go now; else seconds to wait (0: until something changes)."""
        wait = max(self._not_before, self._next_start) - self.clock.monotonic()
        if wait > 0:
            return wait
        if self._closed_at is not None and self._probe_out:
            return 0.0
        if self.limiter is not None and self.in_flight >= self.limiter.limit:
            return 0.0
        return None

    def release(self, ticket: Ticket, outcome: str, latency_s: float = 0.0) -> None:
        self.in_flight -= 1
        if self.limiter is not None:
            if outcome == SERVED:
                self.limiter.on_success(latency_s, ticket.in_flight, ticket.epoch)
            elif outcome in (LIMITED, TIMED_OUT):
                self.limiter.on_drop(ticket.in_flight, ticket.epoch)
        if ticket.probe:
            self._probe_out = False
            if outcome == SERVED:
                self._closed_at = None  # the window is open again: everyone may go
        self._notify()

    def rate_limited(self, ticket: Ticket, told_s: float | None) -> float:
        """A 429/503 answered ``ticket``; returns the real seconds it makes the provider wait
        (0: it was our own overshoot, the cut of the limit is the whole answer)."""
        now = self.clock.monotonic()
        overshoot = self.limiter is not None and self.limiter.explains(ticket.in_flight)
        if told_s is not None:
            wait = told_s
        elif overshoot and self._closed_at is None:
            wait = 0.0
        else:
            self._closed_at = self._closed_at if self._closed_at is not None else now
            wait = self._backoff.delay(now - self._closed_at)
        self._not_before = max(self._not_before, now + wait)
        self.release(ticket, LIMITED)
        return wait

    def pace(self, headers: httpx.Headers) -> None:
        """Spread the requests the ``x-ratelimit-*`` headers still allow over the time to reset."""
        remaining = _int_header(headers.get("x-ratelimit-remaining-requests"))
        reset = parse_duration(headers.get("x-ratelimit-reset-requests"))
        if remaining is None or reset is None:
            return
        if remaining <= 0:
            self._not_before = max(self._not_before, self.clock.monotonic() + reset)
        # Pace once what remains is within reach of the requests in flight now.
        near = 0 < remaining <= PACE_BELOW_REMAINING * (self.in_flight + 1)
        self._pace_s = reset / remaining if near else 0.0
        self._notify()

    def limit_changed(self) -> None:
        self._notify()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()


class OpenAIProvider:
    def __init__(self, prov: ProviderConfig, clock: Clock) -> None:
        self.prov = prov
        self.clock = clock
        self._client: httpx.AsyncClient | None = None
        self._auth: dict[str, str] = {}
        self.limiter = AIMDLimiter(max_limit=prov.max_concurrency) if prov.adaptive else None
        self.traffic = Traffic(clock, self.limiter)
        self._saved_limit: int | None = None
        self._synced_at = float("-inf")
        self.balance: Money | None = None  # what the gateway's balance route said last (config ``balance``)
        self.balance_read_at = 0.0

    async def start(self) -> None:
        key = resolve_api_key(self.prov.keyring_name, self.prov.api_key, self.prov.api_key_env)
        self._auth = {"Authorization": f"Bearer {key}"} if key else {}
        # No client-wide timeout: each request gets its own deadline in ``_request`` instead.
        self._client = http_client(self.prov.proxy, timeout=None, limits=POOL_LIMITS, follow_redirects=False)
        if self._auth:
            await self.read_balance()

    async def read_balance(self) -> Money | None:
        """What the key has left, where the config names the gateway's route for it; a route that
        does not answer leaves the last one known (and says why in the log)."""
        if self.prov.balance is None or not self._auth:
            return None
        try:
            balance = await read_gateway_balance(self._http(), self.prov.balance, self.prov.base_url, self._auth)
        except BalanceUnreadable as exc:
            log.info("[%s] balance not read: %s", self.prov.lane, redact(str(exc)))
            return self.balance
        self.balance, self.balance_read_at = balance, time.time()
        return balance

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def run(self, ctx: TaskContext) -> TaskResult:
        if not self._auth:
            where = (msg("environment variable {name}", name=self.prov.api_key_env) if self.prov.api_key_env
                     else "api_key_env")
            reason = msg("no API key for provider {provider} (set {where}, the OS keyring or api_key)",
                         provider=self.prov.shown_name, where=where)
            raise Requeue(reason, pause_lane=reason)  # nothing was tried: no task fails for it
        endpoint = ctx.model.options.get("endpoint", "chat")
        if endpoint not in ENDPOINTS:
            raise TaskError(ErrorKind.BAD_INPUT, msg("endpoint {endpoint} is not one of: {endpoints}",
                                                     endpoint=repr(endpoint), endpoints=', '.join(ENDPOINTS)),
                            retry=False)
        if not ctx.task.prompt.strip():
            raise TaskError(ErrorKind.BAD_INPUT, msg("the prompt is empty"), retry=False)
        entries = input_entries(ctx.model, ctx.task.inputs_dict)  # unchanged since import, or fails
        self._sync_limit(ctx)
        try:
            if endpoint == "chat":
                return await self._chat(ctx, entries)
            return await self._images(ctx, endpoint, entries)
        except asyncio.CancelledError:
            # httpx closes the connection of a cancelled request, so nothing is left half-read.
            ctx.log(msg("stopped ({reason}); the request in flight was dropped",
                        reason=ctx.stop_reason or 'cancelled'))
            raise
        finally:
            self._record_limit(ctx)

    # --- the learned limit, shared through the store ----------------------------------------
    def _sync_limit(self, ctx: TaskContext) -> None:
        """Adopt what another process (or an earlier run) learnt; read at most once a second."""
        if self.limiter is None or self.clock.monotonic() - self._synced_at < LIMIT_SYNC_S:
            return
        self._synced_at = self.clock.monotonic()
        stored = ctx.store.lane_limits().get(self.prov.lane)
        if stored is not None and stored != self._saved_limit:
            self.limiter.adopt(stored)
            self._saved_limit = stored
            self.traffic.limit_changed()  # waiters may go now if it grew

    def _record_limit(self, ctx: TaskContext) -> None:
        if self.limiter is None or self.limiter.limit == self._saved_limit:
            return
        before, self._saved_limit = self._saved_limit, self.limiter.limit
        ctx.store.save_lane_limit(self.prov.lane, self.limiter.limit)
        ctx.logger.info("learned limit %s -> %d (max %d)", before if before is not None else "start",
                        self.limiter.limit, self.prov.max_concurrency)

    # --- endpoints -------------------------------------------------------------------------
    async def _chat(self, ctx: TaskContext, entries: list[tuple[str, dict[str, Any]]]) -> TaskResult:
        parts, files = image_parts(entries)
        body = self._body(ctx, {"messages": self._messages(ctx, parts)})
        data = await self._call(ctx, "chat", json_payload(body, files))
        return TaskResult(text=_chat_text(data), usage=_usage(data))

    async def _images(self, ctx: TaskContext, endpoint: str, entries: list[tuple[str, dict[str, Any]]]) -> TaskResult:
        body = self._body(ctx, {"prompt": ctx.task.prompt})
        payload = edit_payload(body, entries) if endpoint == "images_edit" else json_payload(body, {})
        data = await self._call(ctx, endpoint, payload)
        items = data.get("data")
        if not isinstance(items, list) or not items:
            raise TaskError(ErrorKind.PROVIDER, msg("image response has no data[] entries"))
        out = ctx.make_output_dir()
        files = []
        for number, item in enumerate(items, 1):
            content = await self._image_bytes(ctx, item)
            path = out / f"image-{number}{_extension(content)}"
            path.write_bytes(content)
            files.append(str(path))
        ctx.log(msg("{n} image(s) saved to {folder}", n=len(files), folder=out))
        size = megapixels_of(body.get("size")) or DEFAULT_MEGAPIXELS
        return TaskResult(files=files, usage=_usage(data),
                          produced=Produced(images=len(files), megapixels=size * len(files)))

    def _messages(self, ctx: TaskContext, image_parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
        system = ctx.task.system_prompt or ctx.model.options.get("system_prompt")
        messages: list[dict[str, Any]] = []
        # Reasoning models answer worse with instructions: they get the user content only.
        if system and not ctx.model.need_empty_prompt:
            messages.append({"role": "system", "content": system})
        content: Any = ctx.task.prompt
        if image_parts:
            content = [{"type": "text", "text": ctx.task.prompt}, *image_parts]
        messages.append({"role": "user", "content": content})
        return messages

    async def _image_bytes(self, ctx: TaskContext, item: Any) -> bytes:
        if isinstance(item, dict) and isinstance(item.get("b64_json"), str):
            try:
                return base64.b64decode(item["b64_json"], validate=True)
            except (binascii.Error, ValueError):
                raise TaskError(ErrorKind.PROVIDER, msg("image data[].b64_json is not valid base64")) from None
        if isinstance(item, dict) and isinstance(item.get("url"), str):
            return await self._download_image(ctx, item["url"])
        raise TaskError(ErrorKind.PROVIDER, msg("image data[] entry has neither b64_json nor url"))

    async def _download_image(self, ctx: TaskContext, url: str) -> bytes:
        """A few tries, redirects followed; after that the task fails for good: a retry of the
        attempt would pay for the generation again."""
        problem: Message | str = ""
        for attempt in range(1, IMAGE_DOWNLOAD_TRIES + 1):
            try:
                # No Authorization header: the URL is often a CDN (or redirects to one) that must
                # never see the key. Nor the API's gate: the file host is not the rate-limited API.
                response = await self._get(url)
            except TaskError as exc:
                problem = exc.message
            else:
                if response.status_code == 200:
                    broken = image_problem(response.content)
                    if broken is None:
                        return response.content
                    problem = broken
                else:
                    problem = f"HTTP {response.status_code}"
            if attempt < IMAGE_DOWNLOAD_TRIES:
                ctx.log(msg("image download failed ({problem}); trying again", problem=problem))
                await ctx.clock.sleep(IMAGE_DOWNLOAD_RETRY_S * attempt)
        raise TaskError(ErrorKind.DOWNLOAD, msg("the image was generated (and billed) but its download failed {n} "
                                                "times ({problem}); not retried, so it is not paid for twice: "
                                                "{detail}",
                                                n=IMAGE_DOWNLOAD_TRIES, problem=problem, detail=redact(url)),
                            retry=False)

    async def _get(self, url: str) -> httpx.Response:
        timeout = self.clock.real(self.prov.timeout_s)
        try:
            async with asyncio.timeout(timeout):
                return await self._http().get(url, follow_redirects=True)
        except (TimeoutError, httpx.TimeoutException):
            raise TaskError(ErrorKind.TIMEOUT, msg("no response within {seconds} s (timeout_s)",
                                                   seconds=format(timeout, ".1f"))) from None
        except httpx.HTTPError as exc:
            raise TaskError(ErrorKind.NETWORK, redact(f"{type(exc).__name__}: {exc}")) from None

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            raise RuntimeError(f"provider {self.prov.name} used before start()")
        return self._client

    # --- one logical request, with the rate-limit loop --------------------------------------
    def _body(self, ctx: TaskContext, fields: dict[str, Any]) -> dict[str, Any]:
        return {**self._params(ctx), "model": ctx.model.options.get("remote_model", ctx.model.name), **fields}

    async def _call(self, ctx: TaskContext, endpoint: str, payload: Payload) -> dict[str, Any]:
        url = f"{self.prov.base_url}/{ENDPOINTS[endpoint]}"
        for _wait in range(MAX_RATE_LIMIT_WAITS):
            answer = await self._request(ctx, url, payload)
            if answer is not None:
                return answer
        raise TaskError(ErrorKind.PROVIDER, msg("still rate limited after {n} waits", n=MAX_RATE_LIMIT_WAITS))

    @staticmethod
    def _params(ctx: TaskContext) -> dict[str, Any]:
        defaults = ctx.model.options.get("defaults", {})
        if not isinstance(defaults, dict):
            raise TaskError(ErrorKind.BAD_INPUT, msg("model {model}: defaults must be a table",
                                                     model=ctx.model.name), retry=False)
        return {**defaults, **ctx.task.params_dict}

    async def _request(self, ctx: TaskContext, url: str, payload: Payload) -> dict[str, Any] | None:
        """One request through the gate: the JSON answer (a stream read to its end), or None after
        a rate limit (its wait registered with the gate); any other outcome raises TaskError."""
        ticket = await self.traffic.acquire()
        await self._wait_shared_backoff(ctx)
        outcome, latency = LOST, 0.0
        timeout = self.clock.real(self.prov.timeout_s)
        try:
            async with asyncio.timeout(timeout) as deadline:
                async with self._send(url, payload) as response:
                    latency = self.clock.monotonic() - ticket.sent_at
                    self.traffic.pace(response.headers)
                    if not response.is_success:
                        await response.aread()
                        if response.status_code in RATE_LIMIT_STATUSES and not _says_quota(response):
                            outcome = LIMITED
                            self._rate_limited(ctx, ticket, response)
                            return None
                    outcome = SERVED
                    if not response.is_success:
                        raise _error_for(response)
                    if _is_event_stream(response):
                        return await _read_stream(ctx, response, lambda: deadline.reschedule(
                            asyncio.get_running_loop().time() + timeout))
                    await response.aread()
                    return _parse(response)
        except (TimeoutError, httpx.TimeoutException):
            outcome = TIMED_OUT if outcome == LOST else outcome
            raise TaskError(ErrorKind.TIMEOUT, msg("no response within {seconds} s (timeout_s)",
                                                   seconds=format(timeout, ".1f"))) from None
        except httpx.HTTPError as exc:
            raise TaskError(ErrorKind.NETWORK, redact(f"{type(exc).__name__}: {exc}")) from None
        finally:
            if outcome != LIMITED:
                self.traffic.release(ticket, outcome, latency)

    @asynccontextmanager
    async def _send(self, url: str, payload: Payload) -> AsyncIterator[httpx.Response]:
        with payload() as send:
            headers = {**self._auth, **send.pop("headers", {})}
            async with self._http().stream("POST", url, headers=headers, **send) as response:
                yield response

    def _backoff_gate(self) -> str:
        return f"backoff:{self.prov.lane}"

    async def _wait_shared_backoff(self, ctx: TaskContext) -> None:
        """A wait another process on the store was asked for (Retry-After, a closed window)
        holds here too: the provider's limit is one for every process using the key."""
        while (wait := ctx.store.gate_not_before(self._backoff_gate()) - ctx.store.now()) > 0:
            await asyncio.sleep(wait)

    def _rate_limited(self, ctx: TaskContext, ticket: Ticket, response: httpx.Response) -> None:
        told = told_delay(response.headers, self.clock.now())
        wait = self.traffic.rate_limited(ticket, told)
        if wait > 0:  # kept in the store, on its clock: every process waits it out
            ctx.store.defer_gate(self._backoff_gate(), ctx.store.now() + wait)
        status = response.status_code
        if _should_not_retry(response):
            raise TaskError(ErrorKind.PROVIDER, msg("HTTP {status} and the server says not to retry "
                                                    "(x-should-retry: false): {detail}",
                                                    status=status, detail=_error_detail(response)), retry=False)
        if told is not None:
            ctx.log(msg("HTTP {status} (rate limited): the server asks for {seconds} s; no request to {provider} "
                        "before then",
                        status=status, seconds=format(wait, ".1f"), provider=self.prov.name))
        elif wait == 0:
            ctx.log(msg("HTTP {status} at {n} in flight: over the provider's limit; learned limit now {limit}, "
                        "sent again when a slot frees",
                        status=status, n=ticket.in_flight, limit=self.limiter.limit if self.limiter else '-'))
        else:
            ctx.log(msg("HTTP {status} (rate limited, no usable header): one probe to {provider} in {seconds} s, "
                        "the other requests wait for its answer",
                        status=status, provider=self.prov.name, seconds=format(wait, ".1f")))


# --- streams ---------------------------------------------------------------------------------
def _is_event_stream(response: httpx.Response) -> bool:
    content_type: str = response.headers.get("content-type", "")
    return content_type.split(";")[0].strip() == "text/event-stream"


async def _read_stream(ctx: TaskContext, response: httpx.Response, keep_alive: Callable[[], None]) -> dict[str, Any]:
    """Read a chat completion's SSE stream to ``[DONE]``; the answer as one completion object.

    Every line (heartbeat comments too) pushes the idle deadline out. The text so far goes to
    the task log now and then, so the detail pane shows a long answer growing."""
    chat = StreamedChat()
    next_note = ctx.clock.monotonic() + ctx.clock.real(PARTIAL_NOTE_S)
    try:
        async for line in response.aiter_lines():
            keep_alive()
            if chat.feed(line):
                break
            if ctx.clock.monotonic() >= next_note and chat.chars:
                next_note = ctx.clock.monotonic() + ctx.clock.real(PARTIAL_NOTE_S)
                ctx.log(msg("receiving: {n} characters so far: …{tail}",
                            n=chat.chars, tail=chat.tail(PARTIAL_TAIL_CHARS)))
    except httpx.TransportError as exc:
        raise TaskError(ErrorKind.PROVIDER, msg("the stream broke after {n} characters ({error})",
                                                n=chat.chars, error=type(exc).__name__)) from None
    if not chat.done:
        raise TaskError(ErrorKind.PROVIDER, msg("the stream ended without [DONE] after {n} characters", n=chat.chars))
    ctx.log(msg("stream read to the end: {n} characters", n=chat.chars))
    return chat.completion()


@dataclass
class StreamedChat:
    """The ``chat.completion.chunk`` events of one stream, put back together."""

    parts: dict[int, list[str]] = field(default_factory=dict)
    finish: dict[int, str | None] = field(default_factory=dict)
    usage: dict[str, Any] | None = None
    chars: int = 0
    done: bool = False

    def feed(self, line: str) -> bool:
        """One SSE line; True at ``data: [DONE]``."""
        if not line.startswith("data:"):
            return False  # blank separators, ": heartbeat" comments, event:/id: fields
        payload = line.removeprefix("data:").strip()
        if payload == "[DONE]":
            self.done = True
            return True
        try:
            event = json.loads(payload)
        except ValueError:
            raise TaskError(ErrorKind.PROVIDER, msg("stream event is not JSON: {detail}",
                                                    detail=_snippet(payload))) from None
        if isinstance(event, dict) and "error" in event:
            raise _stream_error(event)
        self._add(event)
        return False

    def _add(self, event: Any) -> None:
        if not isinstance(event, dict):
            return
        if isinstance(event.get("usage"), dict):
            self.usage = event["usage"]
        for choice in event.get("choices") or []:
            if not isinstance(choice, dict):
                continue
            index = int(choice.get("index", 0))
            delta = choice.get("delta") or {}
            text = delta.get("content") if isinstance(delta, dict) else None
            if isinstance(text, str):
                self.parts.setdefault(index, []).append(text)
                self.chars += len(text)
            if choice.get("finish_reason"):
                self.finish[index] = choice["finish_reason"]

    def tail(self, chars: int) -> str:
        text = "".join(self.parts.get(min(self.parts, default=0), []))
        return re.sub(r"\s+", " ", text[-chars:])

    def completion(self) -> dict[str, Any]:
        choices = [{"index": i, "message": {"role": "assistant", "content": "".join(self.parts.get(i, []))},
                    "finish_reason": self.finish.get(i)} for i in sorted(set(self.parts) | set(self.finish))]
        return {"object": "chat.completion", "choices": choices, "usage": self.usage}


def _stream_error(event: dict[str, Any]) -> TaskError:
    error = event.get("error")
    detail = _snippet(str(error.get("message") or error) if isinstance(error, dict) else str(error))
    if any(marker in json.dumps(event).lower() for marker in QUOTA_MARKERS):
        return TaskError(ErrorKind.QUOTA, msg("stream error: {detail}",
                                              detail=detail), pause_lane=msg("quota exhausted: {detail}",
                                                                                    detail=detail))
    return TaskError(ErrorKind.PROVIDER, msg("stream error: {detail}", detail=detail))


# --- headers ---------------------------------------------------------------------------------
def told_delay(headers: httpx.Headers, now: float) -> float | None:
    """The wait a rate-limited answer asks for: ``retry-after-ms``, else ``Retry-After``."""
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return min(MAX_RETRY_AFTER_S, max(0.0, float(millis) / 1000.0))
        except ValueError:
            pass
    return parse_retry_after(headers.get("retry-after"), now)


def parse_duration(value: str | None) -> float | None:
    """``x-ratelimit-reset-*`` values: ``"1s"``, ``"6m0s"``, ``"20ms"``, ``"1h2m3.5s"`` or bare seconds."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    parts = _DURATION_PART.findall(value)
    if not parts or "".join(n + u for n, u in parts) != value:
        return None
    return sum(float(number) * _DURATION_UNITS[unit] for number, unit in parts)


_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_DURATION_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def _int_header(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _should_not_retry(response: httpx.Response) -> bool:
    should_retry: str = response.headers.get("x-should-retry", "")
    return should_retry.strip().lower() == "false"


# --- reading responses ----------------------------------------------------------------------
def _parse(response: httpx.Response) -> dict[str, Any]:
    """The JSON body of a success; every other outcome becomes the TaskError that names it."""
    status = response.status_code
    if not 200 <= status < 300:
        raise _error_for(response)
    try:
        data = response.json()
    except ValueError:
        raise TaskError(ErrorKind.PROVIDER, msg("HTTP {status} but the body is not JSON: {detail}",
                                                status=status, detail=_snippet(response.text))) from None
    if not isinstance(data, dict):
        raise TaskError(ErrorKind.PROVIDER, msg("HTTP {status} but the body is not a JSON object", status=status))
    return data


def _error_for(response: httpx.Response) -> TaskError:
    error = _classify_error(response)
    if _should_not_retry(response):
        error.retry = False
    return error


def _classify_error(response: httpx.Response) -> TaskError:
    status = response.status_code
    detail = _error_detail(response)
    if status == 402 or _says_quota(response):
        return TaskError(ErrorKind.QUOTA, msg("HTTP {status}: {detail}",
                                              status=status, detail=detail), pause_lane=msg("quota exhausted: {detail}",
                                                                                     detail=detail))
    if status in LOGIN_STATUSES:
        return TaskError(ErrorKind.LOGIN, msg("HTTP {status}, API key rejected: {detail}",
                                              status=status, detail=detail),
                         pause_lane=msg("API key rejected (HTTP {status}): {detail}", status=status, detail=detail))
    if status in BAD_INPUT_STATUSES:
        return TaskError(ErrorKind.BAD_INPUT, msg("HTTP {status}: {detail}",
                                                  status=status, detail=detail), retry=False)
    if status == 408:
        return TaskError(ErrorKind.TIMEOUT, msg("HTTP 408: {detail}", detail=detail))
    return TaskError(ErrorKind.PROVIDER, msg("HTTP {status}: {detail}", status=status, detail=detail))


# Statuses whose body may say "out of money" (LiteLLM sends budget errors as 400 or 422).
QUOTA_STATUSES = RATE_LIMIT_STATUSES | LOGIN_STATUSES | frozenset({400, 422})


def _says_quota(response: httpx.Response) -> bool:
    if response.status_code not in QUOTA_STATUSES:
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
    """Every choice's text (n > 1 was paid for in full), in index order, joined."""
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        raise TaskError(ErrorKind.PROVIDER, msg("response has no choices[0].message.content"))
    ordered = sorted(choices, key=lambda c: c.get("index", 0) if isinstance(c, dict) else 0)
    return CHOICE_SEPARATOR.join(_choice_text(choice) for choice in ordered)


def _choice_text(choice: Any) -> str:
    try:
        content = choice["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise TaskError(ErrorKind.PROVIDER, msg("response has no choices[0].message.content")) from None
    if isinstance(content, list):  # content parts, as some compatible servers send them
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    if not isinstance(content, str) or not content.strip():
        reason = choice.get("finish_reason") if isinstance(choice, dict) else None
        raise TaskError(ErrorKind.PROVIDER, msg("empty answer (finish_reason={reason})", reason=reason))
    return content


def _usage(data: dict[str, Any]) -> dict[str, int] | None:
    """The token counts of the answer (top-level integers of ``usage``), if the server sent any."""
    usage = data.get("usage")
    if not isinstance(usage, dict):
        return None
    counts = {k: v for k, v in usage.items() if isinstance(v, int) and not isinstance(v, bool)}
    return counts or None


_MAGIC = ((b"\x89PNG", ".png"), (b"\xff\xd8\xff", ".jpg"), (b"GIF8", ".gif"))


def _extension(content: bytes) -> str:
    if content[:4] == b"RIFF" and content[8:12] == b"WEBP":
        return ".webp"
    return next((ext for magic, ext in _MAGIC if content.startswith(magic)), ".bin")

