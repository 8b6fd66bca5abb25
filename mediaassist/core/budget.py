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

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from mediaassist.core.config import AppConfig, ModelConfig
from mediaassist.core.lane_api import BalanceReported, TaskResult
from mediaassist.core.money import (
    SOURCE_ESTIMATE,
    Cost,
    History,
    Money,
    Produced,
    actual_cost,
    budget_day,
    estimate_cost,
    estimate_produced,
    format_money,
    tokens_from_usage,
)
from mediaassist.core.store import BudgetStop, Limit, Reservation, Store, Task

# How a lane's pause reason says the budget (not the operator) paused it: it resumes by itself.
BUDGET_REASONS = ("budget: ", "balance: ")


def is_budget_pause(reason: str | None) -> bool:
    return reason is not None and reason.startswith(BUDGET_REASONS)


class Budgeter:
    def __init__(self, store: Store, config: AppConfig) -> None:
        self.store = store
        self.config = config
        self.balances: dict[str, tuple[Money, float]] = {}  # route → (balance, when it was read)
        self._history: dict[str, History] = {}

    def day(self) -> str:
        return budget_day(self.store.now(), self.config.budget.daily_reset)

    @property
    def has_limits(self) -> bool:
        budget = self.config.budget
        return bool(budget.per_batch or budget.daily or self.balances
                    or any(p.daily_budget for p in self.config.providers))

    # --- estimates ---------------------------------------------------------------------------
    def history(self, model: str) -> History:
        """The model's record, read once per assign pass (``forget_history`` starts a new one)."""
        if model not in self._history:
            self._history[model] = self.store.model_history(model)
        return self._history[model]

    def forget_history(self) -> None:
        self._history.clear()

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
        balance = self.balances.get(task.route)
        if balance is not None and balance[0].currency == currency:
            limits.append(Limit("balance", task.route, balance[0], since=balance[1],
                                label=provider.name if provider else task.route))
        return tuple(limits)

    # --- claim, settle, release ----------------------------------------------------------------
    def claim(self, route: str, owner: str, limit: int, account: str | None, batch_ids: Sequence[str] | None,
              lane_limit: int | None) -> tuple[list[Task], str | None]:
        """Claim and reserve; (the tasks, why the next one was not started -- or None)."""
        day = self.day()
        if self.has_limits:
            tasks, stop = self.store.claim_within_budget(route, owner, limit, account, batch_ids, lane_limit,
                                                         self.plan, day)
            return tasks, stop_reason(stop) if stop is not None else None
        tasks = self.store.claim(route, owner, limit, account, batch_ids=batch_ids, lane_limit=lane_limit)
        for task in tasks:
            reservation = self.plan(task)
            if reservation is not None:  # the estimate, kept beside the actual cost
                self.store.reserve(task, reservation, day)
        return tasks, None

    def settle(self, task: Task, result: TaskResult) -> Cost | None:
        """The attempt succeeded: its actual cost replaces its reservation. Returns the cost."""
        model = self.config.model(task.model)
        produced = result.produced or Produced()
        if not (produced.input_tokens or produced.output_tokens):
            tokens = tokens_from_usage(result.usage)
            produced = replace(produced, input_tokens=tokens[0], output_tokens=tokens[1])
        cost = actual_cost(model.price if model is not None else None, produced)
        self.store.settle_spend(task, cost.money if cost else None, cost.source if cost else SOURCE_ESTIMATE,
                                produced, self.day())
        self._history.pop(task.model, None)
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


def stop_reason(stop: BudgetStop) -> str:
    """The English reason a lane pauses with (the window translates it: ui/core_texts.py)."""
    limit = stop.limit
    spent, cap = format_money(stop.spent), format_money(limit.cap)
    if limit.scope == "batch":
        return f"budget: {spent} of {cap} spent on batch {limit.label}"
    if limit.scope == "provider":
        return f"budget: {spent} of {cap} spent today on {limit.label}"
    if limit.scope == "balance":
        left = Money(limit.cap.amount - stop.spent.amount, limit.cap.currency)
        return f"balance: {format_money(left)} left on {limit.label}, the next task needs about " \
               f"{format_money(stop.needed)}"
    return f"budget: {spent} of {cap} spent today"
