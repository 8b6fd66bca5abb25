"""Scheduler benchmark: prints figures, asserts nothing.

Part 1 -- the 40-task seed batch (12 web, 28 API) at scaled time under three policies, all in
this run with the same service times (drawn per task id, as the simulated provider does):

* ``pool8``      one shared pool of 8 workers, FIFO (the old design). A web task started while
                 the account's session is busy collides: it errors after 10 s and goes to the
                 back of the queue. An API request beyond the provider's quota of 3 gets a 429
                 and its worker sleeps 5 s before asking again.
* ``pool8+sem``  the same pool with a semaphore of 1 around web tasks (a worker waits for it).
* ``lanes``      mediaassist's scheduler: real store (SQLite), one web lane (1), one API lane (3).

For each: makespan, the lower bound ``max(sum web, sum API / 3)`` (one web account), their
ratio, and the mean and max wait of API tasks (queued → started).

Part 2 -- 10,000 zero-latency tasks through the real store and scheduler: tasks/s and
dispatch overhead per task; then the same 10,000 drawn from a queue of 100,000.

    python -m bench.bench_scheduler [--speed 400]
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from mediaassist.core.clock import Clock
from mediaassist.core.config import AccountConfig, AppConfig, ModelConfig, ProviderConfig
from mediaassist.core.paths import RESOURCES
from mediaassist.core.scheduler import Scheduler
from mediaassist.core.store import NewTask, Store
from mediaassist.providers.registry import SIMULATED_SITE, SIMULATED_WEB_RANGE
from mediaassist.providers.simulated import SimulatedProvider, service_time

API_RANGE = (8.0, 20.0)
API_QUOTA = 3
COLLISION_S = 10.0
RATE_LIMIT_WAIT_S = 5.0


@dataclass
class Job:
    task_id: str
    web: bool
    duration: float
    queued_at: float = 0.0
    started_at: float = 0.0


@dataclass
class Outcome:
    makespan: float
    api_waits: list[float]
    collisions: int = 0
    rate_limited: int = 0


def seed_jobs() -> list[Job]:
    with (RESOURCES / "examples" / "seed-batch.csv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    jobs = []
    for row in rows:
        web = row["model"] == "demo-reasoner"
        low, high = SIMULATED_WEB_RANGE if web else API_RANGE
        jobs.append(Job(row["task_id"], web, service_time(row["task_id"], low, high)))
    return jobs


async def run_pool(jobs: list[Job], clock: Clock, web_semaphore: bool) -> Outcome:
    queue: asyncio.Queue[Job] = asyncio.Queue()
    start = time.monotonic()
    for job in jobs:
        job.queued_at = start
        queue.put_nowait(job)
    outcome = Outcome(0.0, [])
    session_busy = False
    api_in_flight = 0
    sem = asyncio.Semaphore(1)
    remaining = len(jobs)
    done = asyncio.Event()

    async def do_web(job: Job) -> bool:
        nonlocal session_busy
        if session_busy:  # a second generation on the same session errors out
            await clock.sleep(COLLISION_S)
            outcome.collisions += 1
            return False
        session_busy = True
        job.started_at = job.started_at or time.monotonic()
        await clock.sleep(job.duration)
        session_busy = False
        return True

    async def do_api(job: Job) -> None:
        nonlocal api_in_flight
        while api_in_flight >= API_QUOTA:
            outcome.rate_limited += 1
            await clock.sleep(RATE_LIMIT_WAIT_S)
        api_in_flight += 1
        job.started_at = time.monotonic()
        await clock.sleep(job.duration)
        api_in_flight -= 1

    async def worker() -> None:
        nonlocal remaining
        while True:
            job = await queue.get()
            if job.web:
                if web_semaphore:
                    async with sem:
                        ok = await do_web(job)
                else:
                    ok = await do_web(job)
                if not ok:
                    queue.put_nowait(job)  # retry at the back
                    continue
            else:
                await do_api(job)
            remaining -= 1
            if remaining == 0:
                done.set()

    workers = [asyncio.ensure_future(worker()) for _ in range(8)]
    await done.wait()
    outcome.makespan = (time.monotonic() - start) * clock.speed
    for task in workers:
        task.cancel()
    await asyncio.gather(*workers, return_exceptions=True)
    outcome.api_waits = [(j.started_at - j.queued_at) * clock.speed for j in jobs if not j.web]
    return outcome


async def run_lanes(jobs: list[Job], clock: Clock, workdir: Path) -> Outcome:
    config = AppConfig(
        providers=[ProviderConfig(name="api", kind="api", type="simulated", concurrency=API_QUOTA)],
        models=[ModelConfig(name="writer", kind="api", provider="api"),
                ModelConfig(name="reasoner", kind="web", site=SIMULATED_SITE)],
        accounts=[AccountConfig(name="only", site=SIMULATED_SITE)])
    store = Store(workdir / "lanes.sqlite3")
    tasks = [NewTask(model="reasoner" if j.web else "writer", model_kind="web" if j.web else "api",
                     route=f"web:{SIMULATED_SITE}" if j.web else "api:api", task_id=j.task_id,
                     params={"sim_duration_s": j.duration}) for j in jobs]
    store.enqueue("seed", tasks)
    providers = {"api:api": SimulatedProvider(clock, *API_RANGE),
                 f"web:{SIMULATED_SITE}": SimulatedProvider(clock, *SIMULATED_WEB_RANGE)}
    sched = Scheduler(store, config, providers, workdir, clock)
    start = time.monotonic()
    await sched.start()
    await sched.wait_for_batches(["seed"])
    rows = store.tasks(["seed"])
    makespan = (max(t.finished_at for t in rows) - min(t.created_at for t in rows)) * clock.speed
    await sched.stop()
    waits = [(t.started_at - t.created_at) * clock.speed for t in rows if t.model_kind == "api"]
    del start
    store.close()
    return Outcome(makespan, waits)


async def part1(speed: float, workdir: Path) -> None:
    clock = Clock(speed)
    jobs = seed_jobs()
    web_sum = sum(j.duration for j in jobs if j.web)
    api_sum = sum(j.duration for j in jobs if not j.web)
    bound = max(web_sum, api_sum / API_QUOTA)
    print(f"seed batch: {sum(j.web for j in jobs)} web (sum {web_sum:.0f} s), "
          f"{sum(not j.web for j in jobs)} API (sum {api_sum:.0f} s); lower bound {bound:.0f} s; "
          f"scaled x{speed:g}")
    print(f"{'policy':<11} {'makespan':>10} {'ratio':>6} {'API wait mean':>14} {'API wait max':>13}  notes")
    for name, coro in (("pool8", run_pool(_fresh(jobs), clock, web_semaphore=False)),
                       ("pool8+sem", run_pool(_fresh(jobs), clock, web_semaphore=True)),
                       ("lanes", run_lanes(_fresh(jobs), clock, workdir))):
        out = await coro
        notes = f"{out.collisions} web collisions, {out.rate_limited} API 429s" if name != "lanes" else ""
        print(f"{name:<11} {out.makespan / 60:8.1f} m {out.makespan / bound:6.2f} "
              f"{statistics.mean(out.api_waits):12.0f} s {max(out.api_waits):11.0f} s  {notes}")


def _fresh(jobs: list[Job]) -> list[Job]:
    return [Job(j.task_id, j.web, j.duration) for j in jobs]


async def part2(workdir: Path, run_count: int, queued: int) -> None:
    config = AppConfig(providers=[ProviderConfig(name="api", kind="api", type="simulated", concurrency=5)],
                       models=[ModelConfig(name="writer", kind="api", provider="api")])
    store = Store(workdir / f"throughput-{queued}.sqlite3")
    clock = Clock(1.0)
    batch_run = [NewTask(model="writer", model_kind="api", route="api:api", task_id=f"r{i}",
                         params={"sim_duration_s": 0}) for i in range(run_count)]
    backlog = [NewTask(model="writer", model_kind="api", route="api:api", task_id=f"q{i}",
                       params={"sim_duration_s": 0}, priority=-1) for i in range(queued - run_count)]
    t0 = time.perf_counter()
    store.enqueue("run", batch_run)
    if backlog:
        store.enqueue("backlog", backlog)
    enqueue_s = time.perf_counter() - t0
    sched = Scheduler(store, config, {"api:api": SimulatedProvider(clock, 0, 0)}, workdir, clock)
    cpu0, t0 = time.process_time(), time.perf_counter()
    await sched.start()
    await sched.wait_for_batches(["run"])
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    await sched.stop()
    store.close()
    print(f"{run_count:>7,} tasks, {queued:>7,} queued: enqueue {enqueue_s:5.2f} s; "
          f"{run_count / wall:7.0f} tasks/s; {wall / run_count * 1000:5.2f} ms wall and "
          f"{cpu / run_count * 1000:5.2f} ms CPU per task (claim, start, finish, result, 2 log lines)")


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--speed", type=float, default=400.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        await part1(args.speed, Path(tmp))
        print()
        await part2(Path(tmp), 10_000, 10_000)
        await part2(Path(tmp), 10_000, 100_000)


if __name__ == "__main__":
    asyncio.run(main())
