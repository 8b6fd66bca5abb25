"""Small helpers shared by the tests (no fixtures here: see conftest.py)."""

from __future__ import annotations

import json
import os
import socketserver
import subprocess
import sys
import textwrap
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

from mediaassist.core.config import AppConfig, parse_config

# A PostgreSQL server for the tests that prove the store on both back-ends: CI starts one
# (packaging/pg_test_cluster.sh) and sets this; without it those tests run on SQLite only.
PG_URL = os.environ.get("MEDIAASSIST_TEST_PG")


@contextmanager
def fresh_pg_database(base_url: str) -> Iterator[str]:
    """A new, empty database on the server of ``base_url`` for one test; dropped afterwards
    (WITH FORCE: a process the test killed may still hold a connection)."""
    import psycopg2

    name = f"t_{uuid.uuid4().hex[:12]}"
    admin = psycopg2.connect(base_url)
    admin.autocommit = True
    try:
        admin.cursor().execute(f'CREATE DATABASE "{name}"')
        yield urlunsplit(urlsplit(base_url)._replace(path=f"/{name}"))
        admin.cursor().execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        admin.close()


_Server = TypeVar("_Server", bound=socketserver.BaseServer)


@contextmanager
def local_server(server_class: Callable[[tuple[str, int], Any], _Server],
                 handler: type[socketserver.BaseRequestHandler]) -> Iterator[_Server]:
    """A server for one test: ``server_class`` with ``handler`` on a free port of 127.0.0.1,
    serving on a daemon thread while the block runs; shut down and closed after it."""
    server = server_class(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def stored_text(store: Any) -> str:
    """Every value of every row of every table of a store, as one string to search."""
    parts = []
    for table in store.db.get_tables():
        for row in store.db.execute_sql(f'SELECT * FROM "{table}"').fetchall():
            parts.append(" ".join(str(value) for value in row))
    return "\n".join(parts)


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{key} = {_toml_value(item)}" for key, item in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(map(_toml_value, value)) + "]"
    return json.dumps(value)  # a JSON string or number is a TOML one too


def toml_table(array: str, **fields: object) -> str:
    """One ``[[array]]`` table of a config file, as the operator would write it."""
    return "".join([f"[[{array}]]\n", *(f"{key} = {_toml_value(value)}\n" for key, value in fields.items()), "\n"])


def openai_provider_toml(name: str, base_url: str, key_env: str = "ACME_API_KEY", **settings: object) -> str:
    """An OpenAI-compatible provider whose key comes from the environment (as a run's would)."""
    return toml_table("providers", name=name, kind="api", type="openai", base_url=base_url, api_key_env=key_env,
                      **settings)


def api_model_toml(name: str, provider: str, **settings: object) -> str:
    return toml_table("models", name=name, kind="api", provider=provider, **settings)


# An operator's task-API profile with only what is required (a create, a status with its two
# states, where the result is): the tests of the profile format change one line of it at a time.
MINIMAL_TASK_PROFILE = """
name = "mine"
[create]
path = "/jobs"
remote_id = "job.id"
[create.fields]
prompt = "{prompt}"
[status]
path = "/jobs/{id}"
state = "job.state"
[status.states]
success = ["DONE"]
failed = ["ERR"]
[result]
urls = "job.outputs[0].url"
"""


def sim_config_text(api_concurrency: int = 3, api_s: tuple[float, float] = (20, 40), poll_limit: int = 4,
                    poll_s: tuple[float, float] = (30, 60), accounts: tuple[str, ...] = ("alice", "bob")) -> str:
    """A config on simulated providers: models writer (api), video (poll), reasoner (web)."""
    return "".join([
        toml_table("providers", name="sim-api", kind="api", type="simulated", concurrency=api_concurrency,
                   min_duration_s=api_s[0], max_duration_s=api_s[1]),
        toml_table("providers", name="sim-poll", kind="poll", type="simulated", max_polling_tasks=poll_limit,
                   min_duration_s=poll_s[0], max_duration_s=poll_s[1]),
        *(toml_table("accounts", name=name, site="simulated") for name in accounts),
        toml_table("models", name="writer", kind="api", provider="sim-api"),
        toml_table("models", name="video", kind="poll", provider="sim-poll"),
        toml_table("models", name="reasoner", kind="web", site="simulated"),
    ])


SIM_CONFIG = sim_config_text()


def sim_config() -> AppConfig:
    import tomllib

    return parse_config(tomllib.loads(SIM_CONFIG))


def write_config(path: Path, text: str = SIM_CONFIG) -> Path:
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    path.chmod(0o600)
    return path


def write_csv(path: Path, rows: list[dict[str, Any]]) -> Path:
    import csv

    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def cli(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run ``python -m mediaassist ARGS`` as a real process."""
    return subprocess.run([sys.executable, "-m", "mediaassist", *args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})})


_spawned: list[subprocess.Popen[str]] = []


def cli_popen(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """A ``mediaassist`` process; one the test leaves running (it failed midway) is killed after it."""
    process = subprocess.Popen([sys.executable, "-m", "mediaassist", *args], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})})
    _spawned.append(process)
    return process


def end_leftover_processes() -> None:
    """Kill what a test started with ``cli_popen`` and left running, and close its pipes: else it
    works on in the next test and its Popen warns there, failing an unrelated test."""
    while _spawned:
        process = _spawned.pop()
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=30)


def parse_json_output(stdout: str) -> dict[str, Any]:
    return json.loads(stdout)


def import_children() -> list[Any]:
    """This process's import children (``core/import_process.py``), alive or not yet reaped --
    not the other processes a test may have started."""
    import psutil

    found = []
    for child in psutil.Process().children():
        try:
            if any("mediaassist.core.import_process" in part for part in child.cmdline()):
                found.append(child)
        except (psutil.NoSuchProcess, psutil.ZombieProcess):
            pass  # gone meanwhile, or a zombie (its command line is no longer readable)
    return found

