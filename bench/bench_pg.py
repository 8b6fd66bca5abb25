"""Shared-queue benchmark: prints figures, asserts nothing.

Zero-latency tasks through the real scheduler and store: one API lane (concurrency 5, held by
the store across processes), N tasks queued, then 1, 2 and 3 processes (each its own scheduler,
its own host identity, as separate machines would be) run the batch on one PostgreSQL database.
The baseline in the same run is one process on an SQLite file. For each: tasks/s over the whole
batch (first start to last finish) and the claim's latency (one ``Store.claim`` call that took
work: count + claim in one transaction) p50/p99, over all processes; and how long enqueueing
the batch took (one process, before the run).

    python -m bench.bench_pg [--tasks 3000]

Uses the server in MEDIAASSIST_TEST_PG, or starts a throw-away one with
packaging/pg_test_cluster.sh (Debian's postgresql package).
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from mediaassist.core.clock import Clock
from mediaassist.core.config import AppConfig, ModelConfig, ProviderConfig
from mediaassist.core.scheduler import Scheduler
from mediaassist.core.store import NewTask, Store
from mediaassist.providers.simulated import SimulatedProvider
from tests.helpers import fresh_pg_database

ROOT = Path(__file__).resolve().parents[1]

CONCURRENCY = 5
BATCH = "bench"


class TimedStore(Store):
    """The real store, timing each claim that took work."""

    claim_s: list[float]

    def claim(self, *args: Any, **kwargs: Any) -> list[Any]:
        started = time.perf_counter()
        claimed = super().claim(*args, **kwargs)
        if claimed:
            self.claim_s.append(time.perf_counter() - started)
        return claimed


def _config() -> AppConfig:
    return AppConfig(providers=[ProviderConfig(name="api", kind="api", type="simulated", concurrency=CONCURRENCY)],
                     models=[ModelConfig(name="writer", kind="api", provider="api")])


async def _run_batch(location: str, workdir: Path, go: Any) -> dict[str, Any]:
    store = TimedStore(location)
    store.claim_s = []
    clock = Clock(1.0)
    sched = Scheduler(store, _config(), {"api:api": SimulatedProvider(clock, 0, 0)}, workdir, clock)
    go.wait()  # every process starts claiming at once
    started = time.time()
    await sched.start()
    await sched.wait_for_batches([BATCH])
    finished = time.time()
    await sched.stop()
    store.close()
    return {"started": started, "finished": finished, "claims": store.claim_s}


def _worker(location: str, workdir: str, host: str, go: Any, results: Any) -> None:
    os.environ["MEDIAASSIST_HOST_ID"] = host
    results.put(asyncio.run(_run_batch(location, Path(workdir), go)))


def measure(location: str, tasks: int, processes: int, workdir: Path) -> dict[str, float]:
    store = Store(location)
    enqueue_started = time.perf_counter()
    store.enqueue(BATCH, [NewTask(model="writer", model_kind="api", route="api:api", task_id=f"t{i}",
                                  params={"sim_duration_s": 0}) for i in range(tasks)])
    enqueue_s = time.perf_counter() - enqueue_started
    store.close()
    ctx = multiprocessing.get_context("spawn")
    go, results = ctx.Event(), ctx.Queue()
    workers = [ctx.Process(target=_worker, args=(location, str(workdir), f"bench-{i}", go, results))
               for i in range(processes)]
    for worker in workers:
        worker.start()
    time.sleep(1.0)  # imports and connections done before the clock starts
    go.set()
    outcomes = [results.get(timeout=600) for _ in workers]
    for worker in workers:
        worker.join(timeout=60)
    claims = sorted(s for out in outcomes for s in out["claims"])
    wall = max(o["finished"] for o in outcomes) - min(o["started"] for o in outcomes)
    return {"enqueue_s": enqueue_s, "tasks_per_s": tasks / wall, "p50_ms": statistics.median(claims) * 1000,
            "p99_ms": claims[min(len(claims) - 1, int(len(claims) * 0.99))] * 1000, "claims": len(claims)}


def _server(tmp: Path) -> tuple[str, Path | None]:
    if os.environ.get("MEDIAASSIST_TEST_PG"):
        return os.environ["MEDIAASSIST_TEST_PG"], None
    cluster = tmp / "pg"
    url = subprocess.run([str(ROOT / "packaging" / "pg_test_cluster.sh"), "start", str(cluster)],
                         check=True, capture_output=True, text=True).stdout.strip()
    return url, cluster


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=3000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        server, cluster = _server(tmp)
        try:
            rows = [("SQLite", 1, measure(str(tmp / "bench.sqlite3"), args.tasks, 1, tmp))]
            for processes in (1, 2, 3):
                with fresh_pg_database(server) as url:
                    rows.append(("PostgreSQL", processes, measure(url, args.tasks, processes, tmp)))
        finally:
            if cluster is not None:
                subprocess.run([str(ROOT / "packaging" / "pg_test_cluster.sh"), "stop", str(cluster)], check=False)
    baseline = rows[0][2]["tasks_per_s"]
    print(f"{args.tasks:,} zero-latency tasks, one API lane of {CONCURRENCY} held by the store")
    print(f"{'store':<11} {'procs':>5} {'enqueue':>8} {'tasks/s':>8} {'vs SQLite':>9} {'claim p50':>10} "
          f"{'claim p99':>10} {'claims':>7}")
    for name, processes, out in rows:
        print(f"{name:<11} {processes:>5} {out['enqueue_s']:6.2f} s {out['tasks_per_s']:8.0f} "
              f"{out['tasks_per_s'] / baseline:9.2f} {out['p50_ms']:8.2f} ms {out['p99_ms']:8.2f} ms "
              f"{out['claims']:7,}")


if __name__ == "__main__":
    main()
