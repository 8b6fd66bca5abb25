"""Budgets in the scheduler's hands: estimate each attempt before it starts, reserve it against
every budget that covers it, settle it with what it cost when it ends.

Which budgets cover an attempt: ``[budget] per_batch`` (its batch), ``[budget] daily`` (the
budget day, all providers), its provider's ``daily_budget``, and its provider's balance where
the service reports one (what was left when it was last read, less what was spent on that
provider since). A task whose estimate does not fit is not started: the claim hands it back and
its lane pauses with the reason (``budget: ¥48.20 of ¥50.00 spent today``); the lane resumes by
itself once the head of its queue fits again (a new budget day, a raised budget, a top-up read).

The sums live in the store (``Spend`` rows), so the budget holds across every process and
machine on it; this object only decides what to reserve and writes reasons.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from mediaassist.core.config import AppConfig, ModelConfig
from mediaassist.core.lane_api import BalanceReported, TaskResult
from mediaassist.core.lanes import ClaimRequest
from mediaassist.core.messages import Message, msg, verbatim
from mediaassist.core.money import (
    SOURCE_ESTIMATE,
    Cost,
    History,
    Money,
    Produced,
    Totals,
    actual_cost,
    budget_day,
    estimate_cost,
    estimate_produced,
    money_message,
    totals_message,
    with_usage,
)
from mediaassist.core.store import BudgetStop, Limit, NewTask, Reservation, Store, Task

Reason = TypeVar("Reason", Message, str)
HISTORY_TTL_S = 10.0  # real seconds a model's record is reused for estimates
# How a pause's reason marks it as the budget's (not the operator's: it lifts by itself): the
# prefix of its message id (stored in lane_state.reason_message), never the rendered text, which
# is in the reader's language.
BUDGET_ID_PREFIXES = ("budget: ", "balance: ")


BATCH_PAUSE = "batch:"  # a batch its budget stopped is paused under this name (lane_state)


def is_budget_pause(reason: Message | str | None) -> bool:
    """Whether a pause's reason is a budget's (by its message id; a plain text is not)."""
    return isinstance(reason, Message) and reason.id.startswith(BUDGET_ID_PREFIXES)


def batch_pause_name(batch_id: str) -> str:
    return f"{BATCH_PAUSE}{batch_id}"


def paused_batches(paused: Mapping[str, Reason]) -> dict[str, Reason]:
    """{batch id: reason} among the store's pauses (``Store.paused_lane_reasons``)."""
    return {name.removeprefix(BATCH_PAUSE): reason for name, reason in paused.items() if name.startswith(BATCH_PAUSE)}


@dataclass
class Claimed:
    tasks: list[Task]
    lane_stop: Message | None = None  # why the lane takes no more (a budget over the whole lane)
    batch_stops: dict[str, Message] = field(default_factory=dict)  # batch id → why it takes no more


class Budgeter:
    def __init__(self, store: Store, config: AppConfig) -> None:
        self.store = store
        self.config = config
        self.balances: dict[str, tuple[Money, float]] = {}  # route → (balance, when it was read)
        self._history: dict[str, tuple[History, float]] = {}  # model → (its record, monotonic read time)

    def day(self) -> str:
        return budget_day(self.store.now(), self.config.budget.daily_reset)

    @property
    def has_limits(self) -> bool:
        budget = self.config.budget
        return bool(budget.per_batch or budget.daily or self.balances
                    or any(p.daily_budget for p in self.config.providers))

    # --- estimates ---------------------------------------------------------------------------
    def history(self, model: str) -> History:
        """The model's record, read again at most every ``HISTORY_TTL_S``: a busy lane claims
        once per finished task, and the record moves slowly."""
        cached = self._history.get(model)
        if cached is None or time.monotonic() - cached[1] > HISTORY_TTL_S:
            cached = self._history[model] = (self.store.model_history(model), time.monotonic())
        return cached[0]

    def estimate(self, model: ModelConfig, prompt: str, params: dict[str, Any]) -> tuple[Money | None, Money | None]:
        """(the estimate, the price table's part of it before the record's correction)."""
        history = self.history(model.name)
        produced = estimate_produced(prompt, {**model.options.get("defaults", {}), **params}, history)
        table = model.price.apply(produced) if model.price is not None else None
        return estimate_cost(model.price, produced, history), table

    def plan(self, task: Task) -> Reservation | None:
        """What to reserve for the task's attempt, and the budgets it must fit (None: its cost
        is unknown -- no price and no record -- so nothing is reserved)."""
        model = self.config.model(task.model)
        if model is None:
            return None
        estimate, table = self.estimate(model, task.prompt + (task.system_prompt or ""), task.params_dict)
        if estimate is None:
            return None
        return Reservation(estimate, table, self._limits(task, estimate.currency))

    def _limits(self, task: Task, currency: str) -> tuple[Limit, ...]:
        day, budget = self.day(), self.config.budget
        limits = []
        if currency in budget.per_batch:
            limits.append(Limit("batch", task.batch_id, Money(budget.per_batch[currency], currency),
                                label=task.batch_id))
        if currency in budget.daily:
            limits.append(Limit("day", day, Money(budget.daily[currency], currency)))
        provider = self.config.provider(task.route.partition(":")[2]) if task.model_kind != "web" else None
        if provider is not None and currency in provider.daily_budget:
            limits.append(Limit("provider", task.route, Money(provider.daily_budget[currency], currency),
                                day=day, label=provider.name))
        # A balance is its key's: a provider with keys reads one per key (its lane).
        balance = self.balances.get(task.lane)
        if balance is not None and balance[0].currency == currency:
            limits.append(Limit("balance", task.lane, balance[0], since=balance[1],
                                label=provider.name if provider else task.route))
        return tuple(limits)

    # --- claim, settle, release ----------------------------------------------------------------
    def claim(self, request: ClaimRequest, owner: str, batch_ids: Sequence[str] | None) -> Claimed:
        """Claim and reserve: the tasks, and why the lane or a batch stopped, if one did."""
        day = self.day()
        if self.has_limits:
            tasks, stop, batch_stops = self.store.claim_within_budget(request, owner, batch_ids, self.plan, day)
            return Claimed(tasks, stop_reason(stop) if stop is not None else None,
                           {batch: stop_reason(s) for batch, s in batch_stops.items()})
        tasks = self.store.claim(request.route, owner, request.count, request.account, batch_ids=batch_ids,
                                 lane_limit=request.lane_limit, order=request.order, key=request.key)
        for task in tasks:
            reservation = self.plan(task)
            if reservation is not None:  # the estimate, kept beside the actual cost
                self.store.reserve(task, reservation, day)
        return Claimed(tasks)

    def settle(self, task: Task, result: TaskResult) -> Cost | None:
        """The attempt succeeded: its actual cost replaces its reservation. Returns the cost."""
        model = self.config.model(task.model)
        produced = with_usage(result.produced or Produced(), result.usage)
        cost = actual_cost(model.price if model is not None else None, produced)
        self.store.settle_spend(task, cost.money if cost else None, cost.source if cost else SOURCE_ESTIMATE,
                                produced, self.day())
        return cost

    def ended_unfinished(self, task: Task) -> None:
        """The attempt failed or was canceled. A remote task was created (and may be billed):
        the reservation stands as its cost; else nothing was spent and it is released."""
        if task.remote_id:
            self.store.settle_spend(task, None, SOURCE_ESTIMATE, None, self.day())
        else:
            self.store.release_spend(task)

    def released(self, task: Task) -> None:
        """The attempt went back to the queue (the next claim reserves again)."""
        self.store.release_spend(task)

    # --- balances ----------------------------------------------------------------------------
    def take_balances(self, providers: Iterable[tuple[str, Any]]) -> None:
        """The balances the providers (by lane) last read."""
        for route, provider in providers:
            if isinstance(provider, BalanceReported) and provider.balance is not None:
                self.balances[route] = (provider.balance, provider.balance_read_at)


def stop_reason(stop: BudgetStop) -> Message:
    """The reason a lane (or a batch) pauses with; its id marks it as the budget's."""
    limit = stop.limit
    spent, cap = money_message(stop.spent), money_message(limit.cap)
    if limit.scope == "batch":
        return msg("budget: {spent} of {cap} spent on batch {batch}", spent=spent, cap=cap, batch=limit.label)
    if limit.scope == "provider":
        return msg("budget: {spent} of {cap} spent today on {provider}", spent=spent, cap=cap, provider=limit.label)
    if limit.scope == "balance":
        left = Money(limit.cap.amount - stop.spent.amount, limit.cap.currency)
        return msg("balance: {left} left on {provider}, the next task needs about {needed}", left=money_message(left),
                   provider=limit.label, needed=money_message(stop.needed))
    return msg("budget: {spent} of {cap} spent today", spent=spent, cap=cap)


# --- a batch's estimate before it is queued --------------------------------------------------

@dataclass
class ModelEstimate:
    model: str
    tasks: int = 0
    unknown: int = 0  # tasks whose cost cannot be told (no price table and no record)
    total: Totals = field(default_factory=Totals)
    basis_message: Message = field(default_factory=lambda: verbatim(""))  # where the estimate comes from

    @property
    def basis(self) -> str:
        """``basis_message`` in English (``estimate --json``)."""
        return str(self.basis_message)

    def to_json(self) -> dict[str, Any]:
        return {"model": self.model, "tasks": self.tasks, "unknown": self.unknown,
                "total": self.total.to_json(), "basis": self.basis}


@dataclass
class BatchEstimate:
    models: list[ModelEstimate] = field(default_factory=list)
    total: Totals = field(default_factory=Totals)

    def to_json(self) -> dict[str, Any]:
        return {"models": [m.to_json() for m in self.models], "total": self.total.to_json(),
                "unknown": sum(m.unknown for m in self.models)}

    def lines(self) -> list[Message]:
        """One line per model and the total, for the operator (``estimate``)."""
        lines = [msg("{model}: {n} task(s), about {total} ({basis}), {unknown} with no price", model=m.model,
                     n=m.tasks, total=totals_message(m.total), basis=m.basis_message, unknown=m.unknown)
                 if m.unknown else
                 msg("{model}: {n} task(s), about {total} ({basis})", model=m.model, n=m.tasks,
                     total=totals_message(m.total), basis=m.basis_message) for m in self.models]
        return [*lines, msg("total: about {total}", total=totals_message(self.total))]


def estimate_batch(budgeter: Budgeter, tasks: Iterable[NewTask]) -> BatchEstimate:
    """What these tasks will probably cost, per model and in total (per currency), as the
    claims would reserve it."""
    by_model: dict[str, ModelEstimate] = {}
    for task in tasks:
        entry = by_model.setdefault(task.model, ModelEstimate(task.model))
        entry.tasks += 1
        model = budgeter.config.model(task.model)
        estimate = None
        if model is not None:
            estimate, _table = budgeter.estimate(model, task.prompt + (task.system_prompt or ""), task.params)
        if estimate is None:
            entry.unknown += 1
        else:
            entry.total.add(estimate)
    result = BatchEstimate()
    for name, entry in sorted(by_model.items()):
        entry.basis_message = _basis(budgeter.config.model(name), budgeter.history(name))
        result.models.append(entry)
        for money in entry.total.monies():
            result.total.add(money)
    return result


def _basis(model: ModelConfig | None, history: History) -> Message:
    if model is None:
        return msg("model not in the config")
    if model.price is not None:
        if history.correction:
            return msg("price table, corrected by the record of {n} task(s)", n=history.tasks)
        if history.tasks:
            return msg("price table and {n} task(s) of record", n=history.tasks)
        return msg("price table")
    if history.actual_per_task:
        return msg("average of {n} task(s) of record", n=history.tasks)
    return msg("no price table")
