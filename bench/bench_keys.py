"""Several keys of one provider: throughput with 1, 2 and 3 keys against the demo OpenAI server,
each key allowed ``--per-key`` requests at once (a 429 past it), as a ratio to one key's.

    .venv/bin/python -m bench.bench_keys [--tasks 60] [--latency 0.3] [--per-key 2]

Each run is a fresh store and scheduler in this process; the server runs in a thread of it. The
ideal is K × one key's throughput (the keys' limits add up); the run also prints each key's
in-flight maximum (never above its limit) and the 429s.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from mediaassist.core.clock import Clock
from mediaassist.core.config import AppConfig, parse_config
from mediaassist.core.scheduler import Scheduler
from mediaassist.core.store import NewTask, Store
from mediaassist.demo_servers.openai_server import DemoOpenAIServer
from mediaassist.providers.registry import build_providers

KEYS = [f"sk-bench-key-{n}-not-real-000" for n in range(3)]


def _config(base_url: str, keys: int, per_key: int) -> AppConfig:
    return parse_config({
        "providers": [{"name": "bench", "kind": "api", "type": "openai", "base_url": base_url,
                       "keys": [{"api_key": KEYS[n], "label": f"k{n}", "concurrency": per_key}
                                for n in range(keys)]}],
        "models": [{"name": "writer", "kind": "api", "provider": "bench", "remote_model": "gpt-x"}]})


async def _run(keys: int, tasks: int, latency: float, per_key: int) -> tuple[float, dict[str, int], int]:
    with DemoOpenAIServer(keys=dict.fromkeys(KEYS, per_key), latency_s=(latency, latency), models=("gpt-x",)) as srv, \
            tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        store = Store(data / "tasks.db")
        config = _config(srv.base_url, keys, per_key)
        clock = Clock()
        sched = Scheduler(store, config, build_providers(config, clock, data), data, clock)
        store.enqueue("b1", [NewTask(model="writer", model_kind="api", route="api:bench", prompt=f"p{n}")
                             for n in range(tasks)])
        started = time.perf_counter()
        await sched.start()
        try:
            sched.wake()
            await sched.wait_for_batches(["b1"])
        finally:
            await sched.stop()
            store.close()
        seconds = time.perf_counter() - started
        peaks = {f"k{n}": srv.key_max_in_flight[KEYS[n]] for n in range(keys)}
        refused = sum(1 for r in srv.api_requests() if r.status == 429)
        return tasks / seconds, peaks, refused


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=60)
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument("--per-key", type=int, default=2)
    args = parser.parse_args()
    print(f"{args.tasks} chat tasks, {args.latency} s each at the server, {args.per_key} at once per key")
    print(f"{'keys':>4} {'tasks/s':>8} {'x one key':>9} {'ideal':>5}  per-key max in flight  429s")
    base = None
    for keys in (1, 2, 3):
        rate, peaks, refused = asyncio.run(_run(keys, args.tasks, args.latency, args.per_key))
        base = base or rate
        print(f"{keys:>4} {rate:>8.2f} {rate / base:>9.2f} {keys:>5}  {peaks}  {refused}")


if __name__ == "__main__":
    main()
