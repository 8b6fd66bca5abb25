"""``mediaassist run`` in a subprocess against the demo OpenAI server: the key must not survive
anywhere the run writes -- stdout, stderr, the data dir (SQLite, WAL, logs, outputs) or an export."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import uuid
import zipfile
from pathlib import Path

import pytest

from mediaassist.core.options import DB_NAME
from mediaassist.core.queries import Queries
from mediaassist.core.store import Store
from mediaassist.demo_servers.openai_server import DemoOpenAIServer, Fault
from mediaassist.ui.export import export_tasks
from tests.helpers import api_model_toml, openai_provider_toml


def _config_text(base_url: str) -> str:
    return "".join([
        openai_provider_toml("acme", base_url, concurrency=2),
        api_model_toml("writer", "acme", endpoint="chat", system_prompt="You write short ad copy."),
        api_model_toml("painter", "acme", endpoint="images", defaults={"response_format": "url"}),
        # Its own provider: the 401 pauses that lane only, so the other tasks finish either way.
        openai_provider_toml("acme-locked", base_url),
        api_model_toml("locked", "acme-locked"),
    ])


def files_bytes(root: Path) -> dict[Path, bytes]:
    """Every file under ``root``; zip containers (xlsx) are opened so compression hides nothing."""
    found = {}
    for path in (p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                data += b"".join(archive.read(name) for name in archive.namelist())
        found[path] = data
    return found


@pytest.mark.slow
def test_key_never_appears_in_anything_a_cli_run_writes(tmp_path: Path, data_dir: Path):
    # A key this test process never resolves: the export below cannot rely on in-process redaction.
    key = f"sk-cli-{uuid.uuid4().hex}"
    tasks = [{"model": "writer", "prompt": f"slogan {i}"} for i in range(4)]
    tasks += [{"model": "painter", "prompt": "a red fox"}, {"model": "locked", "prompt": "last one"}]
    task_file = tmp_path / "tasks.jsonl"
    task_file.write_text("\n".join(json.dumps(t) for t in tasks), encoding="utf-8")
    config = tmp_path / "config.toml"

    with DemoOpenAIServer(api_key=key, latency_s=(0.02, 0.05), models=("writer", "painter", "locked"),
                          echo_key=True) as server:  # a 401 shows the whole key: the worst case
        config.write_text(_config_text(server.base_url), encoding="utf-8")
        config.chmod(0o600)
        server.add_fault(Fault("server_error", count=1, model="writer"))  # a retry, with its log lines
        server.add_fault(Fault("unauthorized", count=None, model="locked"))  # the 401 echoes the key
        env = {**os.environ, "ACME_API_KEY": key}
        proc = subprocess.run(
            [sys.executable, "-m", "mediaassist", "run", str(task_file), "--config", str(config),
             "--data-dir", str(data_dir), "--json", "--speed", "100", "-vv"],
            env=env, capture_output=True, timeout=120)
        requests = server.api_requests()

    assert proc.returncode == 1, proc.stderr.decode()
    summary = json.loads(proc.stdout)
    by_model = {t["model"]: t for t in summary["tasks"]}
    assert summary["success"] == 5 and summary["failed"] == 1
    assert by_model["locked"]["error_kind"] == "login"
    assert "Incorrect API key provided: ***" in by_model["locked"]["error"]
    assert all(r.auth_ok for r in requests)  # the key did reach the API

    store = Store(data_dir / DB_NAME)
    try:
        ids = [t["task_id"] for t in summary["tasks"]]
        assert asyncio.run(export_tasks(Queries(store), ids, data_dir / "export.csv")) == 6
        assert asyncio.run(export_tasks(Queries(store), ids, data_dir / "export.xlsx")) == 6
    finally:
        store.close()

    written = files_bytes(data_dir)
    assert any(p.name == DB_NAME for p in written) and any(p.suffix == ".png" for p in written)
    assert any(p.suffix == ".log" for p in written)
    for name, output in [("stdout", proc.stdout), ("stderr", proc.stderr), *written.items()]:
        assert key.encode() not in output, f"key found in {name}"
