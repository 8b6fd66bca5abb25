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

SIM_CONFIG = """
[[providers]]
name = "sim-api"
kind = "api"
type = "simulated"
concurrency = 3
min_duration_s = 20
max_duration_s = 40

[[providers]]
name = "sim-poll"
kind = "poll"
type = "simulated"
max_polling_tasks = 4
min_duration_s = 30
max_duration_s = 60

[[accounts]]
name = "alice"
site = "simulated"

[[accounts]]
name = "bob"
site = "simulated"

[[models]]
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
