"""The wall between the core and Qt: nothing outside mediaassist/ui may import Qt."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import mediaassist


def test_core_providers_and_cli_never_import_qt() -> None:
    modules = [m.name for m in pkgutil.walk_packages(mediaassist.__path__, "mediaassist.")
               if not m.name.startswith("mediaassist.ui") and m.name != "mediaassist.__main__"]
    assert "mediaassist.core.scheduler" in modules and "mediaassist.providers.web" in modules
    code = ("import importlib, sys\n"
            f"for name in {modules!r}:\n"
            "    importlib.import_module(name)\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6', 'qasync')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_core_never_imports_a_provider_or_a_demo_server() -> None:
    core = [m.name for m in pkgutil.walk_packages(mediaassist.__path__, "mediaassist.")
            if m.name.startswith("mediaassist.core")]
    assert "mediaassist.core.lane_api" in core and "mediaassist.core.scheduler" in core
    code = ("import importlib, sys\n"
            f"for name in {core!r}:\n"
            "    importlib.import_module(name)\n"
            "print(sorted(m for m in sys.modules if m.startswith(('mediaassist.providers', 'mediaassist.demo'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
