"""The web lane's profile features on the demo chat site, end to end in real Chromium: errors
never succeed, stuck pages are recovered, pop-ups, rich-text composers with Enter-to-send,
navigation modes, session-cookie logins that survive a relaunch, and a server that dies."""

from __future__ import annotations

from pathlib import Path

import pytest

from mediaassist.core.store import Store
from mediaassist.demo_servers.chat_site import ERROR_TEXT
from mediaassist.providers.web import login_account
from tests.harness import run_batch, task_log, wait_until
from tests.web_helpers import (
    EDITOR_BUNDLE,
    PLAIN_MODEL,
    WEB_SPEED,
    demo_site,
    edit_profile,
    log_in,
    needs_chromium,
    stored_result,
    web_config,
    web_task,
)

pytestmark = [pytest.mark.browser, needs_chromium]


@pytest.mark.asyncio
async def test_an_error_in_the_turn_fails_the_task_and_the_stuck_page_is_reloaded(
        store: Store, data_dir: Path) -> None:
    config = web_config()
    with demo_site(data_dir, duration_s=(0.5, 0.5)) as site:
        await log_in(config, data_dir, site)
        tasks = await run_batch(store, config, data_dir, [web_task("breaks [error]", model=PLAIN_MODEL),
                                                          web_task("next one", model=PLAIN_MODEL)], WEB_SPEED)
        server = site.snapshot()
    failed, after = tasks

    assert (failed.state, failed.error_kind) == ("failed", "provider")  # never the partial answer
    assert ERROR_TEXT in (failed.error or "") and store.result(failed.task_id) is None
    assert failed.attempt == 3  # each attempt saw the error
    assert after.state == "success" and server["violations"] == []
    assert "the page is reloaded before the next task" in task_log(store, failed.task_id)
    assert [g["prompt"] for g in server["generations"]].count("next one") == 1


@pytest.mark.asyncio
async def test_rich_text_editor_with_enter_to_send_gets_multi_line_and_long_prompts_whole(
        store: Store, data_dir: Path) -> None:
    config = web_config()
    prompts = ["one line", "first line\nsecond line\n\nafter a blank line",
               "\n".join(f"第{i}行 line {i}: " + "y" * 40 for i in range(40))]
    with demo_site(data_dir, editor_bundle=EDITOR_BUNDLE) as site:
        edit_profile(data_dir, send='["Enter"]')
        await log_in(config, data_dir, site)
        tasks = await run_batch(store, config, data_dir, [web_task(p, model=PLAIN_MODEL) for p in prompts], WEB_SPEED)
        sent = [g["prompt"] for g in site.snapshot()["generations"]]

    assert [t.state for t in tasks] == ["success"] * 3, [t.error for t in tasks]
    assert sorted(sent) == sorted(prompts)  # exactly what was asked, line breaks included


@pytest.mark.asyncio
async def test_pop_ups_are_dismissed_and_an_unknown_cover_is_named(store: Store, data_dir: Path) -> None:
    config = web_config()
    with demo_site(data_dir, whats_new=True) as site:
        await log_in(config, data_dir, site)
        dismissed = await run_batch(store, config, data_dir, [web_task("behind a modal", model=PLAIN_MODEL)], WEB_SPEED)
        edit_profile(data_dir, dismiss=None)
        covered = await run_batch(store, config, data_dir, [web_task("covered", model=PLAIN_MODEL)], WEB_SPEED,
                                  batch="b2")

    assert dismissed[0].state == "success"
    assert "dismissed 1 pop-up" in task_log(store, dismissed[0].task_id)
    assert (covered[0].state, covered[0].error_kind, covered[0].attempt) == ("failed", "provider", 1)
    assert 'id="whats-new"' in (covered[0].error or "") and "dismiss" in (covered[0].error or "")
    assert "reloading the page once" in task_log(store, covered[0].task_id)


@pytest.mark.asyncio
async def test_new_chat_and_stay_navigation_keep_the_page(store: Store, data_dir: Path) -> None:
    config = web_config()
    with demo_site(data_dir, duration_s=(0.2, 0.3)) as site:
        await log_in(config, data_dir, site)
        loads_at_start = site.snapshot()["page_loads"]
        edit_profile(data_dir, navigation='"new_chat"')
        new_chat = await run_batch(store, config, data_dir, [web_task(f"n{i}", model=PLAIN_MODEL) for i in range(3)],
                                   WEB_SPEED)
        loads_new_chat = site.snapshot()["page_loads"] - loads_at_start
        edit_profile(data_dir, navigation='"stay"', answer_text='"attribute:data-raw"')
        stay = await run_batch(store, config, data_dir, [web_task(f"s{i}", model=PLAIN_MODEL) for i in range(3)],
                               WEB_SPEED, batch="b2")
        server = site.snapshot()
    answers = {g["prompt"]: g["answer"] for g in server["generations"]}

    assert [t.state for t in new_chat + stay] == ["success"] * 6
    assert loads_new_chat == 1  # one load at the first task; New chat afterwards
    assert server["page_loads"] - loads_at_start == 2  # the second run's browser loaded once, then stayed
    for task in new_chat + stay:  # only the new turn's answer, even with older turns on the page
        assert stored_result(store, task.task_id).text == answers[task.prompt]


@pytest.mark.asyncio
async def test_a_session_cookie_login_survives_the_relaunch(store: Store, data_dir: Path) -> None:
    config = web_config()
    store.sync_accounts(config.accounts)
    with demo_site(data_dir, session_cookie=True) as site:
        result = await login_account("acct-a", config, data_dir, store, headless=True, timeout_s=15,
                                     login_url=f"{site.base_url}/login?user=acct-a")
        tasks = await run_batch(store, config, data_dir, [web_task("after relaunch", model=PLAIN_MODEL)], WEB_SPEED)

    assert result.ok, result.message
    assert tasks[0].state == "success"
    assert "restored 1 session cookie" in task_log(store, tasks[0].task_id)


@pytest.mark.asyncio
async def test_the_server_dying_mid_answer_fails_the_task(store: Store, data_dir: Path) -> None:
    config = web_config()
    with demo_site(data_dir, duration_s=(30.0, 30.0)) as site:
        await log_in(config, data_dir, site)

        async def kill_the_server(_sched: object, _ids: list[str]) -> None:
            await wait_until(lambda: any(g["active"] for g in site.snapshot()["generations"]))
            site.crash()

        tasks = await run_batch(store, config, data_dir, [web_task("cut off", model=PLAIN_MODEL)], WEB_SPEED,
                                during=kill_the_server)

    assert tasks[0].state == "failed" and tasks[0].error_kind in ("provider", "network")
    assert "Connection lost" in task_log(store, tasks[0].task_id)
    assert store.result(tasks[0].task_id) is None
