"""Poll-lane benchmark: what 100 polled RunningHub tasks cost the client, as the queue grows.

    .venv/bin/python tests/bench/bench_poll.py [--window 30] [--sizes 1000 10000 100000]

The fake RunningHub runs in its own process (only the client's CPU is measured), and each
queue size runs in a fresh child process (so peak RSS belongs to that size alone). Real time:
poll every 5 s, renders of 10-30 s. For each size the child fills the pool (100 tasks with a
remote id), then measures over ``--window`` seconds: CPU (% of one core), peak RSS, and for
each slot that frees the time until the next task's create reaches the server. A baseline row
(the same scheduler and store with an empty queue) is measured in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import psutil

from mediaassist.core.clock import Clock
from mediaassist.core.config import AppConfig, ModelConfig, ProviderConfig
from mediaassist.core.scheduler import Scheduler
from mediaassist.core.store import NewTask, Store, Task
from mediaassist.demo_servers.runninghub_server import DEMO_API_KEY
from mediaassist.providers.registry import build_providers

POOL = 100
OLD_DESIGN = "10 % CPU, 1.5-3 GB RSS (100-1,000 tasks, operators' figures)"


def _config(url: str) -> AppConfig:
    provider = ProviderConfig(name="rh", kind="poll", type="runninghub", base_url=url, api_key=DEMO_API_KEY,
                              max_polling_tasks=POOL, poll_interval_s=5.0, queue_check_interval_s=5.0,
                              timeout_s=1800.0)
    model = ModelConfig(name="video", kind="poll", provider="rh",
                        options={"workflow_id": "1904136902449209346", "prompt_node_id": "6"})
    return AppConfig(providers=[provider], models=[model])


async def _measure(url: str, size: int, window: float) -> dict[str, float]:
    httpx.post(f"{url}/_demo/reset", timeout=10)
    data_dir = Path(tempfile.mkdtemp(prefix="bench-poll-"))
    store = Store(data_dir / "mediaassist.sqlite3")
    tasks = [NewTask(model="video", model_kind="poll", route="poll:rh", prompt=f"clip {n}") for n in range(size)]
    store.enqueue("bench", tasks)
    del tasks
    config, clock = _config(url), Clock()
    sched = Scheduler(store, config, build_providers(config, clock, data_dir), data_dir, clock)
    freed: list[float] = []
    sched.add_listener(lambda event, task: freed.append(time.time()) if event in ("success", "failed") else None)
    await sched.start()
    deadline = time.monotonic() + 120
    while size and Task.select().where(Task.remote_id.is_null(False)).count() < min(size, POOL):
        if time.monotonic() > deadline:
            raise SystemExit("the pool did not fill in 120 s")
        await asyncio.sleep(0.2)
    proc = psutil.Process()
    cpu0, wall0, freed_before = sum(proc.cpu_times()[:2]), time.monotonic(), len(freed)
    await asyncio.sleep(window)
    cpu1, wall1 = sum(proc.cpu_times()[:2]), time.monotonic()
    in_flight = len(sched.lanes["poll:rh"].active)
    await sched.stop()
    store.close()
    creates = httpx.get(f"{url}/_demo/stats", timeout=10).json()["create_times"]
    # The k-th slot to free is refilled by the (POOL + k)-th create.
    latencies = [creates[POOL + k] - t for k, t in enumerate(freed) if POOL + k < len(creates)]
    return {
        "size": size, "cpu_pct": 100.0 * (cpu1 - cpu0) / (wall1 - wall0),
        "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "in_flight": in_flight,
        "freed": len(freed) - freed_before, "lat_p50_ms": 1000 * statistics.median(latencies) if latencies else 0,
        "lat_p95_ms": 1000 * _p95(latencies) if latencies else 0, "refills": len(latencies),
    }


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def _child(args: argparse.Namespace) -> None:
    print(json.dumps(asyncio.run(_measure(args.url, args.child, args.window))), flush=True)


def _start_server() -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "mediaassist.demo_servers.runninghub_server", "--port", "0",
         "--limit", "1000", "--queued", "0.5", "2.0", "--run", "10", "30", "--seed", "1"],
        stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--window", type=float, default=30.0, help="measured seconds per size")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        _child(args)
        return
    server, url = _start_server()
    try:
        rows = []
        for size in [0, *args.sizes]:
            out = subprocess.run([sys.executable, __file__, "--child", str(size), "--url", url,
                                  "--window", str(args.window)], stdout=subprocess.PIPE, text=True, check=True)
            rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
            print(f"measured {size} tasks", file=sys.stderr, flush=True)
    finally:
        server.terminate()
        server.wait()
        if server.stdout is not None:
            server.stdout.close()
    _print(rows, args.window)


def _print(rows: list[dict[str, float]], window: float) -> None:
    base = rows[0]
    print(f"\npoll lane, max_polling_tasks={POOL}, poll every 5 s, renders 10-30 s, {window:.0f} s window")
    print(f"old design: {OLD_DESIGN}\n")
    print(f"{'queued tasks':>12} {'polled':>6} {'CPU % of 1 core':>16} {'peak RSS MB':>12} "
          f"{'RSS vs empty':>12} {'refills':>7} {'free→create p50':>16} {'p95':>8}")
    for row in rows:
        label = "empty (base)" if row["size"] == 0 else f"{row['size']:,}"
        print(f"{label:>12} {row['in_flight']:>6} {row['cpu_pct']:>16.2f} {row['rss_mb']:>12.0f} "
              f"{row['rss_mb'] / base['rss_mb']:>11.2f}x {row['refills']:>7} "
              f"{row['lat_p50_ms']:>13.1f} ms {row['lat_p95_ms']:>5.1f} ms")


if __name__ == "__main__":
    main()
