"""The walls between layers (nothing outside mediaassist/ui imports Qt, the core imports no provider
and no demo server, the import contracts), and the lint and type checks CI holds the code to."""

from __future__ import annotations

import ast
import pkgutil
import subprocess
import sys
from pathlib import Path

import mediaassist

ROOT = Path(__file__).resolve().parents[2]


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


def test_demo_servers_are_loaded_only_when_the_demo_asks() -> None:
    app = ["mediaassist.cli", "mediaassist.runtime", "mediaassist.status", "mediaassist.ui.app",
           "mediaassist.providers.registry"]
    assert loaded_after_importing(app, ("mediaassist.demo",)) == []


def test_the_window_never_reaches_into_the_store_or_the_scheduler() -> None:
    """The UI asks the Runtime (mediaassist/runtime.py): no ``rt.store``, ``rt.scheduler``,
    ``Lane.active`` or ``.lanes`` of the scheduler anywhere under mediaassist/ui."""
    reaching = []
    for path in sorted((ROOT / "mediaassist" / "ui").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in ("store", "scheduler", "active"):
                reaching.append(f"{path.name}:{node.lineno}: .{node.attr}")
    assert reaching == []


def test_providers_use_only_the_lane_store_and_the_store_keeps_its_promise() -> None:
    """Providers reach the store only through ``LaneStore`` (core/lane_store.py): every
    ``store.<name>`` under mediaassist/providers is one of its methods, and ``Store`` has each
    of them with the same signature (the scheduler hands its ``Store`` in as a ``LaneStore``)."""
    import inspect

    from mediaassist.core.lane_store import LaneStore
    from mediaassist.core.store import Store

    door = {name for name, _ in inspect.getmembers(LaneStore, inspect.isfunction) if not name.startswith("_")}
    assert {"log", "save_remote_id", "try_gate", "set_login_state"} <= door
    used = set()
    for path in sorted((ROOT / "mediaassist" / "providers").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, (ast.Name, ast.Attribute))
                    and (node.value.id if isinstance(node.value, ast.Name) else node.value.attr) == "store"):
                used.add(node.attr)
    assert used and used <= door, f"not in LaneStore: {sorted(used - door)}"
    for name in sorted(door):
        assert inspect.signature(getattr(Store, name)) == inspect.signature(getattr(LaneStore, name)), name


def test_every_core_and_provider_module_has_a_layer() -> None:
    """A module left out of its container's layers would be checked by no inner wall."""
    import re
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    inner = [c for c in config["tool"]["importlinter"]["contracts"] if c.get("containers")]
    containers = {c["containers"][0] for c in inner}
    assert containers == {"mediaassist.core", "mediaassist.core.store", "mediaassist.providers"}
    for contract in inner:
        [container] = contract["containers"]
        listed = {name.strip() for layer in contract["layers"] for name in re.split(r"[|:]", layer)}
        depth = container.count(".") + 1
        children = {m.split(".")[depth] for m in package_modules() if m.startswith(container + ".")}
        assert children - listed == set(), f"give these a layer in {container}'s contract"


def _tool(name: str, *args: str) -> subprocess.CompletedProcess[str]:
    """A lint tool from this interpreter's environment, run over the checkout."""
    return subprocess.run([str(Path(sys.executable).with_name(name)), *args], cwd=ROOT,
                          capture_output=True, text=True)


def test_import_contracts_hold() -> None:
    """pyproject.toml's import-linter contracts, none with an ignored import: entry point > ui | cli >
    runtime | status > demo > providers | demo_servers > core; layers inside the core and the
    providers; Qt only in ui; the window reaches the scheduler and providers only through the
    Runtime; demo servers only through the demo; no provider imports the scheduler; no cycles."""
    result = _tool("lint-imports", "--no-cache")
    assert result.returncode == 0, result.stdout[-3000:]


def test_ruff_finds_nothing() -> None:
    result = _tool("ruff", "check", "mediaassist", "tests", "bench", "packaging", "setup.py")
    assert result.returncode == 0, result.stdout[-3000:]


def test_mypy_finds_nothing() -> None:
    """Strict on the core, checked everywhere else (pyproject.toml)."""
    result = _tool("mypy")
    assert result.returncode == 0, result.stdout[-3000:]
