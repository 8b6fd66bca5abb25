"""Fast starts, as behaviour: what a start imports, read from ``python -X importtime`` of a real
process (never a timing; bench/bench_startup.py measures the times)."""

from __future__ import annotations

import os
from pathlib import Path

from tests.helpers import cli

HEAVY = ("PySide6", "shiboken6", "qasync", "playwright", "httpx", "peewee", "openpyxl")


def imported(*args: str, env: dict[str, str] | None = None) -> set[str]:
    """The modules a ``python -X importtime -m mediaassist ARGS`` process imported."""
    result = cli(*args, env={"PYTHONPROFILEIMPORTTIME": "1", **(env or {})})
    lines = [line for line in result.stderr.splitlines() if line.startswith("import time:")]
    assert lines, result.stderr[-2000:]
    return {line.rsplit("|", 1)[1].strip() for line in lines[1:]}  # the first line is the header


def under(modules: set[str], *prefixes: str) -> set[str]:
    return {m for m in modules if m.split(".")[0] in prefixes or m.startswith(tuple(p + "." for p in prefixes))}


def test_version_and_help_import_no_qt_browser_http_client_or_database() -> None:
    for args in (["--version"], ["--help"], ["run", "--help"]):
        modules = imported(*args)
        assert "mediaassist.entry" in modules  # the probe sees our imports at all
        assert under(modules, *HEAVY) == set(), args
        assert under(modules, "mediaassist.ui", "mediaassist.cli", "mediaassist.runtime", "mediaassist.providers",
                     "mediaassist.demo", "mediaassist.demo_servers") == set(), args


def test_version_imports_no_dataclasses_and_no_resource_lookup() -> None:
    """The 23 ms that took ``--version`` from 1.6x to 2.4x ``python -c pass`` (docs/performance-startup.md)."""
    modules = imported("--version")
    assert "mediaassist.core.messages" in modules
    assert under(modules, "dataclasses", "inspect", "platformdirs", "mediaassist.core.paths") == set()
    assert "importlib.resources" not in modules


def test_a_headless_command_loads_no_qt_no_provider_and_no_demo_server(tmp_path: Path) -> None:
    for args in (["status"], ["cancel", "nope"], ["lanes", "pause", "api:nope"]):
        modules = imported(*args, "--data-dir", str(tmp_path / "data"))
        assert "mediaassist.cli" in modules and "peewee" in modules  # it did open the store
        assert under(modules, "PySide6", "qasync", "playwright", "httpx", "mediaassist.ui", "mediaassist.providers",
                     "mediaassist.demo", "mediaassist.demo_servers") == set(), args


def test_the_window_paints_before_the_store_providers_browsers_or_demo_servers_load(tmp_path: Path) -> None:
    env = {"MEDIAASSIST_STARTUP_PROBE": "1", "QT_QPA_PLATFORM": os.environ.get("QT_QPA_PLATFORM", "offscreen")}
    modules = imported("--demo", "--data-dir", str(tmp_path / "data"), env=env)
    assert "mediaassist.ui.app" in modules and "PySide6.QtWidgets" in modules  # the start window
    assert under(modules, "playwright", "httpx", "peewee", "mediaassist.runtime", "mediaassist.providers",
                 "mediaassist.demo", "mediaassist.demo_servers", "mediaassist.ui.main_window") == set()
