"""Lanes and web accounts as the store holds them, for every process sharing it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

import peewee as pw

from mediaassist.core.lanes import AccountView, LaneConditions
from mediaassist.core.location import host_id
from mediaassist.core.messages import Message, verbatim
from mediaassist.core.secrets import redact
from mediaassist.core.store.connection import StoreConnection
from mediaassist.core.store.tables import Account, LaneState, stored_json, stored_message


class LanesAndAccounts(StoreConnection):
    """Lanes (pauses, learned limits) and web accounts (toggles, logins) as the store holds them."""

    # --- lanes and accounts ----------------------------------------------------------------
    def pause_lane(self, name: str, reason: Message | str | None) -> None:
        now = self.now()
        english = None if reason is None else redact(str(reason))
        message = stored_json(reason)
        (LaneState.insert(name=name, paused=True, reason=english, reason_message=message, updated_at=now)
         .on_conflict(conflict_target=[LaneState.name],
                      update={LaneState.paused: True, LaneState.reason: english, LaneState.reason_message: message,
                              LaneState.updated_at: now})
         .execute())

    def resume_lane(self, name: str) -> None:
        LaneState.update(paused=False, reason=None, reason_message=None, updated_at=self.now()).where(
            LaneState.name == name).execute()

    def save_lane_limit(self, name: str, limit: int) -> None:
        """The learned limit of an adaptive lane; every process on this store reads it."""
        now = self.now()
        (LaneState.insert(name=name, learned_limit=limit, updated_at=now)
         .on_conflict(conflict_target=[LaneState.name],
                      update={LaneState.learned_limit: limit, LaneState.updated_at: now})
         .execute())

    def lane_limits(self) -> dict[str, int]:
        """{lane: learned limit} for the lanes that have learnt one."""
        query = LaneState.select(LaneState.name, LaneState.learned_limit).where(LaneState.learned_limit.is_null(False))
        # The WHERE already leaves out NULLs; the check only tells the type checker.
        return {s.name: s.learned_limit for s in query if s.learned_limit is not None}

    def lane_conditions(self) -> LaneConditions:
        """Pauses, learned limits and accounts in one read: what a scheduler pass plans with."""
        states = cast(Iterable[tuple[str, object, str | None, str | None, int | None]], (
            LaneState.select(LaneState.name, LaneState.paused, LaneState.reason, LaneState.reason_message,
                             LaneState.learned_limit)
            .where((LaneState.paused == True) | LaneState.learned_limit.is_null(False))  # noqa: E712
            .tuples()))
        paused: dict[str, Message] = {}
        learned: dict[str, int] = {}
        for name, is_paused, reason, reason_message, limit in states:
            if is_paused:
                paused[name] = stored_message(reason, reason_message) or verbatim("")
            if limit is not None:
                learned[name] = limit
        rows = cast(Iterable[tuple[str, str, object, str, str | None]], (
            Account.select(Account.name, Account.site, Account.enabled, Account.login_state, Account.host)
            .order_by(Account.name).tuples()))
        accounts = {name: AccountView(name, site, bool(enabled), login_state, host)
                    for name, site, enabled, login_state, host in rows}
        return LaneConditions(paused=paused, learned=learned, accounts=accounts)

    def paused_lanes(self) -> dict[str, str]:
        """{lane: why it is paused, in English}."""
        return {name: str(reason) for name, reason in self.paused_lane_reasons().items()}

    def paused_lane_reasons(self) -> dict[str, Message]:
        """{lane: why it is paused}, to be shown in the reader's language (and, by its id, whose
        pause it is: ``budget.is_budget_pause``)."""
        return {s.name: stored_message(s.reason, s.reason_message) or verbatim("")
                for s in LaneState.select().where(LaneState.paused == True)}  # noqa: E712

    def sync_accounts(self, accounts: Iterable[Any]) -> None:
        """Add configured accounts the store has not seen; the operator's toggles then win.
        A ``host`` in the config binds the account to that machine (over a login's binding)."""
        now = self.now()
        for acct in accounts:
            host = getattr(acct, "host", None)
            update: dict[Any, Any] = {Account.site: acct.site}
            if host is not None:
                update[Account.host] = host
            (Account.insert(name=acct.name, site=acct.site, enabled=acct.enabled, host=host, updated_at=now)
             .on_conflict(conflict_target=[Account.name], update=update)
             .execute())

    def accounts(self) -> list[Account]:
        return list(Account.select().order_by(Account.name))

    def account(self, name: str) -> Account | None:
        return Account.get_or_none(Account.name == name)

    def set_account_enabled(self, name: str, enabled: bool) -> bool:
        updated: int = Account.update(enabled=enabled, updated_at=self.now()).where(Account.name == name).execute()
        return updated == 1

    def set_login_state(self, name: str, state: str, error: Message | str | None = None) -> None:
        """A login that worked binds an unbound account to this machine: its browser profile,
        and so the session, lives here."""
        changes: dict[Any, Any] = {Account.login_state: state,
                                   Account.last_error: None if error is None else redact(str(error)),
                                   Account.last_error_message: stored_json(error),
                                   Account.updated_at: self.now()}
        if state == "ok":
            changes[Account.host] = pw.fn.COALESCE(Account.host, host_id())
        Account.update(changes).where(Account.name == name).execute()
