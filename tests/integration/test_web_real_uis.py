"""The long remainder on the real third-party chat UIs (marker ``webui``, run with
``packaging/setup.sh --test -m webui``): ~3,000-character prompts on both apps, and a Gradio
server killed mid-answer. The core set (errors, recovery, logins, logout, ``sites learn``) runs
in every CI run: tests/integration/test_webui_gradio.py and tests/integration/test_webui_streamlit.py."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from mediaassist.core.clock import Clock
from mediaassist.core.store import Store
from mediaassist.providers.web import LoginResult, check_site
from tests.fixtures.webui.answers import answer_for
from tests.harness import run_batch, task_log, wait_until
from tests.web_helpers import WEB_SPEED, needs_chromium, stored_result
from tests.webui_helpers import (
    ChatApp,
    app_on_store,
    app_task,
    chat_app,
    logged_in_to_gradio,
    logs_in_when_the_lane_waits,
    web_lane,
)

pytestmark = [pytest.mark.browser, pytest.mark.webui, needs_chromium]

LONG_PROMPT = "long: " + " ".join(f"word{i}" for i in range(420))  # ~3,000 characters


@pytest.mark.asyncio
async def test_gradio_long_prompt_arrives_whole_and_its_answer_is_exact(
        gradio_app: ChatApp, store: Store, data_dir: Path) -> None:
    config = await logged_in_to_gradio(gradio_app, data_dir)
    tasks = await run_batch(store, config, data_dir, [app_task("gradio", LONG_PROMPT)], WEB_SPEED)

    assert tasks[0].state == "success", task_log(store, tasks[0].task_id)
    assert stored_result(store, tasks[0].task_id).text == answer_for(LONG_PROMPT)


@pytest.mark.asyncio
async def test_streamlit_long_prompt_arrives_whole_and_its_answer_is_exact(
        streamlit_app: ChatApp, store: Store, data_dir: Path) -> None:
    config = app_on_store(streamlit_app, data_dir, store)
    assert (await check_site("streamlit", "acct-a", config, data_dir, store)).login_state == "needs_login"
    providers, web = web_lane(data_dir, "streamlit", config)
    in_lane: list[LoginResult] = []
    tasks = await run_batch(store, config, data_dir, [app_task("streamlit", LONG_PROMPT)], web.clock,
                            providers=providers, during=logs_in_when_the_lane_waits(web, store, in_lane))

    assert in_lane[0].ok, in_lane[0].message
    assert tasks[0].state == "success", task_log(store, tasks[0].task_id)
    assert stored_result(store, tasks[0].task_id).text == answer_for(LONG_PROMPT)


@pytest.mark.asyncio
async def test_gradio_server_killed_mid_answer_fails_never_succeeds(
        store: Store, data_dir: Path, tmp_path: Path) -> None:
    with chat_app("gradio", tmp_path) as app:
        config = await logged_in_to_gradio(app, data_dir)

        async def kill_while_streaming(_sched: object, _ids: list[str]) -> None:
            await wait_until(lambda: "the answer started" in "".join(
                line.line for t in store.tasks(["b1"]) for line in store.logs(t.task_id)), timeout=60)
            await asyncio.to_thread(app.kill)

        tasks = await run_batch(store, config, data_dir, [app_task("gradio", "cut off [slow]")], Clock(speed=50),
                                during=kill_while_streaming)

    log = task_log(store, tasks[0].task_id)
    assert tasks[0].state == "failed" and tasks[0].error_kind in ("provider", "network"), log
    assert store.result(tasks[0].task_id) is None
