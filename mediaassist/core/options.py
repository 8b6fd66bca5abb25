"""What one start of the app was asked for (the command line's common options), and the config
file and store they point to. Light on purpose: the entry point reads the options before it knows
whether a window or a command follows; the config parser and the store load when first used."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from mediaassist.core.paths import default_config_path, demo_data_dir

if TYPE_CHECKING:
    from mediaassist.core.config import AppConfig
    from mediaassist.core.store import Store

DB_NAME = "mediaassist.sqlite3"


@dataclass
class RuntimeOptions:
    config_path: Path | None = None
    data_dir: Path | None = None
    demo: bool = False
    speed: float = 1.0
    store_url: str | None = None  # --store: wins over MEDIAASSIST_STORE_URL and [store] url
    # status and other commands that only look: demo accounts are not logged in, nothing about
    # logins is written (another process may be using those accounts right now).
    read_only: bool = False
    # `run`: web accounts whose browser another process holds (a window running them) are left
    # to it; this run takes the rest of the work.
    leave_held_accounts: bool = False

    @classmethod
    def from_arguments(cls, args: argparse.Namespace) -> RuntimeOptions:
        demo = bool(getattr(args, "demo", False))
        # Demo work never mixes with the operator's real queue: it has a folder of its own.
        data = demo_data_dir(args.data_dir) if demo else args.data_dir
        return cls(config_path=args.config, data_dir=data, demo=demo, speed=getattr(args, "speed", 1.0),
                   store_url=args.store)


def load_app_config(options: RuntimeOptions) -> AppConfig:
    """The operator's config; a missing default file is an empty config, not an error."""
    from mediaassist.core.config import AppConfig, load_config

    path = options.config_path or default_config_path()
    if options.config_path is None and not path.exists():
        return AppConfig()
    return load_config(path)


def store_location(options: RuntimeOptions, config: AppConfig, data_dir: Path) -> Path | str:
    """The store this run uses: a shared PostgreSQL one if --store, the environment or the
    config names one, else the SQLite file in the data dir."""
    from mediaassist.core.location import choose_store_url

    return choose_store_url(options.store_url, config.store_url) or data_dir / DB_NAME


def open_store(options: RuntimeOptions, config: AppConfig, data_dir: Path) -> Store:
    from mediaassist.core.store import Store

    return Store(store_location(options, config, data_dir))
