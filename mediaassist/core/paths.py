"""Where things live: data dir (database, profiles, outputs), config dir, shipped resources."""

from __future__ import annotations

import os
from importlib.resources import files
from pathlib import Path

import platformdirs

APP_NAME = "mediaassist"


def resources_dir() -> Path:
    """The shipped resources (sites, task-API profiles, translations, icons, examples, demo media).

    They live at the checkout's top level (``resources/``); building a wheel places them inside the
    package (``mediaassist/resources``, by ``setup.py``), where a wheel, pipx or a frozen build finds
    them. One lookup serves both, the package's own copy first.
    """
    package = Path(str(files("mediaassist")))
    for candidate in (package / "resources", package.parent / "resources"):
        if (candidate / "sites").is_dir():
            return candidate
    raise FileNotFoundError(f"mediaassist's resources are missing beside {package}")


RESOURCES = resources_dir()


def data_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    """``--data-dir``, else ``MEDIAASSIST_HOME``, else the platform's user data dir."""
    chosen = explicit or os.environ.get("MEDIAASSIST_HOME") or platformdirs.user_data_dir(APP_NAME)
    path = Path(chosen).expanduser().resolve()
    make_private_dir(path)
    return path


DEMO_DIR_NAME = "demo"
# Written into every demo data dir, so a folder is recognised as the demo's wherever it lies.
DEMO_MARKER = ".mediaassist-demo"


def demo_data_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    """``--demo``'s data dir: a marked sub-folder, so demo work never mixes with the real queue."""
    path = make_private_dir(data_dir(explicit) / DEMO_DIR_NAME)
    (path / DEMO_MARKER).touch()
    return path


def is_demo_dir(path: str | os.PathLike[str]) -> bool:
    """True for a demo data dir (marked, or where the default demo dir is), or a folder inside one."""
    chosen = Path(path).expanduser().resolve()
    default_demo = Path(os.environ.get("MEDIAASSIST_HOME") or platformdirs.user_data_dir(APP_NAME))
    default_demo = (default_demo.expanduser().resolve() / DEMO_DIR_NAME)
    return any(folder == default_demo or (folder / DEMO_MARKER).exists()
               for folder in (chosen, *chosen.parents))


def config_dir() -> Path:
    return Path(platformdirs.user_config_dir(APP_NAME))


def default_config_path() -> Path:
    return config_dir() / "config.toml"


def make_private_dir(path: Path) -> Path:
    """Create ``path`` readable by the user only (profiles and keys live below it).

    A folder that already exists keeps its mode: it may be ``/tmp`` or the operator's own folder
    given as ``--data-dir``, which is not ours to lock down.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        path.mkdir()
    except FileExistsError:
        if not path.is_dir():
            raise
        return path
    os.chmod(path, 0o700)  # mkdir's mode is filtered by the umask; chmod is not
    return path


def output_dir(root: Path, batch_id: str, task_id: str) -> Path:
    """A task's own folder under the outputs ``root``: where its provider writes its files."""
    return root / safe_name(batch_id) / safe_name(task_id)


def safe_name(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name) or "_"
