"""``mediaassist run`` killed with SIGKILL in the middle of a web task, then run again."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from mediaassist.core.config import load_config
from mediaassist.core.options import DB_NAME
from mediaassist.core.store import Store
from mediaassist.providers.web.browser import profile_dir
from mediaassist.providers.web.procs import is_browser_main, profile_processes
from tests.harness import wait_until
from tests.web_helpers import MODEL, demo_site, log_in, needs_chromium, stored_result

pytestmark = [pytest.mark.browser, needs_chromium]

CONFIG = f"""
[[accounts]]
name = "acct-a"
site = "demochat"

[[models]]
name = "{MODEL}"
kind = "web"
site = "demochat"
need_empty_prompt = true
"""


def _run_cli(config: Path, data_dir: Path, tasks: Path, output: Path) -> subprocess.Popen[bytes]:
    """Output goes to files (``output``, ``output.err``): a pipe would stay open in the orphaned
    browser after a kill -9."""
    with open(output, "wb") as out, open(f"{output}.err", "wb") as err:
        return subprocess.Popen(
            [sys.executable, "-m", "mediaassist", "run", str(tasks), "--config", str(config),
             "--data-dir", str(data_dir), "--json"], stdout=out, stderr=err)


@pytest.mark.asyncio
async def test_kill_9_during_a_web_task_then_rerun_reaps_the_orphan_and_retries_once(
        data_dir: Path, tmp_path: Path) -> None:
    config_path = tmp_path / "config.toml"
    config_path.write_text(CONFIG, encoding="utf-8")
    tasks_path = tmp_path / "tasks.jsonl"
    tasks_path.write_text(json.dumps({"task_id": "t-kill", "model": MODEL, "prompt": "survive a crash"}) + "\n",
                          encoding="utf-8")
    profile = profile_dir(data_dir, "acct-a")
    with demo_site(data_dir, duration_s=(4.0, 4.0)) as site:
        await log_in(load_config(config_path), data_dir, site)

        first = _run_cli(config_path, data_dir, tasks_path, tmp_path / "first.out")
        await wait_until(lambda: any(g["active"] for g in site.snapshot()["generations"]), timeout=60)
        browser = next(p for p in profile_processes(profile) if is_browser_main(p.cmdline()))
        try:
            # Freeze the browser first: a healthy Chromium exits by itself when its driver dies,
            # a hung one stays behind on the profile -- the orphan the next run must deal with.
            os.kill(browser.pid, signal.SIGSTOP)
            first.kill()
            first.wait(timeout=30)
            await wait_until(lambda: not any(g["active"] for g in site.snapshot()["generations"]), timeout=30)
            assert browser.is_running()

            second = _run_cli(config_path, data_dir, tasks_path, tmp_path / "second.out")
            await asyncio.to_thread(second.wait, timeout=120)
            server = site.snapshot()
        finally:
            if browser.is_running():
                browser.kill()
    assert second.returncode == 0, (tmp_path / "second.out.err").read_text(encoding="utf-8")
    summary = json.loads((tmp_path / "second.out").read_text(encoding="utf-8"))
    task = summary["tasks"][0]
    assert (summary["total"], task["task_id"], task["state"], task["attempt"]) == (1, "t-kill", "success", 2)
    assert not browser.is_running() or browser.status() == "zombie"
    store = Store(data_dir / DB_NAME)
    try:
        log = "\n".join(line.line for line in store.logs("t-kill"))
        assert stored_result(store, "t-kill").text == server["generations"][-1]["answer"]
    finally:
        store.close()
    assert "died; attempt 1 lost" in log
    assert f"leftover Chromium process(es) on this profile: {browser.pid} (browser)" in log
    assert [g["prompt"] for g in server["generations"]] == ["survive a crash"] * 2  # sent once per attempt
    assert server["violations"] == []
