"""The order a lane takes its queue in (core/order.py): the store's claim by ``longest`` and ``fair``
(SQLite and PostgreSQL), and the real scheduler on the simulated web site whose answers take longer
for longer prompts. No time is asserted: the dispatch order is, and the makespan it gives is
computed from the tasks' nominal durations."""

from __future__ import annotations

import csv
import heapq
import logging
import tomllib
from collections.abc import Sequence
from pathlib import Path

import peewee as pw
import pytest

from mediaassist.core.clock import Clock
from mediaassist.core.config import AppConfig, parse_config
from mediaassist.core.order import MIN_EXPECTED_S
from mediaassist.core.paths import RESOURCES
from mediaassist.core.store import SCHEMA_VERSION, NewTask, Store, Task
from mediaassist.providers.registry import SIMULATED_WEB_RANGE, build_providers
from mediaassist.providers.simulated import SimulatedProvider, prompt_service_time
from tests.harness import make_scheduler, run_to_end, sim_api_tasks
from tests.helpers import sim_config_text


def _web(task_id: str, prompt: str, model: str = "reasoner", priority: int = 0) -> NewTask:
    return NewTask(model=model, model_kind="web", route="web:s", prompt=prompt, task_id=task_id, priority=priority)


def _record(store: Store, durations: dict[str, float]) -> None:
    """Run these tasks to success, as if each took its seconds."""
    for task in store.claim("web:s", "me", limit=len(durations)):
        started = store.now() - durations[task.task_id]
        Task.update(started_at=started).where(Task.task_id == task.task_id).execute()
        store.finish_success(task, "done", [])


# --- the store's claim ---------------------------------------------------------------------------

def test_longest_takes_priority_then_the_longest_expected_then_the_unknown_in_fifo_order(store: Store) -> None:
    store.enqueue("yesterday", [_web("y1", "x" * 10), _web("y2", "x" * 40), _web("y3", "x" * 70)])
    assert {t.expected_s for t in store.tasks()} == {0.0}  # nothing recorded: nothing expected
    _record(store, {"y1": 40.0, "y2": 130.0, "y3": 220.0})  # 10 s + 3 s per character
    store.enqueue("today", [_web("short", "x" * 10), _web("other-model", "x" * 90, model="painter"),
                            _web("long", "x" * 80), _web("urgent", "x" * 5, priority=1), _web("mid", "x" * 40),
                            _web("other-model-2", "x" * 10, model="painter")])
    expected = {t.task_id: t.expected_s for t in store.tasks(["today"])}
    assert expected["long"] == pytest.approx(250.0, abs=0.1) and expected["short"] == pytest.approx(40.0, abs=0.1)
    assert expected["other-model"] == 0.0  # a model with no record
    claimed = [t.task_id for t in store.claim("web:s", "me", limit=6, order="longest")]
    assert claimed == ["urgent", "long", "mid", "short", "other-model", "other-model-2"]


def test_fifo_stays_fifo_whatever_is_expected(store: Store) -> None:
    store.enqueue("yesterday", [_web("y1", "x" * 10), _web("y2", "x" * 40)])
    _record(store, {"y1": 40.0, "y2": 130.0})
    store.enqueue("today", [_web("short", "x" * 10), _web("long", "x" * 80)])
    assert [t.task_id for t in store.claim("web:s", "me", limit=2)] == ["short", "long"]


def test_a_web_success_refreshes_the_expectations_of_its_models_pending_tasks(store: Store) -> None:
    store.enqueue("b", [_web("first", "x" * 20), _web("short", "x" * 10), _web("long", "x" * 60)])
    (first,) = store.claim("web:s", "me", limit=1, order="longest")
    assert first.task_id == "first"  # nothing known: FIFO
    store.finish_success(first, "done", [])
    pending = {t.task_id: t.expected_s for t in store.tasks() if t.state == "pending"}
    assert pending["short"] >= MIN_EXPECTED_S and pending["long"] >= MIN_EXPECTED_S
    _record(store, {"short": 35.0})  # (20 chars, ~0 s) and now (10 chars, 35 s)
    fit = store.duration_fit("reasoner")
    assert fit is not None and fit.per_char_s == 0.0  # a longer prompt is never expected to be quicker
    assert store.get("long").expected_s == pytest.approx(fit.expected(60)) == pytest.approx(17.5, abs=0.1)


def test_a_refresh_the_database_refuses_leaves_the_success_written(store: Store,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    store.enqueue("b", [_web("only", "x" * 20), _web("next", "x" * 30)])
    (task,) = store.claim("web:s", "me", limit=1)

    def locked(model: str) -> None:
        raise pw.OperationalError("database is locked")

    monkeypatch.setattr(store, "refresh_expected", locked)
    assert store.finish_success(task, "done", [])
    assert store.get("only").state == "success" and store.get("next").expected_s == 0.0


def test_fair_serves_a_small_batch_beside_a_large_one_that_came_first(store: Store) -> None:
    store.enqueue("big", sim_api_tasks(10, prefix="big"))
    store.enqueue("small", sim_api_tasks(3, prefix="small"))
    first = store.claim("api:sim-api", "me", limit=3, lane_limit=3, order="fair")
    # FIFO would take big000..big002; fair: big (its head is older), small (runs fewer), big (a tie again)
    assert [t.task_id for t in first] == ["big000", "big001", "small000"]
    small = next(t for t in first if t.batch_id == "small")
    store.finish_success(small, "done", [])
    (second,) = store.claim("api:sim-api", "me", limit=3, lane_limit=3, order="fair")
    assert second.task_id == "small001"  # small runs none, big two


def test_fair_puts_priority_first(store: Store) -> None:
    store.enqueue("big", sim_api_tasks(10, prefix="big"))
    urgent = sim_api_tasks(1, prefix="urgent")
    urgent[0].priority = 5
    store.enqueue("big", urgent)
    store.enqueue("small", sim_api_tasks(3, prefix="small"))
    claimed = [t.task_id for t in store.claim("api:sim-api", "me", limit=3, lane_limit=3, order="fair")]
    assert claimed == ["urgent000", "big000", "small000"]  # big's urgent task, then one each


def test_a_store_of_version_5_gains_the_expected_durations_and_its_tasks_go_fifo(store_location: str) -> None:
    old = Store(store_location)
    old.enqueue("b", [_web("a", "x" * 10), _web("b", "x" * 90)])
    old.db.execute_sql('DROP INDEX "task_pending_longest"')  # version 5 had neither
    old.db.execute_sql('ALTER TABLE "task" DROP COLUMN "expected_s"')
    old.db.execute_sql("UPDATE schema_version SET version = 5")
    old.close()
    store = Store(store_location)
    try:
        assert store.db.execute_sql("SELECT version FROM schema_version").fetchone()[0] == SCHEMA_VERSION
        assert [t.expected_s for t in store.tasks()] == [0.0, 0.0]  # queued before: not known
        assert [t.task_id for t in store.claim("web:s", "me", limit=2, order="longest")] == ["a", "b"]
    finally:
        store.close()


def test_a_store_of_version_6_gains_the_indexes_of_the_longest_and_fair_claims(store_location: str) -> None:
    old = Store(store_location)
    for index in ORDER_INDEXES.values():
        old.db.execute_sql(f'DROP INDEX "{index}"')
    old.db.execute_sql("UPDATE schema_version SET version = 6")
    old.close()
    store = Store(store_location)
    try:
        assert set(ORDER_INDEXES.values()) <= {index.name for index in store.db.get_indexes("task")}
    finally:
        store.close()


ORDER_INDEXES = {"longest": "task_pending_longest", "fair": "task_pending_batches"}


class _Statements(logging.Handler):
    """The SQL statements peewee sends (it logs each as (sql, params) at DEBUG)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.sent: list[tuple[str, Sequence[object]]] = []

    def emit(self, record: logging.LogRecord) -> None:
        if isinstance(record.msg, tuple):
            self.sent.append(record.msg)


def _claim_statements(store: Store, order: str) -> list[tuple[str, Sequence[object]]]:
    """Every statement of a claim of ``order``: SQLite's own trace (the store's hot statements go
    straight to its driver, past peewee's log), with the values in place; peewee's log on
    PostgreSQL."""
    if isinstance(store.db, pw.SqliteDatabase):
        traced: list[str] = []
        store.db.connection().set_trace_callback(traced.append)
        try:
            assert store.claim("api:sim-api", "me", limit=2, lane_limit=3, order=order)
        finally:
            store.db.connection().set_trace_callback(None)
        return [(sql, ()) for sql in traced]
    statements = _Statements()
    peewee_log = logging.getLogger("peewee")
    level = peewee_log.level
    peewee_log.addHandler(statements)
    peewee_log.setLevel(logging.DEBUG)
    try:
        assert store.claim("api:sim-api", "me", limit=2, lane_limit=3, order=order)
    finally:
        peewee_log.removeHandler(statements)
        peewee_log.setLevel(level)
    return statements.sent


def _claim_plans(store: Store, order: str) -> list[str]:
    """The query plan of every statement that reads the queue in a claim of ``order``."""
    explain = "EXPLAIN QUERY PLAN " if isinstance(store.db, pw.SqliteDatabase) else "EXPLAIN "
    reads = [(sql, params) for sql, params in _claim_statements(store, order)
             if sql.startswith(("SELECT", "UPDATE", "WITH")) and "pg_advisory" not in sql]
    return ["\n".join(str(row[-1]) for row in store.db.execute_sql(explain + sql, params).fetchall())
            for sql, params in reads]


@pytest.mark.parametrize("order", ["longest", "fair"])
def test_a_longest_or_fair_claim_walks_its_index_instead_of_sorting_the_queue(store: Store, order: str) -> None:
    for batch in range(5):
        store.enqueue(f"b{batch}", sim_api_tasks(4000, prefix=f"b{batch}-"))
    Task.update(expected_s=1_000_000 - Task.seq).execute()  # all known, the newest longest
    store.db.execute_sql("ANALYZE")  # PostgreSQL plans by the table's statistics
    plans = _claim_plans(store, order)
    assert any(ORDER_INDEXES[order] in plan for plan in plans)
    # No sort or grouping of the queue's rows: SQLite's temporary B-tree, PostgreSQL's Sort node
    # over the task table (the update's sort of the few seqs it took is over "ANY_subquery"; a
    # count of the running rows by batch reads task_running, a lane's few rows).
    queue_sorts = [line for plan in plans if "task_running" not in plan for line in plan.splitlines()
                   if "TEMP B-TREE" in line or ("Sort Key" in line and "ANY_subquery" not in line)]
    assert queue_sorts == []


# --- the real scheduler ---------------------------------------------------------------------------

def _seed_web_rows() -> list[dict[str, str]]:
    """The seed batch's 12 web tasks (task_id, prompt, priority)."""
    with (RESOURCES / "examples" / "seed-batch.csv").open(encoding="utf-8") as fh:
        return [row for row in csv.DictReader(fh) if row["model"] == "demo-reasoner"]


def _seed_web_tasks(prefix: str) -> list[NewTask]:
    return [NewTask(model="reasoner", model_kind="web", route="web:simulated", prompt=row["prompt"],
                    task_id=f"{prefix}{row['task_id']}", priority=int(row["priority"])) for row in _seed_web_rows()]


def _makespan(durations: list[float], accounts: int) -> float:
    """The makespan of tasks started in this order, each on the first account to come free."""
    free = [0.0] * accounts
    for duration in durations:
        heapq.heappush(free, heapq.heappop(free) + duration)
    return max(free)


def _dispatched(store: Store, batch: str) -> list[Task]:
    return sorted(store.tasks([batch]), key=lambda t: t.started_at)


@pytest.mark.sqlite_only
@pytest.mark.asyncio
async def test_web_tasks_go_longest_expected_first_once_the_model_has_a_record(store: Store, data_dir: Path) -> None:
    accounts = 3  # FIFO's makespan is 11 % over its bound here
    config = parse_config(tomllib.loads(sim_config_text(accounts=tuple(f"acct-{i}" for i in range(accounts)))))
    # The store records real seconds: at this speed a task's length (62..740 ms) stands well clear
    # of a loaded machine's overhead, so the fitted slope is the prompts', not the noise's.
    clock = Clock(speed=500)
    providers = build_providers(config, clock, data_dir)
    providers["web:simulated"] = SimulatedProvider(clock, *SIMULATED_WEB_RANGE, by_prompt=True)

    async def run(batch: str) -> list[Task]:
        store.enqueue(batch, _seed_web_tasks(f"{batch}-"))
        await run_to_end(make_scheduler(store, config, data_dir, clock, providers), batch, 120)
        assert {t.state for t in store.tasks([batch])} == {"success"}
        return _dispatched(store, batch)

    first = await run("first")
    fifo = sorted(first, key=lambda t: (-t.priority, t.seq))
    # Nothing recorded: the first tasks go first in, first out; each success refreshes the rest's
    # expectations, so the batch's tail goes longest first already.
    assert [t.task_id for t in first[:accounts]] == [t.task_id for t in fifo[:accounts]]
    longest = await run("again")  # the same prompts, now with the first batch's durations on record
    fit = store.duration_fit("reasoner")
    assert fit is not None and fit.per_char_s > 0
    assert [t.task_id for t in longest] == [
        t.task_id for t in sorted(longest, key=lambda t: (-t.priority, -len(t.prompt), t.seq))]

    def ratio(tasks: list[Task]) -> float:
        nominal = [prompt_service_time(t.task_id, t.prompt, *SIMULATED_WEB_RANGE) for t in tasks]
        return _makespan(nominal, accounts) / max(sum(nominal) / accounts, max(nominal))

    assert ratio(longest) <= 1.05 < ratio(fifo)


@pytest.mark.sqlite_only
@pytest.mark.asyncio
@pytest.mark.parametrize(("order", "big_done_before"), [("fair", range(0, 20)), ("fifo", range(190, 201))])
async def test_a_small_batch_beside_a_big_one_finishes_before_the_bigs_20th_task_when_fair(
        store: Store, data_dir: Path, order: str, big_done_before: range) -> None:
    config = _with_api_order(parse_config(tomllib.loads(sim_config_text())), order)
    store.enqueue("big", sim_api_tasks(200, prefix="big", sim_duration_s=5))
    store.enqueue("small", sim_api_tasks(3, prefix="small", sim_duration_s=5))
    await run_to_end(make_scheduler(store, config, data_dir, Clock(speed=1000)), "small", 120)
    small = store.tasks(["small"])
    assert {t.state for t in small} == {"success"}
    small_done = max(t.finished_at for t in small)
    big_done = [t for t in store.tasks(["big"]) if t.state == "success" and t.finished_at <= small_done]
    assert len(big_done) in big_done_before


def _with_api_order(config: AppConfig, order: str) -> AppConfig:
    next(p for p in config.providers if p.kind == "api").order = order
    return config
