"""RunningHub: submit a workflow / AI-app task, then poll it until it ends (the poll lane).

The scheduler gives this provider up to ``max_polling_tasks`` tasks at once. Inside, creates go
one at a time through a provider-wide FIFO gate: when RunningHub says "full" (421, 415, 1003,
...) the task at the head backs off *while holding the gate*, so the tasks behind it keep their
order. A task's remote id is saved before anything else, and a task that has one is never
created again -- it resumes polling (restart, retry, local time-out): a second create is a
second bill. Business errors arrive as HTTP 200 with a non-zero ``code`` (int or numeric
string), so the code is always read before the data. See ``reference/runninghub.md`` §7.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import re
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from mediaassist.core.clock import Clock
from mediaassist.core.config import ModelConfig, ProviderConfig
from mediaassist.core.errors import ErrorKind, Requeue, TaskError
from mediaassist.core.scheduler import STOP_CANCEL, STOP_SHUTDOWN
from mediaassist.core.secrets import redact, resolve_api_key
from mediaassist.providers.base import TaskContext, TaskResult

# "Full, come back later": nominal first delay per code, growing ×1.5 per try (cap, ±20 % jitter).
# 814: our personal queue on RunningHub is full (1000 tasks): it drains, so wait like 421.
CAPACITY_BACKOFF_S = {421: 10.0, 1520: 10.0, 1003: 10.0, 415: 30.0, 1010: 30.0, 1011: 30.0, 814: 30.0}
BACKOFF_GROWTH = 1.5
BACKOFF_CAP_S = 120.0
AUTH_CODES = frozenset({801, 802, 806, 811, 1002, 1014})
QUOTA_CODES = frozenset({416, 436, 812})
TRANSIENT_CODES = frozenset({500, 808, 1000, 1005, 1012, 1504})
# The remote task ended badly (timed out / generation failed): polling it again cannot help.
REMOTE_FAILED_CODES = frozenset({1006, 1015})
CREATE_TRANSIENT_TRIES = 3  # network-not-sent / 5xx-coded create replies, then the attempt fails
POLL_FAILURE_BUDGET = 5  # consecutive unusable poll replies before the task fails as network
OUTPUTS_TRIES = 6  # outputs may still say "running" for a moment after SUCCESS
OUTPUTS_RETRY_S = 2.0
DOWNLOAD_TRIES = 4
DOWNLOAD_RETRY_S = 2.0
CANCEL_WAIT_S = 10.0  # real seconds for all tries: a cancel must not hold up a quitting app for long
CANCEL_TRIES = 3
CANCEL_RETRY_S = 1.0
HTTP_TIMEOUT = httpx.Timeout(30.0, connect=10.0)
RECORD_SITE = "https://www.runninghub.cn"

TERMINAL = ("SUCCESS", "FAILED", "CANCEL")


class _Unusable(Exception):
    """A reply we could not read (network error, non-JSON, no code): worth asking again."""


class _NotSent(_Unusable):
    """The request never reached the server (connect failed): a create is safe to repeat."""


@dataclass
class Reply:
    code: int
    msg: str
    data: Any


def parse_reply(response: httpx.Response) -> Reply:
    """The legacy envelope ``{code, msg, data}``; ``code`` may be an int or a numeric string."""
    try:
        body = response.json()
    except ValueError:
        # Redacted before it is cut: a cut key would no longer match, and its start would leak.
        raise _Unusable(f"HTTP {response.status_code}, not JSON: {redact(response.text)[:60]!r}") from None
    if not isinstance(body, dict) or "code" not in body:
        raise _Unusable(f"HTTP {response.status_code}, no code in the reply")
    try:
        code = int(str(body["code"]).strip())
    except ValueError:
        raise _Unusable(f"code {body['code']!r} is not a number") from None
    return Reply(code, str(body.get("msg") or body.get("message") or ""), body.get("data"))


def build_node_info_list(model: ModelConfig, prompt: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    """Model's fixed entries, then the prompt's entry, then the task's ``params.node_info_list``;
    a later entry for the same (nodeId, fieldName) replaces an earlier one."""
    options = model.options
    entries: list[Any] = list(options.get("node_info_list", []))
    if options.get("prompt_node_id") is not None:
        entries.append({"nodeId": options["prompt_node_id"],
                        "fieldName": options.get("prompt_field_name", "text"), "fieldValue": prompt})
    entries += list(params.get("node_info_list", []))
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    for entry in entries:
        if not isinstance(entry, dict) or not {"nodeId", "fieldName", "fieldValue"} <= entry.keys():
            raise TaskError(ErrorKind.BAD_INPUT, f"node_info_list entry {entry!r} needs nodeId, "
                                                 "fieldName and fieldValue", retry=False)
        key = (str(entry["nodeId"]), str(entry["fieldName"]))
        merged[key] = {**entry, "nodeId": key[0], "fieldName": key[1]}
    return list(merged.values())


def format_failed_reason(data: Any, fallback: str) -> str:
    reason = data.get("failedReason") if isinstance(data, dict) else None
    if not isinstance(reason, dict) or not reason:
        return fallback
    node = reason.get("node_name") or reason.get("node_id") or "?"
    kind = f" ({reason['exception_type']})" if reason.get("exception_type") else ""
    return f"node {node}: {reason.get('exception_message') or 'no message'}{kind}"


def _node_errors(data: dict[str, Any]) -> str | None:
    """A non-empty ``node_errors`` in the create reply's ``promptTips`` (a JSON string)."""
    try:
        tips = json.loads(data.get("promptTips") or "{}")
    except (TypeError, ValueError):
        return None
    errors = tips.get("node_errors") if isinstance(tips, dict) else None
    if not errors:
        return None
    return "; ".join(f"node {node}: {json.dumps(detail, ensure_ascii=False)[:200]}"
                     for node, detail in errors.items())


def _safe_name(index: int, url: str) -> str:
    name = Path(urlsplit(url).path).name or "output"
    return f"{index:02d}_" + re.sub(r"[^A-Za-z0-9._-]", "_", name)


class RunningHubProvider:
    def __init__(self, prov: ProviderConfig, clock: Clock) -> None:
        self.prov = prov
        self.clock = clock
        self.lane = prov.lane
        self._api_key: str | None = None
        self._client: httpx.AsyncClient | None = None
        self._gate: asyncio.Lock | None = None
        self._freed: asyncio.Event | None = None
        self._frees = 0  # remote tasks of ours that ended: a capacity back-off may end early

    async def start(self) -> None:
        self._api_key = resolve_api_key(self.prov.name, self.prov.api_key, self.prov.api_key_env)
        # Created here so the client, lock and event belong to the running (qasync) loop.
        # No default headers: the key must not travel to the CDN hosts of the output files.
        self._client = httpx.AsyncClient(base_url=self.prov.base_url, timeout=HTTP_TIMEOUT)
        self._gate = asyncio.Lock()  # FIFO-fair: waiters acquire in arrival order
        self._freed = asyncio.Event()

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    # --- one attempt -----------------------------------------------------------------------
    async def run(self, ctx: TaskContext) -> TaskResult:
        try:
            remote_id = ctx.task.remote_id
            if remote_id:
                ctx.log(f"resuming RunningHub task {remote_id} (a task is never created twice)")
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
        if ctx.stop_reason == STOP_SHUTDOWN:
            ctx.log(f"left RunningHub task {remote_id} running; polling resumes on the next start")
        elif ctx.stop_reason == STOP_CANCEL:
            problem = "no reply in time"
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(CANCEL_WAIT_S):
                    problem = await self._cancel_remote(ctx, remote_id)
            if problem is None:
                ctx.log(f"RunningHub task {remote_id} canceled remotely")
                self._slot_freed()
                return
            # The scheduler writes this as the task's error: "canceled" alone would hide that
            # the remote task may still run (and bill).
            ctx.cancel_note = (f"local cancel only; remote cancel failed ({problem}); "
                               f"check {self.record_url(remote_id)}")
            ctx.log(ctx.cancel_note)

    async def _cancel_remote(self, ctx: TaskContext, remote_id: str) -> str | None:
        """Ask RunningHub to cancel, a few times; None once it says code 0, else the last problem."""
        problem = ""
        for attempt in range(1, CANCEL_TRIES + 1):
            try:
                reply = await self._call("/task/openapi/cancel", {"taskId": remote_id})
            except _Unusable as exc:
                problem = str(exc)
            else:
                if reply.code == 0:
                    return None
                problem = f"code {reply.code} {reply.msg}".strip()
            if attempt < CANCEL_TRIES:
                ctx.log(f"remote cancel of RunningHub task {remote_id} failed ({problem}); trying again")
                await asyncio.sleep(self.clock.real(CANCEL_RETRY_S))
        return problem

    # --- create, in FIFO turn --------------------------------------------------------------
    async def _create_in_turn(self, ctx: TaskContext) -> str:
        path, body = self._create_request(ctx)
        assert self._gate is not None, "start() not called"
        async with self._gate:
            full_tries = transient_tries = 0
            while True:
                # Every try, not once: another task may have paused the lane while we backed off.
                self._check_usable(ctx)
                frees_before = self._frees
                try:
                    reply = await self._send_create(ctx, path, body)
                except _NotSent as exc:
                    reply = Reply(-1, str(exc), None)
                if reply.code == 0:
                    return self._accept_created(ctx, reply)
                if reply.code in CAPACITY_BACKOFF_S:
                    await self._back_off(ctx, reply, full_tries, frees_before)
                    full_tries += 1
                    continue
                if (reply.code in TRANSIENT_CODES or reply.code == -1) and transient_tries < CREATE_TRANSIENT_TRIES:
                    transient_tries += 1
                    ctx.log(f"create failed ({reply.code} {reply.msg}); trying again")
                    await ctx.clock.sleep(2.0 ** transient_tries)
                    continue
                raise self._create_error(ctx, reply)

    def _create_request(self, ctx: TaskContext) -> tuple[str, dict[str, Any]]:
        options = ctx.model.options
        params = {**options.get("defaults", {}), **ctx.task.params_dict}
        nodes = build_node_info_list(ctx.model, ctx.task.prompt, params)
        body: dict[str, Any] = {}
        if options.get("webapp_id") is not None:
            webapp = str(options["webapp_id"])
            path = "/task/openapi/ai-app/run"
            body["webappId"] = int(webapp) if webapp.isdigit() else webapp  # int64, as RunningHub's node sends
            body["nodeInfoList"] = nodes
        elif options.get("workflow_id") is not None:
            path = "/task/openapi/create"
            body["workflowId"] = str(options["workflow_id"])
            if nodes:
                body["nodeInfoList"] = nodes
        else:
            raise TaskError(ErrorKind.BAD_INPUT, f"model {ctx.model.name!r} names neither workflow_id "
                                                 "nor webapp_id", retry=False)
        instance = params.get("instance_type", options.get("instance_type"))
        if instance:
            body["instanceType"] = instance
        return path, body

    def _check_usable(self, ctx: TaskContext) -> None:
        """Behind a head task that hit an auth/balance error (or with no key at all): go back
        to the queue instead of failing one task after another against the same wall."""
        if not self._api_key:
            reason = (f"no API key for provider {self.prov.name!r} (set api_key_env, the OS keyring "
                      "or api_key)")
            raise Requeue(reason, pause_lane=reason)  # nothing was tried: no task fails for it
        reason = ctx.store.paused_lanes().get(self.lane)
        if reason is not None:
            raise Requeue(f"lane paused ({reason}); waits at the head of the queue until it is resumed")

    async def _send_create(self, ctx: TaskContext, path: str, body: dict[str, Any]) -> Reply:
        job = asyncio.ensure_future(self._create_and_save(ctx, path, body))
        try:
            return await asyncio.shield(job)
        except asyncio.CancelledError:
            # The request may already be at RunningHub: let it finish so that a task it created
            # has its id saved (and is cancelled remotely on an operator cancel), never lost.
            await asyncio.wait([job])
            if not job.cancelled():
                job.exception()  # seen here; the scheduler records the stop, not this error
            raise

    async def _create_and_save(self, ctx: TaskContext, path: str, body: dict[str, Any]) -> Reply:
        try:
            reply = await self._call(path, body)
        except _NotSent:
            raise
        except _Unusable as exc:
            raise TaskError(
                ErrorKind.NETWORK,
                f"create was sent but its reply was lost ({exc}); RunningHub may have created the task, "
                f"so it is not resubmitted automatically: check {self.record_url(None)} before retrying",
                retry=False) from None
        if reply.code == 0:
            task_id = reply.data.get("taskId") if isinstance(reply.data, dict) else None
            if not task_id:
                raise TaskError(ErrorKind.PROVIDER, "create answered code 0 without a taskId; check "
                                                    f"{self.record_url(None)} before retrying", retry=False)
            ctx.save_remote_id(str(task_id))  # before anything else: a lost id means a second bill
        return reply

    def _accept_created(self, ctx: TaskContext, reply: Reply) -> str:
        remote_id = str(reply.data["taskId"])
        problems = _node_errors(reply.data)
        if problems:
            raise TaskError(ErrorKind.BAD_INPUT, f"RunningHub rejected the workflow inputs: {problems}",
                            retry=False)
        ctx.log(f"created RunningHub task {remote_id} ({reply.data.get('taskStatus') or 'QUEUED'})")
        return remote_id

    async def _back_off(self, ctx: TaskContext, reply: Reply, tries: int, frees_before: int) -> None:
        delay = min(BACKOFF_CAP_S, CAPACITY_BACKOFF_S[reply.code] * BACKOFF_GROWTH ** tries)
        delay *= random.uniform(0.8, 1.2)
        ctx.log(f"RunningHub is full ({reply.code} {reply.msg}); keeping the head of the queue, "
                f"next try in {delay:.0f} s or when one of our tasks ends")
        if self._frees != frees_before:
            return  # one of ours ended while we asked: capacity is back already
        assert self._freed is not None
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._freed.wait(), self.clock.real(delay))

    def _slot_freed(self) -> None:
        """One of our remote tasks ended: wake a create that is backing off on "full"."""
        self._frees += 1
        if self._freed is not None:
            self._freed.set()
            self._freed = asyncio.Event()

    def _create_error(self, ctx: TaskContext, reply: Reply) -> TaskError:
        text = f"RunningHub create: {reply.code} {reply.msg}".strip()
        account_error = self._account_error(ctx, reply, text)
        if account_error is not None:
            return account_error
        if reply.code == -1 or reply.code in TRANSIENT_CODES:
            return TaskError(ErrorKind.NETWORK, text)  # nothing was created: a retry may create
        return TaskError(ErrorKind.BAD_INPUT, text, retry=False)

    def _account_error(self, ctx: TaskContext, reply: Reply, text: str) -> TaskError | None:
        """Auth and balance codes stop the whole lane, not one task after another."""
        if reply.code in AUTH_CODES:
            kind, why = ErrorKind.LOGIN, "API key rejected"
        elif reply.code in QUOTA_CODES:
            kind, why = ErrorKind.QUOTA, "balance or membership exhausted"
        else:
            return None
        return self._pause(ctx, kind, f"RunningHub {why} ({reply.code} {reply.msg})", text)

    def _pause(self, ctx: TaskContext, kind: ErrorKind, why: str, text: str | None = None) -> TaskError:
        reason = f"{why}; fix it, then resume the lane"
        # Written now, not only by the scheduler after we return: the tasks queued behind the
        # gate must see the pause before they try to create. retry: the task comes back when
        # the operator resumes the lane (a task with a remote id then resumes polling).
        ctx.store.pause_lane(self.lane, reason)
        return TaskError(kind, text or why, retry=True, pause_lane=reason)

    # --- poll, fetch, download -------------------------------------------------------------
    async def _follow(self, ctx: TaskContext, remote_id: str) -> TaskResult:
        state = await self._poll_until_done(ctx, remote_id)
        self._slot_freed()
        if state == "CANCEL":
            raise TaskError(ErrorKind.CANCELED, f"RunningHub task {remote_id} was canceled remotely", retry=False)
        if state == "FAILED":
            reply = await self._call_tolerant(ctx, "/task/openapi/outputs", remote_id)
            reason = format_failed_reason(reply.data if reply else None, "no failedReason given")
            # Not retried: a retry would only poll the same failed remote task again.
            raise TaskError(ErrorKind.PROVIDER, f"RunningHub task {remote_id} failed: {reason}", retry=False)
        items = await self._fetch_outputs(ctx, remote_id)
        files = await self._download_all(ctx, remote_id, items)
        return TaskResult(text=self._summary(remote_id, items), files=files)

    async def _poll_until_done(self, ctx: TaskContext, remote_id: str) -> str:
        deadline = self.clock.monotonic() + self.clock.real(self.prov.timeout_s)
        # Each task's first poll is offset within one interval, so 100 tasks don't poll in a burst.
        offset = zlib.crc32(ctx.task.task_id.encode()) / 2**32 * self.prov.poll_interval_s
        await ctx.clock.sleep(offset)
        last_state, failures = None, 0
        while True:
            try:
                state = await self._status(ctx, remote_id)
                failures = 0
            except _Unusable as exc:
                failures += 1
                if failures >= POLL_FAILURE_BUDGET:
                    raise TaskError(ErrorKind.NETWORK, f"{failures} polls in a row failed (last: {exc}); "
                                                       f"RunningHub task {remote_id} may still be running: "
                                                       f"check {self.record_url(remote_id)}") from None
                state = last_state
            if state != last_state:
                ctx.log(f"RunningHub task {remote_id}: {state}")
                last_state = state
            if state in TERMINAL:
                return state
            if self.clock.monotonic() >= deadline:
                raise TaskError(ErrorKind.TIMEOUT,
                                f"no result after {self.prov.timeout_s:.0f} s; RunningHub task {remote_id} is "
                                f"still running remotely; check {self.record_url(remote_id)}", retry=False)
            await ctx.clock.sleep(self.prov.poll_interval_s)

    async def _status(self, ctx: TaskContext, remote_id: str) -> str:
        reply = await self._call("/task/openapi/status", {"taskId": remote_id})
        if reply.code == 0:
            data = reply.data
            if isinstance(data, dict):
                data = data.get("taskStatus") or data.get("status")
            return str(data).upper() if data else "RUNNING"
        self._raise_for_poll_code(ctx, reply, remote_id)
        return {813: "QUEUED", 804: "RUNNING", 805: "FAILED"}[reply.code]

    def _raise_for_poll_code(self, ctx: TaskContext, reply: Reply, remote_id: str) -> None:
        """Returns only for the status codes 804/813/805; raises for everything else."""
        if reply.code in (804, 805, 813):
            return
        text = f"RunningHub task {remote_id}: {reply.code} {reply.msg}"
        account_error = self._account_error(ctx, reply, text)
        if account_error is not None:
            raise account_error
        if reply.code in (807, 423, 1004):
            raise TaskError(ErrorKind.PROVIDER, f"{text} (unknown to RunningHub under this key)", retry=False)
        if reply.code in REMOTE_FAILED_CODES:
            # Not retried: a retry would only poll the same failed remote task again.
            raise TaskError(ErrorKind.PROVIDER, f"{text} (the remote task failed; submit it again as a "
                                                "new task to run it again)", retry=False)
        raise _Unusable(f"code {reply.code} {reply.msg}")

    async def _call_tolerant(self, ctx: TaskContext, path: str, remote_id: str) -> Reply | None:
        try:
            return await self._call(path, {"taskId": remote_id})
        except _Unusable as exc:
            ctx.log(f"{path} for {remote_id}: {exc}")
            return None

    async def _fetch_outputs(self, ctx: TaskContext, remote_id: str) -> list[dict[str, Any]]:
        for attempt in range(1, OUTPUTS_TRIES + 1):
            reply = await self._call_tolerant(ctx, "/task/openapi/outputs", remote_id)
            if reply is not None:
                if reply.code == 805:
                    reason = format_failed_reason(reply.data, reply.msg)
                    raise TaskError(ErrorKind.PROVIDER, f"RunningHub task {remote_id} failed: {reason}",
                                    retry=False)
                if reply.code not in (0, 804, 813):
                    self._raise_for_poll_code(ctx, reply, remote_id)
                items = reply.data if reply.code == 0 and isinstance(reply.data, list) else None
                if items or (items == [] and attempt == OUTPUTS_TRIES):
                    return [i for i in items if isinstance(i, dict)]
            await ctx.clock.sleep(OUTPUTS_RETRY_S)
        raise TaskError(ErrorKind.NETWORK, f"RunningHub task {remote_id} succeeded but its outputs did not "
                                           f"come; a retry fetches them again (no resubmission)")

    async def _download_all(self, ctx: TaskContext, remote_id: str, items: list[dict[str, Any]]) -> list[str]:
        """Every file at once: the links may not live long, and the task is already billed."""
        urls = [str(i["fileUrl"]) for i in items if i.get("fileUrl")]
        if not urls:
            return []
        folder = ctx.make_output_dir()
        targets = [folder / _safe_name(n, url) for n, url in enumerate(urls)]
        results = await asyncio.gather(*(self._download(ctx, u, t) for u, t in zip(urls, targets)),
                                       return_exceptions=True)
        failed = [(u, r) for u, r in zip(urls, results) if isinstance(r, BaseException)]
        if failed:
            url, exc = failed[0]
            raise TaskError(ErrorKind.NETWORK, f"{len(failed)} of {len(urls)} downloads of RunningHub task "
                                               f"{remote_id} failed ({url}: {exc}); a retry downloads them "
                                               "again, the task is not resubmitted")
        ctx.log(f"downloaded {len(targets)} file(s) to {folder}")
        return [str(t) for t in targets]

    async def _download(self, ctx: TaskContext, url: str, target: Path) -> None:
        assert self._client is not None
        partial = target.with_name(target.name + ".part")
        for attempt in range(1, DOWNLOAD_TRIES + 1):
            try:
                async with self._client.stream("GET", url) as response:
                    response.raise_for_status()
                    with partial.open("wb") as out:
                        async for chunk in response.aiter_bytes():
                            out.write(chunk)
                partial.replace(target)
                return
            except httpx.HTTPError as exc:
                if attempt == DOWNLOAD_TRIES:
                    raise
                ctx.log(f"download of {url} failed ({type(exc).__name__}); try {attempt + 1} soon")
                await ctx.clock.sleep(DOWNLOAD_RETRY_S * attempt)

    @staticmethod
    def _summary(remote_id: str, items: list[dict[str, Any]]) -> str:
        coins = sum(float(i.get("consumeCoins") or 0) for i in items)
        cost = max((float(i.get("taskCostTime") or 0) for i in items), default=0.0)
        return f"RunningHub task {remote_id}: {len(items)} output(s), {cost:.0f} s, {coins:.0f} coins"

    # --- HTTP ------------------------------------------------------------------------------
    async def _call(self, path: str, payload: dict[str, Any]) -> Reply:
        """POST a legacy route: key in the body and as Bearer; any unusable answer is _Unusable."""
        if self._client is None:
            raise _NotSent("provider is closed")
        body = {"apiKey": self._api_key or "", **payload}
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        try:
            response = await self._client.post(path, json=body, headers=headers)
        except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout, httpx.UnsupportedProtocol) as exc:
            raise _NotSent(f"{type(exc).__name__}: {redact(str(exc))}") from None
        except httpx.LocalProtocolError as exc:
            # Refused by our own HTTP stack before a byte left (an illegal header value, e.g. a
            # control character in the key). No detail: it would quote the header, key included.
            raise _NotSent(f"{type(exc).__name__}: the request could not be built (a stray character "
                           "in the API key?)") from None
        except httpx.HTTPError as exc:
            raise _Unusable(f"{type(exc).__name__}: {redact(str(exc)) or 'no detail'}") from None
        reply = parse_reply(response)
        reply.msg = redact(reply.msg)
        return reply

    def record_url(self, remote_id: str | None) -> str:
        """Where the operator can look a task up on the site the key belongs to."""
        site = self.prov.base_url if "runninghub." in self.prov.base_url else RECORD_SITE
        return f"{site}/call-api/call-record-detail/{remote_id}" if remote_id else f"{site}/call-api/call-record"
