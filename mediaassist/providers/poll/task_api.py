"""Any submit-then-poll HTTP task API, driven by a profile (``core/task_profiles.py``).

The profile is data; this adapter reads it: it builds the create request from the prompt, the
model's ``remote_model`` and ``defaults``, the task's ``params`` and its media inputs, finds the
remote id, status, progress, results and errors in the answers by dotted paths, and maps HTTP
statuses and error codes onto the lane's answers (back off, pause the lane, fail the task).
"""

from __future__ import annotations

import base64
import json
import time
from pathlib import Path
from typing import Any

import httpx

from mediaassist.core.config import ProviderConfig
from mediaassist.core.errors import ErrorKind, TaskError
from mediaassist.core.lane_api import TaskContext
from mediaassist.core.media import verify_unchanged
from mediaassist.core.messages import Message, msg
from mediaassist.core.secrets import redact
from mediaassist.core.task_profiles import Request, TaskApiProfile
from mediaassist.providers.openai_api import parse_retry_after
from mediaassist.providers.poll.adapter import (
    Busy,
    Created,
    HttpAdapter,
    MultipartBody,
    PauseLane,
    RemoteOutput,
    RemoteState,
    RemoteStatus,
    Unusable,
    send,
    send_poll,
)
from mediaassist.providers.poll.lean_http import LeanResponse

MISSING = object()


def dig(body: Any, paths: tuple[str, ...]) -> Any:
    """The first value found at one of the dotted paths ("content.result_url"), else MISSING."""
    for path in paths:
        value = body
        for part in path.split("."):
            if not isinstance(value, dict) or part not in value:
                value = MISSING
                break
            value = value[part]
        if value is not MISSING and value is not None and value != "":
            return value
    return MISSING


class TaskApiAdapter(HttpAdapter):
    def __init__(self, prov: ProviderConfig, profile: TaskApiProfile) -> None:
        super().__init__(prov)
        self.profile = profile
        self.service = profile.name

    async def preflight(self) -> list[Message]:
        limit = self.profile.job_limit
        if limit is not None and self.prov.max_polling_tasks > limit:
            return [msg("warning: max_polling_tasks = {polled} is above the {limit} jobs {service} runs at once; "
                        "the rest are refused with 429 and wait",
                        polled=self.prov.max_polling_tasks, limit=limit, service=self.service)]
        return []

    uploads_inputs = False  # inputs travel inside the create request (multipart parts or URL fields)

    async def upload(self, entry: dict[str, Any]) -> str:
        raise TaskError(ErrorKind.BAD_INPUT, msg("{service}: inputs travel inside the create request",
                                                 service=self.service),
                        retry=False)

    # --- create ----------------------------------------------------------------------------
    async def create(self, ctx: TaskContext, uploads: dict[str, list[str]]) -> Created:
        fields = self._create_fields(ctx)
        files = self._input_parts(ctx, fields)
        if files or self.profile.create_body == "multipart":
            # Multipart fields are text: objects and numbers go as their JSON text.
            body = MultipartBody({k: v if isinstance(v, str) else json.dumps(v) for k, v in fields.items()}, files)
            response = await self._send(self.profile.create, None, content=body, headers=body.headers)
        else:
            response = await self._send(self.profile.create, None, json=fields)
        self._raise_for_answer(response, creating=True)
        body = self._json(response)
        remote_id = dig(body, self.profile.remote_id)
        if remote_id is MISSING or isinstance(remote_id, (dict, list)):
            raise TaskError(ErrorKind.PROVIDER, msg("create answered HTTP {status} without a job id at {path}; "
                                                    "check {where} before retrying",
                                                    status=response.status_code,
                                                    path=' / '.join(self.profile.remote_id),
                                                    where=self.where_to_check(None)), retry=False)
        label = dig(body, self.profile.state_path)
        return Created(str(remote_id), str(label) if label is not MISSING else "")

    def _create_fields(self, ctx: TaskContext) -> dict[str, Any]:
        options = ctx.model.options
        values = {"{prompt}": ctx.task.prompt, "{remote_model}": options.get("remote_model", ctx.model.name)}
        fields = {name: values.get(v, v) if isinstance(v, str) else v
                  for name, v in self.profile.create_fields.items()}
        params = {**options.get("defaults", {}), **ctx.task.params_dict}
        if self.profile.params_into:
            if params:
                fields[self.profile.params_into] = params
        else:
            fields.update(params)
        return fields

    def _input_parts(self, ctx: TaskContext, fields: dict[str, Any]) -> list[tuple[str, str, Path, str]]:
        """Media inputs as multipart file parts (streamed from disk), or as JSON URL fields (a
        local file becomes a data: URL there, which such APIs accept)."""
        parts: list[tuple[str, str, Path, str]] = []
        for name, entries in ctx.task.inputs_dict.items():
            spec = ctx.model.inputs.get(name)
            field_name = str(spec.options.get("field", name)) if spec is not None else name
            values: list[Any] = []
            for entry in entries:
                if self.profile.input_mode == "multipart" and "path" in entry:
                    verify_unchanged(entry)  # never send a different file than the operator checked
                    path = Path(entry["path"])
                    parts.append((field_name, path.name, path, entry.get("mime") or "application/octet-stream"))
                elif "url" in entry:
                    values.append(entry["url"])
                else:
                    verify_unchanged(entry)
                    raw = base64.b64encode(Path(entry["path"]).read_bytes()).decode()
                    values.append(f"data:{entry.get('mime') or 'application/octet-stream'};base64,{raw}")
            if values:
                fields[field_name] = values if len(values) > 1 else values[0]
        return parts

    # --- status and results ----------------------------------------------------------------
    async def status(self, ctx: TaskContext, remote_id: str) -> RemoteStatus:
        response = await self._send(self.profile.status, remote_id, hot=True)
        if response.status_code == 404:
            raise TaskError(ErrorKind.PROVIDER, msg("{service} job {remote_id}: HTTP 404 {detail} (unknown to the "
                                                    "service, or expired)",
                                                    service=self.service, remote_id=remote_id,
                                                    detail=self._error_text(response)), retry=False)
        self._raise_for_answer(response, creating=False)
        body = self._json(response)
        label = dig(body, self.profile.state_path)
        if label is MISSING:
            raise Unusable(f"HTTP {response.status_code}, no status at {' / '.join(self.profile.state_path)}")
        word = str(label).lower()
        state = RemoteState(self.profile.states.get(word, "running"))
        progress = dig(body, self.profile.progress_path)
        error = dig(body, self.profile.error_path) if state in (RemoteState.FAILED, RemoteState.CANCELED) else MISSING
        return RemoteStatus(
            state, str(label), progress=float(progress) if isinstance(progress, (int, float)) else None,
            error=redact(error if isinstance(error, str) else json.dumps(error, ensure_ascii=False)[:300])
            if error is not MISSING else None,
            outputs=self._outputs(body, remote_id) if state == RemoteState.SUCCESS else None)

    def _outputs(self, body: Any, remote_id: str) -> list[RemoteOutput]:
        found = dig(body, self.profile.result_urls) if self.profile.result_urls else MISSING
        if found is not MISSING:
            urls = found if isinstance(found, list) else [found]
            return [RemoteOutput(str(u), suffix=self.profile.result_suffix) for u in urls if isinstance(u, str)]
        if self.profile.content_path is not None:
            return [RemoteOutput(self.profile.content_path.replace("{id}", remote_id), with_key=True,
                                 suffix=self.profile.result_suffix)]
        return []

    async def results(self, ctx: TaskContext, remote_id: str,
                      status: RemoteStatus) -> tuple[list[RemoteOutput], Message]:
        outputs = status.outputs or []
        if not outputs:
            raise TaskError(ErrorKind.PROVIDER, msg("{service} job {remote_id} completed without a result URL",
                                                    service=self.service, remote_id=remote_id), retry=False)
        return outputs, msg("{service} job {remote_id}: {n} output(s)", service=self.service, remote_id=remote_id,
                            n=len(outputs))

    # --- cancel ----------------------------------------------------------------------------
    async def cancel(self, remote_id: str) -> None:
        if self.profile.cancel is None:
            raise Unusable(f"{self.service} has no cancel request")
        response = await self._send(self.profile.cancel, remote_id)
        if response.status_code >= 300:
            raise Unusable(f"HTTP {response.status_code} {self._error_text(response)}".strip())

    def where_to_check(self, remote_id: str | None) -> str:
        if remote_id is None:
            return f"the job list of {self.prov.base_url}"
        return f"{self.prov.base_url}{self.profile.status.path.replace('{id}', remote_id)}"

    # --- answers ---------------------------------------------------------------------------
    def _raise_for_answer(self, response: httpx.Response | LeanResponse, creating: bool) -> None:
        """Non-2xx answers as the lane's answers; returns for a 2xx."""
        status = response.status_code
        if status < 300:
            return
        code = self._error_code(response)
        text = f"HTTP {status} {self._error_text(response)}".strip()
        if status in self.profile.backoff_status or code in self.profile.backoff_codes:
            if not creating:
                raise Unusable(text)  # a poll that was refused: ask again at the next interval
            raise Busy(text, self.profile.backoff_s,
                       parse_retry_after(response.headers.get("Retry-After"), time.time()))
        if status in self.profile.quota_status or code in self.profile.quota_codes:
            raise PauseLane(ErrorKind.QUOTA, msg("balance or quota exhausted ({detail})", detail=text))
        if status in self.profile.login_status:
            raise PauseLane(ErrorKind.LOGIN, msg("API key rejected ({detail})", detail=text))
        if status >= 500:
            raise Unusable(text)
        if creating:
            raise TaskError(ErrorKind.BAD_INPUT, msg("{service} create: {detail}",
                                                     service=self.service, detail=text), retry=False)
        raise Unusable(text)

    def _json(self, response: httpx.Response | LeanResponse) -> Any:
        try:
            return response.json()
        except ValueError:
            raise Unusable(f"HTTP {response.status_code}, not JSON: {redact(response.text)[:60]!r}") from None

    def _error_code(self, response: httpx.Response | LeanResponse) -> str | None:
        try:
            code = dig(response.json(), self.profile.error_code)
        except ValueError:
            return None
        return str(code) if code is not MISSING else None

    def _error_text(self, response: httpx.Response | LeanResponse) -> str:
        try:
            message = dig(response.json(), self.profile.error_message)
        except ValueError:
            return redact(response.text)[:120]
        if message is MISSING:
            return ""
        return redact(message if isinstance(message, str) else json.dumps(message, ensure_ascii=False))[:300]

    async def _send(self, request: Request, remote_id: str | None, hot: bool = False,
                    **kwargs: Any) -> httpx.Response | LeanResponse:
        """``hot``: the status poll, sent on the lean client."""
        client = self._live_client()
        path = request.path.replace("{id}", remote_id) if remote_id is not None else request.path
        headers = {**self._auth(), **kwargs.pop("headers", {})}
        if hot:
            return await send_poll(self._poll_client, client, request.method, path, headers=headers)
        return await send(client, request.method, path, headers=headers, **kwargs)

