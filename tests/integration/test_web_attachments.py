"""Web models with ``inputs``: task files attached through the page's own file input, real Chromium
against the demo chat site, which checks each upload by content as a real site does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mediaassist.core.clock import Clock
from mediaassist.core.config import AppConfig, InputSpec, ModelConfig
from mediaassist.core.errors import ConfigError
from mediaassist.core.media import check_local_input
from mediaassist.core.store import Store
from mediaassist.demo_servers.chat_site import DEMO_SITE
from mediaassist.providers.registry import build_providers
from tests.harness import run_batch, task_log
from tests.media_helpers import MAGIC, png_bytes
from tests.web_helpers import WEB_SPEED, demo_site, edit_profile, log_in, needs_chromium, web_config, web_task

pytestmark = [pytest.mark.browser, needs_chromium]
VISION = "vision"
SPEC = InputSpec(name="image", media=("image",), multiple=True)


def _vision_config() -> AppConfig:
    config = web_config()
    config.models.append(ModelConfig(name=VISION, kind="web", site=DEMO_SITE, inputs={"image": SPEC}))
    return config


def _input(path: Path, data: bytes) -> dict[str, Any]:
    path.write_bytes(data)
    return check_local_input(str(path), path.parent, SPEC, None)


@pytest.mark.asyncio
async def test_images_are_attached_through_the_page_and_a_refused_file_fails_clearly(
        store: Store, data_dir: Path, tmp_path: Path) -> None:
    config = _vision_config()
    first, second = _input(tmp_path / "a.png", png_bytes(shade=1)), _input(tmp_path / "b.png", png_bytes(shade=2))
    webp = _input(tmp_path / "c.webp", MAGIC["image/webp"])
    changed = _input(tmp_path / "d.png", png_bytes(shade=3))
    with demo_site(data_dir) as site:
        await log_in(config, data_dir, site)
        (tmp_path / "d.png").write_bytes(png_bytes(width=9, shade=3))  # edited after import
        tasks = await run_batch(store, config, data_dir, [
            web_task("describe both", model=VISION, inputs={"image": [first, second]}),
            web_task("a webp", model=VISION, inputs={"image": [webp]}),
            web_task("edited since import", model=VISION, inputs={"image": [changed]}),
        ], WEB_SPEED)
        gens = {g["prompt"]: g for g in site.snapshot()["generations"]}
    ok, refused, edited = tasks

    assert ok.state == "success", ok.error
    assert [a["sha256"] for a in gens["describe both"]["attachments"]] == [first["sha256"], second["sha256"]]
    assert "attached a.png, b.png" in task_log(store, ok.task_id)
    assert (refused.state, refused.error_kind, refused.attempt) == ("failed", "provider", 1)
    refused_error = refused.error or ""
    assert "rejected the attachment c.webp" in refused_error and "not a supported image" in refused_error
    assert (edited.state, edited.error_kind) == ("failed", "bad_input")
    assert "changed since import" in (edited.error or "")
    assert "edited since import" not in gens and "a webp" not in gens  # nothing was sent


def test_a_model_with_inputs_needs_a_file_input_in_its_site_profile(data_dir: Path) -> None:
    config = _vision_config()
    with demo_site(data_dir):
        edit_profile(data_dir, file_input=None)
        with pytest.raises(ConfigError, match=r"selectors\.file_input: required by a web model with inputs"):
            build_providers(config, Clock(), data_dir)
