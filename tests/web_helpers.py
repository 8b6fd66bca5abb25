"""Shared set-up for the web-lane tests: the demo chat site, a config on it, logged-in accounts,
and a helper that runs tasks through the real scheduler."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from mediaassist.core.clock import Clock
from mediaassist.core.config import AccountConfig, AppConfig, AppSettings, ModelConfig
from mediaassist.core.scheduler import Scheduler
from mediaassist.core.store import NewTask, Store, Task
from mediaassist.demo_servers.chat_site import DEMO_SITE, ChatSite, SiteState, write_site_profile
from mediaassist.providers.registry import build_providers
from mediaassist.providers.web import chromium_available, login_account

MODEL = "reasoner"
PLAIN_MODEL = "plain"
needs_chromium = pytest.mark.skipif(not chromium_available(None), reason="no Chromium on this machine")


@contextmanager
def demo_site(data_dir: Path, **state: object) -> Iterator[ChatSite]:
    site = ChatSite(SiteState(**{"duration_s": (1.0, 1.5), "answer_words": 20, **state}))  # type: ignore[arg-type]
    with site:
        write_site_profile(site.base_url, data_dir / "sites")
        yield site


def web_config(accounts: tuple[str, ...] = ("acct-a",), recycle_after: int = 50) -> AppConfig:
    return AppConfig(
        app=AppSettings(browser_recycle_after=recycle_after),
        accounts=[AccountConfig(name=a, site=DEMO_SITE) for a in accounts],
        models=[ModelConfig(name=MODEL, kind="web", site=DEMO_SITE, need_empty_prompt=True),
                ModelConfig(name=PLAIN_MODEL, kind="web", site=DEMO_SITE)],
    )


async def log_in(config: AppConfig, data_dir: Path, site: ChatSite) -> None:
    """The demo's one-click login, in each account's own profile (as ``--demo`` does)."""
    results = await asyncio.gather(*(
        login_account(a.name, config, data_dir, None, headless=True,
                      login_url=f"{site.base_url}/login?user={a.name}", timeout_s=15)
        for a in config.accounts))
    assert all(results)


def web_task(prompt: str, model: str = MODEL, **extra: object) -> NewTask:
    return NewTask(model=model, model_kind="web", route=f"web:{DEMO_SITE}", prompt=prompt, **extra)  # type: ignore[arg-type]


async def run_tasks(store: Store, config: AppConfig, data_dir: Path, tasks: list[NewTask],
                    during: Callable[[Scheduler, list[str]], Awaitable[None]] | None = None,
                    clock: Clock | None = None, batch: str = "b1") -> list[Task]:
    """Enqueue one batch, run the real scheduler until nothing more can run, stop it."""
    clock = clock or Clock(speed=10)
    sched = Scheduler(store, config, build_providers(config, clock, data_dir), data_dir, clock)
    await sched.start()
    try:
        ids, _ = store.enqueue(batch, tasks)
        sched.wake()
        if during is not None:
            await during(sched, ids)
        await asyncio.wait_for(sched.wait_for_batches([batch]), 90)
    finally:
        await sched.stop()
    return store.tasks([batch])


def task_log(store: Store, task_id: str) -> str:
    return "\n".join(line.line for line in store.logs(task_id))


async def wait_until(predicate: Callable[[], bool], timeout: float = 30.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        assert loop.time() < deadline, "condition not reached in time"
        await asyncio.sleep(0.05)
