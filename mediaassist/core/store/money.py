"""Money in the store (core.money): each attempt's estimate reserved when it is claimed and
settled when it ends, budgets summed from those rows under one store-wide lock.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import cast

import peewee as pw

from mediaassist.core.lanes import ClaimRequest
from mediaassist.core.money import (
    SOURCE_ESTIMATE,
    SOURCE_PROVIDER,
    History,
    Money,
    Produced,
    Totals,
    from_micros,
    to_micros,
)
from mediaassist.core.store.database import CHUNK
from mediaassist.core.store.lifecycle import TaskLifecycle
from mediaassist.core.store.tables import SPEND_RESERVED, SPEND_SETTLED, Spend, SpendTotal, Task, total_name

HISTORY_TASKS = 50  # the latest settled tasks of a model that its next estimate learns from


@dataclass(frozen=True)
class Limit:
    """One budget a reservation must fit: ``scope`` "batch" (key: batch id), "day" (key: budget
    day), "provider" (key: route; its budget day in ``day``) or "balance" (key: route; what the
    account had left when it was read at ``since``)."""
    scope: str
    key: str
    cap: Money
    day: str = ""
    since: float = 0.0
    label: str = ""  # how the reason names it (a provider, a batch)


@dataclass(frozen=True)
class Reservation:
    estimate: Money
    table_estimate: Money | None
    limits: tuple[Limit, ...] = ()


@dataclass(frozen=True)
class BudgetStop:
    """A task that did not fit: the budget it would have broken and what it needed."""
    limit: Limit
    spent: Money
    needed: Money


class Spending(TaskLifecycle):
    """Money (core.money): claims within budgets, reservations, settlements and the sums read
    back from them."""

    # --- money: reservations and settlements (core.money) -------------------------------------
    def claim_within_budget(self, request: ClaimRequest, owner: str, batch_ids: Sequence[str] | None,
                            plan: Callable[[Task], Reservation | None], day: str,
                            ) -> tuple[list[Task], BudgetStop | None, dict[str, BudgetStop]]:
        """``claim``, and in the same transaction each claimed attempt's estimate reserved
        against every budget that covers it (``plan`` says which). The first task that does
        not fit goes back to the head of its queue with those behind it. When it broke its
        batch's budget, that batch is left out and the claim goes on with the others (the
        batch's stop is returned by batch id); any other budget stops the lane (its stop is
        returned). Budgets are summed from the spend rows under one store-wide lock (SQLite's
        write lock; a PostgreSQL advisory lock), so two processes or machines never both spend
        the last of a budget. Returns (the tasks claimed, the lane's stop, the batches' stops)."""
        taken: list[Task] = []
        batch_stops: dict[str, BudgetStop] = {}
        spent: dict[Limit, Decimal] = {}
        with self._budget_lock():
            while len(taken) < request.count:
                claimed = self.claim(request.route, owner, request.count - len(taken), request.account, batch_ids,
                                     request.lane_limit, skip_batches=list(batch_stops), order=request.order,
                                     key=request.key, note_start=False)
                stop, fitted = self._reserve_in_turn(claimed, plan, day, spent)
                self.note_started(fitted)
                taken += fitted
                if stop is None:
                    return taken, None, batch_stops
                if stop.limit.scope != "batch":
                    return taken, stop, batch_stops
                batch_stops[stop.limit.key] = stop
        return taken, None, batch_stops

    def _reserve_in_turn(self, claimed: list[Task], plan: Callable[[Task], Reservation | None], day: str,
                         spent: dict[Limit, Decimal]) -> tuple[BudgetStop | None, list[Task]]:
        """Reserve for each claimed task in order; the first that does not fit goes back to the
        queue with the tasks behind it. (its stop or None, the tasks that fitted)"""
        for index, task in enumerate(claimed):
            reservation = plan(task)
            if reservation is None:
                continue
            # A task that resumes a remote task was paid for when it was created: never held back.
            stop = None if task.remote_id else self._exceeded(reservation, spent)
            if stop is not None:
                for back in claimed[index:]:
                    self.release(back)
                return stop, claimed[:index]
            self._reserve(task, reservation, day)
            for covered in reservation.limits:
                # A sum not read yet is read later from the store, which has this reservation.
                if covered in spent and covered.cap.currency == reservation.estimate.currency:
                    spent[covered] += reservation.estimate.amount
        return None, claimed

    def _exceeded(self, reservation: Reservation, spent: dict[Limit, Decimal]) -> BudgetStop | None:
        needed = reservation.estimate
        for covered in reservation.limits:
            if covered.cap.currency != needed.currency:
                continue
            if covered not in spent:
                spent[covered] = self._spent_in(covered)
            if spent[covered] + needed.amount > covered.cap.amount:
                return BudgetStop(covered, Money(spent[covered], needed.currency), needed)
        return None

    def _spent_in(self, covered: Limit) -> Decimal:
        """What is spent (reserved and settled) in a budget's scope: its running total; for a
        balance, the route's spend since the balance was read."""
        currency = covered.cap.currency
        if covered.scope == "balance":
            where = ((Spend.route == covered.key) & (Spend.currency == currency)
                     & (Spend.created_at >= covered.since))
            micros = Spend.select(pw.fn.COALESCE(pw.fn.SUM(Spend.amount), 0)).where(where).scalar()
        else:
            key = f"{covered.key}|{covered.day}" if covered.scope == "provider" else covered.key
            micros = (SpendTotal.select(SpendTotal.amount)
                      .where(SpendTotal.name == total_name(covered.scope, key, currency)).scalar())
        return from_micros(int(micros or 0))

    def _count(self, row: Spend, delta: int) -> None:
        """Add ``delta`` micro-units to the running totals ``row`` counts in."""
        if not delta:
            return
        for name in row.total_names:
            (SpendTotal.insert(name=name, amount=delta)
             .on_conflict(conflict_target=[SpendTotal.name], update={SpendTotal.amount: SpendTotal.amount + delta})
             .execute())

    def _reserve(self, task: Task, reservation: Reservation, day: str) -> None:
        table = reservation.table_estimate
        micros = to_micros(reservation.estimate.amount)
        row = Spend(task_id=task.task_id, attempt=task.attempt, batch_id=task.batch_id, route=task.route,
                    model=task.model, day=day, currency=reservation.estimate.currency, amount=micros,
                    estimate=micros, table_estimate=to_micros(table.amount) if table is not None else None,
                    state=SPEND_RESERVED, source=SOURCE_ESTIMATE, created_at=self.now())
        with self.db.atomic():
            row.save(force_insert=True)
            self._count(row, micros)

    def reserve(self, task: Task, reservation: Reservation, day: str) -> None:
        """Record an attempt's estimate with no budget to check (no lock needed)."""
        self._reserve(task, reservation, day)

    def settle_spend(self, task: Task, cost: Money | None, source: str, produced: Produced | None,
                     day: str) -> None:
        """The attempt ended having spent ``cost`` (None: unknown, so its reservation stands as
        its cost). Replaces the attempt's reservation; with none, records the cost alone."""
        now = self.now()
        produced_json = json.dumps(produced.to_json()) if produced is not None else None
        with self.db.atomic():
            # The window's change sweep reads task.updated_at: the row shows its cost at once.
            Task.update(updated_at=now).where(Task.task_id == task.task_id).execute()
            reserved = self._reserved_rows(task)
            same = next((r for r in reserved if cost is None or r.currency == cost.currency), None)
            for other in reserved:
                if other is not same:  # reserved in another currency than the cost came in
                    self._drop(other)
            row = same or Spend(task_id=task.task_id, attempt=task.attempt, batch_id=task.batch_id,
                                route=task.route, model=task.model, day=day, currency=cost.currency if cost else "",
                                amount=0, created_at=now)
            if cost is None and same is None:
                return  # nothing reserved, nothing known: nothing to record
            new_micros = to_micros(cost.amount) if cost is not None else row.amount
            self._count(row, new_micros - row.amount)
            row.amount, row.state, row.settled_at, row.produced = new_micros, SPEND_SETTLED, now, produced_json
            if cost is not None:
                row.source = source
            row.save(force_insert=same is None)

    def _reserved_rows(self, task: Task) -> list[Spend]:
        return list(Spend.select().where((Spend.task_id == task.task_id) & (Spend.attempt == task.attempt)
                                         & (Spend.state == SPEND_RESERVED)))

    def _drop(self, row: Spend) -> None:
        self._count(row, -row.amount)
        Spend.delete().where(Spend.id == row.id).execute()

    def has_reservations(self) -> bool:
        """Some attempt, of any process on the store, holds money it has not settled yet."""
        return bool(Spend.select().where(Spend.state == SPEND_RESERVED).exists())

    def release_spend(self, task: Task) -> None:
        """The attempt spent nothing (it failed or went back to the queue before any charge)."""
        with self.db.atomic():
            for row in self._reserved_rows(task):
                self._drop(row)

    def spend_totals(self, day: str | None = None, batch_ids: Iterable[str] | None = None,
                     route: str | None = None, settled_only: bool = False) -> Totals:
        where: pw.Expression = Spend.id > 0
        if day is not None:
            where &= Spend.day == day
        if batch_ids is not None:
            where &= Spend.batch_id.in_(list(batch_ids))
        if route is not None:
            where &= Spend.route == route
        if settled_only:
            where &= Spend.state == SPEND_SETTLED
        query = (Spend.select(Spend.currency, pw.fn.SUM(Spend.amount)).where(where).group_by(Spend.currency))
        rows = cast(Iterable[tuple[str, int]], query.tuples())
        return Totals(Money(from_micros(int(micros)), currency) for currency, micros in rows)

    def spend_by_route(self, day: str) -> dict[str, Totals]:
        query = (Spend.select(Spend.route, Spend.currency, pw.fn.SUM(Spend.amount)).where(Spend.day == day)
                 .group_by(Spend.route, Spend.currency))
        by_route: dict[str, Totals] = {}
        for route, currency, micros in cast(Iterable[tuple[str, str, int]], query.tuples()):
            by_route.setdefault(route, Totals()).add(Money(from_micros(int(micros)), currency))
        return by_route

    def batch_estimates(self, batch_ids: Iterable[str]) -> Totals:
        """What was reserved for the batches' attempts: the estimate to set beside the actual."""
        query = (Spend.select(Spend.currency, pw.fn.SUM(Spend.estimate))
                 .where(Spend.batch_id.in_(list(batch_ids)) & Spend.estimate.is_null(False))
                 .group_by(Spend.currency))
        rows = cast(Iterable[tuple[str, int]], query.tuples())
        return Totals(Money(from_micros(int(micros)), currency) for currency, micros in rows)

    def task_spend(self, task_ids: Iterable[str]) -> dict[str, list[Spend]]:
        """{task_id: its spend rows, oldest first} (every attempt's)."""
        ids = list(task_ids)
        found: dict[str, list[Spend]] = {}
        for start in range(0, len(ids), CHUNK):
            query = Spend.select().where(Spend.task_id.in_(ids[start:start + CHUNK])).order_by(Spend.id)
            for row in query:
                found.setdefault(row.task_id, []).append(row)
        return found

    def model_history(self, model: str, tasks: int = HISTORY_TASKS) -> History:
        """What the model's latest settled tasks produced and cost (core.money.History)."""
        rows = list(Spend.select().where((Spend.model == model) & (Spend.state == SPEND_SETTLED)
                                         & (Spend.source != SOURCE_ESTIMATE))
                    .order_by(Spend.id.desc()).limit(tasks))
        history = History(tasks=len(rows))
        if not rows:
            return history
        produced = [Produced.from_json(json.loads(r.produced)) for r in rows if r.produced]
        if produced:
            count = Decimal(len(produced))
            history.output_tokens = sum((Decimal(p.output_tokens) for p in produced), Decimal(0)) / count
            history.images = sum((Decimal(p.images) for p in produced), Decimal(0)) / count
            history.seconds = sum((p.seconds for p in produced), Decimal(0)) / count
            history.megapixels = sum((p.megapixels for p in produced), Decimal(0)) / count
        for currency in {r.currency for r in rows}:
            mine = [r for r in rows if r.currency == currency]
            history.actual_per_task[currency] = from_micros(sum(r.amount for r in mine)) / len(mine)
            told = [r for r in mine if r.source == SOURCE_PROVIDER and r.table_estimate]
            if told:
                history.correction[currency] = (Decimal(sum(r.amount for r in told))
                                                / Decimal(sum(r.table_estimate or 0 for r in told)))
        return history
