"""The poll lane: one provider object per submit-then-poll service, whatever the service.

The scheduler gives it up to ``max_polling_tasks`` tasks at once. Inside, creates go one at a
time through the provider's FIFO create gate: when the service says "full" the task at the
head backs off *while holding the gate*, so the tasks behind it keep their order. A task's
remote id is read again inside the gate (the last moment before sending) and saved before
anything else; a task that has one is never created again -- it resumes polling (restart,
retry, local time-out): a second create is a second bill. If a create ever returns after the
row already got a remote id (another attempt or process won the race), the extra remote task is
cancelled at once.
"""

from __future__ import annotations

import asyncio
import logging
import math
import random
import re
import time
import zlib
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from mediaassist.core.budget import is_budget_pause
from mediaassist.core.clock import Clock
from mediaassist.core.config import ProviderConfig
from mediaassist.core.errors import ErrorKind, Requeue, TaskError
from mediaassist.core.lane_api import StopReason, TaskContext, TaskResult
from mediaassist.core.media import fresh_upload_name, upload_key, verify_unchanged
from mediaassist.core.media_items import media_kind
from mediaassist.core.messages import Message, is_warning, msg
from mediaassist.core.money import Money
from mediaassist.core.outputs import BrokenDownload, verify_download
from mediaassist.core.secrets import redact, resolve_api_key
from mediaassist.providers.poll.adapter import (
    TERMINAL_STATES,
    Busy,
    NotSent,
    PauseLane,
    PollAdapter,
    RemoteOutput,
    RemoteState,
    RemoteStatus,
    Unusable,
    status_text,
)
from mediaassist.providers.poll.gate import CreateGate, StoreCreateGate
from mediaassist.providers.poll.lean_http import LeanClient, proxy_configured
from mediaassist.providers.proxy import http_client

BACKOFF_GROWTH = 1.5
BACKOFF_CAP_S = 120.0
CREATE_TRANSIENT_TRIES = 3  # not-sent / "nothing created" errors, then the attempt fails
POLL_FAILURE_BUDGET = 5  # consecutive unusable poll replies before the task fails as network
QUEUED_GROWTH = 1.5  # the poll interval of a task that stays queued remotely grows by this
DOWNLOAD_TRIES = 4
DOWNLOAD_RETRY_S = 2.0
MAX_REDIRECTS = 5
CANCEL_WAIT_S = 10.0  # real seconds for all tries: a cancel must not hold up a quitting app for long
CANCEL_TRIES = 3
CANCEL_RETRY_S = 1.0
PROGRESS_LOG_STEP = 25.0  # log progress in steps, not on every poll (no store write per poll)
HTTP_TIMEOUT = httpx.Timeout(30.0, connect=10.0)
PREFLIGHT_TIMEOUT_S = 10.0  # real seconds: a service answers in real time, whatever --speed

log = logging.getLogger("mediaassist.lane")


class PollProvider:
    def __init__(self, prov: ProviderConfig, clock: Clock, adapter: PollAdapter) -> None:
        self.prov = prov
        self.clock = clock
        self.adapter = adapter
        self.lane = prov.lane
        self._gate: CreateGate | None = None
        self._api_key: str | None = None
        self._client: httpx.AsyncClient | None = None
        self._poll_client: LeanClient | None = None
        self.preflight_lines: list[Message] = []
        self.balance: Money | None = None
        self.balance_read_at = 0.0

    async def start(self) -> None:
        self._api_key = resolve_api_key(self.prov.keyring_name, self.prov.api_key, self.prov.api_key_env)
        # Created here so the client and the gate belong to the running (qasync) loop. No
        # default headers: the key must not travel to the CDN hosts of the output files.
        self._client = http_client(self.prov.proxy, base_url=self.prov.base_url, timeout=HTTP_TIMEOUT)
        # The lean client speaks no proxy: through one, polls go on httpx too.
        proxied = self.prov.proxy is not None or proxy_configured()
        self._poll_client = None if proxied else LeanClient(self.prov.base_url)
        self.adapter.open(self._client, self._poll_client, self._api_key)
        if self._api_key:
            self.preflight_lines = await self.preflight()
            if self.adapter.last_balance is not None:
                self.balance, self.balance_read_at = self.adapter.last_balance, time.time()
        for line in self.preflight_lines:
            log.log(logging.WARNING if is_warning(line) else logging.INFO, "[%s] %s", self.lane, line)

    @property
    def has_key(self) -> bool:
        return bool(self._api_key)

    @property
    def reported_limit(self) -> int | None:
        """What the service said the key runs at once (RunningHub's queue/status), if it did."""
        return self.adapter.concurrent_limit

    async def preflight(self) -> list[Message]:
        """The account as the service sees it (read-only); never stops the lane from starting,
        nor holds it up for long when the service does not answer."""
        try:
            async with asyncio.timeout(PREFLIGHT_TIMEOUT_S):
                return await self.adapter.preflight()
        except (Unusable, PauseLane) as exc:
            return [msg("warning: account check failed: {reason}", reason=exc)]
        except TimeoutError:
            return [msg("warning: account check gave no answer in {seconds} s",
                        seconds=format(PREFLIGHT_TIMEOUT_S, ".0f"))]

    async def read_balance(self) -> Money | None:
        """The account's balance now, if the service tells it (kept with the time it was read);
        a service that does not answer leaves the last one known."""
        try:
            async with asyncio.timeout(PREFLIGHT_TIMEOUT_S):
                balance = await self.adapter.read_balance()
        except (Unusable, PauseLane, TimeoutError) as exc:
            log.info("[%s] balance not read: %s", self.lane, exc)
            return self.balance
        if balance is not None:
            self.balance, self.balance_read_at = balance, time.time()
        return self.balance

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None
        if self._poll_client is not None:
            await self._poll_client.aclose()
            self._poll_client = None

    # --- one attempt -----------------------------------------------------------------------
    async def run(self, ctx: TaskContext) -> TaskResult:
        try:
            remote_id = ctx.current_remote_id()
            if remote_id:
                ctx.log(msg("resuming {service} task {remote_id} (a task is never created twice)",
                            service=self.adapter.service, remote_id=remote_id))
            elif ctx.task.create_unresolved:  # as claimed: an earlier attempt's crash left it so
                raise TaskError(
                    ErrorKind.NETWORK,
                    msg("an earlier attempt sent its create and stopped before reading the reply (its process "
                        "died); {service} may have created the task, so it is not resubmitted automatically: "
                        "check {where} before retrying",
                        service=self.adapter.service, where=self.adapter.where_to_check(None)),
                    retry=False)
            else:
                remote_id = await self._create_in_turn(ctx)
            return await self._follow(ctx, remote_id)
        except asyncio.CancelledError:
            await self._on_stop(ctx)
            raise

    async def _on_stop(self, ctx: TaskContext) -> None:
        remote_id = ctx.task.remote_id
        if not remote_id:
            return
        if ctx.stop_reason == StopReason.SHUTDOWN:
            ctx.log(msg("left {service} task {remote_id} running; polling resumes on the next start",
                        service=self.adapter.service, remote_id=remote_id))
        elif ctx.stop_reason == StopReason.CANCEL:
            problem: str | None = "no reply in time"
            try:
                async with asyncio.timeout(CANCEL_WAIT_S):
                    problem = await self._cancel_remote(ctx, remote_id)
            except TimeoutError:
                pass
            if problem is None:
                ctx.log(msg("{service} task {remote_id} canceled remotely (verified)",
                            service=self.adapter.service, remote_id=remote_id))
                self._gate_for(ctx).slot_freed()
                return
            # The scheduler writes this as the task's error: "canceled" alone would hide that
            # the remote task may still run (and bill).
            ctx.cancel_note = msg("local cancel only; remote cancel failed ({problem}); check {where}",
                                  problem=problem, where=self.adapter.where_to_check(remote_id))
            ctx.log(ctx.cancel_note)

    async def _cancel_remote(self, ctx: TaskContext, remote_id: str) -> str | None:
        """Ask the service to cancel, a few times, and check that the task really stopped; None
        once it did, else the last problem."""
        problem: str | None = ""
        for attempt in range(1, CANCEL_TRIES + 1):
            try:
                await self.adapter.cancel(remote_id)
                problem = await self._still_running(ctx, remote_id)
                if problem is None:
                    return None
            except Unusable as exc:
                problem = str(exc)
            if attempt < CANCEL_TRIES:
                ctx.log(msg("remote cancel of {service} task {remote_id} failed ({problem}); trying again",
                            service=self.adapter.service, remote_id=remote_id, problem=problem))
                await asyncio.sleep(self.clock.real(CANCEL_RETRY_S))
        return problem

    async def _still_running(self, ctx: TaskContext, remote_id: str) -> str | None:
        """After an accepted cancel: None when the service no longer runs the task (ended, or
        gone), else what it still says."""
        try:
            status = await self.adapter.status(ctx, remote_id)
        except TaskError:
            return None  # unknown to the service now: deleted
        except (Unusable, PauseLane) as exc:
            return f"cancel accepted, but the check failed ({exc})"
        if status.state in TERMINAL_STATES:
            return None
        return f"cancel accepted, but the task still says {status.label or status.state}"

    # --- create, in FIFO turn --------------------------------------------------------------
    async def _create_in_turn(self, ctx: TaskContext) -> str:
        gate = self._gate_for(ctx)
        async with gate.turn():
            busy_tries = transient_tries = 0
            while True:
                # Every try, not once: another task may have paused the lane while we backed off.
                self._check_usable(ctx)
                mark = gate.mark()
                await gate.pace()
                try:
                    return await self._send_create(ctx)
                except Busy as busy:
                    await self._back_off(ctx, busy, busy_tries, mark)
                    busy_tries += 1
                except NotSent as exc:
                    if transient_tries >= CREATE_TRANSIENT_TRIES:
                        raise TaskError(ErrorKind.NETWORK, msg("{service} create: {detail}",
                                                               service=self.adapter.service, detail=exc)) from None
                    transient_tries += 1
                    ctx.log(msg("create failed ({problem}); trying again", problem=exc))
                    await ctx.clock.sleep(2.0 ** transient_tries)
                except PauseLane as pause:
                    raise self._pause(ctx, pause) from None

    def _check_usable(self, ctx: TaskContext) -> None:
        """Behind a head task that hit an auth/balance error (or with no key at all): go back
        to the queue instead of failing one task after another against the same wall."""
        if not self._api_key:
            reason = msg("no API key for provider {provider} (set api_key_env, the OS keyring or api_key)",
                         provider=repr(self.prov.shown_name))
            raise Requeue(reason, pause_lane=reason)  # nothing was tried: no task fails for it
        paused = ctx.store.paused_lane_reasons().get(self.lane)
        # A budget pause stops claims, not the tasks already claimed (and reserved) within it.
        if paused is not None and not is_budget_pause(paused):
            raise Requeue(msg("lane paused ({reason}); waits at the head of the queue until it is resumed",
                              reason=paused))

    async def _send_create(self, ctx: TaskContext) -> str:
        job = asyncio.ensure_future(self._create_and_save(ctx))
        try:
            return await asyncio.shield(job)
        except asyncio.CancelledError:
            # The request may already be at the service: let it finish so that a task it
            # created has its id saved (and is cancelled remotely on an operator cancel).
            await asyncio.wait([job])
            if not job.cancelled():
                job.exception()  # seen here; the scheduler records the stop, not this error
            raise

    async def _create_and_save(self, ctx: TaskContext) -> str:
        # The last moment before sending: another attempt (a reaped one's retry, a second
        # process) may have created the remote task since this attempt was claimed.
        existing = ctx.current_remote_id()
        if existing:
            ctx.log(msg("{service} task {remote_id} was created meanwhile; polling it, not creating",
                        service=self.adapter.service, remote_id=existing))
            return existing
        uploads = await self._upload_inputs(ctx)
        # Until its reply is read the create holds a slot (for as long as the task could run),
        # and a later attempt knows not to send it again: the process may die right here.
        ctx.hold_create(self.clock.real(self.prov.timeout_s))
        try:
            created = await self.adapter.create(ctx, uploads)
        except (NotSent, Busy, PauseLane, TaskError):
            ctx.release_create()  # the service said for sure that nothing was created
            raise
        except Unusable as exc:
            raise TaskError(
                ErrorKind.NETWORK,
                msg("create was sent but its reply was lost ({problem}); {service} may have created the task, so "
                    "it is not resubmitted automatically: check {where} before retrying",
                    problem=exc, service=self.adapter.service, where=self.adapter.where_to_check(None)),
                retry=False) from None
        if not ctx.save_remote_id(created.remote_id):  # before anything else: a lost id is a second bill
            await self._cancel_extra(ctx, created.remote_id)
            return ctx.current_remote_id() or created.remote_id
        if created.rejected:
            raise TaskError(ErrorKind.BAD_INPUT, msg("{service} rejected the inputs: {detail}",
                                                     service=self.adapter.service, detail=created.rejected),
                            retry=False)
        ctx.log(msg("created {service} task {remote_id} ({status})",
                    service=self.adapter.service, remote_id=created.remote_id,
                    status=status_text(created.label or "queued")))
        return created.remote_id

    async def _cancel_extra(self, ctx: TaskContext, extra_id: str) -> None:
        """A create answered after the row already got a remote id: ours is a second bill."""
        kept = ctx.current_remote_id()
        problem = await self._cancel_remote(ctx, extra_id)
        outcome = "canceled it" if problem is None else f"its cancel failed ({problem}); cancel it by hand"
        ctx.log(msg("created {service} task {remote_id}, but the task already had remote id {other} (another "
                    "attempt created it first): {detail}",
                    service=self.adapter.service, remote_id=extra_id, other=kept, detail=outcome))

    async def _upload_inputs(self, ctx: TaskContext) -> dict[str, list[str]]:
        """For a service that takes uploads: each local input's remote name, uploaded now unless
        a fresh upload of the same content is saved on the task (retry, restart). Each upload is
        saved before the next step, so a kill between upload and create never uploads twice."""
        if not self.adapter.uploads_inputs:
            return {}
        names: dict[str, list[str]] = {}
        for input_name, entries in ctx.task.inputs_dict.items():
            names[input_name] = [await self._uploaded_name(ctx, input_name, entry) for entry in entries]
        return names

    async def _uploaded_name(self, ctx: TaskContext, input_name: str, entry: dict[str, Any]) -> str:
        if "path" not in entry:
            raise TaskError(ErrorKind.BAD_INPUT, msg("input {name}: {service} needs a local file to upload, not a "
                                                     "URL ({url})",
                                                     name=input_name, service=self.adapter.service,
                                                     url=entry.get('url')), retry=False)
        key = upload_key(self.prov.name, entry)
        now = ctx.store.now()
        fresh = fresh_upload_name(ctx.task.uploads_dict, key, now)
        file_name = Path(entry["path"]).name
        if fresh is not None:
            ctx.log(msg("{file} was uploaded as {name} already; not uploading it again", file=file_name, name=fresh))
            return fresh
        shared = ctx.store.upload_of(key)  # the same file, uploaded for another task
        if shared is not None and (fresh := fresh_upload_name({key: shared}, key, now)) is not None:
            ctx.store.save_upload(ctx.task, key, fresh, uploaded_at=shared["at"])
            ctx.log(msg("{file} was uploaded as {name} for another task; not uploading it again", file=file_name,
                        name=fresh))
            return fresh
        verify_unchanged(entry)  # never send a different picture than the operator checked
        try:
            name = await self.adapter.upload(entry)
        except NotSent:
            raise
        except Unusable as exc:
            raise NotSent(f"upload of {file_name}: {exc}") from None  # an upload is safe to repeat
        ctx.save_upload(key, name)
        return name

    async def _back_off(self, ctx: TaskContext, busy: Busy, tries: int, mark: int) -> None:
        if busy.retry_after_s is not None:
            delay = min(BACKOFF_CAP_S, max(busy.retry_after_s, 0.0))
        else:
            delay = min(BACKOFF_CAP_S, busy.delay_s * BACKOFF_GROWTH ** tries) * random.uniform(0.8, 1.2)
        ctx.log(msg("{service} is full ({detail}); keeping the head of the queue, next try in {seconds} s or when "
                    "one of our tasks ends",
                    service=self.adapter.service, detail=busy, seconds=format(delay, ".0f")))
        await self._gate_for(ctx).wait_capacity(self.clock.real(delay), mark)

    def _pause(self, ctx: TaskContext, pause: PauseLane) -> TaskError:
        reason = msg("{service} {reason}; fix it, then resume the lane", service=self.adapter.service,
                     reason=pause.reason)
        # Written now, not only by the scheduler after we return: the tasks queued behind the
        # gate must see the pause before they try to create. retry: the task comes back when
        # the operator resumes the lane (a task with a remote id then resumes polling).
        ctx.store.pause_lane(self.lane, reason)
        return TaskError(pause.kind, pause.reason, retry=True, pause_lane=reason)

    def _gate_for(self, ctx: TaskContext) -> CreateGate:
        """The provider's create gate, on the store the scheduler gave us (known at run time)."""
        if self._gate is None:
            self._gate = StoreCreateGate(ctx.store, f"create:{self.lane}", self.clock,
                                         self.prov.min_create_interval_s)
        return self._gate

    # --- poll, fetch, download -------------------------------------------------------------
    async def _follow(self, ctx: TaskContext, remote_id: str) -> TaskResult:
        try:
            status = await self._poll_until_done(ctx, remote_id)
            self._gate_for(ctx).slot_freed()
            name = msg("{service} task {remote_id}", service=self.adapter.service, remote_id=remote_id)
            if status.state == RemoteState.CANCELED:
                # The scheduler ends the row canceled (not failed) with this as its note.
                raise TaskError(ErrorKind.CANCELED, msg("{task} was canceled remotely ({reason})", task=name,
                                                        reason=status.error or "on the service"), retry=False)
            if status.state == RemoteState.FAILED:
                # Not retried: a retry would only poll the same failed remote task again.
                raise TaskError(ErrorKind.PROVIDER, msg("{task} failed: {reason}", task=name,
                                                        reason=status.error or "no reason given"), retry=False)
            outputs, text = await self._results(ctx, remote_id, status)
        except PauseLane as pause:
            raise self._pause(ctx, pause) from None
        files = await self._download_all(ctx, remote_id, outputs)
        return TaskResult(text=text, files=files, usage=status.usage, produced=status.produced)

    async def _results(self, ctx: TaskContext, remote_id: str,
                       status: RemoteStatus) -> tuple[list[RemoteOutput], Message]:
        """The adapter's results, asked again a few times when a further request of it fails."""
        for attempt in range(1, DOWNLOAD_TRIES + 1):
            try:
                return await self.adapter.results(ctx, remote_id, status)
            except Unusable as exc:
                if attempt == DOWNLOAD_TRIES:  # a retry polls again and asks again, never creates
                    raise TaskError(ErrorKind.NETWORK, msg("{service} task {remote_id} succeeded but its results "
                                                           "could not be fetched ({problem}); a retry asks again, the "
                                                           "task is not resubmitted",
                                                           service=self.adapter.service, remote_id=remote_id,
                                                           problem=exc)) from None
                ctx.log(msg("results of {service} task {remote_id} could not be fetched ({problem}); try {n} soon",
                            service=self.adapter.service, remote_id=remote_id, problem=exc, n=attempt + 1))
                await ctx.clock.sleep(DOWNLOAD_RETRY_S * attempt)
        raise AssertionError("unreachable")

    async def _poll_until_done(self, ctx: TaskContext, remote_id: str) -> RemoteStatus:
        interval = self.prov.poll_interval_s
        deadline = self.clock.monotonic() + self.clock.real(self.prov.timeout_s)
        # Each task's first poll is offset within one interval, so 100 tasks don't poll in a burst.
        await ctx.clock.sleep(zlib.crc32(ctx.task.task_id.encode()) / 2**32 * interval)
        last: RemoteStatus | None = None
        status: RemoteStatus | None
        logged_progress = -PROGRESS_LOG_STEP
        failures = 0
        while True:
            try:
                status = await self.adapter.status(ctx, remote_id)
                failures = 0
            except Unusable as exc:
                failures += 1
                if failures >= POLL_FAILURE_BUDGET:
                    raise TaskError(ErrorKind.NETWORK, msg("{n} polls in a row failed (last: {problem}); {service} "
                                                           "task {remote_id} may still be running: check {where}",
                                                           n=failures, problem=exc, service=self.adapter.service,
                                                           remote_id=remote_id,
                                                           where=self.adapter.where_to_check(remote_id))
                                    ) from None
                status = last
            if status is not None:
                if last is None or status.label != last.label:
                    ctx.log(msg("{service} task {remote_id}: {status}",
                                service=self.adapter.service, remote_id=remote_id,
                                status=status_text(status.label or status.state)))
                if status.progress is not None and status.progress >= logged_progress + PROGRESS_LOG_STEP:
                    logged_progress = status.progress
                    ctx.log(msg("{service} task {remote_id}: {progress} %",
                                service=self.adapter.service, remote_id=remote_id,
                                progress=format(status.progress, ".0f")))
                if status.state in TERMINAL_STATES:
                    return status
                interval = self._next_interval(interval, status, last)
                last = status
            if self.clock.monotonic() >= deadline:
                raise TaskError(ErrorKind.TIMEOUT,
                                msg("no result after {seconds} s; {service} task {remote_id} is still running "
                                    "remotely; check {where}",
                                    seconds=format(self.prov.timeout_s, ".0f"), service=self.adapter.service,
                                    remote_id=remote_id, where=self.adapter.where_to_check(remote_id)), retry=False)
            await ctx.clock.sleep(interval)

    def _next_interval(self, interval: float, status: RemoteStatus, last: RemoteStatus | None) -> float:
        """A task that stays queued remotely is asked less often (up to ``queued_poll_max_s``)."""
        if status.state == RemoteState.QUEUED and last is not None and last.state == RemoteState.QUEUED:
            return min(max(self.prov.queued_poll_max_s, self.prov.poll_interval_s), interval * QUEUED_GROWTH)
        return self.prov.poll_interval_s

    async def _download_all(self, ctx: TaskContext, remote_id: str, outputs: list[RemoteOutput]) -> list[str]:
        """Every file at once, the soonest to expire first: the links may not live long, and the
        task is already billed -- a failed download is fetched again, never generated again."""
        if not outputs:
            return []
        outputs = sorted(outputs, key=lambda o: o.expires_at if o.expires_at is not None else math.inf)
        self._check_expiry(ctx, remote_id, outputs[0])
        folder = ctx.make_output_dir()
        targets = [folder / safe_name(n, out) for n, out in enumerate(outputs)]
        results = await asyncio.gather(*(self._download(ctx, o, t) for o, t in zip(outputs, targets, strict=True)),
                                       return_exceptions=True)
        failed = [(o.url, r) for o, r in zip(outputs, results, strict=True) if isinstance(r, BaseException)]
        if failed:
            url, exc = failed[0]
            raise TaskError(ErrorKind.DOWNLOAD, msg("{failed} of {total} downloads of {service} task {remote_id} "
                                                    "failed after {tries} tries ({url}: {detail}); its remote id is "
                                                    "kept: a retry fetches the result again without generating it",
                                                    failed=len(failed), total=len(outputs),
                                                    service=self.adapter.service, remote_id=remote_id,
                                                    tries=DOWNLOAD_TRIES, url=url, detail=redact(str(exc))),
                            retry=False)
        ctx.log(msg("downloaded {n} file(s) to {folder}", n=len(targets), folder=folder))
        return [str(t) for t in targets]

    def _check_expiry(self, ctx: TaskContext, remote_id: str, soonest: RemoteOutput) -> None:
        """A result the service serves only until some time: say how long is left, or that it is
        gone (then only generating it again helps)."""
        if soonest.expires_at is None:
            return
        left = soonest.expires_at - ctx.store.now()
        if left <= 0:
            raise TaskError(ErrorKind.PROVIDER, msg("the result of {service} task {remote_id} expired {ago} ago and "
                                                    "can no longer be fetched; run the task again to generate it anew",
                                                    service=self.adapter.service, remote_id=remote_id,
                                                    ago=_duration(-left)), retry=False)
        ctx.log(msg("warning: the result of {service} task {remote_id} expires in {left}; fetching it now",
                    service=self.adapter.service, remote_id=remote_id, left=_duration(left)))

    async def _download(self, ctx: TaskContext, output: RemoteOutput, target: Path) -> None:
        """One file, written under a temporary name and renamed once it is whole (the size the
        server announced, content that decodes); a failed or broken one is fetched again with
        growing waits."""
        partial = target.with_name(target.name + ".part")
        for attempt in range(1, DOWNLOAD_TRIES + 1):
            try:
                announced = await self._fetch_to(output, partial)
                await asyncio.to_thread(verify_download, partial, announced, media_kind(target.name))
                partial.replace(target)
                return
            except (httpx.HTTPError, BrokenDownload) as exc:
                partial.unlink(missing_ok=True)
                gone = isinstance(exc, httpx.HTTPStatusError) and exc.response.status_code in (404, 410)
                if attempt == DOWNLOAD_TRIES or gone:
                    raise
                reason = exc.message if isinstance(exc, BrokenDownload) else type(exc).__name__
                ctx.log(msg("download of {url} failed ({problem}); fetching it again (try {n} of {tries})",
                            url=output.url, problem=reason, n=attempt + 1, tries=DOWNLOAD_TRIES))
                await ctx.clock.sleep(DOWNLOAD_RETRY_S * 2 ** (attempt - 1))

    async def _fetch_to(self, output: RemoteOutput, partial: Path) -> int | None:
        """The file written to ``partial``; the size the server announced for it. Redirects are
        followed here, not by httpx: at every hop the adapter decides again whether the host may
        see the key (the service's own host yes, a storage host never; httpx would carry a custom
        key header such as x-goog-api-key along)."""
        assert self._client is not None
        url = output.url
        request = None
        for _hop in range(MAX_REDIRECTS + 1):
            headers = self.adapter.download_headers(url) if output.with_key else {}
            async with self._client.stream("GET", url, headers=headers) as response:
                request = response.request
                if response.is_redirect and "location" in response.headers:
                    url = str(response.url.join(response.headers["location"]))
                    continue
                response.raise_for_status()
                with partial.open("wb") as out:
                    async for chunk in response.aiter_bytes():
                        out.write(chunk)
                return _announced_size(response)
        assert request is not None
        raise httpx.TooManyRedirects(f"more than {MAX_REDIRECTS} redirects", request=request)


def _announced_size(response: httpx.Response) -> int | None:
    """Content-Length, when it is the file's own size (not that of a compressed transfer)."""
    length = response.headers.get("Content-Length")
    if length is None or not length.isdigit() or response.headers.get("Content-Encoding", "identity") != "identity":
        return None
    return int(length)


def _duration(seconds: float) -> str:
    """``h:mm:ss``: read the same in every language."""
    whole = int(seconds)
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"


def safe_name(index: int, output: RemoteOutput) -> str:
    """``NN_<last path segment>``, restricted to safe characters (no path from the service)."""
    name = Path(urlsplit(output.url).path).name or "output"
    if output.suffix and "." not in name:
        name += output.suffix
    return f"{index:02d}_" + re.sub(r"[^A-Za-z0-9._-]", "_", name)
