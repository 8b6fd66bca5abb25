"""Shared set-up for the web-lane tests: the demo chat site, a config on it, logged-in accounts
(the scheduler and waiting: tests/harness.py)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from playwright.async_api import Page

from mediaassist.core.config import AccountConfig, AppConfig, AppSettings, ModelConfig
from mediaassist.core.store import Account, NewTask, Result, Store
from mediaassist.demo_servers.chat_site import DEMO_SITE, ChatSite, SiteState, write_site_profile
from mediaassist.providers.web import chromium_available, login_account

WEB_SPEED = 10.0  # the web tests' clock: nominal answer time-outs and back-offs pass 10x faster
MODEL = "reasoner"
PLAIN_MODEL = "plain"
needs_chromium = pytest.mark.skipif(not chromium_available(None), reason="no Chromium on this machine")
# A TipTap (ProseMirror) rich-text composer for the demo chat site (``demo_site(editor_bundle=...)``).
EDITOR_BUNDLE = Path(__file__).parent / "fixtures" / "editor" / "tiptap-bundle.js"


@contextmanager
def demo_site(data_dir: Path, duration_fn: Callable[[str], float] | None = None,
              answer_timeout_s: float | None = None, **state: object) -> Iterator[ChatSite]:
    """The demo chat site; ``answer_timeout_s`` overrides the profile's nominal answer time-out."""
    site = ChatSite(SiteState(**{"duration_s": (1.0, 1.5), "answer_words": 20, **state}),  # type: ignore[arg-type]
                    duration_fn)
    with site:
        profile = write_site_profile(site.base_url, data_dir / "sites")
        if answer_timeout_s is not None:
            text = re.sub(r"(?m)^timeout_s = \d+", f"timeout_s = {answer_timeout_s}", profile.read_text())
            profile.write_text(text)
        yield site


async def demo_operator(step: str, page: Page) -> None:
    """The operator's three clicks for ``sites learn`` on the demo chat page."""
    if step == "prompt":
        await page.click("#prompt")
    elif step == "send":
        await page.click("#send")
    else:
        await page.locator(".turn .answer-actions").wait_for()  # the answer has finished
        await page.click(".turn .answer")


def slow_first_time(slow_s: float = 60.0, fast_s: float = 0.3, marker: str = "[slow]") -> Callable[[str], float]:
    """Answer durations: ``slow_s`` the first time a prompt carrying ``marker`` is sent, else ``fast_s``."""
    seen: set[str] = set()

    def duration(prompt: str) -> float:
        slow = marker in prompt and prompt not in seen
        seen.add(prompt)
        return slow_s if slow else fast_s
    return duration


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


def stored_result(store: Store, task_id: str) -> Result:
    result = store.result(task_id)
    assert result is not None, f"no result for {task_id!r}"
    return result


def stored_account(store: Store, name: str) -> Account:
    account = store.account(name)
    assert account is not None, f"no account {name!r}"
    return account


def edit_profile(data_dir: Path, **lines: str | None) -> None:
    """Set (TOML value text) or drop (None) top-level or selector lines of the demo profile."""
    path = data_dir / "sites" / f"{DEMO_SITE}.toml"
    text = path.read_text(encoding="utf-8")
    for key, value in lines.items():
        pattern = re.compile(rf"(?m)^{re.escape(key)} = .*$\n?")
        found = pattern.search(text)
        if value is None:
            text = pattern.sub("", text, count=1)
        elif found:  # spliced in, not pattern.sub: the TOML value may hold backslashes
            text = f"{text[:found.start()]}{key} = {value}\n{text[found.end():]}"
        else:
            text = f"{key} = {value}\n" + text
    path.write_text(text, encoding="utf-8")
