"""Budget benchmark: what reservation and settlement add to a claim. Prints figures, asserts nothing.

One process claims tasks one at a time from a queue of pending rows (real SQLite in WAL, or a
PostgreSQL server with ``--pg URL``) and ends each as a lane does, through the scheduler's own
``Budgeter`` (core/budget.py), one assign pass per claim:

* ``no price``       no price table, no budget: the claim alone (the baseline);
* ``price``          a price table: each claim also records the attempt's estimate, and each end
                     settles it with the actual cost (no budget to check, so no lock);
* ``price+budgets``  per-batch, daily and provider budgets: each claim sums the spend in every
                     budget's scope and reserves under the store-wide budget lock, then settles.

For each: the mean time per task inside the claim step and inside the end step (finish_success
plus settlement), and their ratio to ``no price`` measured in this same run.

    python bench/bench_budget.py [--queue 20000] [--tasks 2000] [--pg postgresql://...]
"""

from __future__ import annotations

import argparse
import tempfile
import time
import tomllib
import uuid
from dataclasses import dataclass
from pathlib import Path

from mediaassist.core.budget import Budgeter
from mediaassist.core.config import AppConfig, parse_config
from mediaassist.core.lane_api import TaskResult
from mediaassist.core.owners import new_owner
from mediaassist.core.store import NewTask, Store

ROUTE = "api:bench"
PROVIDER = '[[providers]]\nname = "bench"\nkind = "api"\ntype = "simulated"\n'
MODEL = '[[models]]\nname = "writer"\nkind = "api"\nprovider = "bench"\n'
PRICE = 'price = { currency = "CNY", per_1k_input_tokens = 0.002, per_1k_output_tokens = 0.008 }\n'
BUDGETS = '[budget]\nper_batch = { CNY = 1000000 }\ndaily = { CNY = 1000000 }\n\n'
PROVIDER_BUDGET = "daily_budget = { CNY = 1000000 }\n"
SCENARIOS = {
    "no price": PROVIDER + MODEL,
    "price": PROVIDER + MODEL + PRICE,
    "price+budgets": BUDGETS + PROVIDER + PROVIDER_BUDGET + MODEL + PRICE,
}


@dataclass
class Figures:
    tasks: int
    claim_s: float
    end_s: float


def fill(store: Store, size: int) -> None:
    batch = f"bench-{uuid.uuid4().hex[:8]}"
    for start in range(0, size, 5000):
        store.enqueue(batch, [NewTask(model="writer", model_kind="api", route=ROUTE, prompt=f"prompt {n} " * 8,
                                      task_id=f"{batch}-{n:07d}") for n in range(start, min(size, start + 5000))])


def run(store: Store, config: AppConfig, tasks: int) -> Figures:
    budgeter = Budgeter(store, config)
    owner = str(new_owner())
    usage = {"prompt_tokens": 30, "completion_tokens": 400}
    claim_s = end_s = 0.0
    done = 0
    while done < tasks:
        started = time.perf_counter()
        claimed = budgeter.claim(ROUTE, owner, 1, None, None, 3)
        claim_s += time.perf_counter() - started
        if not claimed.tasks:
            raise SystemExit(f"the queue ran dry after {done} tasks ({claimed.lane_stop}); use a bigger --queue")
        for task in claimed.tasks:
            started = time.perf_counter()
            store.finish_success(task, "ok", [], usage)
            budgeter.settle(task, TaskResult(text="ok", usage=usage))
            end_s += time.perf_counter() - started
        done += len(claimed.tasks)
    return Figures(done, claim_s, end_s)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queue", type=int, default=20000, help="pending tasks per scenario")
    parser.add_argument("--tasks", type=int, default=2000, help="tasks claimed and ended per scenario")
    parser.add_argument("--pg", metavar="URL", help="a PostgreSQL database to use instead of SQLite files")
    args = parser.parse_args()
    figures: dict[str, Figures] = {}
    with tempfile.TemporaryDirectory(prefix="bench-budget-") as folder:
        for name, text in SCENARIOS.items():
            store = Store(args.pg) if args.pg else Store(Path(folder) / f"{name.replace('+', '_')}.sqlite3")
            try:
                fill(store, args.queue)
                figures[name] = run(store, parse_config(tomllib.loads(text)), args.tasks)
            finally:
                store.close()
    base = figures["no price"]
    where = "PostgreSQL" if args.pg else "SQLite (WAL)"
    print(f"{where}: {args.queue} pending per scenario, {args.tasks} tasks claimed and ended one at a time")
    print(f"{'scenario':<15} {'claim ms/task':>14} {'ratio':>6} {'end ms/task':>12} {'ratio':>6} "
          f"{'both ms/task':>13} {'ratio':>6}")
    for name, fig in figures.items():
        claim, end = fig.claim_s / fig.tasks * 1000, fig.end_s / fig.tasks * 1000
        base_claim, base_end = base.claim_s / base.tasks * 1000, base.end_s / base.tasks * 1000
        print(f"{name:<15} {claim:>14.3f} {claim / base_claim:>6.2f} {end:>12.3f} {end / base_end:>6.2f} "
              f"{claim + end:>13.3f} {(claim + end) / (base_claim + base_end):>6.2f}")


if __name__ == "__main__":
    main()
