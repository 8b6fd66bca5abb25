"""The scheduler's decisions as pure functions over plain data (after httpcore's connection pool).

The scheduler reads the store once per pass into a ``LaneConditions``, asks ``plan_claims`` which
lanes claim how many tasks, and only then does the I/O: the store's atomic claim takes the heads
of each queue (higher priority first, then in the lane's ``order``: FIFO, longest expected first
or fair across batches, core/order.py; it counts every process's running rows in the same
transaction) and the attempts start. When an attempt ends, ``decide_end`` says what is
written (a result, a cancel, a hand-back or a failure) and ``decide_retry`` whether a failure
comes back. When ``run`` waits for its batches, ``batches_settled`` says when nothing more can run.

Nothing here reads the store, the clock or the config: every input is a frozen dataclass or a
plain value, so each rule is unit-tested on its own (tests/unit/test_policy.py).
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from mediaassist.core.hours import Hours, closed_reason
from mediaassist.core.lane_api import StopReason
from mediaassist.core.lanes import WEB_LANE_LIMIT, AccountView, ClaimRequest, LaneConditions
from mediaassist.core.limiter import AUTO_START
from mediaassist.core.messages import Message, as_message, msg


@dataclass(frozen=True)
class LaneSlots:
    """One lane's gate and what this process runs on it now."""

    name: str
    kind: str  # web | api | poll
    route: str
    limit: int  # the fixed gate; for ``adaptive`` lanes the ceiling of the learned limit
    running: int = 0  # this process's attempts on the lane
    account: str | None = None
    key: str | None = None  # the label of the provider's key it runs on (lanes of a provider with keys)
    adaptive: bool = False
    resting: bool = False  # its resource is busy elsewhere for a while (a Requeue's wait)
    order: str = "fifo"  # how it takes its queue: fifo | longest | fair (core/order.py)


def current_limit(kind: str, limit: int, adaptive: bool, learned: int | None) -> int:
    """How many tasks a lane may run at once across every process on the store: one for a web
    account; for ``concurrency = "auto"`` the learned limit (from ``AUTO_START``), within 1..limit."""
    if kind == "web":
        return WEB_LANE_LIMIT
    if adaptive:
        return max(1, min(limit, learned or AUTO_START))
    return limit


ACCOUNT_DISABLED = msg("account disabled")
ACCOUNT_NEEDS_LOGIN = msg("account needs login")


def account_blocked(account: AccountView | None, here: str) -> Message | None:
    """Why this machine (``here``) may not run a web account's tasks, or None if it may."""
    if account is None:
        return msg("account not in the store")
    if not account.enabled:
        return ACCOUNT_DISABLED
    if account.login_state == "needs_login":
        return ACCOUNT_NEEDS_LOGIN
    if account.host is not None and account.host != here:
        # Its browser profile (the logged-in session) is on that machine, not this one.
        return msg("account lives on {host}", host=account.host)
    return None


def blocked_lanes(lanes: Iterable[LaneSlots], conditions: LaneConditions, here: str) -> dict[str, Message]:
    """The lanes that cannot take work now, with the reason: paused (its reason), outside its hours,
    else its account's."""
    blocked: dict[str, Message] = {}
    for lane in lanes:
        if lane.name in conditions.paused:
            blocked[lane.name] = as_message(conditions.paused[lane.name])
        elif lane.name in conditions.closed:
            blocked[lane.name] = conditions.closed[lane.name]
        elif lane.account is not None:
            why = account_blocked(conditions.accounts.get(lane.account), here)
            if why:
                blocked[lane.name] = why
    return blocked


def closed_lanes(hours: Mapping[str, Hours], local: datetime) -> dict[str, Message]:
    """The lanes outside their hours at ``local`` time, with when they open."""
    closed = {name: closed_reason(lane_hours, local) for name, lane_hours in hours.items()}
    return {name: why for name, why in closed.items() if why is not None}


def waiting_for_hours(blocked: Mapping[str, Message], conditions: LaneConditions) -> set[str]:
    """Blocked lanes that only wait for their hours: they will take work without anyone's help."""
    return {name for name, why in blocked.items() if conditions.closed.get(name) == why}


def plan_claims(lanes: Sequence[LaneSlots], conditions: LaneConditions, here: str) -> list[ClaimRequest]:
    """Which lanes claim, and how many, in lane order: each open lane asks for its free slots --
    but the keys of one provider take turns, one task each, least loaded first (``spread_over_keys``).

    A lane takes nothing while paused, resting, full, or (web) while its account is disabled,
    needs a login or lives on another machine. The caller decides whether it takes work at all
    (not while stopping, draining or after a storage fault); a key whose claim came back short
    has no more to take in this round (the caller drops its later turns)."""
    blocked = blocked_lanes(lanes, conditions, here)
    claims: list[ClaimRequest] = []
    loads: dict[str, float] = {}
    for lane in lanes:
        limit = current_limit(lane.kind, lane.limit, lane.adaptive, conditions.learned.get(lane.name))
        free = min(limit - lane.running, conditions.daily_left.get(lane.name, limit))
        if free <= 0 or lane.resting or lane.name in blocked:
            continue
        loads[lane.name] = lane.running / limit
        claims.append(ClaimRequest(lane=lane.name, route=lane.route, count=free, account=lane.account, key=lane.key,
                                   lane_limit=None if lane.kind == "web" else limit, order=lane.order))
    return spread_over_keys(claims, loads)


def spread_over_keys(claims: Sequence[ClaimRequest], loads: Mapping[str, float]) -> list[ClaimRequest]:
    """The claims of one provider's keys as turns of one task each, the least loaded key
    (running ÷ limit) first: a short queue is shared by the keys instead of filling the first
    one, and each key's quota is drawn on evenly. Other claims keep their place; a provider's
    turns stand where its first key's claim stood."""
    planned: list[ClaimRequest] = []
    spread: set[str] = set()
    for claim in claims:
        if claim.key is None:
            planned.append(claim)
        elif claim.route not in spread:
            spread.add(claim.route)
            keys = sorted((c for c in claims if c.key is not None and c.route == claim.route),
                          key=lambda c: loads.get(c.lane, 0.0))
            for turn in range(max(c.count for c in keys)):
                planned += [dataclasses.replace(c, count=1) for c in keys if c.count > turn]
    return planned


# --- the end of an attempt ---------------------------------------------------------------------

class Outcome(enum.Enum):
    """How a provider's ``run`` came back."""

    RESULT = "result"  # returned its result
    STOPPED = "stopped"  # cancelled (asyncio.CancelledError)
    REQUEUE = "requeue"  # raised Requeue: the service is busy, not the task's fault
    CANCELED_ELSEWHERE = "canceled_elsewhere"  # TaskError(CANCELED): e.g. on the service's website
    ERROR = "error"  # raised TaskError
    BUG = "bug"  # raised anything else


class End(enum.Enum):
    """What the scheduler writes for an attempt that ended."""

    SUCCESS = "success"  # the result, once
    DROP_RESULT = "drop_result"  # reaped meanwhile: its retry owns the row
    CANCELED = "canceled"
    RELEASE = "release"  # back to pending, not an attempt spent
    FAIL = "fail"  # a failure, retried while its budget lasts (``decide_retry``)
    NOTHING = "nothing"  # reaped, or stopped by no one we know: the reaper ends the row


def decide_end(outcome: Outcome, stop_reason: StopReason | None) -> End:
    """The end of one attempt. A stop the scheduler asked for decides over anything the work
    raised while stopping (a canceled task is never retried because its page closed with an error)."""
    if outcome is Outcome.RESULT:
        return End.DROP_RESULT if stop_reason is StopReason.STALLED else End.SUCCESS
    if outcome is Outcome.STOPPED or stop_reason is not None:
        if stop_reason is StopReason.CANCEL:
            return End.CANCELED
        return End.RELEASE if stop_reason is StopReason.SHUTDOWN else End.NOTHING
    return {Outcome.REQUEUE: End.RELEASE, Outcome.CANCELED_ELSEWHERE: End.CANCELED}.get(outcome, End.FAIL)


class Retry(enum.Enum):
    NOW = "now"  # at once (a crash elsewhere was not the task's fault)
    LATER = "later"  # after a growing delay
    NO = "no"  # not retryable, or its budget is spent
    NO_CRASH_BUDGET = "no_crash_budget"  # the processes running it died too often: it may be the cause


def decide_retry(retry: bool, retries_left: int, crash_retries_left: int, crashed: bool = False,
                 immediate: bool = False) -> Retry:
    """Whether a failed attempt comes back. A crash (the process running it died) pays from the
    crash budget, any other failure from the task's retries."""
    budget = crash_retries_left if crashed else retries_left
    if retry and budget > 0:
        return Retry.NOW if immediate else Retry.LATER
    return Retry.NO_CRASH_BUDGET if crashed else Retry.NO


# --- the end of a run ----------------------------------------------------------------------------

@dataclass(frozen=True)
class QueueCount:
    """Tasks of the awaited batches in one state, by queue (``store.batch_counts``)."""

    route: str
    account: str | None
    pinned: bool  # the task names its account: only that account's lane may take it
    state: str
    count: int = 1


def batches_settled(counts: Iterable[QueueCount], open_routes: set[str], open_accounts: set[str | None]) -> bool:
    """True when no task of the batches runs and none pending can be taken by an open lane
    (``open_routes``, and for a pinned task its account among ``open_accounts``)."""
    for queued in counts:
        if queued.state == "running":
            return False
        if (queued.state == "pending" and queued.route in open_routes
                and (not queued.pinned or queued.account in open_accounts)):
            return False
    return True
