"""RunningHub on the poll lane: submit a workflow / AI-app task, then poll it.

Business errors arrive as HTTP 200 with a non-zero ``code`` (int or numeric string), so the
code is always read before the data. Legacy routes carry the key in the body (and as Bearer),
``accountStatus`` as ``apikey``, v2 routes as Bearer only. The v2 query (``/openapi/v2/query``)
is the fallback when the legacy status or outputs fail or disagree, and the only place that
tells a task cancelled on the website (``CANCEL``) from a failed one. See
``reference/runninghub.md`` §3-§7.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import httpx

from mediaassist.core.config import ModelConfig
from mediaassist.core.errors import ErrorKind, TaskError
from mediaassist.core.lane_api import TaskContext
from mediaassist.core.messages import Message, msg
from mediaassist.core.money import Money, Produced, money_message
from mediaassist.core.secrets import redact
from mediaassist.providers.poll.adapter import (
    Busy,
    Created,
    HttpAdapter,
    MultipartBody,
    NotSent,
    PauseLane,
    RemoteOutput,
    RemoteState,
    RemoteStatus,
    Unusable,
    send,
    send_poll,
)
from mediaassist.providers.poll.lean_http import LeanResponse

# "Full, come back later": nominal first delay per code (the lane grows it ×1.5 per try).
# 814: our personal queue on RunningHub is full (1000 tasks): it drains, so wait like 421.
CAPACITY_BACKOFF_S = {421: 10.0, 1520: 10.0, 1003: 10.0, 415: 30.0, 1010: 30.0, 1011: 30.0, 814: 30.0}
AUTH_CODES = frozenset({801, 802, 806, 811, 1002, 1014})
QUOTA_CODES = frozenset({416, 436, 812})
TRANSIENT_CODES = frozenset({500, 808, 1000, 1005, 1012, 1504})
# The remote task ended badly (timed out / generation failed): polling it again cannot help.
REMOTE_FAILED_CODES = frozenset({1006, 1015})
UNKNOWN_TASK_CODES = frozenset({807, 423, 1004})
SIZE_CODES = frozenset({809, 1008})
LEGACY_STATES = {"QUEUED": RemoteState.QUEUED, "CREATE": RemoteState.QUEUED, "RUNNING": RemoteState.RUNNING,
                 "SUCCESS": RemoteState.SUCCESS, "FAILED": RemoteState.FAILED, "CANCEL": RemoteState.CANCELED}
POLL_CODE_STATES = {813: "QUEUED", 804: "RUNNING", 805: "FAILED"}
OUTPUTS_TRIES = 6  # outputs may still say "running" for a moment after SUCCESS
OUTPUTS_RETRY_S = 2.0
RECORD_SITE = "https://www.runninghub.cn"
COINS = "coins"  # the currency a RunningHub key's coins are counted in (price tables and budgets)


@dataclass
class Reply:
    code: int
    msg: str
    data: Any


def parse_reply(response: httpx.Response | LeanResponse) -> Reply:
    """The legacy envelope ``{code, msg, data}``; ``code`` may be an int or a numeric string."""
    body = _json_body(response)
    if not isinstance(body, dict) or "code" not in body:
        raise Unusable(f"HTTP {response.status_code}, no code in the reply")
    try:
        code = int(str(body["code"]).strip())
    except ValueError:
        raise Unusable(f"code {body['code']!r} is not a number") from None
    return Reply(code, redact(str(body.get("msg") or body.get("message") or "")), body.get("data"))


def _json_body(response: httpx.Response | LeanResponse) -> Any:
    try:
        return response.json()
    except ValueError:
        # Redacted before it is cut: a cut key would no longer match, and its start would leak.
        raise Unusable(f"HTTP {response.status_code}, not JSON: {redact(response.text)[:60]!r}") from None


def build_node_info_list(model: ModelConfig, prompt: str, params: dict[str, Any],
                         uploads: dict[str, list[str]] | None = None) -> list[dict[str, Any]]:
    """Model's fixed entries, then the prompt's entry, then the task's ``params.node_info_list``,
    then each media input's node with its uploaded fileName; a later entry for the same
    (nodeId, fieldName) replaces an earlier one."""
    options = model.options
    entries: list[Any] = list(options.get("node_info_list", []))
    if options.get("prompt_node_id") is not None:
        entries.append({"nodeId": options["prompt_node_id"],
                        "fieldName": options.get("prompt_field_name", "text"), "fieldValue": prompt})
    entries += list(params.get("node_info_list", []))
    entries += input_nodes(model, uploads or {})
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    for entry in entries:
        if not isinstance(entry, dict) or not {"nodeId", "fieldName", "fieldValue"} <= entry.keys():
            raise TaskError(ErrorKind.BAD_INPUT, msg("node_info_list entry {n} needs nodeId, fieldName and "
                                                     "fieldValue",
                                                     n=repr(entry)), retry=False)
        key = (str(entry["nodeId"]), str(entry["fieldName"]))
        merged[key] = {**entry, "nodeId": key[0], "fieldName": key[1]}
    return list(merged.values())


def input_nodes(model: ModelConfig, uploads: dict[str, list[str]]) -> list[dict[str, Any]]:
    """``inputs = { first_frame = { nodeId = "39", fieldName = "image" } }``: one node per input,
    its value the uploaded fileName (a list for a ``multiple`` input)."""
    nodes = []
    for name, names in uploads.items():
        spec = model.inputs.get(name)
        if spec is None or "nodeId" not in spec.options:
            raise TaskError(ErrorKind.BAD_INPUT, msg("model {model} input {name} names no nodeId (inputs = {{ name "
                                                     "= {{ nodeId = \"39\", fieldName = \"image\" }} }})",
                                                     model=repr(model.name), name=repr(name)),
                            retry=False)
        value: Any = names if spec.multiple else names[0]
        nodes.append({"nodeId": str(spec.options["nodeId"]),
                      "fieldName": str(spec.options.get("fieldName", "image")), "fieldValue": value})
    return nodes


def _decimal(value: Any) -> Decimal | None:
    """RunningHub's numbers come as strings ("17"), sometimes null or empty."""
    if value is None or isinstance(value, bool) or str(value).strip() == "":
        return None
    try:
        number = Decimal(str(value).strip())
    except InvalidOperation:
        return None
    return number if number.is_finite() else None


def format_failed_reason(data: Any, fallback: str) -> str:
    reason = data.get("failedReason") if isinstance(data, dict) else None
    if not isinstance(reason, dict) or not reason:
        return fallback
    node = reason.get("node_name") or reason.get("node_id") or "?"
    kind = f" ({reason['exception_type']})" if reason.get("exception_type") else ""
    return f"node {node}: {reason.get('exception_message') or 'no message'}{kind}"


def node_errors(data: dict[str, Any]) -> str | None:
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


class RunningHubAdapter(HttpAdapter):
    service = "RunningHub"
    uploads_inputs = True  # workflow nodes take the fileName of an upload, never a path or URL
    currency = "CNY"  # of consumeMoney/remainMoney until accountStatus names the account's own

    # --- pre-flight ------------------------------------------------------------------------
    async def preflight(self) -> list[Message]:
        """accountStatus (balance, tasks now running) and, where the key has it, v2
        queue/status (concurrentLimit); a warning when we would poll more than it runs."""
        lines: list[Message] = []
        reply = await self._call("/uc/openapi/accountStatus", {}, key_field="apikey")
        if reply.code != 0 or not isinstance(reply.data, dict):
            return [msg("warning: accountStatus answered {code} {message}", code=reply.code, message=reply.msg)]
        data = reply.data
        self.currency = str(data.get("currency") or self.currency)
        self.last_balance = self._balance_of(data)
        balance = data.get("remainCoins") or data.get("remainMoney")
        lines.append(msg("account: {plan}, balance {balance} {currency}, {running} task(s) running",
                         plan=data.get('apiType') or 'key', balance=balance,
                         currency=data.get("currency") or msg("coins"), running=data.get("currentTaskCounts")))
        limit = self.concurrent_limit = await self._concurrent_limit()
        if limit is not None:
            lines.append(msg("queue: the key runs {limit} task(s) at once", limit=limit))
            if self.prov.max_polling_tasks > limit and not self.prov.follows_service_limit:
                lines.append(msg("warning: max_polling_tasks = {polled} is above what the account runs at once "
                                 "({limit}); the rest wait in RunningHub's queue or get 421",
                                 polled=self.prov.max_polling_tasks, limit=limit))
        return lines

    async def read_balance(self) -> Money | None:
        """``remainCoins`` (in coins), else ``remainMoney`` in the account's currency."""
        reply = await self._call("/uc/openapi/accountStatus", {}, key_field="apikey")
        if reply.code != 0 or not isinstance(reply.data, dict):
            return None
        self.last_balance = self._balance_of(reply.data)
        return self.last_balance

    def _balance_of(self, data: dict[str, Any]) -> Money | None:
        coins, money = _decimal(data.get("remainCoins")), _decimal(data.get("remainMoney"))
        if coins is not None:
            return Money(coins, COINS)
        return Money(money, str(data.get("currency") or self.currency)) if money is not None else None

    async def _concurrent_limit(self) -> int | None:
        try:
            body = _json_body(await self._send("GET", "/openapi/v2/queue/status"))
        except Unusable:
            return None  # not every key has v2
        data = body.get("data") if isinstance(body, dict) and str(body.get("code")) == "0" else None
        try:
            return int(str(data.get("concurrentLimit"))) if isinstance(data, dict) else None
        except ValueError:
            return None

    # --- create ----------------------------------------------------------------------------
    async def upload(self, entry: dict[str, Any]) -> str:
        """Legacy ``/task/openapi/upload`` (form ``apiKey`` + ``fileType``) or v2
        ``/openapi/v2/media/upload/binary`` (Bearer), as the key uses; the file is streamed."""
        path = Path(entry["path"])
        legacy = self.prov.upload_api == "legacy"
        route = "/task/openapi/upload" if legacy else "/openapi/v2/media/upload/binary"
        form = {"apiKey": self._api_key or "", "fileType": "input"} if legacy else {}
        body = MultipartBody(form, [("file", path.name, path, entry.get("mime") or "application/octet-stream")])
        try:
            response = await self._send("POST", route, content=body, headers=body.headers)
        except FileNotFoundError:
            raise TaskError(ErrorKind.BAD_INPUT, msg("input file {path} is gone", path=path), retry=False) from None
        reply = parse_reply(response)
        if reply.code == 0:
            name = reply.data.get("fileName") if isinstance(reply.data, dict) else None
            if not name:
                raise Unusable(f"upload of {path.name} answered code 0 without a fileName")
            return str(name)
        if reply.code in CAPACITY_BACKOFF_S:
            raise Busy(f"upload: {reply.code} {reply.msg}".strip(), CAPACITY_BACKOFF_S[reply.code])
        if reply.code == 401:
            raise PauseLane(ErrorKind.LOGIN, msg("API key rejected by the v2 upload ({msg})", msg=reply.msg))
        self._raise_account_error(reply)
        if reply.code in TRANSIENT_CODES:
            raise NotSent(f"upload of {path.name}: {reply.code} {reply.msg}".strip())
        why = " (too large for RunningHub)" if reply.code in SIZE_CODES else ""
        raise TaskError(ErrorKind.BAD_INPUT, msg("RunningHub upload of {file}: {code} {msg}{why}",
                                                 file=path.name, code=reply.code, msg=reply.msg, why=why),
                        retry=False)

    async def create(self, ctx: TaskContext, uploads: dict[str, list[str]]) -> Created:
        path, body = self._create_request(ctx, uploads)
        reply = await self._call(path, body)
        if reply.code == 0:
            data = reply.data if isinstance(reply.data, dict) else {}
            task_id = data.get("taskId")
            if not task_id:
                raise TaskError(ErrorKind.PROVIDER, msg("create answered code 0 without a taskId; check {where} "
                                                        "before retrying",
                                                        where=self.where_to_check(None)), retry=False)
            return Created(str(task_id), str(data.get("taskStatus") or "QUEUED"), rejected=node_errors(data))
        if reply.code in CAPACITY_BACKOFF_S:
            raise Busy(f"{reply.code} {reply.msg}".strip(), CAPACITY_BACKOFF_S[reply.code])
        self._raise_account_error(reply)
        if reply.code in TRANSIENT_CODES:
            raise NotSent(f"{reply.code} {reply.msg}".strip())  # nothing was created: safe to repeat
        raise TaskError(ErrorKind.BAD_INPUT, f"RunningHub create: {reply.code} {reply.msg}".strip(), retry=False)

    def _create_request(self, ctx: TaskContext, uploads: dict[str, list[str]]) -> tuple[str, dict[str, Any]]:
        options = ctx.model.options
        params = {**options.get("defaults", {}), **ctx.task.params_dict}
        nodes = build_node_info_list(ctx.model, ctx.task.prompt, params, uploads)
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
            raise TaskError(ErrorKind.BAD_INPUT, msg("model {model} names neither workflow_id nor webapp_id",
                                                     model=repr(ctx.model.name)), retry=False)
        instance = params.get("instance_type", options.get("instance_type"))
        if instance:
            body["instanceType"] = instance
        return path, body

    @staticmethod
    def _raise_account_error(reply: Reply) -> None:
        """Auth and balance codes stop the whole lane, not one task after another."""
        if reply.code in AUTH_CODES:
            raise PauseLane(ErrorKind.LOGIN, msg("API key rejected ({code} {msg})", code=reply.code, msg=reply.msg))
        if reply.code in QUOTA_CODES:
            raise PauseLane(ErrorKind.QUOTA, msg("balance or membership exhausted ({code} {msg})",
                                                 code=reply.code, msg=reply.msg))

    # --- status ----------------------------------------------------------------------------
    async def status(self, ctx: TaskContext, remote_id: str) -> RemoteStatus:
        """One legacy status request per poll; the v2 query only when that fails or ends FAILED
        (legacy reports a cancelled task as FAILED: v2 tells them apart and gives the reason)."""
        try:
            label = await self._legacy_status(remote_id)
        except Unusable as legacy_problem:
            queried = await self._query_or_none(remote_id)
            if queried is None:
                raise legacy_problem from None
            return queried
        state = LEGACY_STATES.get(label, RemoteState.RUNNING)
        if state != RemoteState.FAILED:
            return RemoteStatus(state, label)
        queried = await self._query_or_none(remote_id)
        if queried is not None and queried.state in (RemoteState.FAILED, RemoteState.CANCELED):
            return queried
        reply = await self._call_tolerant(ctx, "/task/openapi/outputs", remote_id)
        return RemoteStatus(state, label, error=format_failed_reason(reply.data if reply else None,
                                                                     "no failedReason given"))

    async def _legacy_status(self, remote_id: str) -> str:
        reply = await self._call("/task/openapi/status", {"taskId": remote_id}, hot=True)
        if reply.code == 0:
            data = reply.data
            if isinstance(data, dict):
                data = data.get("taskStatus") or data.get("status")
            return str(data).upper() if data else "RUNNING"
        self._raise_for_poll_code(reply, remote_id)
        return POLL_CODE_STATES[reply.code]

    def _raise_for_poll_code(self, reply: Reply, remote_id: str) -> None:
        """Returns only for the status codes 804/813/805; raises for everything else."""
        if reply.code in POLL_CODE_STATES:
            return
        text = f"RunningHub task {remote_id}: {reply.code} {reply.msg}"
        self._raise_account_error(reply)
        if reply.code in UNKNOWN_TASK_CODES:
            raise TaskError(ErrorKind.PROVIDER, msg("{detail} (unknown to RunningHub under this key)",
                                                    detail=text), retry=False)
        if reply.code in REMOTE_FAILED_CODES:
            # Not retried: a retry would only poll the same failed remote task again.
            raise TaskError(ErrorKind.PROVIDER, msg("{detail} (the remote task failed; submit it again as a new "
                                                    "task to run it again)",
                                                    detail=text), retry=False)
        raise Unusable(f"code {reply.code} {reply.msg}")

    async def query(self, remote_id: str) -> tuple[RemoteStatus, list[dict[str, Any]] | None]:
        """``POST /openapi/v2/query`` (Bearer): the flat task object, errors as string codes."""
        body = _json_body(await self._send("POST", "/openapi/v2/query", json={"taskId": remote_id}))
        if not isinstance(body, dict) or not body.get("status"):
            code = body.get("errorCode") if isinstance(body, dict) else None
            message = redact(str(body.get("errorMessage") or "")) if isinstance(body, dict) else ""
            raise Unusable(f"v2 query: {code or 'no status'} {message}".strip())
        label = str(body["status"]).upper()
        state = LEGACY_STATES.get(label, RemoteState.RUNNING)
        error = None
        if state in (RemoteState.FAILED, RemoteState.CANCELED):
            fallback = " ".join(str(body.get(k) or "") for k in ("errorCode", "errorMessage")).strip()
            error = redact(format_failed_reason(body, fallback or label))
        results = body.get("results")
        return RemoteStatus(state, label, error=error), results if isinstance(results, list) else None

    async def _query_or_none(self, remote_id: str) -> RemoteStatus | None:
        try:
            return (await self.query(remote_id))[0]
        except Unusable:
            return None

    # --- results ---------------------------------------------------------------------------
    async def results(self, ctx: TaskContext, remote_id: str,
                      status: RemoteStatus) -> tuple[list[RemoteOutput], Message]:
        items = await self._legacy_outputs(ctx, remote_id)
        if items is None:  # legacy never gave them: ask v2 before giving up
            items = await self._v2_results(ctx, remote_id)
        outputs = [RemoteOutput(str(i.get("fileUrl") or i.get("url") or i.get("outputUrl")))
                   for i in items if i.get("fileUrl") or i.get("url") or i.get("outputUrl")]
        status.produced = self._charged(items)
        return outputs, self._summary(remote_id, status.produced, items)

    async def _legacy_outputs(self, ctx: TaskContext, remote_id: str) -> list[dict[str, Any]] | None:
        """The outputs list; None when it still said "running" (or failed to answer) every time."""
        empty_seen = False
        for attempt in range(1, OUTPUTS_TRIES + 1):
            reply = await self._call_tolerant(ctx, "/task/openapi/outputs", remote_id)
            if reply is not None:
                if reply.code == 805:
                    reason = format_failed_reason(reply.data, reply.msg)
                    raise TaskError(ErrorKind.PROVIDER, msg("RunningHub task {remote_id} failed: {reason}",
                                                            remote_id=remote_id, reason=reason),
                                    retry=False)
                if reply.code not in (0, 804, 813):
                    self._raise_for_poll_code(reply, remote_id)
                items = reply.data if reply.code == 0 and isinstance(reply.data, list) else None
                if items:
                    return [i for i in items if isinstance(i, dict)]
                empty_seen = empty_seen or items == []
            if attempt < OUTPUTS_TRIES:
                await ctx.clock.sleep(OUTPUTS_RETRY_S)
        return [] if empty_seen else None

    async def _v2_results(self, ctx: TaskContext, remote_id: str) -> list[dict[str, Any]]:
        try:
            status, results = await self.query(remote_id)
        except Unusable as exc:
            ctx.log(msg("v2 query for {remote_id}: {detail}", remote_id=remote_id, detail=exc))
            results, status = None, None
        if status is not None and status.state == RemoteState.SUCCESS and results is not None:
            ctx.log(msg("outputs of RunningHub task {remote_id} taken from the v2 query", remote_id=remote_id))
            return [r for r in results if isinstance(r, dict)]
        raise TaskError(ErrorKind.NETWORK, msg("RunningHub task {remote_id} succeeded but its outputs did not "
                                               "come; a retry fetches them again (no resubmission)",
                                               remote_id=remote_id))

    def _charged(self, items: list[dict[str, Any]]) -> Produced:
        """What the outputs say the task cost. Every output item repeats the task's own usage
        (the v2 query has it once per task), so the largest is the task's charge, not a sum."""
        def most(key: str) -> Decimal | None:
            values = [v for v in (_decimal(i.get(key)) for i in items) if v is not None]
            return max(values) if values else None

        coins, money = most("consumeCoins"), most("consumeMoney")
        reported = (Money(coins, COINS) if coins is not None
                    else Money(money + (most("thirdPartyConsumeMoney") or 0), self.currency) if money is not None
                    else None)
        return Produced(images=len(items), reported=reported)

    @staticmethod
    def _summary(remote_id: str, produced: Produced, items: list[dict[str, Any]]) -> Message:
        cost = max((float(i.get("taskCostTime") or 0) for i in items), default=0.0)
        charged = produced.reported
        if charged is None:
            return msg("RunningHub task {remote_id}: {n} output(s), {seconds} s, no charge reported",
                       remote_id=remote_id, n=len(items), seconds=format(cost, ".0f"))
        return msg("RunningHub task {remote_id}: {n} output(s), {seconds} s, {amount}", remote_id=remote_id,
                   n=len(items), seconds=format(cost, ".0f"), amount=money_message(charged))

    async def _call_tolerant(self, ctx: TaskContext, path: str, remote_id: str) -> Reply | None:
        try:
            return await self._call(path, {"taskId": remote_id})
        except Unusable as exc:
            ctx.log(msg("{path} for {remote_id}: {detail}", path=path, remote_id=remote_id, detail=exc))
            return None

    # --- cancel ----------------------------------------------------------------------------
    async def cancel(self, remote_id: str) -> None:
        reply = await self._call("/task/openapi/cancel", {"taskId": remote_id})
        if reply.code != 0:
            raise Unusable(f"code {reply.code} {reply.msg}".strip())

    def where_to_check(self, remote_id: str | None) -> str:
        """Where the operator can look a task up on the site the key belongs to."""
        site = self.prov.base_url if "runninghub." in self.prov.base_url else RECORD_SITE
        return f"{site}/call-api/call-record-detail/{remote_id}" if remote_id else f"{site}/call-api/call-record"

    # --- HTTP ------------------------------------------------------------------------------
    async def _call(self, path: str, payload: dict[str, Any], key_field: str = "apiKey", hot: bool = False) -> Reply:
        """POST a legacy route: key in the body and as Bearer; any unusable answer is Unusable.
        ``hot``: the status poll, sent on the lean client."""
        body = {key_field: self._api_key or "", **payload}
        if hot:
            return parse_reply(await send_poll(self._poll_client, self._live_client(), "POST", path, json=body,
                                               headers=self.key_headers()))
        return parse_reply(await self._send("POST", path, json=body))

    async def _send(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """Every route gets the Bearer key (v2 needs it; legacy newer docs ask for it too)."""
        headers = {**self.key_headers(), **kwargs.pop("headers", {})}
        return await send(self._live_client(), method, path, headers=headers, **kwargs)

