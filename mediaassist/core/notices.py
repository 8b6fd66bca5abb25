"""Notices: a batch finished, an account needs login, a lane paused -- sent to ``[[notify]]`` webhooks.

Every process on a store may see the same event (two ``run`` processes finishing one batch, a
window beside them). Each event has a key that names it, so all of them record the same ``notice``
row; the one process whose conditional claim takes the row sends it, so a webhook hears of each
event once. A claim whose process died before sending is taken over by the next sweep of any
process. Sending never blocks or fails work: it runs in its own asyncio task, a webhook that
fails is retried a few times with back-off, then logged (by host only: a webhook URL carries its
key) and given up.

Lane pauses and logins are open episodes: their notice is keyed by the lane or account alone
while the episode lasts, and archived under a unique key once the lane runs or the account is
logged in again, so the next pause is a new notice.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, cast
from urllib.parse import urlsplit

import peewee as pw

from mediaassist.core.config import NotifyConfig
from mediaassist.core.store import FINAL_STATES, PENDING, RUNNING, Account, LaneState, Notice, Store, Task

log = logging.getLogger("mediaassist.notices")

CLAIM_STALE_S = 120.0  # a claim older than this belongs to a process that died before sending
SWEEP_EVERY_S = 5.0
SEND_TIMEOUT_S = 10.0
SEND_ATTEMPTS = 4
RETRY_BASE_S = 1.0  # 1, 2, 4 s between attempts
ARCHIVED = "#ended-"  # joins a closed episode's key to its start, freeing the key for the next one


@dataclass(frozen=True)
class NoticeBody:
    kind: str
    title: str
    text: str
    data: dict[str, Any] = field(default_factory=dict)


def webhook_payload(fmt: str, notice: NoticeBody, at: float) -> dict[str, Any]:
    """The request body each webhook format expects (WeCom, Feishu and DingTalk group robots)."""
    message = f"{notice.title}\n{notice.text}" if notice.text else notice.title
    if fmt == "wecom":
        return {"msgtype": "text", "text": {"content": message}}
    if fmt == "dingtalk":
        return {"msgtype": "text", "text": {"content": message}}
    if fmt == "feishu":
        return {"msg_type": "text", "content": {"text": message}}
    return {"event": notice.kind, "title": notice.title, "text": notice.text, "data": notice.data,
            "at": datetime.fromtimestamp(at, UTC).isoformat(timespec="seconds")}


def refusal(fmt: str, status: int, body: bytes) -> str | None:
    """Why a webhook refused a notice, or None when it took it. The group robots answer HTTP 200
    with an error code in the body (WeCom/DingTalk ``errcode``, Feishu ``code``/``StatusCode``)."""
    if status >= 300:
        return f"HTTP {status}"
    if fmt == "json":
        return None
    try:
        answer = json.loads(body or b"{}")
    except ValueError:
        return f"an answer that is not JSON ({body[:80]!r})"
    if not isinstance(answer, dict):
        return "an answer that is not a JSON object"
    code = answer.get("errcode", answer.get("code", answer.get("StatusCode", 0)))
    if code not in (0, None):
        reason = answer.get("errmsg") or answer.get("msg") or answer.get("StatusMessage") or ""
        return f"error {code} {reason}".strip()
    return None


def hook_label(hook: NotifyConfig) -> str:
    """How logs name a webhook: its name and host, never its path or query (they hold the key)."""
    url = hook.resolved_url()
    host = urlsplit(url).hostname if url else None
    return f"{hook.name} ({host or 'no URL: ' + (hook.url_env or '') + ' is not set'})"


class Notifier:
    """Detects events on a store, records them once, and sends the ones this process claims."""

    def __init__(self, store: Store, hooks: Iterable[NotifyConfig], owner: str) -> None:
        self.store = store
        self.hooks = list(hooks)
        self.owner = owner
        self._sending: set[asyncio.Task[None]] = set()
        self._sweeper: asyncio.Task[None] | None = None

    @property
    def active(self) -> bool:
        """Only a process with webhooks looks for events (the window's tray has its own view)."""
        return bool(self.hooks)

    def _start(self) -> None:
        """Sweep from the first task event on: only a process that runs tasks sends notices
        (``status`` or ``cancel`` never claim one)."""
        if self._sweeper is None:
            self._sweeper = asyncio.get_running_loop().create_task(self._sweep_loop())

    async def aclose(self, grace_s: float = SEND_TIMEOUT_S) -> None:
        """Stop sweeping; give notices on their way ``grace_s`` to arrive (a ``run`` that ends
        with its batch must still tell the webhook), then cancel what is left."""
        if self._sweeper is not None:
            self._sweeper.cancel()
            await asyncio.gather(self._sweeper, return_exceptions=True)
            self.sweep()
        if self._sending:
            _done, late = await asyncio.wait(set(self._sending), timeout=grace_s)
            for task in late:
                task.cancel()
            await asyncio.gather(*late, return_exceptions=True)

    # --- detecting -------------------------------------------------------------------------
    def on_task_event(self, event: str, task: Task) -> None:
        """The scheduler's listener: a task that ended may have finished its batch."""
        if not self.active:
            return
        self._start()
        if event in FINAL_STATES:
            self._check_batch(task.batch_id)

    def _check_batch(self, batch_id: str) -> None:
        counts: dict[str, int] = dict.fromkeys((PENDING, RUNNING, *FINAL_STATES), 0)
        query = (Task.select(Task.state, pw.fn.COUNT(Task.seq)).where(Task.batch_id == batch_id)
                 .group_by(Task.state).tuples())
        # cast: peewee-stubs type a tuples() query's rows as model instances
        for state, n in cast(Iterable[tuple[str, int]], query):
            counts[str(state)] = int(n)
        if counts[PENDING] or counts[RUNNING]:
            return
        total = sum(counts.values())
        done, failed, canceled = (counts[s] for s in FINAL_STATES)
        key = f"batch_finished:{batch_id}:{total}:{done}:{failed}:{canceled}"
        text = f"{done} succeeded, {failed} failed, {canceled} canceled of {total}"
        self._record(key, NoticeBody("batch_finished", f"Batch {batch_id} finished", text,
                                     {"batch_id": batch_id, "total": total, "success": done,
                                      "failed": failed, "canceled": canceled}))

    def sweep(self) -> None:
        """Open and close the episodes (paused lanes, accounts needing login), then send what
        this process may claim: its own new notices and those of processes that died."""
        if not self.active:
            return
        paused = {s.name: s.reason or "" for s in LaneState.select().where(LaneState.paused == True)}  # noqa: E712
        for lane, reason in paused.items():
            self._record(f"lane_paused:{lane}", NoticeBody(
                "lane_paused", f"Lane {lane} paused", reason, {"lane": lane, "reason": reason}))
        self._close_episodes("lane_paused:", set(paused))
        login = {a.name: a.last_error or "" for a in Account.select().where(Account.login_state == "needs_login")}
        for account, error in login.items():
            self._record(f"needs_login:{account}", NoticeBody(
                "needs_login", f"Account {account} needs login", error, {"account": account, "error": error}))
        self._close_episodes("needs_login:", set(login))
        self._claim_unsent()

    def _close_episodes(self, prefix: str, still_open: set[str]) -> None:
        rows = Notice.select(Notice.key, Notice.created_at).where(Notice.key.startswith(prefix))
        for row in rows:
            name = row.key[len(prefix):]
            if ARCHIVED in name or name in still_open:
                continue  # archived already, or still going on
            archived = f"{row.key}{ARCHIVED}{row.created_at:.6f}"
            Notice.update(key=archived).where(Notice.key == row.key).execute()

    # --- recording and claiming ------------------------------------------------------------
    def _record(self, key: str, body: NoticeBody) -> None:
        now = self.store.now()
        payload = json.dumps({"title": body.title, "text": body.text, "data": body.data}, ensure_ascii=False)
        Notice.insert(key=key, kind=body.kind, created_at=now, payload=payload).on_conflict_ignore().execute()
        self._claim(key)

    def _claim_unsent(self) -> None:
        stale = self.store.now() - CLAIM_STALE_S
        for row in Notice.select(Notice.key).where(Notice.sent_at.is_null() & (Notice.claimed_at < stale)):
            self._claim(row.key)

    def _claim(self, key: str) -> None:
        now = self.store.now()
        taken = (Notice.update(owner=self.owner, claimed_at=now)
                 .where((Notice.key == key) & Notice.sent_at.is_null()
                        & (Notice.owner.is_null() | (Notice.claimed_at < now - CLAIM_STALE_S)))
                 .execute())
        if not taken:
            return
        row = Notice.get(Notice.key == key)
        payload = json.loads(row.payload)
        body = NoticeBody(row.kind, payload["title"], payload["text"], payload["data"])
        task = asyncio.get_running_loop().create_task(self._deliver(key, body, row.created_at))
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)

    # --- sending ---------------------------------------------------------------------------
    async def _deliver(self, key: str, body: NoticeBody, at: float) -> None:
        hooks = [hook for hook in self.hooks if body.kind in hook.events]
        if hooks:
            import httpx  # only a process that sends a notice needs the HTTP client

            async with httpx.AsyncClient(timeout=SEND_TIMEOUT_S, follow_redirects=False) as client:
                await asyncio.gather(*(self._send(client, hook, body, at) for hook in hooks))
        Notice.update(sent_at=self.store.now()).where((Notice.key == key) & (Notice.owner == self.owner)).execute()

    async def _send(self, client: Any, hook: NotifyConfig, body: NoticeBody, at: float) -> None:
        url = hook.resolved_url()
        if not url:
            log.warning("notice %s not sent to %s", body.kind, hook_label(hook))
            return
        payload = webhook_payload(hook.format, body, at)
        why = ""
        for attempt in range(SEND_ATTEMPTS):
            if attempt:
                await asyncio.sleep(RETRY_BASE_S * 2 ** (attempt - 1))
            try:
                answer = await client.post(url, json=payload)
            except Exception as exc:  # any failure of a webhook is only logged, never raised
                why = type(exc).__name__
                continue
            refused = refusal(hook.format, answer.status_code, answer.content)
            if refused is None:
                log.info("notice %s sent to %s", body.kind, hook_label(hook))
                return
            why = refused
        log.warning("notice %s not sent to %s after %d attempts: %s", body.kind, hook_label(hook),
                    SEND_ATTEMPTS, why)

    async def _sweep_loop(self) -> None:
        while True:
            await asyncio.sleep(SWEEP_EVERY_S)
            try:
                self.sweep()
            except pw.PeeweeException as exc:  # a store fault: the scheduler reports it; try again later
                log.debug("notice sweep skipped: %s", exc)
