"""Where things live: data dir (database, profiles, outputs), config dir, shipped resources."""

from __future__ import annotations

import os
from importlib.resources import files
from pathlib import Path

import platformdirs

APP_NAME = "mediaassist"
# Shipped inside the package, so a wheel, pipx or a frozen build finds them as a checkout does.
RESOURCES = Path(str(files("mediaassist") / "resources"))


def data_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    """``--data-dir``, else ``MEDIAASSIST_HOME``, else the platform's user data dir."""
    chosen = explicit or os.environ.get("MEDIAASSIST_HOME") or platformdirs.user_data_dir(APP_NAME)
    path = Path(chosen).expanduser().resolve()
    make_private_dir(path)
    return path


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


def output_dir(data: Path, batch_id: str, task_id: str) -> Path:
    return data / "outputs" / _safe(batch_id) / _safe(task_id)


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name) or "_"
