"""Prompts arrive at the model as written, or are refused before sending: each ``prompt_entry``
on a TipTap (ProseMirror) composer, counted byte for byte by the demo chat site's server."""

from __future__ import annotations

from pathlib import Path

import pytest

from mediaassist.core.store import Store, Task
from tests.harness import run_batch, task_log
from tests.web_helpers import (
    EDITOR_BUNDLE,
    PLAIN_MODEL,
    WEB_SPEED,
    demo_site,
    edit_profile,
    log_in,
    needs_chromium,
    web_config,
    web_task,
)

pytestmark = [pytest.mark.browser, needs_chromium]
BLANK_LINE = "first line\n\nafter a blank line\n  indented 第二行 😀"


@pytest.mark.asyncio
async def test_a_blank_line_prompt_reaches_the_model_byte_for_byte_or_is_refused_naming_the_difference(
        store: Store, data_dir: Path) -> None:
    config = web_config()
    outcomes: dict[str | None, Task] = {}
    ways = ("type", "fill", "paste", None)  # None: the profile names none, the first exact way wins
    with demo_site(data_dir, editor_bundle=EDITOR_BUNDLE, duration_s=(0.3, 0.3)) as site:
        edit_profile(data_dir, send='["Enter"]')
        await log_in(config, data_dir, site)
        for number, way in enumerate(ways):
            edit_profile(data_dir, prompt_entry=f'"{way}"' if way else None)
            tasks = await run_batch(store, config, data_dir, [web_task(f"{BLANK_LINE} #{number}", model=PLAIN_MODEL)],
                                    WEB_SPEED, batch=f"b{number}")
            outcomes[way] = tasks[0]
        sent = [g["prompt"] for g in site.snapshot()["generations"]]

    for number, way in enumerate(ways):
        if way == "paste":
            continue
        assert outcomes[way].state == "success", task_log(store, outcomes[way].task_id)
        assert f"{BLANK_LINE} #{number}".encode() in [p.encode() for p in sent]
    refused = outcomes["paste"]  # ProseMirror's plain-text paste folds the blank line away
    assert (refused.state, refused.error_kind) == ("failed", "provider")
    assert "cannot be entered verbatim, not sent" in (refused.error or "")
    assert "at line 2, column 1" in (refused.error or "")
    assert not any(p.endswith("#2") for p in sent)  # never sent, in any attempt
    assert len(sent) == 3
