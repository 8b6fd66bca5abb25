"""Poll-lane benchmark: what 100 polled tasks cost the client, as the queue grows, per service.

    .venv/bin/python -m bench.bench_poll [--window 30] [--sizes 1000 100000]
        [--services runninghub openai-videos] [--uploads 100 --upload-mb 5]
    .venv/bin/python -m bench.bench_poll --services --uploads 100   # the upload run alone

Each service's demo server runs in its own process (only the client's CPU is measured), and each
(service, queue size) runs in a fresh child process, so peak RSS belongs to that run alone. Real
time: poll every 5 s, renders of 10-30 s. A child fills the pool (100 tasks with a remote id),
then measures over ``--window`` seconds: CPU (% of one core), peak RSS, status requests per
second, and for each slot that frees the time until the next task's create reaches the server.
``--renders 600 900`` makes the window polls only (no task ends in it): the poll cost proper.
The baseline row of each service (the same scheduler and store with an empty queue) is measured
in the same run; the table prints each row against it.

``--uploads N`` adds the media-input run: N RunningHub tasks with a ``--upload-mb`` MB frame each
(distinct files), uploaded before their creates -- upload throughput, client CPU and peak RSS
(files are streamed, so RSS must not grow with the file size). Its baseline, in the same run and
against the same server: plain httpx posting the same files one after another to the same route
(``files={"file": open(...)}``), with no scheduler, store or lane around it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path
from typing import Any

import httpx
import psutil

from mediaassist.core.clock import Clock
from mediaassist.core.config import AppConfig, parse_config
from mediaassist.core.media import file_sha256
from mediaassist.core.scheduler import Scheduler
from mediaassist.core.store import NewTask, Store, Task
from mediaassist.demo_servers.runninghub_server import DEMO_API_KEY
from mediaassist.demo_servers.video_tasks_server import DEMO_VIDEO_KEY
from mediaassist.providers.registry import build_providers

POOL = 100
OLD_DESIGN = "7.6-11 % CPU (~4 ms per status request) before the poll-lane rework; target <= 2 %"
SERVICES = ("runninghub", "openai-videos")
_PNG_HEAD = b"\x89PNG\r\n\x1a\n"


def _config(service: str, url: str, uploads: bool = False) -> AppConfig:
    common = f'base_url = "{url}"\nmax_polling_tasks = {POOL}\npoll_interval_s = 5\ntimeout_s = 1800\n'
    if service == "runninghub":
        provider = f'type = "runninghub"\napi_key = "{DEMO_API_KEY}"\n{common}'
        model = 'workflow_id = "1904136902449209346"\nprompt_node_id = "6"\n'
        if uploads:
            model += 'inputs = { first_frame = { nodeId = "39", fieldName = "image" } }\n'
    else:
        provider = f'type = "task_api"\nprofile = "{service}"\napi_key = "{DEMO_VIDEO_KEY}"\n{common}'
        model = 'remote_model = "sora-2"\n'
    text = (f'[[providers]]\nname = "bench"\nkind = "poll"\n{provider}\n'
            f'[[models]]\nname = "video"\nkind = "poll"\nprovider = "bench"\n{model}')
    return parse_config(tomllib.loads(text))


async def _measure(service: str, url: str, size: int, window: float) -> dict[str, Any]:
    root = url.removesuffix("/v1")
    httpx.post(f"{root}/_demo/reset", timeout=10)
    data_dir = Path(tempfile.mkdtemp(prefix="bench-poll-"))
    store = Store(data_dir / "mediaassist.sqlite3")
    tasks = [NewTask(model="video", model_kind="poll", route="poll:bench", prompt=f"clip {n}") for n in range(size)]
    store.enqueue("bench", tasks)
    del tasks
    config, clock = _config(service, url), Clock()
    sched = Scheduler(store, config, build_providers(config, clock, data_dir), data_dir, clock)
    freed: list[float] = []
    sched.add_listener(lambda event, task: freed.append(time.time()) if event in ("success", "failed") else None)
    await sched.start()
    await _until_pool_full(size)
    proc = psutil.Process()
    polls0 = _stats(root)["calls"].get("status", 0)
    cpu0, wall0, freed_before = sum(proc.cpu_times()[:2]), time.monotonic(), len(freed)
    await asyncio.sleep(window)
    cpu1, wall1 = sum(proc.cpu_times()[:2]), time.monotonic()
    stats = _stats(root)
    in_flight = len(sched.lanes["poll:bench"].active)
    await sched.stop()
    store.close()
    creates = stats["create_times"]
    # The k-th slot to free is refilled by the (POOL + k)-th create.
    latencies = [creates[POOL + k] - t for k, t in enumerate(freed) if POOL + k < len(creates)]
    polls = stats["calls"].get("status", 0) - polls0
    return {
        "service": service, "size": size, "cpu_pct": 100.0 * (cpu1 - cpu0) / (wall1 - wall0),
        "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "in_flight": in_flight,
        # All of the process's CPU over the polls: the scheduler's own passes are in it too.
        "polls_per_s": polls / (wall1 - wall0), "cpu_ms_per_poll": 1000 * (cpu1 - cpu0) / polls if polls else 0,
        "freed": len(freed) - freed_before, "refills": len(latencies),
        "lat_p50_ms": 1000 * statistics.median(latencies) if latencies else 0,
        "lat_p95_ms": 1000 * _p95(latencies) if latencies else 0,
    }


async def _until_pool_full(size: int) -> None:
    deadline = time.monotonic() + 180
    while size and Task.select().where(Task.remote_id.is_null(False)).count() < min(size, POOL):
        if time.monotonic() > deadline:
            raise SystemExit("the pool did not fill in 180 s")
        await asyncio.sleep(0.2)


def _write_frames(folder: Path, count: int, mb: float) -> list[Path]:
    """``count`` distinct PNG-headed files of ``mb`` MB, written a MiB at a time."""
    folder.mkdir()
    frames = [folder / f"frame-{n:04d}.png" for n in range(count)]
    for frame in frames:
        with frame.open("wb") as fh:
            fh.write(_PNG_HEAD)
            left = int(mb * 1024 * 1024) - len(_PNG_HEAD)
            while left > 0:
                left -= fh.write(os.urandom(min(left, 1 << 20)))
    return frames


async def _measure_raw_uploads(url: str, count: int, mb: float, data_dir: Path) -> dict[str, Any]:
    """The baseline: the same files posted by plain httpx to the same route, one after another."""
    httpx.post(f"{url}/_demo/reset", timeout=10)
    frames = _write_frames(data_dir / "frames", count, mb)
    proc = psutil.Process()
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    cpu0, wall0 = sum(proc.cpu_times()[:2]), time.monotonic()
    async with httpx.AsyncClient(base_url=url, timeout=120,
                                 headers={"Authorization": f"Bearer {DEMO_API_KEY}"}) as client:
        for frame in frames:
            with frame.open("rb") as fh:
                reply = (await client.post("/openapi/v2/media/upload/binary",
                                           files={"file": (frame.name, fh, "image/png")})).json()
            if reply.get("code") != 0:
                raise SystemExit(f"baseline upload refused: {reply}")
    cpu1, wall1 = sum(proc.cpu_times()[:2]), time.monotonic()
    return _upload_row("plain httpx (base)", count, mb, wall1 - wall0, cpu1 - cpu0, rss_before)


def _upload_row(label: str, count: int, mb: float, seconds: float, cpu_s: float, rss_before: float) -> dict[str, Any]:
    total_mb = count * mb
    return {"label": label, "count": count, "mb": mb, "seconds": seconds, "mb_per_s": total_mb / seconds,
            "cpu_s": cpu_s, "cpu_ms_per_mb": 1000 * cpu_s / total_mb,
            "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "rss_before_mb": rss_before}


async def _measure_uploads(url: str, count: int, mb: float, data_dir: Path) -> dict[str, Any]:
    """``count`` RunningHub tasks with one distinct ``mb`` MB PNG-headed frame each."""
    httpx.post(f"{url}/_demo/reset", timeout=10)
    store = Store(data_dir / "mediaassist.sqlite3")
    tasks = []
    for n, frame in enumerate(_write_frames(data_dir / "frames", count, mb)):
        info = frame.stat()
        entry = {"path": str(frame), "size": info.st_size, "mtime_ns": info.st_mtime_ns,
                 "sha256": file_sha256(frame), "mime": "image/png", "media": "image"}
        tasks.append(NewTask(model="video", model_kind="poll", route="poll:bench", prompt=f"frame {n}",
                             inputs={"first_frame": [entry]}))
    store.enqueue("uploads", tasks)
    config, clock = _config("runninghub", url, uploads=True), Clock()
    sched = Scheduler(store, config, build_providers(config, clock, data_dir), data_dir, clock)
    proc = psutil.Process()
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    cpu0, wall0 = sum(proc.cpu_times()[:2]), time.monotonic()
    await sched.start()
    deadline = time.monotonic() + 600
    # Watched in the store (a cheap query), not through the server's stats: asking those over
    # HTTP every few ms would be most of the CPU measured.
    while Task.select().where(Task.uploads != "{}").count() < count:
        if time.monotonic() > deadline:
            raise SystemExit("the uploads did not finish in 600 s")
        await asyncio.sleep(0.05)
    cpu1, wall1 = sum(proc.cpu_times()[:2]), time.monotonic()
    await sched.stop()
    store.close()
    return _upload_row("mediaassist poll lane", count, mb, wall1 - wall0, cpu1 - cpu0, rss_before)


def _stats(root: str) -> dict[str, Any]:
    return httpx.get(f"{root}/_demo/stats", timeout=10).json()


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def _start_server(service: str, renders: tuple[float, float] = (10, 30),
                  upload_limit: int | None = None) -> tuple[subprocess.Popen[str], str]:
    timing = ["--queued", "0.5", "2.0", "--run", str(renders[0]), str(renders[1]), "--seed", "1"]
    if service == "runninghub":
        args = ["-m", "mediaassist.demo_servers.runninghub_server", "--port", "0", "--limit", "1000", *timing]
        if upload_limit is not None:
            args += ["--max-upload-bytes", str(upload_limit)]
    else:
        args = ["-m", "mediaassist.demo_servers.video_tasks_server", service, "--port", "0", "--limit", "1000",
                *timing]
    proc = subprocess.Popen([sys.executable, *args], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def _stop_server(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()


def _child(args: argparse.Namespace) -> dict[str, Any]:
    if args.child_uploads:
        measure = _measure_raw_uploads if args.raw else _measure_uploads
        with tempfile.TemporaryDirectory(prefix="bench-upload-") as folder:  # 500 MB of frames: never left behind
            return asyncio.run(measure(args.url, args.child_uploads, args.upload_mb, Path(folder)))
    return asyncio.run(_measure(args.service, args.url, args.child, args.window))


def _run_child(extra: list[str]) -> dict[str, Any]:
    out = subprocess.run([sys.executable, __file__, *extra], stdout=subprocess.PIPE, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--window", type=float, default=30.0, help="measured seconds per size")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 100000])
    parser.add_argument("--services", nargs="*", choices=SERVICES, default=list(SERVICES),
                        help="none (a bare --services): only the upload run")
    parser.add_argument("--renders", type=float, nargs=2, default=(10.0, 30.0), metavar=("MIN", "MAX"),
                        help="remote render seconds: short ones measure churn (creates, downloads), long "
                             "ones (e.g. 600 900) the polling alone")
    parser.add_argument("--uploads", type=int, default=0, help="tasks with one media input each (0: skip)")
    parser.add_argument("--upload-mb", type=float, default=5.0)
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--child-uploads", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--raw", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--service", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None or args.child_uploads:
        print(json.dumps(_child(args)), flush=True)
        return
    rows: list[dict[str, Any]] = []
    for service in args.services:
        server, url = _start_server(service, tuple(args.renders))
        try:
            for size in [0, *args.sizes]:
                rows.append(_run_child(["--child", str(size), "--service", service, "--url", url,
                                        "--window", str(args.window)]))
                print(f"measured {service} with {size} tasks", file=sys.stderr, flush=True)
        finally:
            _stop_server(server)
    if rows:
        _print(rows, args.window, tuple(args.renders))
    if args.uploads:
        server, url = _start_server("runninghub", upload_limit=int((args.upload_mb + 1) * 1024 * 1024))
        child = ["--child-uploads", str(args.uploads), "--upload-mb", str(args.upload_mb), "--url", url]
        try:
            _print_uploads([_run_child([*child, "--raw"]), _run_child(child)])
        finally:
            _stop_server(server)


def _print(rows: list[dict[str, Any]], window: float, renders: tuple[float, float]) -> None:
    print(f"\npoll lane, max_polling_tasks={POOL}, poll every 5 s, renders {renders[0]:.0f}-{renders[1]:.0f} s, "
          f"{window:.0f} s window")
    print(f"before: {OLD_DESIGN}\n")
    print(f"{'service':>14} {'queued tasks':>12} {'polled':>6} {'CPU % 1 core':>12} {'vs empty':>8} "
          f"{'polls/s':>7} {'ms CPU/poll':>11} {'peak RSS MB':>11} {'vs empty':>8} {'refills':>7} "
          f"{'free→create p50':>15} {'p95':>8}")
    base: dict[str, dict[str, Any]] = {}
    for row in rows:
        base.setdefault(row["service"], row)
        ref = base[row["service"]]
        label = "empty (base)" if row["size"] == 0 else f"{row['size']:,}"
        print(f"{row['service']:>14} {label:>12} {row['in_flight']:>6} {row['cpu_pct']:>12.2f} "
              f"{row['cpu_pct'] - ref['cpu_pct']:>+7.2f}p {row['polls_per_s']:>7.1f} {row['cpu_ms_per_poll']:>11.2f} "
              f"{row['rss_mb']:>11.0f} {row['rss_mb'] / ref['rss_mb']:>7.2f}x {row['refills']:>7} "
              f"{row['lat_p50_ms']:>12.1f} ms {row['lat_p95_ms']:>5.1f} ms")


def _print_uploads(rows: list[dict[str, Any]]) -> None:
    base = rows[0]
    print(f"\nuploads: {base['count']} files of {base['mb']:.0f} MB ({base['count'] * base['mb']:.0f} MB), "
          "v2 route of the demo RunningHub (its own process), one upload at a time")
    print(f"{'client':>22} {'seconds':>8} {'MB/s':>7} {'vs base':>7} {'CPU s':>6} {'ms CPU/MB':>9} {'vs base':>7} "
          f"{'peak RSS MB':>11} {'before':>6}")
    for row in rows:
        print(f"{row['label']:>22} {row['seconds']:>8.1f} {row['mb_per_s']:>7.1f} "
              f"{row['mb_per_s'] / base['mb_per_s']:>6.2f}x {row['cpu_s']:>6.1f} {row['cpu_ms_per_mb']:>9.1f} "
              f"{row['cpu_ms_per_mb'] / base['cpu_ms_per_mb']:>6.2f}x {row['rss_mb']:>11.0f} "
              f"{row['rss_before_mb']:>6.0f}")


if __name__ == "__main__":
    main()
