"""The wheel works without a checkout: built, installed into a fresh venv, run from elsewhere."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from tests.helpers import write_csv

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.timeout(900)]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with only the built wheel (and its dependencies) installed; its bin dir."""
    base = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(base / "dist"),
                    str(ROOT)], check=True, capture_output=True, env=_clean_env())
    wheel = next((base / "dist").glob("mediaassist-*.whl"))
    venv.create(base / "venv", with_pip=True)
    bin_dir = base / "venv" / "bin"
    # A clean environment: with the checkout on PYTHONPATH pip would think mediaassist installed.
    subprocess.run([str(bin_dir / "pip"), "install", "-q", str(wheel)], check=True, capture_output=True,
                   env=_clean_env())
    return bin_dir


def _clean_env() -> dict[str, str]:
    """No PYTHONPATH or checkout on the path: only what the wheel installed can be imported."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MEDIAASSIST_HOME")}
    env["QT_QPA_PLATFORM"] = "offscreen"
    return env


SEED_ROWS = 10  # web and API rows, multi-line and Chinese prompts: tests/integration/test_cli.py runs all 40


def test_wheel_runs_the_demo_batch_from_another_folder(installed: Path, tmp_path: Path) -> None:
    seed = tmp_path / "seed-batch.csv"
    with (ROOT / "resources" / "examples" / "seed-batch.csv").open(encoding="utf-8") as full:
        rows = list(csv.DictReader(full))[:SEED_ROWS]
    write_csv(seed, rows)
    version = subprocess.run([str(installed / "mediaassist"), "--version"], cwd=tmp_path, env=_clean_env(),
                             capture_output=True, text=True, check=True)
    assert version.stdout.startswith("mediaassist ")
    run = subprocess.run([str(installed / "mediaassist"), "run", seed.name, "--demo", "--speed", "60",
                          "--data-dir", str(tmp_path / "data"), "--json"],
                         cwd=tmp_path, env=_clean_env(), capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    summary = json.loads(run.stdout)
    assert summary["total"] == SEED_ROWS and summary["success"] == SEED_ROWS
    assert {t["model"] for t in summary["tasks"]} == {"demo-writer", "demo-reasoner"}
    # The package the venv ran is the installed copy, not this checkout.
    where = subprocess.run([str(installed / "python"), "-c", "import mediaassist; print(mediaassist.__file__)"],
                           cwd=tmp_path, env=_clean_env(), capture_output=True, text=True, check=True)
    assert str(ROOT) not in where.stdout


def test_wheel_speaks_chinese_under_a_chinese_locale(installed: Path, tmp_path: Path) -> None:
    """The core's compiled catalogue (resources/translations/core_zh_CN.mo) travels in the wheel."""
    bad_rows = tmp_path / "bad-rows.csv"
    bad_rows.write_bytes((ROOT / "resources" / "examples" / "bad-rows.csv").read_bytes())
    run = subprocess.run([str(installed / "mediaassist"), "run", bad_rows.name, "--demo", "--speed", "60",
                          "--data-dir", str(tmp_path / "data")], cwd=tmp_path, capture_output=True, text=True,
                         env={**_clean_env(), "LANG": "zh_CN.UTF-8", "LC_ALL": "", "LC_MESSAGES": ""}, timeout=600)
    assert run.returncode == 2, run.stderr[-2000:]
    assert "bad-rows.csv：第 6 行：priority 'high' 不是整数" in run.stderr


def test_wheel_starts_the_window(installed: Path, tmp_path: Path) -> None:
    smoke = subprocess.run([str(installed / "python"), str(ROOT / "packaging" / "smoke_window.py"),
                            str(tmp_path / "data")], cwd=tmp_path, env=_clean_env(),
                           capture_output=True, text=True, timeout=300)
    assert smoke.returncode == 0, smoke.stderr[-2000:]
    assert "window shown: 'mediaassist" in smoke.stdout
