"""The outputs commands as real processes: run --json lists each task's files with the manifest's
fields, outputs manifest/pick/deliver, rerun, --models, and --demo honouring --config's [outputs]."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from mediaassist.demo_servers.video_tasks_server import DEMO_VIDEO_KEY, VideoTaskDemoServer
from tests.helpers import cli, parse_json_output, write_config, write_csv

MANIFEST_FIELDS = {"task_id", "row", "group", "parent_id", "model", "provider", "account", "remote_id", "prompt",
                   "params", "file", "bytes", "sha256", "media", "width", "height", "duration_s", "started_at",
                   "finished_at", "picked", "cost"}


@pytest.fixture
def sora() -> Iterator[VideoTaskDemoServer]:
    with VideoTaskDemoServer("openai-videos", job_limit=4, seed=21) as server:
        yield server


def config_file(tmp_path: Path, base_url: str) -> Path:
    return write_config(tmp_path / "config.toml", f"""
[[providers]]
name = "gateway"
kind = "poll"
type = "task_api"
profile = "openai-videos"
base_url = "{base_url}"
api_key = "{DEMO_VIDEO_KEY}"
poll_interval_s = 0.1

[[models]]
name = "sora"
kind = "poll"
provider = "gateway"
remote_model = "sora-2"

[[models]]
name = "sora-b"
kind = "poll"
provider = "gateway"
remote_model = "sora-2"
price = {{ currency = "USD", per_task = 0.4 }}

[outputs]
naming = "{{col:shot}}_{{row:02}}_{{model}}{{ext}}"
""")


def test_run_json_manifest_pick_deliver_and_rerun_headless(sora, tmp_path) -> None:
    config = config_file(tmp_path, sora.base_url)
    data = tmp_path / "data"
    common = ["--config", str(config), "--data-dir", str(data)]
    tasks = write_csv(tmp_path / "shots.csv", [{"prompt": "a boat", "shot": "s1"}, {"prompt": "a bird", "shot": "s2"}])
    done = cli("run", *common, "--models", "sora,sora-b", "--json", str(tasks))
    assert done.returncode == 0, done.stderr
    summary = parse_json_output(done.stdout)
    assert summary["success"] == 4
    files = [f for task in summary["tasks"] for f in task["files"]]
    assert len(files) == 4 and all(set(f) == MANIFEST_FIELDS | {"path"} for f in files)
    assert sorted(Path(f["path"]).name for f in files) == ["s1_02_sora-b.mp4", "s1_02_sora.mp4",
                                                           "s2_03_sora-b.mp4", "s2_03_sora.mp4"]
    for entry in files:
        assert hashlib.sha256(Path(entry["path"]).read_bytes()).hexdigest() == entry["sha256"]
    assert {f["group"] for f in files} == {"row-2", "row-3"}
    batch = summary["batch_ids"][0]
    folder = Path(files[0]["path"]).parent
    written = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))["files"]
    assert sorted(e["file"] for e in written) == sorted(f["file"] for f in files)
    # Each file carries its task's cost, per currency; a model with no price has none (not 0).
    assert {e["model"]: e["cost"] for e in written} == {"sora": [], "sora-b": [{"amount": "0.4", "currency": "USD"}]}
    csv_costs = {line.split(",")[4]: line.rsplit(",", 1)[1] for line in
                 (folder / "manifest.csv").read_text(encoding="utf-8-sig").splitlines()[1:]}
    assert csv_costs == {"sora": "", "sora-b": "0.4 USD"}

    picked_task = summary["tasks"][0]["task_id"]
    assert cli("outputs", "pick", *common, picked_task).returncode == 0
    delivered = cli("outputs", "deliver", *common, batch, "--to", str(tmp_path / "client"), "--picked")
    assert delivered.returncode == 0, delivered.stderr
    assert "1 file delivered" in delivered.stdout
    [copied] = [p for p in (tmp_path / "client").iterdir() if p.suffix == ".mp4"]
    assert copied.name == Path(summary["tasks"][0]["files"][0]["path"]).name
    rebuilt = cli("outputs", "manifest", *common, batch)
    assert rebuilt.returncode == 0 and "4 files" in rebuilt.stdout
    assert sum(e["picked"] for e in json.loads((folder / "manifest.json").read_text())["files"]) == 1

    queued = cli("rerun", *common, picked_task, "--prompt", "a boat at dusk", "--param", "seconds=\"8\"")
    assert queued.returncode == 0, queued.stderr
    assert f"{picked_task}-r2 queued as a rerun of {picked_task}" in queued.stdout
    ran = cli("run", *common, "--all", "--json")
    child = next(t for t in parse_json_output(ran.stdout)["tasks"] if t["task_id"] == f"{picked_task}-r2")
    assert child["state"] == "success" and child["files"][0]["parent_id"] == picked_task
    assert sora.fake.create_bodies[-1] == {"model": "sora-2", "prompt": "a boat at dusk", "seconds": "8"}


def test_outputs_commands_refuse_clearly(sora, tmp_path) -> None:
    common = ["--config", str(config_file(tmp_path, sora.base_url)), "--data-dir", str(tmp_path / "data")]
    missing = cli("outputs", "deliver", *common, "nope", "--to", str(tmp_path / "x"))
    assert missing.returncode == 2 and "no batch 'nope'" in missing.stderr and "Traceback" not in missing.stderr
    rerun = cli("rerun", *common, "ghost")
    assert rerun.returncode == 2 and "no task 'ghost'" in rerun.stderr
    bad = cli("rerun", *common, "ghost", "--param", "novalue")
    assert bad.returncode == 2 and "KEY=VALUE" in bad.stderr


def test_bad_naming_template_is_refused_at_load_naming_the_key(tmp_path) -> None:
    config = write_config(tmp_path / "config.toml", '[outputs]\nnaming = "{row}_{colour}{ext}"\n')
    done = cli("status", "--config", str(config), "--data-dir", str(tmp_path / "data"))
    assert done.returncode == 2
    assert "outputs.naming: unknown field {colour}" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.slow
def test_demo_honours_the_given_configs_outputs(tmp_path) -> None:
    config = write_config(tmp_path / "config.toml", f"""
[outputs]
folder = "{tmp_path / 'demo-out'}"
naming = "{{model}}/{{row:03}}{{ext}}"
""")
    tasks = write_csv(tmp_path / "demo.csv", [{"model": "demo-sora", "prompt": "a lighthouse"}])
    done = cli("run", "--demo", "--speed", "1000", "--config", str(config), "--data-dir", str(tmp_path / "data"),
               "--json", str(tasks), timeout=240)
    assert done.returncode == 0, done.stderr
    [task] = parse_json_output(done.stdout)["tasks"]
    path = Path(task["files"][0]["path"])
    assert path.parent.parent.parent == tmp_path / "demo-out" and path.relative_to(path.parent.parent).as_posix() \
        == "demo-sora/002.mp4"
    assert (path.parent.parent / "manifest.csv").is_file()
