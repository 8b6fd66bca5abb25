"""API-lane benchmark: 1,000 chat tasks through the real scheduler and httpx to the demo server,
then a hidden-limit run: fixed gates against ``concurrency = "auto"``.

    .venv/bin/python -m bench.bench_api [--tasks 1000] [--latencies 0 0.2] [--concurrency 3 5]
                                              [--hidden-limit 4] [--hidden-latency 0.4] [--hidden-tasks 300]

The demo OpenAI server runs in its own process (only the client's CPU is counted) and every
configuration runs in a fresh child process (so peak RSS is that run's own). For each latency
and concurrency it prints tasks/s, the ratio to the ideal ``concurrency / latency``, client CPU
seconds per task, peak RSS and the server's in-flight maximum. A baseline measured in the same
run -- the same scheduler and store on the sleep-only simulated provider with zero service time
-- is the ceiling the zero-latency rows are compared with.

The hidden-limit part restarts the server so that it answers 429 (no header at all, as LiteLLM
does) past ``--hidden-limit`` requests in flight, and runs the same batch with fixed 3, fixed 5
and auto: throughput / (hidden limit / latency), 429s as a share of requests, makespan and the
limit auto learnt.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import psutil

from mediaassist.core.clock import Clock
from mediaassist.core.config import AppConfig, ModelConfig, ProviderConfig
from mediaassist.core.scheduler import Scheduler
from mediaassist.core.store import NewTask, Store
from mediaassist.providers.registry import build_providers

BENCH_KEY = "sk-bench-not-a-real-key"
ROUTE = "api:bench"


def _config(base_url: str | None, concurrency: str, sleep_s: float = 0.0) -> AppConfig:
    """``concurrency``: a number, or ``auto:<max_concurrency>``."""
    if base_url is None:  # baseline: scheduler + store only, each task a sleep of ``sleep_s``
        provider = ProviderConfig(name="bench", kind="api", type="simulated", concurrency=int(concurrency),
                                  min_duration_s=sleep_s, max_duration_s=sleep_s)
    elif concurrency.startswith("auto:"):
        provider = ProviderConfig(name="bench", kind="api", type="openai", base_url=base_url, api_key=BENCH_KEY,
                                  adaptive=True, max_concurrency=int(concurrency.removeprefix("auto:")))
    else:
        provider = ProviderConfig(name="bench", kind="api", type="openai", base_url=base_url,
                                  api_key=BENCH_KEY, concurrency=int(concurrency))
    model = ModelConfig(name="writer", kind="api", provider="bench", options={"endpoint": "chat"})
    return AppConfig(providers=[provider], models=[model])


async def _run_child(base_url: str | None, concurrency: str, count: int, sleep_s: float = 0.0) -> dict[str, Any]:
    data_dir = Path(tempfile.mkdtemp(prefix="bench-api-"))
    store = Store(data_dir / "mediaassist.sqlite3")
    store.enqueue("bench", [NewTask(model="writer", model_kind="api", route=ROUTE, prompt=f"slogan {n}")
                            for n in range(count)])
    config, clock = _config(base_url, concurrency, sleep_s), Clock()
    sched = Scheduler(store, config, build_providers(config, clock, data_dir), data_dir, clock)
    finished = {"success": 0, "failed": 0}
    all_done = asyncio.Event()

    def on_event(event: str, _task: object) -> None:
        if event in finished:
            finished[event] += 1
            if sum(finished.values()) == count:
                all_done.set()

    sched.add_listener(on_event)
    proc = psutil.Process()
    cpu0, t0 = sum(proc.cpu_times()[:2]), time.perf_counter()
    await sched.start()
    await all_done.wait()
    elapsed, cpu = time.perf_counter() - t0, sum(proc.cpu_times()[:2]) - cpu0
    await sched.stop()
    learned = store.lane_limits().get(ROUTE)
    store.close()
    return {"elapsed_s": elapsed, "cpu_s": cpu, **finished, "learned_limit": learned,
            "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def _child(args: argparse.Namespace) -> None:
    base_url = None if args.url == "baseline" else args.url
    print(json.dumps(asyncio.run(_run_child(base_url, args.child_concurrency, args.tasks, args.child_sleep))))


def _measure(url: str, concurrency: int | str, count: int, sleep_s: float = 0.0) -> dict[str, Any]:
    out = subprocess.run([sys.executable, __file__, "--child", "--url", url, "--child-concurrency",
                          str(concurrency), "--tasks", str(count), "--child-sleep", str(sleep_s)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _start_server(*extra: str) -> tuple[subprocess.Popen[str], str]:
    server = subprocess.Popen([sys.executable, "-m", "mediaassist.demo_servers.openai_server", "--port", "0",
                               "--api-key", BENCH_KEY, "--models", "writer", *extra], stdout=subprocess.PIPE,
                              text=True)
    assert server.stdout is not None
    return server, server.stdout.readline().strip()


def _row(label: str, latency: float | None, concurrency: int, result: dict[str, Any], baseline: float,
         max_in_flight: int | str) -> str:
    count = result["success"] + result["failed"]
    rate = count / result["elapsed_s"]
    ideal = f"{rate / (concurrency / latency):6.1%}" if latency else "     -"
    return (f"{label:<10} {concurrency:>4} {count:>6} {result['failed']:>6} {rate:>9.1f} {ideal:>9} "
            f"{rate / baseline:>9.1%} {result['cpu_s'] / count * 1000:>10.2f} {result['peak_rss_mib']:>8.1f} "
            f"{max_in_flight!s:>5}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--latencies", type=float, nargs="+", default=[0.0, 0.2])
    parser.add_argument("--concurrency", type=int, nargs="+", default=[3, 5])
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--child-concurrency", help=argparse.SUPPRESS)
    parser.add_argument("--child-sleep", type=float, default=0.0, help=argparse.SUPPRESS)
    parser.add_argument("--hidden-limit", type=int, default=4)
    parser.add_argument("--hidden-latency", type=float, default=0.4)
    parser.add_argument("--hidden-tasks", type=int, default=300)
    parser.add_argument("--skip-plain", action="store_true", help="only the hidden-limit part")
    args = parser.parse_args()
    if args.child:
        return _child(args)

    if not args.skip_plain:
        _plain(args)
    _hidden_limit(args)


def _plain(args: argparse.Namespace) -> None:
    server, base_url = _start_server()
    root = base_url.removesuffix("/v1")
    try:
        print(f"{args.tasks} tasks per row; demo server in its own process at {base_url}")
        print(f"{'latency':<10} {'conc':>4} {'tasks':>6} {'failed':>6} {'tasks/s':>9} {'vs ideal':>9} "
              f"{'vs base':>9} {'CPU ms/t':>10} {'RSS MiB':>8} {'max':>5}")
        for concurrency in args.concurrency:
            base = _measure("baseline", concurrency, args.tasks)
            base_rate = (base["success"] + base["failed"]) / base["elapsed_s"]
            print(_row("baseline", None, concurrency, base, base_rate, "-"))
            for latency in args.latencies:
                httpx.post(f"{root}/_demo/reset", timeout=10)
                httpx.post(f"{root}/_demo/config", json={"latency_s": [latency, latency]}, timeout=10)
                result = _measure(base_url, concurrency, args.tasks)
                stats = httpx.get(f"{root}/_demo/stats", timeout=30).json()
                print(_row(f"{latency * 1000:.0f} ms", latency, concurrency, result, base_rate,
                           stats["max_in_flight"]), flush=True)
    finally:
        server.terminate()
        server.wait(timeout=10)


HIDDEN_RUNS = ("3", "4", "5", "auto:5", "auto:20")  # fixed 4: the hand-calibrated best


def _hidden_limit(args: argparse.Namespace) -> None:
    latency = args.hidden_latency
    server, base_url = _start_server("--concurrency-limit", str(args.hidden_limit),
                                     "--latency", str(latency), str(latency))
    root = base_url.removesuffix("/v1")
    ideal = args.hidden_limit / latency
    try:
        # What this box's scheduler and store achieve at the hidden limit with a sleep for a request.
        base = _measure("baseline", min(args.hidden_limit, 5), args.hidden_tasks, sleep_s=latency)
        base_rate = base["success"] / base["elapsed_s"]
        print(f"\nhidden limit {args.hidden_limit} (429 without any header past it), {latency * 1000:.0f} ms "
              f"latency, {args.hidden_tasks} tasks; ideal {ideal:.1f} tasks/s; sleep-only baseline at "
              f"concurrency {min(args.hidden_limit, 5)}: {base_rate:.2f} tasks/s ({base_rate / ideal:.1%} of ideal)")
        print(f"{'concurrency':<12} {'tasks/s':>8} {'vs ideal':>9} {'vs base':>8} {'429 share':>10} "
              f"{'makespan s':>11} {'learned':>8} {'max':>4} {'failed':>6}")
        for concurrency in HIDDEN_RUNS:
            httpx.post(f"{root}/_demo/reset", timeout=10)
            result = _measure(base_url, concurrency, args.hidden_tasks)
            requests = httpx.get(f"{root}/_demo/stats", timeout=30).json()["requests"]
            api = [r for r in requests if r["path"].startswith("/v1/")]
            share = sum(r["status"] == 429 for r in api) / max(1, len(api))
            rate = (result["success"] + result["failed"]) / result["elapsed_s"]
            label = (concurrency.replace("auto:", "auto, max ") if concurrency.startswith("auto")
                     else f"fixed {concurrency}")
            learned = result["learned_limit"] if result["learned_limit"] is not None else "-"
            print(f"{label:<12} {rate:>8.2f} {rate / ideal:>9.1%} {rate / base_rate:>8.1%} {share:>10.1%} "
                  f"{result['elapsed_s']:>11.1f} "
                  f"{learned!s:>8} {max(r['in_flight'] for r in api):>4} {result['failed']:>6}", flush=True)
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
