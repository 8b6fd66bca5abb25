"""The walls between layers: nothing outside mediaassist/ui may import Qt, and the core imports no
provider and no demo server."""

from __future__ import annotations

import ast
import pkgutil
import subprocess
import sys

import mediaassist


def loaded_after_importing(modules: list[str], prefixes: tuple[str, ...]) -> list[str]:
    """The modules starting with one of ``prefixes`` that a fresh interpreter has loaded after
    importing ``modules``."""
    code = ("import importlib, sys\n"
            f"for name in {modules!r}:\n"
            "    importlib.import_module(name)\n"
            f"print(sorted(m for m in sys.modules if m.startswith({prefixes!r})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return ast.literal_eval(out.stdout)  # a printed list of strings


def package_modules() -> list[str]:
    return [m.name for m in pkgutil.walk_packages(mediaassist.__path__, "mediaassist.")]


def test_core_providers_and_cli_never_import_qt() -> None:
    modules = [m for m in package_modules() if not m.startswith("mediaassist.ui") and m != "mediaassist.__main__"]
    assert "mediaassist.core.scheduler" in modules and "mediaassist.providers.web" in modules
    assert loaded_after_importing(modules, ("PySide6", "shiboken6", "qasync")) == []


def test_the_core_never_imports_a_provider_or_a_demo_server() -> None:
    core = [m for m in package_modules() if m.startswith("mediaassist.core")]
    assert "mediaassist.core.lane_api" in core and "mediaassist.core.scheduler" in core
    assert loaded_after_importing(core, ("mediaassist.providers", "mediaassist.demo")) == []
