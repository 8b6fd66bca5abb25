"""Proxies per provider and per web account: a real HTTP proxy on 127.0.0.1 sees each lane's
traffic; a refusing or absent proxy is a network error that names the proxy, never its password."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from urllib.parse import urlsplit

import psutil
import pytest

from mediaassist.core.config import AccountConfig, AppConfig, ModelConfig, ProviderConfig, parse_config
from mediaassist.core.errors import ConfigError
from mediaassist.core.scheduler import Scheduler
from mediaassist.core.store import NewTask, Store
from mediaassist.demo_servers.openai_server import DemoOpenAIServer
from mediaassist.demo_servers.runninghub_server import DEMO_API_KEY, RunningHubDemoServer
from tests.harness import run_batch, wait_until
from tests.poll_helpers import SPEED
from tests.proxy_server import http_proxy
from tests.web_helpers import WEB_SPEED, demo_site, log_in, needs_chromium, web_config, web_task

KEY = "sk-proxy-test-Zq8mW3pL0vX7yT2nB5"
PASSWORD = "pr0xy-Secret-77"


def api_config(base_url: str, proxy: str) -> AppConfig:
    return parse_config({"providers": [{"name": "acme", "kind": "api", "type": "openai", "base_url": base_url,
                                        "api_key": KEY, "proxy": proxy}],
                         "models": [{"name": "writer", "kind": "api", "provider": "acme", "endpoint": "chat",
                                     "remote_model": "gpt-x"}]})


def _port(url: str) -> int:
    port = urlsplit(url).port
    assert port is not None
    return port


def chat(n: int) -> list[NewTask]:
    return [NewTask(model="writer", model_kind="api", route="api:acme", prompt=f"slogan {i}") for i in range(n)]


@pytest.mark.asyncio
async def test_an_api_provider_goes_through_its_proxy_with_credentials(store: Store, data_dir: Path, fast_clock):
    with DemoOpenAIServer(api_key=KEY, latency_s=(0.01, 0.02), models=("gpt-x",)) as server, \
            http_proxy(user="op", password=PASSWORD) as proxy:
        tasks = await run_batch(store, api_config(server.base_url, proxy.url()), data_dir, chat(3), fast_clock)
        assert [t.state for t in tasks] == ["success"] * 3
        assert proxy.reached(_port(server.base_url)) >= 3 and proxy.auth_failures == 0
        assert len(server.api_requests()) == 3


@pytest.mark.asyncio
@pytest.mark.parametrize("refuse", [True, False], ids=["refusing", "absent"])
async def test_a_failing_proxy_is_a_network_error_naming_the_proxy(store: Store, data_dir: Path, fast_clock,
                                                                    refuse: bool):
    with DemoOpenAIServer(api_key=KEY, latency_s=(0.01, 0.02), models=("gpt-x",)) as server:
        if refuse:  # a proxy that wants other credentials: 407
            with http_proxy(user="op", password="another-one") as proxy:
                url, port = proxy.url().replace("another-one", PASSWORD), proxy.port
                tasks = await run_batch(store, api_config(server.base_url, url), data_dir, chat(1), fast_clock)
                assert proxy.auth_failures > 0
        else:
            url, port = f"http://op:{PASSWORD}@127.0.0.1:1", 1
            tasks = await run_batch(store, api_config(server.base_url, url), data_dir, chat(1), fast_clock)
        assert server.api_requests() == []
    [task] = tasks
    assert (task.state, task.error_kind) == ("failed", "network")
    assert f"proxy http://127.0.0.1:{port}" in task.error
    assert PASSWORD not in task.error and all(PASSWORD not in line.line for line in store.logs(task.task_id))


@pytest.mark.asyncio
async def test_a_poll_provider_creates_and_polls_through_its_proxy(store: Store, data_dir: Path):
    with RunningHubDemoServer({DEMO_API_KEY: 100}, queued_s=(0.1, 0.2), run_s=(0.2, 0.4), seed=3) as server, \
            http_proxy() as proxy:
        provider = ProviderConfig(name="rh", kind="poll", type="runninghub", base_url=server.url,
                                  api_key=DEMO_API_KEY, max_polling_tasks=3, proxy=proxy.url())
        config = AppConfig(providers=[provider], models=[ModelConfig(
            name="video", kind="poll", provider="rh",
            options={"workflow_id": "1904136902449209346", "prompt_node_id": "6", "prompt_field_name": "text"})])
        tasks = await run_batch(store, config, data_dir, [
            NewTask(model="video", model_kind="poll", route="poll:rh", prompt=f"shot {i}") for i in range(2)], SPEED)
        assert [t.state for t in tasks] == ["success"] * 2
        # two creates, their polls and the output downloads, all through the proxy
        assert proxy.reached(_port(server.url)) >= 4


def _browser_command_lines(profile: Path) -> list[list[str]]:
    lines = []
    for proc in psutil.process_iter(["cmdline"]):
        cmdline = proc.info["cmdline"] or []
        if any(str(profile) in part for part in cmdline):
            lines.append(cmdline)
    return lines


@needs_chromium
@pytest.mark.asyncio
async def test_a_web_account_browses_through_its_proxy_password_off_the_command_line(store: Store, data_dir: Path):
    with demo_site(data_dir) as site, http_proxy(user="op", password=PASSWORD) as proxy:
        base = web_config(("acct-a",))
        config = dataclasses.replace(base, accounts=[AccountConfig(name="acct-a", site=base.accounts[0].site,
                                                                   proxy=proxy.url())])
        await log_in(config, data_dir, site)
        seen_lines: list[list[str]] = []

        async def look_at_the_browser(_sched: Scheduler, _ids: list[str]) -> None:
            await wait_until(lambda: _browser_command_lines(data_dir / "profiles" / "acct-a"), 60, "the browser")
            seen_lines.extend(_browser_command_lines(data_dir / "profiles" / "acct-a"))

        tasks = await run_batch(store, config, data_dir, [web_task(f"question {i}") for i in range(2)], WEB_SPEED,
                                during=look_at_the_browser)
        assert [t.state for t in tasks] == ["success"] * 2
        assert proxy.reached(_port(site.base_url)) > 0
    assert any(any(part.startswith("--proxy-server=") for part in line) for line in seen_lines)
    assert not any(PASSWORD in part for line in seen_lines for part in line)


@pytest.mark.parametrize("proxy", ["127.0.0.1:8080", "ftp://127.0.0.1:21", "http://127.0.0.1", "http://:8080"])
def test_a_bad_proxy_is_refused_naming_the_key(proxy: str):
    with pytest.raises(ConfigError) as caught:
        parse_config({"accounts": [{"name": "a", "site": "demochat", "proxy": proxy}]})
    assert "accounts[0].proxy: " in str(caught.value) and "is not a proxy URL" in str(caught.value)


def test_a_refused_proxy_url_never_shows_its_password():
    with pytest.raises(ConfigError) as caught:
        parse_config({"providers": [{"name": "p", "kind": "api", "type": "openai", "base_url": "https://x.example/v1",
                                     "proxy": f"gopher://op:{PASSWORD}@10.0.0.2:1080"}]})
    assert PASSWORD not in str(caught.value) and "providers[0].proxy: 'gopher://10.0.0.2:1080'" in str(caught.value)
