"""Per-request client CPU of a status poll, for each HTTP client the poll lane could use.

    .venv/bin/python -m bench.bench_poll_http [--requests 2000] [--concurrency 1 20]

The demo RunningHub runs in its own process (only the client's CPU is measured). Every client
sends the same legacy status request (``POST /task/openapi/status``, JSON body, Bearer key) over
kept-alive HTTP/1.1 connections to 127.0.0.1, in the same run, interleaved round by round so a
busy machine slows all of them alike:

- ``httpx``: one tuned ``httpx.AsyncClient`` (limits, HTTP/1.1, no auth object, headers built once);
- ``httpcore``: ``httpcore.AsyncConnectionPool`` directly -- httpx's own transport without the
  httpx request/response model on top;
- ``lean_http``: the hand-written keep-alive client the poll lane used to use.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable

import httpcore
import httpx

from mediaassist.demo_servers.runninghub_server import DEMO_API_KEY
from mediaassist.providers.poll.lean_http import LeanClient

PATH = "/task/openapi/status"
BODY = {"apiKey": DEMO_API_KEY, "taskId": "1900000000000000000"}
HEADERS = {"Authorization": f"Bearer {DEMO_API_KEY}"}
POLLS_PER_S = 20  # 100 tasks polled every 5 s
Send = Callable[[], Awaitable[int]]


def _httpx_sender(client: httpx.AsyncClient) -> Send:
    async def send() -> int:
        response = await client.post(PATH, json=BODY, headers=HEADERS)
        response.json()
        return response.status_code
    return send


def _httpcore_sender(pool: httpcore.AsyncConnectionPool, url: str) -> Send:
    payload = json.dumps(BODY).encode()
    target = f"{url}{PATH}".encode()
    headers = [(b"Host", url.removeprefix("http://").encode()), (b"Accept", b"application/json"),
               (b"Content-Type", b"application/json"), (b"Content-Length", str(len(payload)).encode()),
               *((k.encode(), v.encode()) for k, v in HEADERS.items())]

    async def send() -> int:
        response = await pool.request("POST", target, headers=headers, content=payload)
        json.loads(response.content)
        return response.status
    return send


def _lean_sender(client: LeanClient) -> Send:
    async def send() -> int:
        response = await client.request("POST", PATH, json_body=BODY, headers=HEADERS)
        response.json()
        return response.status_code
    return send


async def _cpu_ms_per_request(send: Send, count: int, concurrency: int) -> float:
    async def worker(n: int) -> None:
        for _ in range(n):
            if await send() != 200:
                raise SystemExit("the demo server did not answer 200")

    await asyncio.gather(*(worker(count // concurrency) for _ in range(concurrency)))  # warm the pools
    cpu0 = time.process_time()
    await asyncio.gather(*(worker(count // concurrency) for _ in range(concurrency)))
    return 1000 * (time.process_time() - cpu0) / (count // concurrency * concurrency)


async def _measure(url: str, count: int, concurrency: int, rounds: int) -> dict[str, float]:
    limits = httpx.Limits(max_connections=100, max_keepalive_connections=32)
    async with httpx.AsyncClient(base_url=url, limits=limits, http1=True, http2=False, timeout=30) as client, \
            httpcore.AsyncConnectionPool(max_connections=100, max_keepalive_connections=32) as pool:
        lean = LeanClient(url)
        senders = {"httpx": _httpx_sender(client), "httpcore": _httpcore_sender(pool, url),
                   "lean_http": _lean_sender(lean)}
        samples: dict[str, list[float]] = {name: [] for name in senders}
        for _ in range(rounds):
            for name, send in senders.items():
                samples[name].append(await _cpu_ms_per_request(send, count, concurrency))
        await lean.aclose()
    return {name: statistics.median(values) for name, values in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=2000, help="requests per client per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 20])
    args = parser.parse_args()
    server = subprocess.Popen([sys.executable, "-m", "mediaassist.demo_servers.runninghub_server", "--port", "0"],
                              stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    url = server.stdout.readline().strip()
    try:
        print(f"status poll, client CPU per request (median of {args.rounds} rounds of {args.requests})")
        print(f"{'concurrency':>11} {'httpx':>9} {'httpcore':>9} {'lean_http':>9}  (ms)  "
              "at 20 polls/s (100 tasks / 5 s): % of one core")
        for concurrency in args.concurrency:
            ms = asyncio.run(_measure(url, args.requests, concurrency, args.rounds))
            # ms of CPU per request x requests per second / 1000 ms = the share of one core
            share = "  ".join(f"{name} {100 * ms[name] * POLLS_PER_S / 1000:.2f} %" for name in ms)
            figures = " ".join(f"{ms[name]:>9.3f}" for name in ("httpx", "httpcore", "lean_http"))
            print(f"{concurrency:>11} {figures}        {share}")
    finally:
        server.terminate()
        server.wait()
        server.stdout.close()


if __name__ == "__main__":
    main()
