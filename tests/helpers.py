"""Small helpers shared by the tests (no fixtures here: see conftest.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from mediaassist.core.config import AppConfig, parse_config

def sim_config_text(api_concurrency: int = 3, api_s: tuple[float, float] = (20, 40), poll_limit: int = 4,
                    poll_s: tuple[float, float] = (30, 60), accounts: tuple[str, ...] = ("alice", "bob")) -> str:
    """A config on simulated providers: models writer (api), video (poll), reasoner (web)."""
    account_tables = "".join(f'[[accounts]]\nname = "{name}"\nsite = "simulated"\n\n' for name in accounts)
    return f"""
[[providers]]
name = "sim-api"
kind = "api"
type = "simulated"
concurrency = {api_concurrency}
min_duration_s = {api_s[0]}
max_duration_s = {api_s[1]}

[[providers]]
name = "sim-poll"
kind = "poll"
type = "simulated"
max_polling_tasks = {poll_limit}
min_duration_s = {poll_s[0]}
max_duration_s = {poll_s[1]}

{account_tables}[[models]]
name = "writer"
kind = "api"
provider = "sim-api"

[[models]]
name = "video"
kind = "poll"
provider = "sim-poll"

[[models]]
name = "reasoner"
kind = "web"
site = "simulated"
"""


SIM_CONFIG = sim_config_text()


def sim_config() -> AppConfig:
    import tomllib

    return parse_config(tomllib.loads(SIM_CONFIG))


def write_config(path: Path, text: str = SIM_CONFIG) -> Path:
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    path.chmod(0o600)
    return path


def write_csv(path: Path, rows: list[dict[str, Any]]) -> Path:
    import csv

    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def cli(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run ``python -m mediaassist ARGS`` as a real process."""
    return subprocess.run([sys.executable, "-m", "mediaassist", *args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})})


def cli_popen(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "mediaassist", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})})


def parse_json_output(stdout: str) -> dict[str, Any]:
    return json.loads(stdout)
