"""Store benchmark: CPU per task of the store's hot path against huey's, in the same run.

Prints figures, asserts nothing. One task through mediaassist's store is what the scheduler
does with it: ``claim`` (one task, with the lane's limit counted and its "started" log line
written in the same transaction), then ``finish_success`` (or ``finish_failure``), which writes
the result (or the error) and its log line in one transaction. One task through
huey (https://huey.readthedocs.io, ``SqliteHuey``, WAL) is its worker's ``dequeue`` and
``execute`` of a task that does nothing, which writes its result. Both run in this process on
the same box, interleaved round by round; the figure is the process's CPU time per task
(``time.process_time``), the median of the rounds, at 10,000 and then 100,000 tasks queued.

With ``--pg URL`` the store is on PostgreSQL instead (a throw-away database: the bench's route
is emptied first), and the figure is this process's CPU only: the server's work is not in it.
huey has no PostgreSQL storage, so its SQLite figure is the baseline there too. One store per
run: the store's tables are bound to one database per process.

    python -m bench.bench_store [--tasks 1000] [--rounds 3] [--pg postgresql://...]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from huey import SqliteHuey

from mediaassist.core.errors import ErrorKind
from mediaassist.core.owners import new_owner
from mediaassist.core.store import NewTask, Store, Task

ROUTE = "api:bench-store"
LANE_LIMIT = 5
SIZES = (10_000, 100_000)


class HueyQueue:
    def __init__(self, folder: Path) -> None:
        self.huey = SqliteHuey(filename=str(folder / "huey.db"), fsync=False)
        self.noop = self.huey.task()(_noop)

    def fill(self, size: int) -> None:
        """Queued messages as huey's ``enqueue`` writes them, in one transaction (setting up only)."""
        rows = [(self.huey.name, self.huey.serialize_task(self.noop.s(n)), 0.0) for n in range(size)]
        with self.huey.storage.db(commit=True) as cursor:
            cursor.executemany("INSERT INTO task (queue, data, priority) VALUES (?, ?, ?)", rows)

    def run(self, tasks: int) -> float:
        started = time.process_time()
        for _ in range(tasks):
            self.huey.execute(self.huey.dequeue())
        return (time.process_time() - started) / tasks

    def queued(self) -> int:
        return int(self.huey.pending_count())


def _noop(n: int) -> int:
    return n


class StoreQueue:
    def __init__(self, location: Path | str) -> None:
        self.store = Store(location)
        self.owner = str(new_owner())
        self.batches = 0
        Task.delete().where(Task.route == ROUTE).execute()  # an earlier run's rows

    def fill(self, size: int) -> None:
        self.batches += 1
        self.store.enqueue(f"bench-{self.batches}", [
            NewTask(model="writer", model_kind="api", route=ROUTE, prompt=f"prompt {n}") for n in range(size)])

    def run(self, tasks: int, failing: bool = False) -> float:
        store = self.store
        started = time.process_time()
        done = 0
        while done < tasks:
            for task in store.claim(ROUTE, self.owner, limit=1, lane_limit=LANE_LIMIT):
                if failing:
                    store.finish_failure(task, ErrorKind.PROVIDER, "the service said no", None)
                else:
                    store.finish_success(task, "an answer", [], {"total_tokens": 42})
                done += 1
        return (time.process_time() - started) / tasks

    def queued(self) -> int:
        return sum(n for (route, _a, state), n in self.store.counts().items() if route == ROUTE and state == "pending")


def measure(huey: HueyQueue, store: StoreQueue, size: int, tasks: int, rounds: int) -> dict[str, float]:
    """Median CPU per task of each, interleaved round by round (the box's load hits all alike);
    every queue is topped up to ``size`` before each round."""
    seen: dict[str, list[float]] = {"huey": [], "store, success": [], "store, failure": []}
    for _ in range(rounds):
        huey.fill(size - huey.queued())
        seen["huey"].append(huey.run(tasks))
        store.fill(size - store.queued())
        seen["store, success"].append(store.run(tasks))
        seen["store, failure"].append(store.run(tasks, failing=True))
    return {name: statistics.median(values) for name, values in seen.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=1000, help="tasks per round and case (at most a fifth of 10,000)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--pg", help="the store on this PostgreSQL database (a throw-away one) instead of SQLite")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        huey = HueyQueue(folder)
        store = StoreQueue(args.pg or folder / "store.sqlite3")
        print(f"store on {'PostgreSQL' if args.pg else 'SQLite'}; CPU per task, median of {args.rounds} rounds of "
              f"{args.tasks:,} tasks each (load average {os.getloadavg()[0]:.1f})")
        print(f"{'queued':>8} {'queue':<16} {'CPU/task':>9} {'÷ huey':>7}")
        for size in SIZES:
            figures = measure(huey, store, size, args.tasks, args.rounds)
            for name, cpu in figures.items():
                print(f"{size:>8,} {name:<16} {cpu * 1e6:>6.0f} us {cpu / figures['huey']:>7.2f}", flush=True)
        store.store.close()


if __name__ == "__main__":
    main()
