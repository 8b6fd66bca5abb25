"""The core of the web lane on a Streamlit chat app behind a password gate kept in the page
session (a server nobody here wrote, one per module), driven by its shipped site profile, then by
a learned one: a login that cannot survive a relaunch flags the account, the operator logs in in
the lane's own page and the lane carries on there; an error fails its task, never a success;
``sites learn`` works out the indicators and the "stay" navigation and writes a profile that runs
a batch. Short answers: the long case is in test_web_real_uis.py."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from keyrings.alt.file import PlaintextKeyring

from mediaassist.core.store import Store
from mediaassist.providers.web import LoginResult, check_site, login_account
from mediaassist.providers.web.kept_login import KEPT_LOGIN_SERVICE
from mediaassist.providers.web.learn import learn_site
from mediaassist.providers.web.site import load_site
from tests.fixtures.webui.answers import ALERT_MESSAGE, ERROR_MESSAGE, answer_for
from tests.harness import run_batch, task_log
from tests.web_helpers import WEB_SPEED, needs_chromium, stored_account, stored_result
from tests.webui_helpers import (
    LEARNED_BATCH,
    MULTI_LINE,
    PASSWORD,
    ChatApp,
    app_config,
    app_on_store,
    app_task,
    logs_in_when_the_lane_waits,
    streamlit_learn_operator,
    streamlit_login,
    web_lane,
)

pytestmark = [pytest.mark.browser, needs_chromium]


@pytest.mark.asyncio
async def test_streamlit_login_kept_in_the_os_keyring_is_entered_again_after_every_browser_recycle(
        streamlit_app: ChatApp, store: Store, data_dir: Path, os_keyring: PlaintextKeyring,
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="mediaassist")
    config = app_on_store(streamlit_app, data_dir, store)
    config.app.browser_recycle_after = 2
    login = await login_account("acct-a", config, data_dir, store, headless=True, timeout_s=30,
                                operator=streamlit_login, keep_login=True)
    prompts = [f"kept login {number}" for number in range(5)]
    tasks = await run_batch(store, config, data_dir, [app_task("streamlit", p) for p in prompts], WEB_SPEED)
    logs = [task_log(store, t.task_id) for t in tasks]

    # the relaunch check at the end of the login already needed the kept login: the gate is per page
    assert login.ok and "kept in the OS keyring" in str(login.message), login.message
    assert [t.state for t in tasks] == ["success"] * len(prompts), logs
    assert sum("recycling the browser" in log for log in logs) == 2  # after tasks 2 and 4
    # the batch's first browser, and each new one after a recycle, found the gate and passed it
    logged_in_again = [n for n, log in enumerate(logs) if "logged in again with the login kept" in log]
    assert logged_in_again == [0, 2, 4], logs
    assert PASSWORD in (os_keyring.get_password(KEPT_LOGIN_SERVICE, "acct-a") or "")
    # never in a file (the store, the outputs, the browser profile, its saved cookies), a result,
    # a task log or a log line
    files = [p for p in data_dir.rglob("*") if p.is_file()]
    assert files and not [p for p in files if PASSWORD.encode() in p.read_bytes()]
    assert not any(PASSWORD in log for log in logs) and PASSWORD not in caplog.text


@pytest.mark.asyncio
async def test_streamlit_session_login_done_inside_the_running_lane_lasts_while_the_page_stays(
        streamlit_app: ChatApp, store: Store, data_dir: Path) -> None:
    config = app_on_store(streamlit_app, data_dir, store)
    relaunched = await login_account("acct-a", config, data_dir, store, headless=True, timeout_s=30,
                                     operator=streamlit_login)
    state_after_login = stored_account(store, "acct-a").login_state
    providers, web = web_lane(data_dir, "streamlit")
    in_lane: list[LoginResult] = []
    prompts = [MULTI_LINE, "boom [error]", "after the error"]
    tasks = await run_batch(store, config, data_dir, [app_task("streamlit", p) for p in prompts], web.clock,
                            providers=providers, during=logs_in_when_the_lane_waits(web, store, in_lane))
    by_prompt = {t.prompt: t for t in tasks}

    assert not relaunched.ok and "did not survive relaunching" in str(relaunched.message)
    assert state_after_login == "needs_login"
    assert in_lane[0].ok, in_lane[0].message
    assert web.runtime("acct-a").headless is False and stored_account(store, "acct-a").login_state == "ok"
    for prompt in (MULTI_LINE, "after the error"):
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


@pytest.mark.asyncio
async def test_streamlit_sites_learn_writes_a_profile_that_runs_a_batch_and_learns_the_exception_box(
        streamlit_app: ChatApp, store: Store, data_dir: Path) -> None:
    learned = app_config("learned-streamlit")
    store.sync_accounts(learned.accounts)
    lines: list[str] = []
    result = await learn_site("learned-streamlit", streamlit_app.base_url + "/", "acct-a", learned, data_dir,
                              headless=True, operator=streamlit_learn_operator, say=lines.append, store=store,
                              error_turn=True)
    profile = load_site("learned-streamlit", data_dir)
    providers, web = web_lane(data_dir, "learned-streamlit")
    in_lane: list[LoginResult] = []
    called_before = len(streamlit_app.calls())
    prompts = LEARNED_BATCH
    tasks = await run_batch(store, learned, data_dir,
                            [app_task("learned-streamlit", p) for p in [*prompts, "boom [error]", "cut [alert]"]],
                            web.clock, providers=providers, during=logs_in_when_the_lane_waits(web, store, in_lane))
    *tasks, failed, cut_short = tasks

    # The "running" widget shows only while the script runs (and only after ~0.5 s of it): the
    # observer installed before the send sees it every time, where polling the page missed it.
    assert 'div[data-testid="stStatusWidget"]' in profile.selectors["generating"], result.profile_text
    assert profile.navigation == "stay" and profile.login_url  # the gate's login is lost on a reload
    assert profile.selectors["logged_out"] == ['input[type="password"]']
    assert result.check.login_state == "needs_login"  # a fresh browser finds the gate, as a task would
    assert stored_account(store, "acct-a").login_state == "ok"  # logged in again in the lane's page
    assert in_lane[0].ok, in_lane[0].message
    assert [t.state for t in tasks] == ["success"] * len(prompts), result.profile_text
    for task, prompt in zip(tasks, prompts, strict=True):  # the rendered text (a learned profile reads text)
        assert (stored_result(store, task.task_id).text or "").startswith(f"Echo of {len(prompt)} characters:")
    calls = streamlit_app.calls()[called_before:]  # the app serves every test of the module
    assert [calls.count(p) for p in prompts] == [1] * len(prompts), calls  # one model call each, byte for byte
    # the failing turn's exception box, learned as the error role (logged in again after the reload)
    assert profile.selectors.get("error"), (result.profile_text, lines)
    assert (failed.state, failed.error_kind) == ("failed", "provider"), task_log(store, failed.task_id)
    assert f"RuntimeError: {ERROR_MESSAGE}" in (failed.error or "") and store.result(failed.task_id) is None
    # an error the learned role does not match (an st.error box, not the exception box) fails its
    # task too, by the generic rule beside the role -- never the partial 'ECHO'
    assert "generic_errors = true" in result.profile_text
    assert (cut_short.state, cut_short.error_kind) == ("failed", "provider"), task_log(store, cut_short.task_id)
    assert ALERT_MESSAGE in (cut_short.error or "") and store.result(cut_short.task_id) is None


@pytest.mark.asyncio
async def test_streamlit_without_an_error_role_a_partial_answer_then_the_exception_fails(
        streamlit_app: ChatApp, store: Store, data_dir: Path) -> None:
    config = app_on_store(streamlit_app, data_dir, store, without=("error", "error_texts", "banner"))
    # a fresh browser finds the gate: the account is flagged, its lane waits for the login
    assert (await check_site("streamlit", "acct-a", config, data_dir, store)).login_state == "needs_login"
    providers, web = web_lane(data_dir, "streamlit")
    in_lane: list[LoginResult] = []
    prompts = ["boom [error]", "what does error 500 mean? it failed again"]
    tasks = await run_batch(store, config, data_dir, [app_task("streamlit", p) for p in prompts], web.clock,
                            providers=providers, during=logs_in_when_the_lane_waits(web, store, in_lane))
    by_prompt = {t.prompt: t for t in tasks}
    failed, answered = by_prompt[prompts[0]], by_prompt[prompts[1]]

    assert in_lane[0].ok, in_lane[0].message
    assert (failed.state, failed.error_kind) == ("failed", "provider"), task_log(store, failed.task_id)
    assert ERROR_MESSAGE in (failed.error or "") and store.result(failed.task_id) is None  # never 'ECHO'
    assert answered.state == "success", task_log(store, answered.task_id)
    assert stored_result(store, answered.task_id).text == answer_for(prompts[1])


@pytest.mark.asyncio
async def test_streamlit_page_session_login_survives_the_browser_recycle_count(
        streamlit_app: ChatApp, store: Store, data_dir: Path) -> None:
    config = app_on_store(streamlit_app, data_dir, store)
    config.app.browser_recycle_after = 1  # a recycle would be due after every task
    assert (await check_site("streamlit", "acct-a", config, data_dir, store)).login_state == "needs_login"
    providers, web = web_lane(data_dir, "streamlit", config)
    in_lane: list[LoginResult] = []
    prompts = ["one", "two", "three"]
    tasks = await run_batch(store, config, data_dir, [app_task("streamlit", p) for p in prompts], web.clock,
                            providers=providers, during=logs_in_when_the_lane_waits(web, store, in_lane))

    assert in_lane[0].ok, in_lane[0].message
    assert [t.state for t in tasks] == ["success"] * 3, [task_log(store, t.task_id) for t in tasks]
    logs = "".join(task_log(store, t.task_id) for t in tasks)
    assert "not recycling the browser after 1 tasks" in logs and "recycling the browser after" not in logs.replace(
        "not recycling the browser after", "")
