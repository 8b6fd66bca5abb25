"""`packaging/setup.sh` on a clean clone installs the app only (issue 27 item 7): no test tools,
no Qt Multimedia unless asked, no setuptools banner on the terminal, and it says how big the
venv is. Slow (a whole install): the wheels come from the machine's pip configuration."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_clean_clone_sets_up_the_app_without_the_test_tools(tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True, timeout=120)
    done = subprocess.run(["packaging/setup.sh"], cwd=clone, capture_output=True, text=True, timeout=840,
                          check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    print(done.stderr)  # the size line, for the record (pytest -s)
    assert "setup: .venv holds " in done.stderr
    assert "Please be careful" not in done.stderr and "Warning" not in done.stderr, done.stderr
    installed = subprocess.run([str(clone / ".venv/bin/python"), "-m", "pip", "list", "--format=freeze"],
                               capture_output=True, text=True, check=True, timeout=60).stdout.lower()
    assert "pyside6-essentials==" in installed.replace("_", "-") and "playwright==" in installed
    for tool in ("pytest", "mypy", "ruff", "gradio", "streamlit", "pyside6-addons", "psycopg2"):
        assert f"{tool}==" not in installed.replace("_", "-"), tool
    assert (clone / ".venv/bin/mediaassist").exists()
