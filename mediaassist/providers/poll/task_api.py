"""Any submit-then-poll HTTP task API, driven by a profile (``core/task_profiles.py``).

The profile is data; this adapter reads it, the same way for every service: it signs requests
with the profile's auth scheme (``auth.py``), builds the create request from a template (the
prompt, the model's ``remote_model`` and ``defaults``, the task's ``params`` and its media
inputs), finds the remote id, state, progress, results, figures and errors in the answers by
paths, makes the further result requests the profile lists, and maps HTTP statuses and error
codes (also those inside a 2xx answer) onto the lane's answers: back off, pause the lane, fail
the task.
"""

from __future__ import annotations

import base64
import json
import mimetypes
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import httpx

from mediaassist.core.config import ProviderConfig
from mediaassist.core.errors import ErrorKind, TaskError
from mediaassist.core.lane_api import TaskContext
from mediaassist.core.media import verify_unchanged
from mediaassist.core.messages import ENGLISH, Message, listed, msg, verbatim
from mediaassist.core.messages import render as render_message
from mediaassist.core.money import Money
from mediaassist.core.secrets import redact, resolve_api_key
from mediaassist.core.task_profiles import Request, TaskApiProfile, path_text
from mediaassist.core.task_templates import MISSING, Several, dig, placeholders, plain, render
from mediaassist.providers.base import parse_retry_after
from mediaassist.providers.poll.adapter import (
    TERMINAL_STATES,
    Busy,
    Created,
    HttpAdapter,
    MultipartBody,
    PauseLane,
    RemoteOutput,
    RemoteState,
    RemoteStatus,
    Unusable,
    same_origin,
    send,
    send_poll,
)
from mediaassist.providers.poll.auth import Signer, make_signer
from mediaassist.providers.poll.lean_http import LeanClient, LeanResponse

# A remote id goes into request paths as it is (a long-running operation's name has slashes):
# only characters that cannot leave the path or start a query.
_SAFE_ID = re.compile(r"[A-Za-z0-9._~:@=+/-]{1,512}")


def chosen_create(profile: TaskApiProfile, inputs: set[str]) -> tuple[str, dict[str, Any]]:
    """The create route and field template for a task with these inputs (``with_inputs``)."""
    path, fields = profile.create.path, dict(profile.create_fields)
    for variant in profile.variants:
        if variant.input in inputs:
            path = variant.path or path
            fields.update(variant.fields)
    return path, fields


def create_body(profile: TaskApiProfile, fields: dict[str, Any], lookup: Callable[[str], Any],
                params: dict[str, Any]) -> dict[str, Any]:
    """The create's JSON body: the template filled, then the params (top level or ``params_into``)."""
    body: dict[str, Any] = plain(render(fields, lookup))
    if profile.params_into:
        if params:
            into = body.get(profile.params_into)
            body[profile.params_into] = {**into, **params} if isinstance(into, dict) else params
    else:
        body.update(params)
    return body


def fill_path(path: str, values: dict[str, str]) -> str:
    """A route with its placeholders filled (values already safe for a URL)."""
    filled = render(path, lambda name: values.get(name, MISSING))
    return path if filled is MISSING else str(filled)


class TaskApiAdapter(HttpAdapter):
    uploads_inputs = False  # inputs travel inside the create request (multipart parts or JSON fields)

    def __init__(self, prov: ProviderConfig, profile: TaskApiProfile) -> None:
        super().__init__(prov)
        self.profile = profile
        self.service = profile.name
        self._signer: Signer | None = None
        self._auth_problem: Message | None = None

    def open(self, client: httpx.AsyncClient, poll_client: LeanClient | None, api_key: str | None) -> None:
        super().open(client, poll_client, api_key)
        self._signer, self._auth_problem = None, None
        if not api_key:
            return
        secret = None
        if self.profile.auth.needs_secret:
            secret = resolve_api_key(f"{self.prov.name}:secret", self.prov.secret_key, self.prov.secret_key_env)
        try:
            self._signer = make_signer(self.profile.auth, api_key, secret)
        except ValueError:
            where = (msg("secret_key_env = {name} is empty", name=repr(self.prov.secret_key_env))
                     if self.prov.secret_key_env else "set secret_key_env")
            self._auth_problem = msg("no secret key for provider {provider} ({scheme} signs with the access key and a "
                                     "secret key: {where}, or the OS keyring entry {entry})",
                                     provider=repr(self.prov.name), scheme=self.profile.auth.scheme, where=where,
                                     entry=self.prov.name + ":secret")

    def key_headers(self) -> dict[str, str]:
        if self._auth_problem is not None:
            raise PauseLane(ErrorKind.LOGIN, self._auth_problem)
        return self._signer.headers() if self._signer is not None else {}

    def download_headers(self, url: str) -> dict[str, str]:
        host = urlsplit(str(httpx.URL(self.prov.base_url).join(url))).netloc
        if same_origin(url, self.prov.base_url) or host in self.profile.key_hosts:
            return self.key_headers()
        return {}

    async def preflight(self) -> list[Message]:
        limit = self.profile.job_limit
        if limit is not None and self.prov.max_polling_tasks > limit:
            return [msg("warning: max_polling_tasks = {polled} is above the {limit} jobs {service} runs at once; "
                        "the rest are refused with 429 and wait",
                        polled=self.prov.max_polling_tasks, limit=limit, service=self.service)]
        return []

    async def upload(self, entry: dict[str, Any]) -> str:
        raise TaskError(ErrorKind.BAD_INPUT, msg("{service}: inputs travel inside the create request",
                                                 service=self.service),
                        retry=False)

    # --- create ----------------------------------------------------------------------------
    async def create(self, ctx: TaskContext, uploads: dict[str, list[str]]) -> Created:
        if ctx.task.remix_of and self.profile.remix is not None:
            return await self._remix(ctx, ctx.task.remix_of)
        path_template, template = chosen_create(self.profile, set(ctx.task.inputs_dict))
        remote_model = str(ctx.model.options.get("remote_model", ctx.model.name))
        params = {**ctx.model.options.get("defaults", {}), **ctx.task.params_dict}
        fields = create_body(self.profile, template, self._lookup(ctx, remote_model), params)
        files = self._input_parts(ctx, fields, {p.split(".")[1] for p in placeholders(template)
                                                if p.startswith("input.")})
        path = fill_path(path_template, {"remote_model": quote(remote_model, safe="")})
        route = Request(self.profile.create.method, path, self.profile.create.headers)
        if files or self.profile.create_body == "multipart":
            # Multipart fields are text: objects and numbers go as their JSON text.
            body = MultipartBody({k: v if isinstance(v, str) else json.dumps(v) for k, v in fields.items()}, files)
            response = await self._send(route, content=body, headers=body.headers)
        else:
            response = await self._send(route, json=fields)
        return self._created(response)

    def _created(self, response: httpx.Response | LeanResponse) -> Created:
        """The job a create (or a remix) answered with."""
        self._raise_for_answer(response, creating=True)
        answer = self._json(response)
        remote_id = dig(answer, self.profile.remote_id)
        if remote_id is MISSING or isinstance(remote_id, (dict, list)):
            raise TaskError(ErrorKind.PROVIDER, msg("create answered HTTP {status} without a job id at {path}; "
                                                    "check {where} before retrying",
                                                    status=response.status_code,
                                                    path=path_text(self.profile.remote_id),
                                                    where=self.where_to_check(None)), retry=False)
        if not _SAFE_ID.fullmatch(str(remote_id)) or ".." in str(remote_id):
            raise TaskError(ErrorKind.PROVIDER, msg("create answered a job id that cannot be polled safely "
                                                    "({remote_id}); check {where}",
                                                    remote_id=repr(str(remote_id)[:80]),
                                                    where=self.where_to_check(None)),
                            retry=False)
        label = dig(answer, self.profile.state_path)
        return Created(str(remote_id), str(label) if label is not MISSING else "")

    async def _remix(self, ctx: TaskContext, source_id: str) -> Created:
        """A new job made from ``source_id`` by the service's remix route (no new create)."""
        assert self.profile.remix is not None and self.profile.remix_fields is not None
        remote_model = str(ctx.model.options.get("remote_model", ctx.model.name))
        fields = plain(render(self.profile.remix_fields, self._lookup(ctx, remote_model)))
        path = fill_path(self.profile.remix.path, {"id": quote(source_id, safe="")})
        ctx.log(msg("remixing {service} video {remote_id}", service=self.service, remote_id=source_id))
        response = await self._send(Request(self.profile.remix.method, path, self.profile.remix.headers), json=fields)
        return self._created(response)

    def _lookup(self, ctx: TaskContext, remote_model: str) -> Callable[[str], Any]:
        """The placeholders' values; each worked out once (a file is read and encoded once)."""
        known: dict[str, Any] = {}

        def value(name: str) -> Any:
            if name not in known:
                known[name] = fill(name)
            return known[name]

        def fill(name: str) -> Any:
            if name == "prompt":
                return ctx.task.prompt
            if name == "remote_model":
                return remote_model
            _, input_name, *form = name.split(".")
            entries = ctx.task.inputs_dict.get(input_name)
            if not entries:
                return MISSING
            values = [self._input_value(input_name, entry, form[0] if form else "url_or_data_uri")
                      for entry in entries]
            return Several(values) if len(values) > 1 else values[0]
        return value

    def _input_value(self, name: str, entry: dict[str, Any], form: str) -> str:
        """One media input in the form the profile asks for."""
        mime = entry.get("mime") or mimetypes.guess_type(entry.get("path") or entry.get("url") or "")[0] \
            or "application/octet-stream"
        if form == "mime":
            return str(mime)
        if "url" in entry and form != "base64":
            return str(entry["url"])
        if "url" in entry:
            raise TaskError(ErrorKind.BAD_INPUT, msg("input {name}: {service} takes the file's bytes here; give a "
                                                     "local file, not the URL {url}",
                                                     name=name, service=self.service, url=entry['url']), retry=False)
        if form == "url":
            raise TaskError(ErrorKind.BAD_INPUT, msg("input {name}: {service} takes only URLs here, not the local "
                                                     "file {path}",
                                                     name=name, service=self.service, path=entry['path']), retry=False)
        verify_unchanged(entry)  # never send a different file than the operator checked
        raw = base64.b64encode(Path(entry["path"]).read_bytes()).decode()
        return f"data:{mime};base64,{raw}" if form == "url_or_data_uri" else raw

    def _input_parts(self, ctx: TaskContext, fields: dict[str, Any],
                     templated: set[str]) -> list[tuple[str, str, Path, str]]:
        """Inputs the template does not place: multipart file parts (streamed from disk), or JSON
        URL fields named by the model's input ``field`` (a local file as a data: URL)."""
        parts: list[tuple[str, str, Path, str]] = []
        for name, entries in ctx.task.inputs_dict.items():
            if name in templated:
                continue
            spec = ctx.model.inputs.get(name)
            field_name = str(spec.options.get("field", name)) if spec is not None else name
            values: list[Any] = []
            for entry in entries:
                if self.profile.input_mode == "multipart" and "path" in entry:
                    verify_unchanged(entry)
                    path = Path(entry["path"])
                    parts.append((field_name, path.name, path, entry.get("mime") or "application/octet-stream"))
                else:
                    values.append(self._input_value(name, entry, "url_or_data_uri"))
            if values:
                fields[field_name] = values if len(values) > 1 else values[0]
        return parts

    # --- status and results ----------------------------------------------------------------
    def _status_path(self, remote_id: str, ctx: TaskContext | None) -> str:
        """The status route; ``{create_path}``: the route this task was created on (the same
        choice again, from the same inputs)."""
        inputs = set(ctx.task.inputs_dict) if ctx is not None else set()
        remote_model = str(ctx.model.options.get("remote_model", ctx.model.name)) if ctx is not None else ""
        create_path = fill_path(chosen_create(self.profile, inputs)[0],
                                {"remote_model": quote(remote_model, safe="")})
        return fill_path(self.profile.status.path, {"id": remote_id, "create_path": create_path})

    async def status(self, ctx: TaskContext, remote_id: str) -> RemoteStatus:
        path = self._status_path(remote_id, ctx)
        response = await self._send(Request(self.profile.status.method, path, self.profile.status.headers), hot=True)
        if response.status_code == 404:
            raise TaskError(ErrorKind.PROVIDER, msg("{service} job {remote_id}: HTTP 404 {detail} (unknown to the "
                                                    "service, or expired)",
                                                    service=self.service, remote_id=remote_id,
                                                    detail=self._error_text(response)), retry=False)
        self._raise_for_answer(response, creating=False)
        body = self._json(response)
        state, label = self._state(body, response.status_code)
        progress = dig(body, self.profile.progress_path)
        if isinstance(progress, (int, float)) and not isinstance(progress, bool):
            progress = float(progress) * 100.0 / self.profile.progress_scale
        done = state == RemoteState.SUCCESS
        # An ended job's reason (a success without results may say why, too).
        error = dig(body, self.profile.error_path) if state in TERMINAL_STATES else MISSING
        return RemoteStatus(
            state, label, progress=progress if isinstance(progress, float) else None,
            error=redact(error if isinstance(error, str) else json.dumps(error, ensure_ascii=False)[:300])
            if error is not MISSING else None,
            outputs=self._outputs(body, remote_id) if done and not self.profile.result_requests else None,
            usage=self._usage(body) if done else None, body=body if done else None)

    def _state(self, body: Any, http_status: int) -> tuple[RemoteState, str]:
        """The state by presence (``status.present``), else by the state word."""
        for state, paths in self.profile.state_present:
            if dig(body, paths) is not MISSING:
                return RemoteState(state), state
        label = dig(body, self.profile.state_path)
        if label is MISSING:
            if self.profile.state_when_absent is not None:
                return RemoteState(self.profile.state_when_absent), self.profile.state_when_absent
            raise Unusable(f"HTTP {http_status}, no status at {path_text(self.profile.state_path)}")
        word = str(label).lower()
        return RemoteState(self.profile.states.get(word, "running")), str(label)

    async def read_balance(self) -> Money | None:
        return None  # none of the task-API shapes has a balance route

    def _outputs(self, body: Any, remote_id: str) -> list[RemoteOutput]:
        expires = dig(body, self.profile.result_expires_at) if self.profile.result_expires_at else MISSING
        expires_at = float(expires) if isinstance(expires, (int, float)) and not isinstance(expires, bool) else None
        found = dig(body, self.profile.result_urls) if self.profile.result_urls else MISSING
        if found is not MISSING:
            urls = found if isinstance(found, list) else [found]
            return [RemoteOutput(str(u), with_key=self.profile.result_with_key, suffix=self.profile.result_suffix,
                                 expires_at=expires_at) for u in urls if isinstance(u, str)]
        if self.profile.content_path is not None:
            return [RemoteOutput(fill_path(self.profile.content_path, {"id": remote_id}), with_key=True,
                                 suffix=self.profile.result_suffix, expires_at=expires_at)]
        return []

    def _usage(self, body: Any) -> dict[str, int] | None:
        """The figures the profile maps (whole numbers; a cost is worked out from them elsewhere)."""
        figures: dict[str, int] = {}
        for name, paths in self.profile.usage.items():
            value = dig(body, paths)
            if isinstance(value, str) and value.isdigit():
                value = int(value)
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            if isinstance(value, int) and not isinstance(value, bool):
                figures[name] = value
        return figures or None

    async def results(self, ctx: TaskContext, remote_id: str,
                      status: RemoteStatus) -> tuple[list[RemoteOutput], Message]:
        outputs = status.outputs or []
        if self.profile.result_requests:
            outputs = self._outputs(await self._result_answer(remote_id, status.body), remote_id)
        if not outputs and status.error:  # the service says why (Veo's safety filter)
            raise TaskError(ErrorKind.PROVIDER, msg("{service} job {remote_id} completed without a result URL: "
                                                    "{reason}",
                                                    service=self.service, remote_id=remote_id, reason=status.error),
                            retry=False)
        if not outputs:
            raise TaskError(ErrorKind.PROVIDER, msg("{service} job {remote_id} completed without a result URL",
                                                    service=self.service, remote_id=remote_id), retry=False)
        if status.usage:
            figures = ", ".join(f"{name}: {value}" for name, value in status.usage.items())  # data keys
            return outputs, msg("{service} job {remote_id}: {n} output(s); {figures}", service=self.service,
                                remote_id=remote_id, n=len(outputs), figures=figures)
        return outputs, msg("{service} job {remote_id}: {n} output(s)", service=self.service, remote_id=remote_id,
                            n=len(outputs))

    async def _result_answer(self, remote_id: str, body: Any) -> Any:
        """The answer of the last ``result.requests`` step, each filled from the one before."""
        for step in self.profile.result_requests:
            value = dig(body, step.take)
            if value is MISSING or isinstance(value, (dict, list)):
                raise TaskError(ErrorKind.PROVIDER, msg("{service} job {remote_id} succeeded without {path} to ask "
                                                        "for its result",
                                                        service=self.service, remote_id=remote_id,
                                                        path=path_text(step.take)), retry=False)
            path = fill_path(step.path, {"id": remote_id, "value": quote(str(value), safe="")})
            response = await self._send(Request(step.method, path))
            self._raise_for_answer(response, creating=False)
            body = self._json(response)
        return body

    # --- cancel ----------------------------------------------------------------------------
    async def cancel(self, remote_id: str) -> None:
        if self.profile.cancel is None:
            raise Unusable(f"{self.service} has no cancel request")
        path = fill_path(self.profile.cancel.path, {"id": remote_id})
        response = await self._send(Request(self.profile.cancel.method, path, self.profile.cancel.headers))
        if response.status_code >= 300:
            raise Unusable(f"HTTP {response.status_code} {self._error_text(response)}".strip())

    def where_to_check(self, remote_id: str | None) -> str:
        if remote_id is None:
            return f"the job list of {self.prov.base_url}"
        return f"{self.prov.base_url}{self._status_path(remote_id, None)}"

    # --- answers ---------------------------------------------------------------------------
    def _raise_for_answer(self, response: httpx.Response | LeanResponse, creating: bool) -> None:
        """Error answers as the lane's answers -- a non-2xx, or a 2xx whose code is not a success
        code (``errors.success_codes``); returns for a good answer."""
        status = response.status_code
        code = self._error_code(response)
        if status < 300 and (not self.profile.success_codes or code is None or code in self.profile.success_codes):
            return
        text = f"HTTP {status} {self._error_text(response)}".strip()
        if status < 300 and code is not None and code not in text:
            text += f" (code {code})"  # an error inside a 2xx answer: its code tells what it is
        action = self.profile.action_for(code) or self._action_for_status(status)
        if action == "backoff":
            if not creating:
                raise Unusable(text)  # a poll that was refused: ask again at the next interval
            raise Busy(text, self.profile.backoff_s,
                       parse_retry_after(response.headers.get("Retry-After"), time.time()))
        if action == "quota":
            raise PauseLane(ErrorKind.QUOTA, msg("balance or quota exhausted ({detail})", detail=text))
        if action in ("login", "renew"):  # renew: a fresh token was refused too
            raise PauseLane(ErrorKind.LOGIN, msg("API key rejected ({detail})", detail=text))
        if action == "refused":
            raise TaskError(ErrorKind.PROVIDER, msg("{service} refused the task: {detail}",
                                                    service=self.service, detail=text), retry=False)
        if action == "bad_input" or (creating and status < 500):
            raise TaskError(ErrorKind.BAD_INPUT, msg("{service} create: {detail}",
                                                     service=self.service, detail=text), retry=False)
        raise Unusable(text)

    def _action_for_status(self, status: int) -> str | None:
        for statuses, action in ((self.profile.backoff_status, "backoff"), (self.profile.quota_status, "quota"),
                                 (self.profile.login_status, "login")):
            if status in statuses:
                return action
        return None

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
        if isinstance(code, list) and code:  # a path with [*]: the first one found
            code = code[0]
        return str(code) if code is not MISSING and not isinstance(code, (dict, list)) else None

    def _error_text(self, response: httpx.Response | LeanResponse) -> str:
        try:
            message = dig(response.json(), self.profile.error_message)
        except ValueError:
            return redact(response.text)[:120]
        if message is MISSING:
            return ""
        return redact(message if isinstance(message, str) else json.dumps(message, ensure_ascii=False))[:300]

    async def _send(self, request: Request, hot: bool = False, **kwargs: Any) -> httpx.Response | LeanResponse:
        """``hot``: the status poll, sent on the lean client. A token the service calls expired
        (an error code mapped to ``renew``) is signed anew and the request sent once more."""
        client = self._live_client()
        extra = kwargs.pop("headers", {})
        response: httpx.Response | LeanResponse | None = None
        for _try in range(2):
            headers = {**self.profile.headers, **request.headers, **self.key_headers(), **extra}
            if hot:
                response = await send_poll(self._poll_client, client, request.method, request.path, headers=headers)
            else:
                response = await send(client, request.method, request.path, headers=headers, **kwargs)
            if not self._wants_renewal(response) or self._signer is None or not self._signer.renew():
                break
        assert response is not None
        return response

    def _wants_renewal(self, response: httpx.Response | LeanResponse) -> bool:
        return self.profile.action_for(self._error_code(response)) == "renew"


def describe_requests(profile: TaskApiProfile, base_url: str, language: str = ENGLISH) -> list[Message]:
    """What a task on ``profile`` sends, for ``mediaassist profiles check`` (secrets masked): the
    requests as they go out, under headings for the operator; the stand-ins for a task's values
    in the bodies (``<input image: url>``) are written in ``language``."""
    signer = make_signer(profile.auth, "***", "***")
    auth = signer.describe()
    lines = [msg("profile {name} ({source})", name=profile.name, source=profile.source),
             verbatim(f"base_url {base_url}")]
    if profile.docs:
        lines.append(msg("docs {url}", url=profile.docs))

    def show(title: Message, method: str, path: str, headers: dict[str, str], body: Any = None) -> None:
        lines.extend([verbatim(""), title, verbatim(f"{method} {base_url}{path}"), auth])
        lines.extend(verbatim(f"{name}: {value}") for name, value in {**profile.headers, **headers}.items())
        if body is not None:
            lines.append(verbatim(json.dumps(body, ensure_ascii=False, indent=2)))

    templates = [profile.create_fields, *(v.fields for v in profile.variants)]
    names = {v.input for v in profile.variants} | {p.split(".")[1] for t in templates for p in placeholders(t)
                                                   if p.startswith("input.")}
    cases = [(msg("text only"), set[str]())] + (
        [(msg("with inputs {names}", names=listed([verbatim(n) for n in sorted(names)])), names)] if names else [])
    for case, inputs in cases:

        def sample(name: str, inputs: set[str] = inputs) -> Any:
            if name in ("prompt", "remote_model"):
                return f"<{name}>"
            _, input_name, *form = name.split(".")
            if input_name not in inputs:
                return MISSING
            return render_message(msg("<input {name}: {form}>", name=input_name,
                                      form=form[0] if form else "url_or_data_uri"), language)

        path, template = chosen_create(profile, inputs)
        body = create_body(profile, template, sample,
                           {"<param>": render_message(msg("<the model's defaults and the task's params>"), language)})
        show(msg("# create ({case})", case=case), profile.create.method,
             fill_path(path, {"remote_model": "<remote_model>"}), profile.create.headers, body)
        status_path = fill_path(profile.status.path, {"id": "<id>", "create_path": fill_path(path, {})})
        show(msg("# status ({case}; every poll_interval_s)", case=case), profile.status.method, status_path,
             profile.status.headers)
    for n, step in enumerate(profile.result_requests):
        show(msg("# result step {n}: <value> = {path} of the answer before", n=n + 1, path=path_text(step.take)),
             step.method, fill_path(step.path, {"id": "<id>", "value": "<value>"}), {})
    if profile.cancel is not None:
        show(msg("# cancel"), profile.cancel.method, fill_path(profile.cancel.path, {"id": "<id>"}),
             profile.cancel.headers)
    where = path_text(profile.result_urls) if profile.result_urls else profile.content_path
    lines.append(verbatim(""))
    if not (profile.result_with_key or not profile.result_urls):
        lines.append(msg("# results: {where}, downloaded without the key", where=where))
    elif profile.key_hosts:
        lines.append(msg("# results: {where}, downloaded with the key (on the service's own host and {hosts} only)",
                         where=where, hosts=", ".join(sorted(profile.key_hosts))))
    else:
        lines.append(msg("# results: {where}, downloaded with the key (on the service's own host only)",
                         where=where))
    if profile.usage:
        lines.append(msg("# figures kept with the result: {figures}",
                         figures=", ".join(f"{k} = {path_text(v)}" for k, v in profile.usage.items())))
    return lines
