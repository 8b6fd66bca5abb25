"""``sites learn``: a profile written from three clicks (driven by Playwright here, as the operator
would click), then used to run a batch on the same site."""

from __future__ import annotations

from pathlib import Path

import pytest

from mediaassist.core import paths
from mediaassist.core.errors import ConfigError
from mediaassist.core.store import Store
from mediaassist.providers.web.learn import Shown, Watch, learn_site
from mediaassist.providers.web.site import load_site
from tests.harness import run_batch
from tests.web_helpers import WEB_SPEED, demo_operator, demo_site, log_in, needs_chromium, stored_result, web_config
from tests.webui_helpers import app_config, app_task

pytestmark = [pytest.mark.browser, needs_chromium]


@pytest.mark.asyncio
async def test_learned_profile_has_robust_selectors_and_runs_a_batch(store: Store, data_dir: Path) -> None:
    config = web_config()
    lines: list[str] = []
    with demo_site(data_dir, duration_s=(1.0, 1.0)) as site:
        await log_in(config, data_dir, site)
        result = await learn_site("learned", f"{site.base_url}/chat", "acct-a", config, data_dir, headless=True,
                                  operator=demo_operator, say=lines.append)
        tasks = await run_batch(store, app_config("learned"), data_dir,
                                [app_task("learned", f"question {i}") for i in range(2)], WEB_SPEED)
        answers = {g["prompt"]: g["answer"] for g in site.snapshot()["generations"]}

    profile = load_site("learned", data_dir)
    assert result.path == paths.config_dir() / "sites" / "learned.toml"
    assert profile.selectors["prompt"] == ["#prompt"] and profile.selectors["send"] == ["#send"]
    assert profile.selectors["answer"] == ["div.answer"]
    assert profile.selectors["generating"] == ["#stop"] and profile.selectors["stop"] == ["#stop"]
    assert profile.selectors["done"] == ["div.answer-actions"]
    assert not any(">" in s or "nth" in s for role in profile.selectors.values() for s in role)
    assert result.check.usable and result.check.login_state == "ok"
    assert any("click the prompt box" in line for line in lines)
    assert [t.state for t in tasks] == ["success"] * 2
    for task in tasks:
        assert stored_result(store, task.task_id).text == answers[task.prompt]


@pytest.mark.asyncio
async def test_learn_refuses_to_overwrite_and_bad_names(data_dir: Path) -> None:
    config = web_config()
    (paths.config_dir() / "sites").mkdir(parents=True)
    (paths.config_dir() / "sites" / "taken.toml").write_text("name = 'taken'\n")
    with pytest.raises(ConfigError, match="exists; pass --force"):
        await learn_site("taken", "http://127.0.0.1:1/", "acct-a", config, data_dir, headless=True)
    with pytest.raises(ConfigError, match="letters, digits"):
        await learn_site("../evil", "http://127.0.0.1:1/", "acct-a", config, data_dir, headless=True)


def test_generating_is_the_longest_lived_indicator_then_what_covers_more_of_the_turn() -> None:
    # A progress bar that flickers first, a stop button for the whole turn, a skeleton still
    # rendering after it, and a tooltip whose selector also matches a button shown while idle.
    shown = [Shown(0.1, 0.3, True, ["div.eta-bar"]),
             Shown(0.2, 2.0, True, ["button#stop"]),
             Shown(1.8, 2.6, True, ["div.skeleton"]),
             Shown(0.2, 0.4, True, ["button.header"]),
             Shown(1.0, 2.6, False, ["div.answer"])]
    watch = Watch({"button.header": 1}, {"button.header": 1, "div.answer": 1}, shown)
    # Under load a skeleton may outlive a short status widget: both are kept, the longer first.
    slow_render = Watch({}, {}, [Shown(0.6, 1.5, True, ["div.status"]), Shown(1.2, 3.0, True, ["div.skeleton"])])

    assert watch.generating() == (["button#stop", "div.skeleton"], 2.6)
    assert slow_render.generating() == (["div.skeleton", "div.status"], 3.0)
    assert watch.arrived_late(1.0) == ["div.answer"]
    assert Watch({}, {}, [Shown(0.2, 0.5, True, ["button.header"])]).generating() == (["button.header"], 0.5)
    assert Watch({"button.header": 1}, {}, [Shown(0.2, 0.5, True, ["button.header"])]).generating() == ([], 0.0)
