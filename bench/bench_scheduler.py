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

Part 3 -- the order of web tasks (core/order.py): the 40-task seed batch through the real scheduler
with K = 1, 2, 3 web accounts, the simulated site's answers taking longer for longer prompts
(``by_prompt``), under ``order = "fifo"`` and ``"longest"`` (the web default; the model's record
comes from one earlier run of the batch under other ids, so both orders see the same durations).
For each: makespan ÷ lower bound ``max(sum web / K, longest web task, sum API / 3)`` as measured,
and as the dispatch order alone gives it (the nominal durations list-scheduled in the order the
tasks started: no overhead).

Part 4 -- the ETA (core/progress.py ``BatchEta``, fed as the window feeds it): the same runs as
part 3 (``longest``, the model's record from one earlier run), the ETA shown every 5 scaled
seconds, and at 25, 50 and 75 % of the batch -- of its tasks ended, and of its makespan -- its
error against the time that was then really left.

At x400 a loaded machine's few milliseconds per dispatch are seconds of scaled time: parts 3 and 4
run at ``--order-speed`` (x100 unless told), where they are a fraction of a per cent.

    python -m bench.bench_scheduler [--speed 400] [--order-speed 100] [--parts 1,2,3,4]
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import heapq
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from mediaassist.core.clock import Clock
from mediaassist.core.config import AccountConfig, AppConfig, ModelConfig, ProviderConfig
from mediaassist.core.paths import RESOURCES
from mediaassist.core.progress import BatchEta, BatchProgress
from mediaassist.core.queries import Queries
from mediaassist.core.scheduler import Scheduler
from mediaassist.core.store import NewTask, Store
from mediaassist.providers.registry import SIMULATED_SITE, SIMULATED_WEB_RANGE
from mediaassist.providers.simulated import SimulatedProvider, prompt_service_time, service_time

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


@dataclass
class SeedTask:
    task_id: str
    web: bool
    prompt: str
    priority: int

    @property
    def nominal_s(self) -> float:
        if self.web:
            return prompt_service_time(self.task_id, self.prompt, *SIMULATED_WEB_RANGE)
        return service_time(self.task_id, *API_RANGE)


def seed_tasks() -> list[SeedTask]:
    with (RESOURCES / "examples" / "seed-batch.csv").open(encoding="utf-8") as fh:
        return [SeedTask(row["task_id"], row["model"] == "demo-reasoner", row["prompt"], int(row["priority"]))
                for row in csv.DictReader(fh)]


def list_makespan(durations: list[float], slots: int) -> float:
    """Tasks started in this order, each on the first slot to come free."""
    free = [0.0] * slots
    for duration in durations:
        heapq.heappush(free, heapq.heappop(free) + duration)
    return max(free)


async def run_ordered(store: Store, workdir: Path, clock: Clock, accounts: int, order: str, batch: str,
                      prefix: str = "", watch: list[Shown] | None = None) -> tuple[float, list[str]]:
    """One run of the seed batch; (makespan in nominal seconds, web task ids in the order they
    started). ``watch`` gets the ETA the window would have shown, every 5 scaled seconds."""
    config = AppConfig(
        providers=[ProviderConfig(name="api", kind="api", type="simulated", concurrency=API_QUOTA)],
        models=[ModelConfig(name="writer", kind="api", provider="api"),
                ModelConfig(name="reasoner", kind="web", site=SIMULATED_SITE)],
        accounts=[AccountConfig(name=f"acct-{i}", site=SIMULATED_SITE, order=order) for i in range(accounts)])
    tasks = [NewTask(model="reasoner" if t.web else "writer", model_kind="web" if t.web else "api",
                     route=f"web:{SIMULATED_SITE}" if t.web else "api:api", task_id=prefix + t.task_id,
                     prompt=t.prompt, priority=t.priority) for t in seed_tasks()]
    providers = {"api:api": SimulatedProvider(clock, *API_RANGE),
                 f"web:{SIMULATED_SITE}": SimulatedProvider(clock, *SIMULATED_WEB_RANGE, by_prompt=True)}
    store.enqueue(batch, tasks)
    sched = Scheduler(store, config, providers, workdir, clock)
    await sched.start()
    if watch is not None:
        watch += await watch_eta(store, sched, batch, clock)
    await sched.wait_for_batches([batch])
    await sched.stop()
    rows = store.tasks([batch])
    makespan = (max(t.finished_at for t in rows) - min(t.created_at for t in rows)) * clock.speed
    web = sorted((t for t in rows if t.model_kind == "web"), key=lambda t: t.started_at)
    return makespan, [t.task_id[len(prefix):] for t in web]


async def part3(speed: float, workdir: Path) -> None:
    clock = Clock(speed)
    tasks = {t.task_id: t for t in seed_tasks()}
    web = [t.nominal_s for t in tasks.values() if t.web]
    api_sum = sum(t.nominal_s for t in tasks.values() if not t.web)
    print(f"web order: seed batch, {len(web)} web tasks (sum {sum(web):.0f} s, longest {max(web):.0f} s, "
          f"by prompt length) beside {len(tasks) - len(web)} API; scaled x{speed:g}")
    print(f"{'K':>2} {'bound':>7}  {'FIFO':>6} {'(order)':>8}  {'longest':>7} {'(order)':>8}")
    for accounts in (1, 2, 3):
        web_bound = max(sum(web) / accounts, max(web))
        bound = max(web_bound, api_sum / API_QUOTA)
        ratios: list[float] = []
        for order in ("fifo", "longest"):
            store = Store(workdir / f"order-{order}-{accounts}.sqlite3")
            if order == "longest":  # the model's record: the batch once before, under other ids
                await run_ordered(store, workdir, clock, accounts, order, "yesterday", prefix="y-")
            makespan, started = await run_ordered(store, workdir, clock, accounts, order, "seed")
            store.close()
            ratios += [makespan / bound,
                       list_makespan([tasks[i].nominal_s for i in started], accounts) / web_bound]
        print(f"{accounts:>2} {bound:6.0f}s  {ratios[0]:6.3f} {ratios[1]:8.3f}  {ratios[2]:7.3f} {ratios[3]:8.3f}")


@dataclass(frozen=True)
class Shown:
    at: float  # store clock
    ended: float  # the batch's share of tasks ended
    seconds: float | None  # the ETA shown (real seconds), None while measuring


async def watch_eta(store: Store, sched: Scheduler, batch: str, clock: Clock) -> list[Shown]:
    """The ETA the window would show for ``batch`` every 5 scaled seconds, until it has ended."""
    etas = BatchEta()
    sched.add_listener(lambda event, task: etas.attempt_ended(event, task.route, task.started_at, store.now()))
    queries, shown = Queries(store), list[Shown]()
    while True:
        snap = queries.snapshot()
        progress = BatchProgress.of(batch, snap.by_batch.get(batch, {}))
        if progress.finished:
            return shown
        now = time.monotonic()
        etas.record(batch, snap, now)
        _estimate, seconds = etas.eta(batch, snap, sched.lanes.values(), sched.blocked_lanes(), now, store.now())
        shown.append(Shown(store.now(), progress.ended / progress.total, seconds))
        await clock.sleep(5.0)


def eta_errors(shown: list[Shown], started: float, ended: float) -> list[str]:
    """The shown ETA's error against the time really left, at 25/50/75 % of tasks and of time."""
    cells = []
    for by_tasks in (True, False):
        for point in (0.25, 0.5, 0.75):
            sample = next(s for s in shown if (s.ended >= point if by_tasks
                                               else s.at - started >= point * (ended - started)))
            cells.append("measuring" if sample.seconds is None else f"{sample.seconds / (ended - sample.at) - 1:+.1%}")
    return cells


async def part4(speed: float, workdir: Path) -> None:
    clock = Clock(speed)
    print(f"ETA error (shown / really left - 1): seed batch, longest, the model's record from an earlier run; "
          f"scaled x{speed:g}")
    print(f"{'K':>2} {'makespan':>9}  {'25% tasks':>10} {'50% tasks':>10} {'75% tasks':>10}  "
          f"{'25% time':>9} {'50% time':>9} {'75% time':>9}")
    for accounts in (1, 2, 3):
        store = Store(workdir / f"eta-{accounts}.sqlite3")
        await run_ordered(store, workdir, clock, accounts, "longest", "yesterday", prefix="y-")
        shown: list[Shown] = []
        makespan, _started = await run_ordered(store, workdir, clock, accounts, "longest", "seed", watch=shown)
        rows = store.tasks(["seed"])
        store.close()
        cells = eta_errors(shown, min(t.created_at for t in rows), max(t.finished_at or 0.0 for t in rows))
        print(f"{accounts:>2} {makespan:8.0f}s  " + " ".join(f"{c:>10}" for c in cells[:3]) + "  "
              + " ".join(f"{c:>9}" for c in cells[3:]))


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--speed", type=float, default=400.0)
    parser.add_argument("--order-speed", type=float, default=100.0, help="part 3's scaled time")
    parser.add_argument("--parts", default="1,2,3,4", help="which parts to run, e.g. 3")
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    with tempfile.TemporaryDirectory() as tmp:
        if "1" in parts:
            await part1(args.speed, Path(tmp))
            print()
        if "2" in parts:
            await part2(Path(tmp), 10_000, 10_000)
            await part2(Path(tmp), 10_000, 100_000)
            print()
        if "3" in parts:
            await part3(args.order_speed, Path(tmp))
            print()
        if "4" in parts:
            await part4(args.order_speed, Path(tmp))


if __name__ == "__main__":
    asyncio.run(main())
