"""``sites learn`` alone on a ChatGPT-like app nobody here wrote for (tests/fixtures/webui/
tiptap_chat.py: an e-mail login, a "What's new" pop-up, a TipTap composer with an empty-state
placeholder, hover tooltips, streamed answers, an error toast inside a shadow root): the learned
profile, as written, runs a batch exactly -- every prompt reaches the model byte for byte with
one model call each, a pop-up shown again mid-batch is closed, an error is never a success."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from mediaassist.core.scheduler import Scheduler
from mediaassist.core.store import Store
from mediaassist.providers.web.learn import PASSWORD_BOX, learn_site
from mediaassist.providers.web.site import load_site
from tests.fixtures.webui.tiptap_chat import ERROR_TOAST, answer_for
from tests.harness import run_batch, task_log, wait_until
from tests.web_helpers import WEB_SPEED, needs_chromium, stored_result
from tests.webui_helpers import ChatApp, app_config, app_task, tiptap_learn_operator

pytestmark = [pytest.mark.browser, needs_chromium]

PROMPTS = ["请用一句话介绍你自己。", "first line\n\nafter a blank line\n  indented line", "x" * 1990 + " end.",
           "emoji 😀🎉 and ümlauts", "a plain question"]


@pytest.mark.asyncio
async def test_tiptap_sites_learn_alone_runs_a_batch_exactly_with_a_pop_up_mid_batch(
        tiptap_app: ChatApp, store: Store, data_dir: Path) -> None:
    config = app_config("learned-tiptap")
    store.sync_accounts(config.accounts)
    said: list[str] = []
    result = await learn_site("learned-tiptap", tiptap_app.base_url + "/", "acct-a", config, data_dir,
                              headless=True, operator=tiptap_learn_operator, say=said.append, store=store)
    profile = load_site("learned-tiptap", data_dir)

    async def pop_up_mid_batch(_sched: Scheduler, ids: list[str]) -> None:
        await wait_until(lambda: sum(t.state == "success" for t in store.tasks(["b1"])) >= 2, timeout=120)
        await asyncio.to_thread(httpx.post, tiptap_app.base_url + "/_control", json={"whats_new": True})

    batch = [app_task("learned-tiptap", p) for p in [*PROMPTS, "boom [error]"]]
    tasks = await run_batch(store, config, data_dir, batch, WEB_SPEED, during=pop_up_mid_batch)
    generations = httpx.get(tiptap_app.base_url + "/_control").json()["generations"]
    by_prompt = {t.prompt: t for t in tasks}

    # The composer's editable root, never the empty-state paragraph; no tooltip as an indicator
    # (the stop button's tooltip shows for the whole answer and fades out after it: without the
    # hover-artefact rule it was learned as the generating indicator).
    editor_root = ['div[aria-label="Message"]']  # the contenteditable element itself
    assert profile.selectors["prompt"] == editor_root and profile.selectors["logged_in"] == editor_root
    assert not any("tooltip" in s or "is-empty" in s or "data-state" in s
                   for role in profile.selectors.values() for s in role), result.profile_text
    assert profile.selectors["generating"][0] == 'button[data-testid="stop-button"]', result.profile_text
    assert profile.selectors["dismiss"] == ['button[aria-label="Close"]'], result.profile_text
    assert (profile.login_url or "").endswith("/auth/login") and profile.selectors["logged_out"] == [PASSWORD_BOX]
    assert profile.prompt_entry in ("type", "fill") and "error" not in profile.selectors
    assert result.check.usable and any("ran a test turn of its own" in line for line in said)
    for prompt in PROMPTS:
        task = by_prompt[prompt]
        assert task.state == "success", task_log(store, task.task_id)
        assert stored_result(store, task.task_id).text == answer_for(prompt)
        assert [g["prompt"].encode() for g in generations].count(prompt.encode()) == 1  # one model call, exact
    assert any("dismissed 1 pop-up" in task_log(store, by_prompt[p].task_id) for p in PROMPTS[2:])
    failed = by_prompt["boom [error]"]
    assert (failed.state, failed.error_kind) == ("failed", "provider"), task_log(store, failed.task_id)
    assert ERROR_TOAST in (failed.error or "") and store.result(failed.task_id) is None
