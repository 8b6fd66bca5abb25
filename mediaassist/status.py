"""Lane status from the config and the store, as ``status --json`` and the window show it."""

from __future__ import annotations

import asyncio
from typing import Any

from mediaassist.core.clock import Clock
from mediaassist.core.config import AppConfig
from mediaassist.core.limiter import AUTO_START
from mediaassist.core.messages import Message, msg
from mediaassist.core.scheduler import STALL_S, WEB_LANE_LIMIT
from mediaassist.core.store import STATES, Store


def lane_status(config: AppConfig, store: Store) -> list[dict[str, Any]]:
    counts = store.counts()
    paused = store.paused_lanes()
    learned = store.lane_limits()
    store.sync_accounts(config.accounts)
    accounts = {a.name: a for a in store.accounts()}
    lanes: list[dict[str, Any]] = []
    for prov in config.providers:
        entry = _entry(prov.lane, prov.kind, prov.limit, counts, lambda r, a, p=prov: r == p.lane)
        if prov.adaptive:  # concurrency = "auto": the limit learnt so far, and its ceiling
            entry.update(limit=learned.get(prov.lane, AUTO_START), adaptive=True,
                         max_concurrency=prov.max_concurrency)
        if prov.kind == "poll":
            entry.update(_pool(store, prov.lane, prov.limit, entry["pending"]))
        lanes.append(entry)
    for acct in config.accounts:
        entry = _entry(acct.lane, "web", WEB_LANE_LIMIT, counts,
                       lambda r, a, c=acct: r == f"web:{c.site}" and a == c.name)
        stored = accounts.get(acct.name)
        entry["site"] = acct.site
        entry["enabled"] = bool(stored.enabled) if stored else acct.enabled
        entry["login_state"] = stored.login_state if stored else "unknown"
        entry["host"] = stored.host if stored else acct.host  # where its browser profile lives
        lanes.append(entry)
    for site in sorted({a.site for a in config.accounts}):
        # Web tasks not yet given to an account wait here for the first free one of the site.
        on_site = [a for a in config.accounts if a.site == site]
        entry = _entry(f"web-queue:{site}", "web", len(on_site) * WEB_LANE_LIMIT, counts,
                       lambda r, a, s=site: r == f"web:{s}" and a is None)
        if entry["pending"]:
            lanes.append(entry)
    for entry in lanes:
        entry["paused"] = paused.get(entry["lane"])
    return lanes


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


def _pool(store: Store, route: str, limit: int, pending: int) -> dict[str, Any]:
    """The poll pool in the operators' old admin endpoint's terms."""
    submitted, waiting_submit = store.polling_counts(route)
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
    from mediaassist.providers.poll import build_poll_provider

    provs = [p for p in config.providers if p.kind == "poll" and p.type != "simulated"]
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
