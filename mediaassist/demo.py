"""``--demo``: a complete config on built-in providers, for a machine with no accounts or keys.

Each lane's demo is set up by its own method below, so the lanes can evolve independently.
Every demo duration is divided by the clock's speed (``--speed N``).
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from pathlib import Path
from types import TracebackType

from mediaassist.core.clock import Clock
from mediaassist.core.config import AccountConfig, AppConfig, ModelConfig, ProviderConfig
from mediaassist.providers.registry import SIMULATED_SITE

DEMO_WEB_MODEL = "demo-reasoner"
DEMO_API_MODEL = "demo-writer"
DEMO_POLL_MODEL = "demo-video"
DEMO_ACCOUNTS = ("demo-a", "demo-b")


class DemoEnvironment:
    """``async with DemoEnvironment(clock, data_dir) as config:`` -- servers run inside."""

    def __init__(self, clock: Clock, data_dir: Path) -> None:
        self.clock = clock
        self.data_dir = data_dir
        self.config = AppConfig()
        self._stack = AsyncExitStack()

    async def __aenter__(self) -> AppConfig:
        await self._stack.__aenter__()
        try:
            await self._add_api()
            await self._add_poll()
            await self._add_web()
        except BaseException:
            await self._stack.aclose()
            raise
        return self.config

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self._stack.aclose()

    async def _add_api(self) -> None:
        self.config.providers.append(ProviderConfig(
            name="demo-openai", kind="api", type="simulated", min_duration_s=8.0, max_duration_s=20.0))
        self.config.models.append(ModelConfig(name=DEMO_API_MODEL, kind="api", provider="demo-openai"))

    async def _add_poll(self) -> None:
        self.config.providers.append(ProviderConfig(
            name="demo-runninghub", kind="poll", type="simulated", min_duration_s=60.0,
            max_duration_s=250.0, timeout_s=1800.0))
        self.config.models.append(ModelConfig(name=DEMO_POLL_MODEL, kind="poll", provider="demo-runninghub"))

    async def _add_web(self) -> None:
        for name in DEMO_ACCOUNTS:
            self.config.accounts.append(AccountConfig(name=name, site=SIMULATED_SITE))
        self.config.models.append(ModelConfig(name=DEMO_WEB_MODEL, kind="web", site=SIMULATED_SITE,
                                              need_empty_prompt=True))
