"""The web lane end to end: real scheduler, real headless Chromium, the demo chat site on 127.0.0.1.

What the server saw (prompts, instructions, overlapping generations) is checked on the server side.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from mediaassist.core.clock import Clock
from mediaassist.core.scheduler import Scheduler
from mediaassist.core.store import Store
from mediaassist.demo_servers.chat_site import DEMO_SITE
from mediaassist.providers.registry import build_providers
from mediaassist.providers.web import check_site, login_account
from mediaassist.providers.web.driver import SiteDriver
from mediaassist.providers.web.provider import WebProvider
from tests.harness import make_scheduler, run_batch, task_log, wait_until
from tests.web_helpers import (
    PLAIN_MODEL,
    WEB_SPEED,
    demo_site,
    log_in,
    needs_chromium,
    slow_first_time,
    stored_account,
    stored_result,
    web_config,
    web_task,
)

# The browser is the subject here, not the store (test_store covers it on both back-ends).
pytestmark = [pytest.mark.browser, needs_chromium, pytest.mark.sqlite_only]


@pytest.mark.asyncio
async def test_two_accounts_run_in_parallel_never_two_generations_per_account(store: Store, data_dir: Path) -> None:
    config = web_config(("acct-a", "acct-b"))
    with demo_site(data_dir) as site:
        await log_in(config, data_dir, site)
        tasks = await run_batch(store, config, data_dir, [web_task(f"question {i}") for i in range(6)], WEB_SPEED)
        server = site.snapshot()

    assert [t.state for t in tasks] == ["success"] * 6
    assert server["violations"] == []
    gens = server["generations"]
    assert len(gens) == 6  # one generation per task: nothing sent twice
    by_user = {u: sorted((g["started"], min(g["ends_at"], g["stopped_at"] or g["ends_at"]))
                         for g in gens if g["user"] == u) for u in ("acct-a", "acct-b")}
    assert all(by_user.values()), "both accounts took work"
    for spans in by_user.values():
        assert all(prev[1] <= nxt[0] for prev, nxt in itertools.pairwise(spans)), "overlap on one account"
    assert any(a[0] < b[1] and b[0] < a[1] for a in by_user["acct-a"] for b in by_user["acct-b"]), \
        "the two accounts never ran at the same time"
    answers = {g["prompt"]: g["answer"] for g in gens}
    for task in tasks:
        assert stored_result(store, task.task_id).text == answers[task.prompt]


@pytest.mark.asyncio
async def test_need_empty_prompt_sends_no_instructions_and_long_prompts_arrive_whole(
        store: Store, data_dir: Path) -> None:
    config = web_config()
    long_prompt = "\n".join(f"第{i}行 line {i}: " + "x" * 180 for i in range(60))  # ~12k chars, 60 lines
    with demo_site(data_dir, default_instructions="Always answer in French.") as site:
        await log_in(config, data_dir, site)
        tasks = await run_batch(store, config, data_dir, [
            web_task(long_prompt, system_prompt="Be terse."),
            web_task("plain model question", model=PLAIN_MODEL, system_prompt="Be terse."),
            web_task("plain model, page default", model=PLAIN_MODEL),
        ], WEB_SPEED)
        gens = {g["prompt"]: g for g in site.snapshot()["generations"]}

    assert [t.state for t in tasks] == ["success"] * 3
    assert gens[long_prompt]["instructions"] == ""  # neither the system prompt nor the page default
    assert "need_empty_prompt" in task_log(store, tasks[0].task_id)
    assert gens["plain model question"]["instructions"] == "Be terse."
    assert gens["plain model, page default"]["instructions"] == "Always answer in French."


@pytest.mark.asyncio
async def test_rate_limit_banner_is_quota_and_logged_out_is_login(store: Store, data_dir: Path) -> None:
    config = web_config()
    with demo_site(data_dir, rate_limited=True) as site:
        await log_in(config, data_dir, site)
        limited = await run_batch(store, config, data_dir, [web_task("limited")], WEB_SPEED)
        paused = store.paused_lanes()
        site.control({"rate_limited": False, "log_out": "acct-a"})
        store.resume_lane("web:acct-a")
        out = await run_batch(store, config, data_dir, [web_task("first"), web_task("second")], WEB_SPEED, batch="b2")
        assert site.snapshot()["generations"] == []

    assert (limited[0].state, limited[0].error_kind) == ("failed", "quota")
    assert "rate-limit" in (limited[0].error or "")
    assert paused["web:acct-a"].startswith("rate limited by demochat")  # the account's lane stops
    assert (out[0].state, out[0].error_kind) == ("failed", "login")
    assert "mediaassist accounts login acct-a" in (out[0].error or "")
    assert "logged out" in task_log(store, out[0].task_id)
    assert out[1].state == "pending"  # the account waits for a login; its other tasks are not burnt
    assert stored_account(store, "acct-a").login_state == "needs_login"


@pytest.mark.asyncio
async def test_cancel_during_generation_stops_it_and_ends_canceled(store: Store, data_dir: Path) -> None:
    config = web_config()
    with demo_site(data_dir, duration_s=(60.0, 60.0)) as site:
        await log_in(config, data_dir, site)

        async def cancel_once_streaming(sched: Scheduler, ids: list[str]) -> None:
            await wait_until(lambda: any(g["active"] for g in site.snapshot()["generations"]))
            store.cancel(ids)
            sched.wake()

        tasks = await run_batch(store, config, data_dir, [web_task("a long answer")], WEB_SPEED,
                                during=cancel_once_streaming)
        gen = site.snapshot()["generations"][0]

    assert (tasks[0].state, tasks[0].error_kind) == ("canceled", "canceled")
    assert gen["stopped_at"] is not None and not gen["active"]  # the page's stop button was clicked
    assert "clicked stop" in task_log(store, tasks[0].task_id)
    assert store.result(tasks[0].task_id) is None


@pytest.mark.asyncio
async def test_browser_stays_warm_and_is_recycled_after_n_tasks(store: Store, data_dir: Path) -> None:
    config = web_config(recycle_after=2)
    with demo_site(data_dir, duration_s=(0.2, 0.3), answer_words=5) as site:
        await log_in(config, data_dir, site)
        tasks = await run_batch(store, config, data_dir, [web_task(f"q{i} [image]") for i in range(3)], WEB_SPEED)

    logs = [task_log(store, t.task_id) for t in tasks]
    assert [t.state for t in tasks] == ["success"] * 3
    assert "browser launched" in logs[0]
    assert "browser launched" not in logs[1]  # warm: the second task reused the browser
    assert "recycling the browser after 2 tasks" in logs[1] and "browser closed" in logs[1]
    assert "browser launched" in logs[2]
    files = stored_result(store, tasks[0].task_id).file_list
    assert len(files) == 1 and Path(files[0]).read_bytes().startswith(b"\x89PNG")


@pytest.mark.asyncio
async def test_sites_check_reports_matching_selectors_and_login_records_the_state(
        store: Store, data_dir: Path) -> None:
    config = web_config()
    store.sync_accounts(config.accounts)
    with demo_site(data_dir, default_instructions="Be kind.") as site:
        before = await check_site("demochat", "acct-a", config, data_dir)
        logged_in = await login_account("acct-a", config, data_dir, store, headless=True,
                                        login_url=f"{site.base_url}/login?user=acct-a", timeout_s=15)
        state_after_login = stored_account(store, "acct-a").login_state
        after = await check_site("demochat", "acct-a", config, data_dir)
        site.log_out()
        relogin = await login_account("acct-a", config, data_dir, store, headless=True, timeout_s=1)

    assert (before.login_state, before.usable) == ("needs_login", False)
    assert {c.role for c in before.checks if c.matches} == {"logged_out"}
    assert logged_in and state_after_login == "ok"
    assert after.usable
    assert {"prompt", "send", "logged_in", "instructions"} <= {c.role for c in after.checks if c.matches}
    assert "-- logged_out" in after.format()
    assert not relogin
    assert stored_account(store, "acct-a").login_state == "needs_login"
    assert "no login was seen" in (stored_account(store, "acct-a").last_error or "")


@pytest.mark.asyncio
async def test_a_timed_out_answer_is_stopped_before_the_account_takes_its_next_task(
        store: Store, data_dir: Path) -> None:
    config = web_config()
    # 30 nominal s = 3 real s at speed 10: the 60 s answer times out, the 0.3 s ones do not
    with demo_site(data_dir, duration_fn=slow_first_time(), answer_timeout_s=30) as site:
        await log_in(config, data_dir, site)
        tasks = await run_batch(store, config, data_dir, [web_task("[slow] times out once"), web_task("next")],
                                WEB_SPEED)
        server = site.snapshot()

    assert server["violations"] == []  # nothing was sent while the timed-out answer was running
    first = server["generations"][0]
    assert first["prompt"] == "[slow] times out once" and first["stopped_at"] is not None
    assert [t.state for t in tasks] == ["success"] * 2 and tasks[0].attempt == 2
    log = task_log(store, tasks[0].task_id)
    assert log.index("clicked stop on the page; the answer ended") < log.index("attempt 1 failed (timeout)")


@pytest.mark.asyncio
async def test_shutdown_stops_the_answer_so_the_resumed_task_finds_the_session_free(
        store: Store, data_dir: Path) -> None:
    config = web_config()
    clock = Clock(speed=10)
    with demo_site(data_dir, duration_fn=slow_first_time()) as site:
        await log_in(config, data_dir, site)
        sched = make_scheduler(store, config, data_dir, clock)
        await sched.start()
        store.enqueue("b1", [web_task("[slow] interrupted by a quit")])
        sched.wake()
        await wait_until(lambda: any(g["active"] for g in site.snapshot()["generations"]))
        await sched.stop()
        interrupted = site.snapshot()["generations"][0]
        tasks = await run_batch(store, config, data_dir, [], clock)  # the next start resumes it
        server = site.snapshot()

    assert interrupted["stopped_at"] is not None and not interrupted["active"]
    assert server["violations"] == []
    assert [t.state for t in tasks] == ["success"] and len(server["generations"]) == 2
    log = task_log(store, tasks[0].task_id)
    assert log.index("clicked stop on the page") < log.index("app stopped; task goes back to the queue")


@needs_chromium
@pytest.mark.browser
@pytest.mark.asyncio
async def test_an_answer_left_running_by_a_crashed_run_is_stopped_after_the_page_loads(
        store: Store, data_dir: Path) -> None:
    config = web_config()
    clock = Clock(speed=10)
    with demo_site(data_dir, duration_fn=slow_first_time()) as site:
        await log_in(config, data_dir, site)
        # The previous process died mid-answer: the site still writes it, and shows it again,
        # stop button and all, to whoever opens the chat page of that session.
        status, _ = site.generate("acct-a", "[slow] left by a crashed run", "")
        assert status == 200
        tasks = await run_batch(store, config, data_dir, [web_task("next")], clock)
        server = site.snapshot()

    assert server["violations"] == []
    assert server["generations"][0]["stopped_at"] is not None
    assert (tasks[0].state, tasks[0].attempt) == ("success", 1)
    assert "an earlier answer was still being generated on this account" in task_log(store, tasks[0].task_id)


@pytest.mark.asyncio
async def test_an_answer_still_running_on_the_warm_page_is_stopped_before_composing(
        store: Store, data_dir: Path) -> None:
    config = web_config()
    clock = Clock(speed=10)
    with demo_site(data_dir, duration_fn=slow_first_time()) as site:
        await log_in(config, data_dir, site)
        providers = build_providers(config, clock, data_dir)
        web = providers[f"web:{DEMO_SITE}"]
        assert isinstance(web, WebProvider)
        runtime = web.runtime("acct-a")
        # an answer left running in the account's browser (a stop that did not take in time)
        await runtime.open(await web.playwright.get(), lambda line: None)
        leftover = SiteDriver(web.site, await runtime.page(), clock, lambda line: None)
        await leftover.open_chat()
        await leftover.enter_prompt("[slow] left running")
        await leftover.send()
        await leftover.page.locator("#stop").wait_for(state="visible")
        tasks = await run_batch(store, config, data_dir, [web_task("next")], clock, providers=providers)
        server = site.snapshot()

    assert server["violations"] == []
    assert server["generations"][0]["stopped_at"] is not None
    assert (tasks[0].state, tasks[0].attempt) == ("success", 1)
    assert "an earlier answer was still being generated on this account; clicked stop (stopped)" \
        in task_log(store, tasks[0].task_id)
