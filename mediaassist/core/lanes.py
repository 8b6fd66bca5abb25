"""The lanes a config describes, built in one place for the scheduler, ``status`` and the registry.

A lane is where tasks run with a concurrency gate of their own:

- ``api:<provider>`` / ``poll:<provider>``: one per ``[[providers]]`` entry, taking from the queue
  of the same name; its limit is ``concurrency`` (API; with ``"auto"`` the ceiling the learned
  limit may reach) or ``max_polling_tasks`` (poll);
- ``api:<provider>/<label>``: one per key of a provider with ``keys``, all taking from the
  provider's queue, each with its key's limit (a task's row names the key that runs it, as a web
  task's names its account, so a remote task stays with the key that created it);
- ``web:<account>``: one per ``[[accounts]]`` entry, taking from its site's queue ``web:<site>``
  (the tasks not pinned to another account); always exactly one task at a time.

Web sites also appear without an account: a web model names its site, and its provider is built
(tasks queue there until an account of that site exists).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from mediaassist.core.config import AppConfig
from mediaassist.core.hours import Hours
from mediaassist.core.messages import Message, msg, verbatim

DEFAULT_SWEEP_S = 5.0  # seconds between looks for work no event announced (a poll lane sets its own)
# A web account is one logged-in browser session: the site errors (or silently mixes up the
# conversation) if a second generation starts before the first has ended. So a web lane runs
# exactly one task, always. This is a property of the resource, not a tunable -- never a setting.
WEB_LANE_LIMIT = 1


@dataclass(frozen=True)
class LaneSpec:
    """One lane as the config describes it (what the store and the running state add is elsewhere)."""

    name: str  # web:<account> | api:<provider> | poll:<provider>
    kind: str  # web | api | poll
    route: str  # the queue it takes from
    limit: int  # the fixed gate; for ``adaptive`` lanes the most the learned limit may reach
    account: str | None = None  # web lanes: the account whose browser session runs the tasks
    site: str | None = None  # web lanes: the account's site
    key: str | None = None  # lanes of a provider's key: its label
    sweep_s: float = DEFAULT_SWEEP_S
    adaptive: bool = False  # concurrency = "auto"
    hours: Hours = ()  # the local hours it may take work in; () = any time
    order: str = "fifo"  # how it takes its queue: fifo | longest | fair (core/order.py)
    daily_limit: int | None = None  # the most tasks it starts in a budget day


@dataclass(frozen=True)
class AccountView:
    """A web account as the store holds it (the operator's toggle, the login, the machine)."""

    name: str
    site: str = ""
    enabled: bool = True
    login_state: str = "unknown"  # unknown | ok | needs_login
    host: str | None = None  # the machine whose browser profile holds the login; None: any


# An account's login state (``AccountView.login_state``) as the operator reads it.
LOGIN_STATES = {"ok": msg("logged in"), "needs_login": msg("needs login"), "unknown": msg("login unknown")}


def login_state_message(state: str) -> Message:
    return LOGIN_STATES.get(state) or verbatim(state)


@dataclass(frozen=True)
class LaneConditions:
    """What one read of the store says about the lanes: pauses, learned limits, accounts."""

    paused: Mapping[str, Message] = field(default_factory=dict)  # lane -> reason (as written)
    learned: Mapping[str, int] = field(default_factory=dict)  # lane -> learned limit (concurrency "auto")
    accounts: Mapping[str, AccountView] = field(default_factory=dict)
    # lane -> why it takes no work now (outside its hours); added by the scheduler from its clock
    closed: Mapping[str, Message] = field(default_factory=dict)
    # lane -> how many more tasks it may start today (lanes with a daily_limit); added by the scheduler
    daily_left: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class ClaimRequest:
    """Claim up to ``count`` due tasks of ``route`` for ``lane``. With ``lane_limit`` the store
    counts the route's running rows of every process in the claim's transaction and takes at most
    ``lane_limit - running``; a web lane has none (its account's one-task guard holds instead)."""

    lane: str
    route: str
    count: int
    account: str | None = None
    key: str | None = None  # a provider key's lane: the limit counts that key's rows
    lane_limit: int | None = None
    order: str = "fifo"  # in which order the store takes the queue's due tasks (core/order.py)


def lane_specs(config: AppConfig) -> list[LaneSpec]:
    """Every lane of the config: the providers' in config order, then the accounts'."""
    lanes = [
        LaneSpec(name=slot.lane, kind=slot.kind, route=slot.route, limit=slot.limit, key=slot.key_label,
                 sweep_s=slot.queue_check_interval_s if slot.kind == "poll" else DEFAULT_SWEEP_S,
                 adaptive=slot.adaptive, hours=slot.hours, order=slot.order, daily_limit=slot.daily_limit)
        for prov in config.providers for slot in prov.slots()
    ]
    lanes += [
        LaneSpec(name=acct.lane, kind="web", route=site_route(acct.site), limit=WEB_LANE_LIMIT,
                 account=acct.name, site=acct.site, hours=acct.hours, order=acct.order,
                 daily_limit=acct.daily_limit)
        for acct in config.accounts
    ]
    return lanes


def lane_of(route: str, account: str | None) -> str:
    """The lane a task row names: its web account's (``web:<account>``), its provider key's
    (``api:<provider>/<label>``), or -- not yet given to one -- its route's."""
    if not account:
        return route
    return f"web:{account}" if route.startswith("web:") else f"{route}/{account}"


def holder(account: str | None, key: str | None) -> str | None:
    """What a lane's claimed rows name as the one running them: its web account or its
    provider's key (None: a provider's only lane, whose rows name nobody)."""
    return account if account is not None else key


def lane_names(config: AppConfig) -> set[str]:
    return {spec.name for spec in lane_specs(config)}


def web_sites(config: AppConfig) -> list[str]:
    """The web sites a config needs a provider for: its accounts' and its web models' (sorted)."""
    sites = {a.site for a in config.accounts} | {m.site for m in config.models if m.kind == "web"}
    return sorted(s for s in sites if s)


def site_route(site: str) -> str:
    """The queue of a web site's tasks, shared by its accounts' lanes."""
    return f"web:{site}"
