"""The web lane on chat UIs nobody here wrote: a Gradio ChatInterface behind ``auth=`` and a
Streamlit chat app behind a password gate, each its own server process, driven by its shipped
site profile alone (real scheduler, real headless Chromium)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.async_api import Page

from mediaassist.core.clock import Clock
from mediaassist.core.config import AppConfig
from mediaassist.core.scheduler import Scheduler
from mediaassist.core.store import Store
from mediaassist.providers.registry import build_providers
from mediaassist.providers.web import LoginResult, check_site, login_account
from mediaassist.providers.web.browser import profile_dir
from mediaassist.providers.web.learn import learn_site
from mediaassist.providers.web.provider import WebProvider
from mediaassist.providers.web.session import session_file
from tests.fixtures.webui.answers import ERROR_MESSAGE, answer_for
from tests.harness import run_batch, task_log, wait_until
from tests.web_helpers import WEB_SPEED, needs_chromium, stored_account, stored_result
from tests.webui_helpers import ChatApp, app_config, app_task, chat_app, gradio_login, streamlit_login, write_profile

pytestmark = [pytest.mark.browser, pytest.mark.webui, needs_chromium]

PROMPTS = ["hello there",
           "第一行\n第二行 with `code`\n\nthird line after a blank one",
           "long: " + " ".join(f"word{i}" for i in range(420))]  # ~3,000 characters


@pytest.fixture(scope="module")
def gradio_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChatApp]:
    with chat_app("gradio", tmp_path_factory.mktemp("gradio")) as app:
        yield app


@pytest.fixture(scope="module")
def streamlit_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChatApp]:
    with chat_app("streamlit", tmp_path_factory.mktemp("streamlit")) as app:
        yield app


async def _logged_in_to(app: ChatApp, data_dir: Path) -> AppConfig:
    """The Gradio profile pointed at ``app``, and acct-a logged in there as a person would."""
    write_profile(app, data_dir)
    config = app_config("gradio")
    assert await login_account("acct-a", config, data_dir, None, headless=True, timeout_s=30,
                               operator=gradio_login)
    return config


@pytest.mark.asyncio
async def test_gradio_exact_markdown_answers_login_that_survives_a_relaunch(
        gradio_app: ChatApp, store: Store, data_dir: Path) -> None:
    write_profile(gradio_app, data_dir)
    config = app_config("gradio")
    store.sync_accounts(config.accounts)
    before = await check_site("gradio", "acct-a", config, data_dir, store)
    state_before = stored_account(store, "acct-a").login_state
    login = await login_account("acct-a", config, data_dir, store, headless=True, timeout_s=30,
                                operator=gradio_login)
    tasks = await run_batch(store, config, data_dir, [app_task("gradio", p) for p in PROMPTS], WEB_SPEED)

    assert (before.login_state, state_before) == ("needs_login", "needs_login")  # sites check records it
    assert login.ok, login.message  # including the check after a relaunch: session cookies kept
    assert session_file(profile_dir(data_dir, "acct-a")).is_file()
    assert [t.state for t in tasks] == ["success"] * len(PROMPTS)
    for task, prompt in zip(tasks, PROMPTS, strict=True):
        assert stored_result(store, task.task_id).text == answer_for(prompt)  # the Markdown as written
    assert "restored" in task_log(store, tasks[0].task_id)  # the fresh browser got its cookies back


@pytest.mark.asyncio
async def test_gradio_error_fails_the_task_and_the_stuck_page_is_recovered(
        gradio_app: ChatApp, store: Store, data_dir: Path) -> None:
    config = await _logged_in_to(gradio_app, data_dir)
    tasks = await run_batch(store, config, data_dir, [app_task("gradio", "this fails [error]"),
                                                      app_task("gradio", "after the error")], WEB_SPEED)
    by_prompt = {t.prompt: t for t in tasks}
    failed, after = by_prompt["this fails [error]"], by_prompt["after the error"]

    assert (failed.state, failed.error_kind) == ("failed", "provider")  # never a success with 'ECHO'
    assert ERROR_MESSAGE in (failed.error or "")
    assert store.result(failed.task_id) is None
    assert after.state == "success" and stored_result(store, after.task_id).text == answer_for("after the error")


@pytest.mark.asyncio
async def test_gradio_server_killed_mid_answer_fails_never_succeeds(
        store: Store, data_dir: Path, tmp_path: Path) -> None:
    config = app_config("gradio")
    with chat_app("gradio", tmp_path) as app:
        await _logged_in_to(app, data_dir)

        async def kill_while_streaming(_sched: object, _ids: list[str]) -> None:
            await wait_until(lambda: "the answer started" in "".join(
                line.line for t in store.tasks(["b1"]) for line in store.logs(t.task_id)), timeout=60)
            await asyncio.to_thread(app.kill)

        tasks = await run_batch(store, config, data_dir, [app_task("gradio", "cut off [slow]")], Clock(speed=50),
                                during=kill_while_streaming)

    log = task_log(store, tasks[0].task_id)
    assert tasks[0].state == "failed" and tasks[0].error_kind in ("provider", "network"), log
    assert store.result(tasks[0].task_id) is None


@pytest.mark.asyncio
async def test_streamlit_session_login_done_inside_the_running_lane_lasts_while_the_page_stays(
        streamlit_app: ChatApp, store: Store, data_dir: Path) -> None:
    write_profile(streamlit_app, data_dir)
    config = app_config("streamlit")
    store.sync_accounts(config.accounts)
    relaunched = await login_account("acct-a", config, data_dir, store, headless=True, timeout_s=30,
                                     operator=streamlit_login)
    state_after_login = stored_account(store, "acct-a").login_state
    clock = Clock(speed=50)  # the error is retried: short back-offs
    providers = build_providers(config, clock, data_dir)
    web = providers["web:streamlit"]
    assert isinstance(web, WebProvider)
    in_lane: list[LoginResult] = []

    async def operator_logs_in_when_asked(sched: Scheduler, _ids: list[str]) -> None:
        # The account is flagged (its login did not survive a relaunch), so its lane waits; the
        # operator logs in in the lane's own browser, opened headed (the suite runs on a virtual
        # screen), and the lane carries on in that page.
        await wait_until(lambda: "web:acct-a" in sched.blocked_lanes())
        assert all(t.state == "pending" for t in store.tasks(["b1"]))  # none ran into the gate
        in_lane.append(await web.log_in("acct-a", store, timeout_s=30, operator=streamlit_login))
        sched.wake()

    prompts = [*PROMPTS, "boom [error]", "after the error"]
    tasks = await run_batch(store, config, data_dir, [app_task("streamlit", p) for p in prompts], clock,
                            providers=providers, during=operator_logs_in_when_asked)
    runtime = web.runtime("acct-a")
    by_prompt = {t.prompt: t for t in tasks}

    assert not relaunched.ok and "did not survive relaunching" in relaunched.message
    assert state_after_login == "needs_login"
    assert in_lane[0].ok, in_lane[0].message
    assert runtime.headless is False and stored_account(store, "acct-a").login_state == "ok"
    for prompt in [*PROMPTS, "after the error"]:
        task = by_prompt[prompt]
        assert task.state == "success", (prompt, task.error)
        assert stored_result(store, task.task_id).text == answer_for(prompt)
    failed = by_prompt["boom [error]"]
    assert failed.state == "failed" and store.result(failed.task_id) is None  # never the partial 'ECHO'
    # Every attempt ends on the visible exception, the retries too (Streamlit's re-run shows the
    # same box again, which is no longer "new"): never a time-out.
    assert failed.error_kind == "provider", task_log(store, failed.task_id)
    assert f"RuntimeError: {ERROR_MESSAGE}" in (failed.error or "")
    assert failed.attempt > 1 and "(timeout)" not in task_log(store, failed.task_id)


async def gradio_operator(step: str, page: Page) -> None:
    """The operator's three clicks on the Gradio chat."""
    if step == "prompt":
        await page.click('textarea[data-testid="textbox"]')
    elif step == "send":
        await page.click("button.submit-button")
    else:
        await page.locator('button[data-testid="stop-button"]').wait_for(state="hidden")
        await page.locator('[data-testid="bot"] p').last.click()


@pytest.mark.asyncio
async def test_gradio_sites_learn_writes_a_profile_that_runs_a_batch(
        gradio_app: ChatApp, store: Store, data_dir: Path) -> None:
    config = await _logged_in_to(gradio_app, data_dir)
    result = await learn_site("learned-gradio", gradio_app.base_url + "/", "acct-a", config, data_dir,
                              headless=True, operator=gradio_operator, say=lambda line: None)
    prompts = ["learned one", "learned two"]
    tasks = await run_batch(store, app_config("learned-gradio"), data_dir,
                            [app_task("learned-gradio", p) for p in prompts], WEB_SPEED)

    assert result.check.usable, result.profile_text
    assert [t.state for t in tasks] == ["success"] * 2, result.profile_text
    for task, prompt in zip(tasks, prompts, strict=True):  # the rendered text (a learned profile reads text)
        assert (stored_result(store, task.task_id).text or "").startswith(f"Echo of {len(prompt)} characters:")
