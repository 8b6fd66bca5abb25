"""A `run` beside the window (issue 27 item 9): the web accounts whose browser the window holds
are left to it, said once at info level, with no warning (a demo `run` used to try the demo
logins and warn that the profile was in use)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from mediaassist.providers.web.browser import profile_dir
from mediaassist.providers.web.oslock import ProfileLock
from tests.helpers import sim_config_text, write_config

ROOT = Path(__file__).resolve().parents[2]


def run_cli(tmp_path: Path, tasks: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    return subprocess.run([sys.executable, "-m", "mediaassist", "run", "-v", "--config", str(tmp_path / "config.toml"),
                           "--data-dir", str(tmp_path / "data"), "--speed", "50", str(tasks)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False)


def test_a_run_leaves_the_windows_accounts_to_it_and_says_so_once_at_info(tmp_path: Path) -> None:
    write_config(tmp_path / "config.toml", sim_config_text(api_s=(1, 1), accounts=("acct-a", "acct-b")))
    tasks = tmp_path / "tasks.csv"
    tasks.write_text("model,prompt\nwriter,one\nwriter,two\n", encoding="utf-8")
    locks = [ProfileLock(profile_dir(tmp_path / "data", name)) for name in ("acct-a", "acct-b")]
    for lock in locks:  # this process plays the window running both accounts' browsers
        lock.acquire()
    try:
        done = run_cli(tmp_path, tasks)
    finally:
        for lock in locks:
            lock.release()
    assert done.returncode == 0, done.stderr[-2000:]
    said = [line for line in done.stderr.splitlines() if "are run by the window" in line]
    assert said == [f"INFO mediaassist: web accounts are run by the window (process {os.getpid()}); "
                    "this run takes API and poll work"], done.stderr
    assert not [line for line in done.stderr.splitlines() if line.startswith(("WARNING", "ERROR"))], done.stderr
    assert "Traceback" not in done.stderr


def test_a_run_alone_takes_the_web_accounts_and_says_nothing_of_a_window(tmp_path: Path) -> None:
    write_config(tmp_path / "config.toml", sim_config_text(api_s=(1, 1), accounts=("acct-a",)))
    tasks = tmp_path / "tasks.csv"
    tasks.write_text("model,prompt\nreasoner,one\n", encoding="utf-8")
    done = run_cli(tmp_path, tasks)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "run by the window" not in done.stderr
