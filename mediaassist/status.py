"""Lane status from the config and the store, as ``status --json`` and the window show it."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from mediaassist.core.clock import Clock
from mediaassist.core.config import AppConfig
from mediaassist.core.lanes import holder, lane_specs, site_route
from mediaassist.core.limiter import AUTO_START
from mediaassist.core.messages import Message, msg
from mediaassist.core.money import Totals, budget_day
from mediaassist.core.policy import closed_lanes
from mediaassist.core.scheduler import STALL_S
from mediaassist.core.store import STATES, Store


def lane_status(config: AppConfig, store: Store) -> list[dict[str, Any]]:
    counts = store.counts()
    paused = store.paused_lanes()
    learned = store.lane_limits()
    store.sync_accounts(config.accounts)
    accounts = {a.name: a for a in store.accounts()}
    configured = {a.name: a for a in config.accounts}
    specs = lane_specs(config)
    closed = lanes_outside_hours(config)
    lanes: list[dict[str, Any]] = []
    for spec in specs:
        runs_rows_of = holder(spec.account, spec.key)
        entry = _entry(spec.name, spec.kind, spec.limit, counts,
                       lambda r, a, s=spec, h=runs_rows_of: r == s.route and (h is None or a == h))
        entry["order"] = spec.order  # how the lane takes its queue (core/order.py)
        if spec.key is not None:
            entry["key"] = spec.key  # its label: all that is ever shown of a key
        if spec.adaptive:  # concurrency = "auto": the limit learnt so far, and its ceiling
            entry.update(limit=learned.get(spec.name, AUTO_START), adaptive=True, max_concurrency=spec.limit)
        if spec.kind == "poll":
            entry.update(_pool(store, spec.route, entry["limit"], entry["pending"], spec.key))
        if spec.hours:
            entry["closed"] = str(closed[spec.name]) if spec.name in closed else None  # English in the JSON
        if spec.account is not None:
            stored, acct = accounts.get(spec.account), configured[spec.account]
            entry["site"] = spec.site
            entry["enabled"] = bool(stored.enabled) if stored else acct.enabled
            entry["login_state"] = stored.login_state if stored else "unknown"
            entry["host"] = stored.host if stored else acct.host  # where its browser profile lives
        lanes.append(entry)
    by_spec = list(zip(specs, lanes, strict=True))
    for site in sorted({spec.site for spec in specs if spec.site is not None}):
        # Web tasks not yet given to an account wait here for the first free one of the site.
        lanes.extend(_shared_queue(f"web-queue:{site}", "web", [e for s, e in by_spec if s.site == site], counts,
                                   lambda r, a, q=site: r == site_route(q) and a is None))
    for route in dict.fromkeys(spec.route for spec in specs if spec.key is not None):
        # A provider's tasks not yet given to one of its keys: the next free key takes them.
        keys = [(s, e) for s, e in by_spec if s.route == route]
        for queue in _shared_queue(route, keys[0][0].kind, [e for _, e in keys], counts,
                                   lambda r, a, q=route: r == q and a is None):
            if queue["kind"] == "poll":
                queue.update(_pool(store, route, queue["limit"], queue["pending"]))
            lanes.append(queue)
    for entry in lanes:
        entry["paused"] = paused.get(entry["lane"])
    return lanes


def lanes_outside_hours(config: AppConfig) -> dict[str, Message]:
    """{lane: why it takes no work now, and when it opens} for the lanes outside their hours."""
    return closed_lanes({spec.name: spec.hours for spec in lane_specs(config) if spec.hours}, datetime.now())


@dataclass
class SpentToday:
    day: str
    total: Totals
    by_lane: dict[str, Totals]

    def to_json(self) -> dict[str, Any]:
        return {"day": self.day, "total": self.total.to_json(),
                "by_lane": {lane: totals.to_json() for lane, totals in sorted(self.by_lane.items())}}


def spent_today(config: AppConfig, store: Store) -> SpentToday:
    """The budget day's spend (reserved for running attempts, and settled), per provider lane
    and in total, each per currency."""
    day = budget_day(store.now(), config.budget.daily_reset)
    by_route = store.spend_by_route(day)
    total = Totals(money for totals in by_route.values() for money in totals.monies())
    return SpentToday(day, total, by_route)


def processes_at_work(store: Store) -> dict[str, int]:
    """{machine: processes} whose scheduler has beaten within the stall limit (real seconds)."""
    return store.hosts_present(store.now() - STALL_S)


def _entry(name: str, kind: str, limit: int, counts: dict[tuple[str, str | None, str], int],
           match: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"lane": name, "kind": kind, "limit": limit}
    for state in STATES:
        entry[state] = sum(n for (route, account, st), n in counts.items()
                           if st == state and match(route, account))
    return entry


def _shared_queue(name: str, kind: str, members: list[dict[str, Any]],
                  counts: dict[tuple[str, str | None, str], int], unassigned: Any) -> list[dict[str, Any]]:
    """The entry of a queue that several lanes (a site's accounts, a provider's keys) take from,
    while tasks wait in it for a free one: the figures of the whole -- its members' counts summed,
    running over the sum of the limits they show, with the tasks no member has taken yet among
    the pending. Its members' own entries break it down. No entry when nothing waits."""
    queue = _entry(name, kind, sum(member["limit"] for member in members), counts, unassigned)
    if not queue["pending"]:
        return []
    for state in STATES:
        queue[state] += sum(member[state] for member in members)
    return [queue]


def _pool(store: Store, route: str, limit: int, pending: int, key: str | None = None) -> dict[str, Any]:
    """The poll pool in the operators' old admin endpoint's terms: one key's, or (``key`` None)
    the provider's."""
    submitted, waiting_submit = store.polling_counts(route, key)
    in_slots = submitted + waiting_submit
    return {
        "maxPollingTasks": limit,
        "currentPollingTasks": submitted,
        "waitingQueueSize": pending + waiting_submit,
        "availableSlots": max(0, limit - in_slots),
        "utilizationRate": round(in_slots / limit, 4) if limit else 0.0,
    }


async def poll_account_checks(config: AppConfig) -> dict[str, list[Message]]:
    """Each real poll provider's pre-flight, read-only: balance, tasks running, the key's
    concurrent limit, and a warning when ``max_polling_tasks`` is above it. By lane."""
    provs = [slot for p in config.providers if p.kind == "poll" and p.type != "simulated" for slot in p.slots()]
    if not provs:
        return {}
    from mediaassist.providers.poll import build_poll_provider  # its HTTP client, only when there is one to ask

    checks = await asyncio.gather(*(_account_check(build_poll_provider(p, Clock())) for p in provs))
    return {prov.lane: lines for prov, lines in zip(provs, checks, strict=True)}


async def _account_check(provider: Any) -> list[Message]:
    try:
        await provider.start()  # runs the pre-flight, bounded in time
        if not provider.has_key:
            return [msg("warning: no API key (set api_key_env, the OS keyring or api_key)")]
        lines: list[Message] = provider.preflight_lines
        return lines
    finally:
        await provider.close()
