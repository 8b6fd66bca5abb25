"""The smaller edges of issue 22, each one line for the operator: the demo OpenAI server's 401s as
the real service words them, a directory where the store file belongs, a damaged store in
``status``, NaN/Infinity in a JSON task file, a bad parameter on the simulated provider."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

import httpx

from mediaassist.core.options import DB_NAME
from mediaassist.core.store import Store
from mediaassist.demo_servers.openai_server import DemoOpenAIServer
from tests.harness import sim_api_tasks
from tests.helpers import cli, sim_config_text, write_config, write_csv

KEY = "sk-abcdef0123456789wjh3"


def test_the_demo_openai_401_masks_the_key_and_names_a_missing_one_as_the_real_service_does() -> None:
    with DemoOpenAIServer(api_key=KEY, models=("writer",)) as server:
        body = {"model": "writer", "messages": [{"role": "user", "content": "hi"}]}
        wrong = httpx.post(f"{server.base_url}/chat/completions", json=body,
                           headers={"Authorization": "Bearer sk-abcXYZ9876543210wjh3"})
        missing = httpx.post(f"{server.base_url}/chat/completions", json=body)
    assert wrong.status_code == 401 and missing.status_code == 401
    error = wrong.json()["error"]
    assert error["message"].startswith("Incorrect API key provided: sk-abc*************wjh3.")
    assert "XYZ9876543210" not in wrong.text and error["code"] == "invalid_api_key"
    assert missing.json()["error"]["message"].startswith("You didn't provide an API key.")
    assert "(none)" not in missing.text


def _one_line_exit_2(proc: subprocess.CompletedProcess[str], *says: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("mediaassist:")]
    assert len(lines) == 1 and all(words in lines[0] for words in says), proc.stderr


def test_a_folder_where_the_store_file_belongs_is_one_line_and_exit_2(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / DB_NAME).mkdir(parents=True)
    config = write_config(tmp_path / "config.toml", sim_config_text(api_s=(1, 2)))
    task_file = write_csv(tmp_path / "t.csv", [{"model": "writer", "prompt": "hello"}])
    for args in (("status",), ("run", str(task_file))):
        _one_line_exit_2(cli(*args, "--config", str(config), "--data-dir", str(data)),
                         f"{data / DB_NAME} is not a mediaassist database (a folder, not a file)")


def test_status_refuses_a_store_damaged_where_its_counts_do_not_read(tmp_path: Path) -> None:
    data = tmp_path / "data"
    path = data / DB_NAME
    store = Store(path)
    store.enqueue("b", sim_api_tasks(2000, prompt="p"))
    store.db.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    with sqlite3.connect(path) as conn:  # the table's own pages: status counts through its indexes
        leaves = [row[0] for row in conn.execute("SELECT pageno FROM dbstat WHERE name = 'task' "
                                                 "AND pagetype = 'leaf'")]
    spoiled = bytearray(path.read_bytes())
    for page in leaves[3:6]:
        spoiled[(page - 1) * 4096:page * 4096] = os.urandom(4096)
    path.write_bytes(spoiled)
    config = write_config(tmp_path / "config.toml", sim_config_text(api_s=(1, 2)))
    _one_line_exit_2(cli("status", "--config", str(config), "--data-dir", str(data)),
                     f"{path} is damaged (PRAGMA quick_check", "'mediaassist doctor' backs it up")


def test_nan_and_infinity_in_a_json_task_file_are_refused_naming_row_and_column(tmp_path: Path) -> None:
    task_file = tmp_path / "t.json"
    task_file.write_text('[{"model": "writer", "prompt": NaN}, {"model": "writer", "prompt": "fine"},'
                         ' {"model": "writer", "prompt": "x", "params": {"sim_duration_s": -Infinity}}]',
                         encoding="utf-8")
    config = write_config(tmp_path / "config.toml", sim_config_text(api_s=(1, 2)))
    proc = cli("run", str(task_file), "--json", "--speed", "50", "--config", str(config),
               "--data-dir", str(tmp_path / "data"))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert f"{task_file}: row 1: column prompt: NaN is not a JSON value" in proc.stderr
    assert f"{task_file}: row 3: column params: -Infinity is not a JSON value" in proc.stderr
    summary = json.loads(proc.stdout)
    assert (summary["total"], summary["success"]) == (1, 1)  # the good row runs
    store = Store(tmp_path / "data" / DB_NAME)
    try:
        assert [t.prompt for t in store.tasks()] == ["fine"]  # nothing stored as 'nan'
    finally:
        store.close()


def test_a_bad_parameter_on_the_simulated_provider_is_bad_input_once_without_a_traceback(tmp_path: Path) -> None:
    task_file = write_jsonl(tmp_path / "t.jsonl", [
        {"model": "writer", "prompt": "a", "params": {"sim_duration_s": "soon"}},
        {"model": "writer", "prompt": "b", "params": {"sim_fail": "explode"}}])
    config = write_config(tmp_path / "config.toml", sim_config_text(api_s=(1, 2)))
    proc = cli("run", str(task_file), "--json", "--speed", "50", "--config", str(config),
               "--data-dir", str(tmp_path / "data"))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    tasks = json.loads(proc.stdout)["tasks"]
    assert [(t["state"], t["error_kind"], t["attempt"]) for t in tasks] == [("failed", "bad_input", 1)] * 2
    assert "sim_duration_s must be a number of seconds >= 0, not 'soon'" in tasks[0]["error"]
    assert "sim_fail must be one of login," in tasks[1]["error"] and "not 'explode'" in tasks[1]["error"]


def write_jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path
