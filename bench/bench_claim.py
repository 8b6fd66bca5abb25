"""Claim benchmark: prints figures, asserts nothing.

The cost of one claimed task on a queue of 100,000 pending rows (real SQLite, WAL), each claim
followed by its ``finish_success`` as a lane would do it:

* ``plain``          the claim without a limit check (the old per-process claim), one process;
* ``limit``          the claim that counts the lane's running rows in the same transaction
                     (``lane_limit``), one process;
* ``limit+batch``    the same, restricted to one batch of 10,000 (``run FILE``);
* ``limit x3``       three processes claiming on the same lane at once;
* ``longest``        the limited claim in ``order = "longest"`` (every row's expected duration
                     known and different), one process;
* ``fair``           the limited claim in ``order = "fair"`` (batches round-robin), one process.

Each figure is the mean time inside ``claim()`` per claimed task, and the wall time per task
(claim + finish), with ratios against ``plain`` measured in this same run (``longest`` and ``fair`` are to be read
against ``limit``, the same claim in FIFO order).

    python -m bench.bench_claim [--queue 100000] [--tasks 3000] [--scenarios limit,longest,fair]
"""

from __future__ import annotations

import argparse
import multiprocessing
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mediaassist.core.owners import new_owner
from mediaassist.core.store import NewTask, Store

ROUTE = "api:bench"
LANE_LIMIT = 3
BATCHES = 10  # the queue is split into this many batches; "limit+batch" claims from the last one


@dataclass
class Figures:
    claimed: int
    claim_s: float
    wall_s: float


def build_queue(path: Path, size: int) -> None:
    store = Store(path)
    per_batch = size // BATCHES
    for batch in range(BATCHES):
        store.enqueue(f"batch-{batch}", [NewTask(model="writer", model_kind="api", route=ROUTE, prompt=f"p {n}",
                                                 task_id=f"b{batch}-{n:06d}") for n in range(per_batch)])
    # every expectation known and different, so ``longest`` has a real order to keep
    store.db.execute_sql('UPDATE "task" SET expected_s = (seq * 7919) % 997 + 1')
    store.db.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()


def claim_loop(path: str, tasks: int, lane_limit: int | None, batch: str | None, order: str,
               out: multiprocessing.Queue[Figures]) -> None:
    store = Store(path)
    owner = str(new_owner())
    claimed = 0
    claim_s = 0.0
    batches = [batch] if batch else None
    started = time.perf_counter()
    while claimed < tasks:
        before = time.perf_counter()
        got = store.claim(ROUTE, owner, limit=1, batch_ids=batches, lane_limit=lane_limit, order=order)
        claim_s += time.perf_counter() - before
        for task in got:
            store.finish_success(task, "ok", [])
        claimed += len(got)
    out.put(Figures(claimed, claim_s, time.perf_counter() - started))
    store.close()


def scenario(template: Path, folder: Path, name: str, tasks: int, processes: int, lane_limit: int | None,
             batch: str | None = None, order: str = "fifo") -> Figures:
    path = folder / f"{name.replace(' ', '_').replace('+', '_')}.sqlite3"
    shutil.copy(template, path)
    ctx = multiprocessing.get_context("spawn")
    out: multiprocessing.Queue[Figures] = ctx.Queue()
    workers = [ctx.Process(target=claim_loop, args=(str(path), tasks // processes, lane_limit, batch, order, out))
               for _ in range(processes)]
    started = time.perf_counter()
    for worker in workers:
        worker.start()
    results = [out.get(timeout=600) for _ in workers]
    for worker in workers:
        worker.join()
    wall = time.perf_counter() - started  # includes process start-up; per-worker wall excludes it
    claimed = sum(r.claimed for r in results)
    return Figures(claimed, sum(r.claim_s for r in results), max(r.wall_s for r in results) or wall)


SCENARIOS: dict[str, dict[str, Any]] = {
    "plain": {"processes": 1, "lane_limit": None},
    "limit": {"processes": 1, "lane_limit": LANE_LIMIT},
    "limit+batch": {"processes": 1, "lane_limit": LANE_LIMIT, "batch": f"batch-{BATCHES - 1}"},
    "limit x3": {"processes": 3, "lane_limit": LANE_LIMIT},
    "longest": {"processes": 1, "lane_limit": LANE_LIMIT, "order": "longest"},
    "fair": {"processes": 1, "lane_limit": LANE_LIMIT, "order": "fair"},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queue", type=int, default=100_000)
    parser.add_argument("--tasks", type=int, default=3000)
    parser.add_argument("--scenarios", default=",".join(SCENARIOS), help="which to run ('plain' always runs)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        template = folder / "template.sqlite3"
        started = time.perf_counter()
        build_queue(template, args.queue)
        print(f"queue of {args.queue:,} pending tasks built in {time.perf_counter() - started:.1f} s; "
              f"{args.tasks:,} claims per scenario, lane limit {LANE_LIMIT}")
        wanted = ["plain", *(name for name in args.scenarios.split(",") if name != "plain")]
        runs = {name: scenario(template, folder, name, args.tasks, **SCENARIOS[name]) for name in wanted}
    base = runs["plain"]
    base_claim, base_wall = base.claim_s / base.claimed, base.wall_s / base.claimed
    print(f"{'scenario':<13} {'claim/task':>11} {'ratio':>6} {'wall/task':>10} {'ratio':>6}")
    for name, fig in runs.items():
        claim_us, wall_us = fig.claim_s / fig.claimed * 1e6, fig.wall_s / fig.claimed * 1e6
        print(f"{name:<13} {claim_us:>8.0f} us {claim_us / (base_claim * 1e6):>6.2f} "
              f"{wall_us:>7.0f} us {wall_us / (base_wall * 1e6):>6.2f}")
    print("claim/task: time inside claim() per claimed task (for x3: summed over the processes, so "
          "lock waits count); wall/task: the slowest process's wall time / all tasks claimed")


if __name__ == "__main__":
    main()
