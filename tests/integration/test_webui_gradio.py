"""The core of the web lane on a Gradio ChatInterface behind ``auth=`` (a server nobody here
wrote, one per module), driven by its shipped site profile alone, then by a learned one: the
login lasts across launches, answers come back as the Markdown written, an error fails its task
and does not block the account, a logout is needs_login, and ``sites learn`` writes a profile
that runs a batch. Short answers: the long and slow cases are in test_web_real_uis.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from mediaassist.core.store import Store
from mediaassist.providers.web import check_site, login_account
from mediaassist.providers.web.browser import profile_dir
from mediaassist.providers.web.learn import learn_site
from mediaassist.providers.web.session import session_file
from mediaassist.providers.web.site import load_site
from tests.fixtures.webui.answers import ERROR_MESSAGE, answer_for
from tests.harness import run_batch, task_log
from tests.web_helpers import WEB_SPEED, needs_chromium, stored_account, stored_result
from tests.webui_helpers import (
    LEARNED_BATCH,
    MULTI_LINE,
    ChatApp,
    app_config,
    app_on_store,
    app_task,
    gradio_learn_operator,
    gradio_login,
    log_out_of_gradio,
    logged_in_to_gradio,
)

pytestmark = [pytest.mark.browser, needs_chromium]


@pytest.mark.asyncio
async def test_gradio_login_lasts_an_error_fails_without_blocking_the_account_and_a_logout_is_needs_login(
        gradio_app: ChatApp, store: Store, data_dir: Path) -> None:
    config = app_on_store(gradio_app, data_dir, store)
    before = await check_site("gradio", "acct-a", config, data_dir, store)
    state_before = stored_account(store, "acct-a").login_state
    login = await login_account("acct-a", config, data_dir, store, headless=True, timeout_s=30,
                                operator=gradio_login)
    prompts = [MULTI_LINE, "this fails [error]", "after the error"]
    tasks = await run_batch(store, config, data_dir, [app_task("gradio", p) for p in prompts], WEB_SPEED)
    await log_out_of_gradio(gradio_app, "acct-a", config, data_dir)
    after_logout = await check_site("gradio", "acct-a", config, data_dir, store)
    state_after_logout = stored_account(store, "acct-a").login_state
    out = await run_batch(store, config, data_dir, [app_task("gradio", "while logged out")], WEB_SPEED, batch="b2")
    by_prompt = {t.prompt: t for t in tasks}
    failed = by_prompt["this fails [error]"]

    assert (before.login_state, state_before) == ("needs_login", "needs_login")  # sites check records it
    assert login.ok, login.message  # including the check after a relaunch: session cookies kept
    assert session_file(profile_dir(data_dir, "acct-a")).is_file()
    assert "restored" in task_log(store, by_prompt[MULTI_LINE].task_id)  # the fresh browser got its cookies back
    for prompt in (MULTI_LINE, "after the error"):  # the Markdown as written, also after the stuck page
        assert by_prompt[prompt].state == "success", task_log(store, by_prompt[prompt].task_id)
        assert stored_result(store, by_prompt[prompt].task_id).text == answer_for(prompt)
    assert (failed.state, failed.error_kind) == ("failed", "provider")  # never a success with 'ECHO'
    assert ERROR_MESSAGE in (failed.error or "") and store.result(failed.task_id) is None
    assert (after_logout.login_state, state_after_logout) == ("needs_login", "needs_login")
    assert out[0].state == "pending"  # the flagged account's task waits for a login


@pytest.mark.asyncio
async def test_gradio_sites_learn_writes_a_profile_that_runs_a_batch_and_learns_the_error_toast(
        gradio_app: ChatApp, store: Store, data_dir: Path) -> None:
    config = await logged_in_to_gradio(gradio_app, data_dir)
    lines: list[str] = []
    result = await learn_site("learned-gradio", gradio_app.base_url + "/", "acct-a", config, data_dir,
                              headless=True, operator=gradio_learn_operator, say=lines.append, error_turn=True)
    called_before = len(gradio_app.calls())
    prompts = [*LEARNED_BATCH, "this fails [error]"]
    tasks = await run_batch(store, app_config("learned-gradio"), data_dir,
                            [app_task("learned-gradio", p) for p in prompts], WEB_SPEED)
    *answered, failed = tasks
    profile = load_site("learned-gradio", data_dir)

    assert result.check.usable, result.profile_text
    assert 'generating = ["button[data-testid=\\"stop-button\\"]"' in result.profile_text, result.profile_text
    assert "navigation" not in result.profile_text  # the login (cookies) survives a reload
    # the toast the failing turn showed, by a stable selector (no state class such as .error)
    assert profile.selectors.get("error", [""])[0] == "div.toast-item", (result.profile_text, lines)
    assert [t.state for t in answered] == ["success"] * len(LEARNED_BATCH), result.profile_text
    for task, prompt in zip(answered, LEARNED_BATCH, strict=True):  # the rendered text (a learned profile reads text)
        assert (stored_result(store, task.task_id).text or "").startswith(f"Echo of {len(prompt)} characters:")
    calls = gradio_app.calls()[called_before:]  # the app serves every test of the module
    assert [calls.count(p) for p in LEARNED_BATCH] == [1] * len(LEARNED_BATCH), calls  # one call each, exact
    # the partial answer ('ECHO'), then the toast: a failure with the page's words, by the learned role
    assert (failed.state, failed.error_kind) == ("failed", "provider"), task_log(store, failed.task_id)
    assert ERROR_MESSAGE in (failed.error or "") and store.result(failed.task_id) is None


@pytest.mark.asyncio
async def test_gradio_without_an_error_role_a_partial_answer_then_the_error_toast_fails(
        gradio_app: ChatApp, store: Store, data_dir: Path) -> None:
    # The profile as a learned one is: no error role, no error_texts, the default banners.
    config = await logged_in_to_gradio(gradio_app, data_dir, without=("error", "error_texts", "banner"))
    prompts = ["this fails [error]", "what does error 500 mean? it failed again"]
    tasks = await run_batch(store, config, data_dir, [app_task("gradio", p) for p in prompts], WEB_SPEED)
    failed, answered = tasks

    assert (failed.state, failed.error_kind) == ("failed", "provider"), task_log(store, failed.task_id)
    assert ERROR_MESSAGE in (failed.error or "") and store.result(failed.task_id) is None  # never 'ECHO'
    assert answered.state == "success", task_log(store, answered.task_id)  # its own words are no error
    assert stored_result(store, answered.task_id).text == answer_for(prompts[1])
