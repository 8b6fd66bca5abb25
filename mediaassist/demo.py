"""``--demo``: a complete config on built-in providers, for a machine with no accounts or keys.

Each lane's demo is set up by its own method below, so the lanes can evolve independently.
Every demo duration is divided by the clock's speed (``--speed N``).
"""

from __future__ import annotations

import asyncio
import secrets
import uuid
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from pathlib import Path
from types import TracebackType
from typing import Protocol

from mediaassist.core.clock import Clock
from mediaassist.core.config import DEFAULT_TIMEOUT_S, AccountConfig, AppConfig, InputSpec, ModelConfig, ProviderConfig
from mediaassist.core.money import Price
from mediaassist.core.task_profiles import load_profile
from mediaassist.demo_servers.native_video_server import DEFAULT_MODELS, SERVICES, NativeVideoDemoServer
from mediaassist.demo_servers.openai_server import DemoOpenAIServer
from mediaassist.demo_servers.runninghub_server import RunningHubDemoServer, RunningHubFake
from mediaassist.demo_servers.video_tasks_server import VideoTaskDemoServer
from mediaassist.providers.registry import SIMULATED_SITE

DEMO_WEB_MODEL = "demo-reasoner"
DEMO_API_MODEL = "demo-writer"
DEMO_IMAGE_MODEL = "demo-illustrator"
DEMO_POLL_MODEL = "demo-video"
# A demo video model on each shipped task-API profile: (model, profile, remote model).
DEMO_TASK_API_MODELS = (("demo-sora", "openai-videos", "sora-2"), ("demo-kling", "newapi-video", "kling-v2"))
# The makers' own APIs, each on its demo format: a model demo-native-<profile> per shipped profile.
DEMO_NATIVE_PREFIX = "demo-native-"
DEMO_I2V_MODEL = "demo-i2v"  # image-to-video: first and last frame (examples/image-to-video.csv)
DEMO_ACCOUNTS = ("demo-a", "demo-b")
DEMO_POLL_LIMIT = 100
# --speed shortens the demo services' waits, not the machine's own: a provider's time-out scaled
# below what a busy machine takes to answer fails good tasks (at --speed 1000 the API's 120 s
# became 0.12 s, and on a loaded 2-core box nearly every request of a 10,000-row run timed out).
DEMO_MIN_REAL_TIMEOUT_S = 10.0
# Example prices, so the demo shows estimates, costs and budgets (a --config given with --demo
# replaces them model by model, and adds its [budget]). RunningHub reports its own charge in
# coins; its table is deliberately a little off, so the record's correction can be seen.
DEMO_PRICES = {
    DEMO_API_MODEL: Price("CNY", per_1k_input_tokens=Decimal("0.002"), per_1k_output_tokens=Decimal("0.008")),
    DEMO_IMAGE_MODEL: Price("USD", per_image=Decimal("0.04")),
    DEMO_POLL_MODEL: Price("coins", per_task=Decimal(20)),
    DEMO_I2V_MODEL: Price("coins", per_task=Decimal(20)),
    "demo-sora": Price("USD", per_second=Decimal("0.10")),
    "demo-kling": Price("CNY", per_second=Decimal("0.50")),
}


class _Stoppable(Protocol):
    def stop(self) -> None: ...


class DemoEnvironment:
    """``async with DemoEnvironment(clock, data_dir) as config:`` -- servers run inside."""

    def __init__(self, clock: Clock, data_dir: Path, log_in: bool = True) -> None:
        self.clock = clock
        self.data_dir = data_dir
        self.log_in = log_in  # False for commands that only look (status)
        self.config = AppConfig()
        self._servers: list[_Stoppable] = []
        # Demo accounts log themselves in at start; the runtime records the outcome in the
        # store, replacing a "needs login" left there by an earlier demo run.
        self.logins: dict[str, bool] = {}

    async def __aenter__(self) -> AppConfig:
        try:
            await self._add_api()
            await self._add_poll()
            self._add_task_apis()
            self._add_native_video_apis()
            await self._add_web()
        except BaseException:
            await self._stop_servers()
            raise
        for model in self.config.models:  # a given --config may replace them (runtime.py)
            model.price = DEMO_PRICES.get(model.name)
        return self.config

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self._stop_servers()

    async def _stop_servers(self) -> None:
        # All at once: each stop waits up to half a second for its server's loop to notice
        # (socketserver polls at 0.5 s), and one after another the demo's nineteen servers made
        # every demo command linger ~9 s after its work was done.
        # Waited for in place, not awaited: the window's quit stops the event loop under this
        # call, and a stop left pending there ended the app with "Event loop stopped before
        # Future completed" (tests/ui/test_demo_quit.py).
        servers, self._servers = self._servers, []
        if servers:
            with ThreadPoolExecutor(max_workers=len(servers)) as pool:
                for stopping in [pool.submit(server.stop) for server in servers]:
                    stopping.result()

    def _timeout(self, nominal_s: float) -> float:
        """A demo provider's time-out: ``nominal_s``, but never under DEMO_MIN_REAL_TIMEOUT_S real seconds."""
        return max(nominal_s, DEMO_MIN_REAL_TIMEOUT_S * self.clock.speed)

    async def _add_api(self) -> None:
        # A fresh key per run, required by the server and resolved like a real one (so it is
        # registered for redaction and its absence from every output can be checked).
        key = f"demo-{secrets.token_urlsafe(18)}"
        server = DemoOpenAIServer(api_key=key, speed=self.clock.speed,
                                  model_latency={DEMO_API_MODEL: (8.0, 20.0), DEMO_IMAGE_MODEL: (10.0, 30.0)})
        server.start()
        self._servers.append(server)
        self.config.providers.append(ProviderConfig(
            name="demo-openai", kind="api", type="openai", base_url=server.base_url, api_key=key, concurrency=3,
            timeout_s=self._timeout(DEFAULT_TIMEOUT_S["api"])))
        self.config.models.append(ModelConfig(name=DEMO_API_MODEL, kind="api", provider="demo-openai",
                                              options={"endpoint": "chat"}))
        self.config.models.append(ModelConfig(name=DEMO_IMAGE_MODEL, kind="api", provider="demo-openai",
                                              options={"endpoint": "images"}))

    async def _add_poll(self) -> None:
        # The fake RunningHub on loopback, driven by the real client: the key allows as many
        # tasks as we poll, and renders take 60-250 s (+ up to 20 s queued), all scaled.
        # Its tasks are kept in the demo data dir, as RunningHub keeps them: after a crash or
        # Ctrl-C the next demo run resumes polling the saved remote ids instead of meeting 807.
        state = self.data_dir / "demo-runninghub.json"
        key = RunningHubFake.saved_key(state) or f"demo-rh-{uuid.uuid4().hex}"
        server = RunningHubDemoServer({key: DEMO_POLL_LIMIT}, queued_s=(2.0, 20.0), run_s=(60.0, 250.0),
                                      speed=self.clock.speed, files_per_task=1, state_file=state).start()
        self._servers.append(server)
        self.config.providers.append(ProviderConfig(
            name="demo-runninghub", kind="poll", type="runninghub", base_url=server.url, api_key=key,
            max_polling_tasks=DEMO_POLL_LIMIT, timeout_s=self._timeout(DEFAULT_TIMEOUT_S["poll"])))
        self.config.models.append(ModelConfig(
            name=DEMO_POLL_MODEL, kind="poll", provider="demo-runninghub",
            options={"workflow_id": "1904136902449209346", "prompt_node_id": "6", "prompt_field_name": "text",
                     "node_info_list": [{"nodeId": "3", "fieldName": "steps", "fieldValue": 20}]}))
        self.config.models.append(ModelConfig(
            name=DEMO_I2V_MODEL, kind="poll", provider="demo-runninghub",
            options={"workflow_id": "1904136902449209347", "prompt_node_id": "6", "prompt_field_name": "text"},
            inputs={name: InputSpec(name=name, options={"nodeId": node, "fieldName": "image"})
                    for name, node in (("first_frame", "39"), ("last_frame", "40"))}))

    def _add_task_apis(self) -> None:
        """One demo server per shipped task-API profile, each with a demo video model; jobs take
        the same 60-250 s (+ up to 20 s queued), scaled, and each key runs 10 jobs at once."""
        speed = self.clock.speed
        for model, profile, remote_model in DEMO_TASK_API_MODELS:
            key = f"demo-{secrets.token_urlsafe(18)}"
            server = VideoTaskDemoServer(profile, api_key=key, models=(remote_model,), job_limit=10,
                                         queued_s=(2.0 / speed, 20.0 / speed), run_s=(60.0 / speed, 250.0 / speed))
            server.start()
            self._servers.append(server)
            name = f"demo-{profile}"
            self.config.providers.append(ProviderConfig(
                name=name, kind="poll", type="task_api", base_url=server.base_url, api_key=key,
                max_polling_tasks=10, timeout_s=self._timeout(DEFAULT_TIMEOUT_S["poll"]), profile=profile,
                task_profile=load_profile(profile, f"demo provider {name}")))
            self.config.models.append(ModelConfig(name=model, kind="poll", provider=name,
                                                  options={"remote_model": remote_model}))

    def _add_native_video_apis(self) -> None:
        """Kling, Seedance, Hailuo, Wan, Vidu, Runway and Veo in their own shapes (Kling's JWT from a
        fresh access key and secret key), results on a storage host of their own; jobs take the
        same scaled 60-250 s (+ up to 20 s queued), 10 at once per key."""
        speed = self.clock.speed
        for service in SERVICES:
            key, secret = f"demo-{secrets.token_urlsafe(18)}", f"demo-{secrets.token_urlsafe(18)}"
            server = NativeVideoDemoServer(service, api_key=key, secret_key=secret, job_limit=10,
                                           queued_s=(2.0 / speed, 20.0 / speed), run_s=(60.0 / speed, 250.0 / speed))
            server.start()
            self._servers.append(server)
            name = f"demo-{service}"
            self.config.providers.append(ProviderConfig(
                name=name, kind="poll", type="task_api", base_url=server.base_url, api_key=key, secret_key=secret,
                max_polling_tasks=10, timeout_s=self._timeout(DEFAULT_TIMEOUT_S["poll"]), profile=service,
                task_profile=load_profile(service, f"demo provider {name}")))
            self.config.models.append(ModelConfig(name=DEMO_NATIVE_PREFIX + service, kind="poll", provider=name,
                                                  options={"remote_model": DEFAULT_MODELS[service][0]}))

    async def _add_web(self) -> None:
        """The demo chat site, driven in a real Chromium. Each demo account logs in the way an
        operator would, only without the hands: its own profile visits the site's one-click login
        link, which sets the session cookie in that profile. With no Chromium on the machine the
        web lane falls back to the simulated site, so ``--demo`` still runs."""
        from mediaassist.demo_servers.chat_site import DEMO_SITE, ChatSite, SiteState, write_site_profile
        from mediaassist.providers.web import chromium_available, login_account, profile_holder

        site_name = DEMO_SITE if chromium_available(self.config.app.chromium_path) else SIMULATED_SITE
        for name in DEMO_ACCOUNTS:
            self.config.accounts.append(AccountConfig(name=name, site=site_name))
        self.config.models.append(ModelConfig(name=DEMO_WEB_MODEL, kind="web", site=site_name,
                                              need_empty_prompt=True))
        if site_name != DEMO_SITE:
            return
        # Answers take the operators' measured 31 s .. 6 min 10 s, scaled by --speed.
        chat = ChatSite(SiteState(default_instructions="You are a helpful assistant. Answer in detail.",
                                  duration_s=(31.0 / self.clock.speed, 370.0 / self.clock.speed)))
        chat.start()
        self._servers.append(chat)
        write_site_profile(chat.base_url, self.data_dir / "sites", DEMO_SITE)
        if not self.log_in:
            return
        # An account whose browser another process holds (the demo window) is that process's:
        # no login is tried, so none is reported as failed.
        free = [name for name in DEMO_ACCOUNTS if profile_holder(self.data_dir, name) is None]
        results = await asyncio.gather(*(
            login_account(name, self.config, self.data_dir, None, headless=True,
                          login_url=f"{chat.base_url}/login?user={name}", timeout_s=30.0)
            for name in free))
        # A LoginResult is truthy when the login was seen.
        self.logins = dict(zip(free, [bool(r) for r in results], strict=True))
