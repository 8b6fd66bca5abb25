"""The headless CLI as a user drives it: real processes, real SQLite, signals."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import time
import unicodedata
from datetime import datetime
from pathlib import Path

import pytest

from mediaassist.core.paths import RESOURCES
from tests.harness import wait_until_sync
from tests.helpers import cli, cli_popen, sim_config_text, toml_table, write_config, write_csv

SEED = RESOURCES / "examples" / "seed-batch.csv"


def _db_rows(data: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(data / "mediaassist.sqlite3") as conn:
        return conn.execute(sql).fetchall()


def _count(data: Path, state: str) -> int:
    """Tasks in a state, or -1 while the database is still being created by the other process."""
    try:
        return _db_rows(data, f"select count(*) from task where state='{state}'")[0][0]
    except sqlite3.OperationalError:
        return -1


def _writer_run(tmp_path: Path, ids: list[str], duration_s: float, speed: int) -> tuple[tuple[str, ...], Path]:
    """A ``run`` of simulated writer tasks with these ids, each ``duration_s`` nominal seconds long
    (on the default simulated config): its arguments and its data dir."""
    config = write_config(tmp_path / "c.toml")
    params = json.dumps({"sim_duration_s": duration_s})
    rows = [{"task_id": task_id, "model": "writer", "prompt": f"p{i}", "params": params}
            for i, task_id in enumerate(ids)]
    tasks = write_csv(tmp_path / "t.csv", rows)
    data = tmp_path / "d"
    return ("run", str(tasks), "--config", str(config), "--data-dir", str(data), "--speed", str(speed)), data


def _spans(tasks: list[dict]) -> list[tuple[datetime, datetime]]:
    return [(datetime.fromisoformat(t["started_at"]), datetime.fromisoformat(t["finished_at"])) for t in tasks]


def _max_overlap(spans: list[tuple[datetime, datetime]]) -> int:
    events = sorted([(s, 1) for s, _ in spans] + [(e, -1) for _, e in spans], key=lambda x: (x[0], x[1]))
    level = peak = 0
    for _, step in events:
        level += step
        peak = max(peak, level)
    return peak


@pytest.mark.slow
@pytest.mark.timeout(300)  # the run's own time-out below: on a loaded box the 40 tasks outlast 120 s
def test_seed_batch_on_the_demo(tmp_path: Path) -> None:
    proc = cli("run", str(SEED), "--demo", "--speed", "60", "--json", "--data-dir", str(tmp_path / "d"),
               timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert (out["total"], out["success"], out["failed"], out["canceled"]) == (40, 40, 0, 0)
    web = [t for t in out["tasks"] if t["model_kind"] == "web"]
    api = [t for t in out["tasks"] if t["model_kind"] == "api"]
    assert (len(web), len(api)) == (12, 28)
    for account in {t["account"] for t in web}:
        assert _max_overlap(_spans([t for t in web if t["account"] == account])) == 1
    assert _max_overlap(_spans(api)) <= 3
    assert "40/40 done" in proc.stderr
    # Progress lines (JSON, with --json) carry the ETA: measuring until a service time is known,
    # then a duration, in seconds too (the last line, nothing left to run, has none).
    progress = [json.loads(line) for line in proc.stderr.splitlines() if line.startswith("{")]
    assert "· ETA" in progress[0]["line"] and "ETA" not in progress[-1]["line"]
    assert progress[-1]["eta_s"] is None and progress[-1]["done"] == progress[-1]["total"] == 40
    timed = [p for p in progress if re.search(r"· ETA (\d+ s|\d+ min \d+ s)$", p["line"])]
    assert timed and all(isinstance(p["eta_s"], int) and p["eta_s"] >= 0 for p in timed), progress
    assert all(p["eta_s"] is None for p in progress if p not in timed)


def test_unreadable_file_enqueues_nothing_and_exits_2(tmp_path: Path) -> None:
    config = write_config(tmp_path / "c.toml")
    good = write_csv(tmp_path / "good.csv", [{"model": "writer", "prompt": "hi"}])
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    data = tmp_path / "d"
    proc = cli("run", str(good), str(broken), "--config", str(config), "--data-dir", str(data))
    assert proc.returncode == 2
    assert "broken.json" in proc.stderr
    assert _db_rows(data, "select count(*) from task") == [(0,)]


def test_bad_rows_are_reported_and_good_rows_run(tmp_path: Path) -> None:
    config = write_config(tmp_path / "c.toml")
    rows = [{"model": "writer", "prompt": "ok one", "params": ""},
            {"model": "nope", "prompt": "x", "params": ""},
            {"model": "writer", "prompt": "ok two", "params": "[1, 2]"},
            {"model": "writer", "prompt": "ok three", "params": '{"sim_duration_s": 1}'}]
    data = tmp_path / "d"
    proc = cli("run", str(write_csv(tmp_path / "t.csv", rows)), "--config", str(config),
               "--data-dir", str(data), "--speed", "100", "--json")
    assert proc.returncode == 2
    assert "row 3: unknown model 'nope'" in proc.stderr
    assert "row 4:" in proc.stderr and "params" in proc.stderr
    assert json.loads(proc.stdout)["success"] == 2


@pytest.mark.parametrize(("text", "named"), [
    ('[[providers]]\nname="p"\nkind="api"\ntype="simulated"\nconcurrency=9\n',
     "providers[0].concurrency: 9 is out of range (allowed: integer 1..5)"),
    ('[[providers]]\nname="p"\nkind="api"\ntype="simulated"\nconcurency=2\n',
     "providers[0].concurency: unknown key"),
    ('[[models]]\nname="m"\nkind="api"\nprovider="ghost"\n', "models[0].provider: no provider named 'ghost'"),
    ('[[providers]]\nname="p"\nkind="poll"\ntype="runninghub"\nbase_url="http://x"\nmax_polling_tasks=0\n',
     "providers[0].max_polling_tasks: 0 is out of range (allowed: integer 1..1000)"),
])
def test_bad_config_names_the_key_and_the_range(tmp_path: Path, text: str, named: str) -> None:
    config = tmp_path / "c.toml"
    config.write_text(text, encoding="utf-8")
    proc = cli("status", "--config", str(config), "--data-dir", str(tmp_path / "d"))
    assert proc.returncode == 2
    assert named in proc.stderr


def test_restart_after_sigkill_recovers_without_loss_or_duplicates(tmp_path: Path) -> None:
    args, data = _writer_run(tmp_path, [f"k{i:02d}" for i in range(9)], 60, 20)
    first = cli_popen(*args)
    try:
        wait_until_sync(lambda: _count(data, 'success') >= 3 and _count(data, 'running') == 3)
    finally:
        first.send_signal(signal.SIGKILL)
        first.communicate(timeout=10)
    running_when_killed = {r[0] for r in _db_rows(data, "select task_id from task where state='running'")}
    assert len(running_when_killed) == 3
    second = cli(*args, "--json")
    assert second.returncode == 0, second.stderr
    out = json.loads(second.stdout)
    assert out["success"] == 9 and out["total"] == 9
    assert _db_rows(data, "select count(*) from task") == [(9,)]
    assert _db_rows(data, "select count(*) from result") == [(9,)]
    for task in out["tasks"]:
        expected = 2 if task["task_id"] in running_when_killed else 1
        assert task["attempt"] == expected, task
    logs = _db_rows(data, "select line from task_log where line like '%died%'")
    assert len(logs) == 3


def test_a_frozen_process_is_reaped_by_another_and_cannot_write_late(tmp_path: Path) -> None:
    args, data = _writer_run(tmp_path, [f"s{i}" for i in range(3)], 150, 100)
    frozen = cli_popen(*args)
    try:
        wait_until_sync(lambda: _count(data, 'running') == 3)
        _freeze_between_writes(frozen, data)  # alive, but its heartbeats stop
        rescuer = cli(*args, "--json")
        assert rescuer.returncode == 0, rescuer.stderr
        out = json.loads(rescuer.stdout)
        assert [(t["state"], t["attempt"]) for t in out["tasks"]] == [("success", 2)] * 3
        written = _db_rows(data, "select task_id, written_at from result order by task_id")
        os.kill(frozen.pid, signal.SIGCONT)  # it wakes up and finishes its stale attempts
        frozen.communicate(timeout=30)
    finally:
        if frozen.poll() is None:
            frozen.kill()
            frozen.communicate(timeout=10)
    assert _db_rows(data, "select task_id, written_at from result order by task_id") == written
    assert _db_rows(data, "select distinct state, attempt from task") == [("success", 2)]
    stalled = _db_rows(data, "select count(*) from task_log where line like '%failed (stalled)%'")
    assert stalled == [(3,)]


def _freeze_between_writes(proc: subprocess.Popen, data: Path) -> None:
    """SIGSTOP ``proc`` at a moment it holds no write lock. Stopped inside a write (a heartbeat),
    it would keep SQLite's lock and nobody could write: that case is
    test_a_store_locked_by_a_stopped_process_is_one_line_not_a_traceback."""
    for _ in range(50):
        os.kill(proc.pid, signal.SIGSTOP)
        with sqlite3.connect(data / "mediaassist.sqlite3", timeout=0.5) as conn:
            try:
                conn.execute("begin immediate")
                conn.rollback()
                return
            except sqlite3.OperationalError:
                os.kill(proc.pid, signal.SIGCONT)
                time.sleep(0.05)
    raise AssertionError("the process never let go of the write lock")


def test_a_store_locked_by_a_stopped_process_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    config = write_config(tmp_path / "c.toml")
    data = tmp_path / "d"
    assert cli("status", "--config", str(config), "--data-dir", str(data)).returncode == 0
    with sqlite3.connect(data / "mediaassist.sqlite3") as holder:
        holder.execute("begin immediate")  # as a process stopped mid-write holds it
        tasks = write_csv(tmp_path / "t.csv", [{"model": "writer", "prompt": "p"}])
        proc = cli("run", str(tasks), "--config", str(config), "--data-dir", str(data))
        holder.rollback()
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == [proc.stderr.strip()]
    assert "stays locked by another process" in proc.stderr and "resume or end it" in proc.stderr


def test_cancel_from_another_process_while_running(tmp_path: Path) -> None:
    args, data = _writer_run(tmp_path, [f"c{i}" for i in range(5)], 600, 10)
    runner = cli_popen(*args, "--json")
    wait_until_sync(lambda: _count(data, 'running') == 3)
    status = cli("status", "--data-dir", str(data))
    assert status.stdout.splitlines()[-1] == f"at work on this store: {socket.gethostname()} (1 process)"
    batch = _db_rows(data, "select distinct batch_id from task")[0][0]
    canceled = cli("cancel", "--batch", batch, "--data-dir", str(data))
    assert canceled.returncode == 0
    assert "2 tasks canceled, 3 running tasks asked to stop" in canceled.stdout
    stdout, stderr = runner.communicate(timeout=60)
    assert runner.returncode == 1, stderr
    out = json.loads(stdout)
    assert out["canceled"] == 5 and out["success"] == 0
    assert _db_rows(data, "select count(*) from result") == [(0,)]
    status = cli("status", "--data-dir", str(data))
    assert status.stdout.splitlines()[-1] == "at work on this store: no mediaassist process"


def test_status_json_reports_each_lane_and_the_poll_pool(tmp_path: Path) -> None:
    config = write_config(tmp_path / "c.toml")
    rows = [{"model": "video", "prompt": f"v{i}", "params": '{"sim_duration_s": 5}'} for i in range(3)]
    data = tmp_path / "d"
    run = cli("run", str(write_csv(tmp_path / "t.csv", rows)), "--config", str(config),
              "--data-dir", str(data), "--speed", "100")
    assert run.returncode == 0, run.stderr
    proc = cli("status", "--json", "--config", str(config), "--data-dir", str(data))
    lanes = {lane["lane"]: lane for lane in json.loads(proc.stdout)["lanes"]}
    assert set(lanes) == {"api:sim-api", "poll:sim-poll", "web:alice", "web:bob"}
    poll = lanes["poll:sim-poll"]
    assert poll["success"] == 3 and poll["limit"] == 4
    assert {k: poll[k] for k in ("maxPollingTasks", "currentPollingTasks", "waitingQueueSize",
                                 "availableSlots", "utilizationRate")} == {
        "maxPollingTasks": 4, "currentPollingTasks": 0, "waitingQueueSize": 0, "availableSlots": 4,
        "utilizationRate": 0.0}
    assert lanes["web:alice"]["limit"] == 1


def test_status_names_the_order_each_lane_takes_its_queue_in(tmp_path: Path) -> None:
    config = write_config(tmp_path / "c.toml", sim_config_text() + toml_table(
        "providers", name="fair-api", kind="api", type="simulated", order="fair"))
    common = ("status", "--config", str(config), "--data-dir", str(tmp_path / "d"))
    lanes = {lane["lane"]: lane["order"] for lane in json.loads(cli(*common, "--json").stdout)["lanes"]}
    assert lanes == {"api:sim-api": "fifo", "api:fair-api": "fair", "poll:sim-poll": "fifo",
                     "web:alice": "longest", "web:bob": "longest"}  # the kinds' defaults, and one set
    for lang, words in (("en", {"fifo": "order: first in, first out", "fair": "order: batches in turn",
                                "longest": "order: longest expected first"}),
                        ("zh_CN", {"fifo": "顺序：先进先出", "fair": "顺序：各批次轮流",
                                   "longest": "顺序：预计最久的优先"})):
        lines = {line.split()[0]: line for line in cli(*common, "--lang", lang).stdout.splitlines() if line}
        for lane, order in lanes.items():
            assert words[order] in lines[lane], (lang, lines[lane])


def test_accounts_enable_disable_and_list(tmp_path: Path) -> None:
    config = write_config(tmp_path / "c.toml")
    common = ("--config", str(config), "--data-dir", str(tmp_path / "d"))
    assert cli("accounts", "disable", "bob", *common).returncode == 0
    listing = cli("accounts", "list", *common).stdout
    assert "bob" in listing and "disabled" in listing.split("bob")[1].splitlines()[0]
    assert cli("accounts", "disable", "nobody", *common).returncode == 2


def test_ctrl_c_hands_running_tasks_back_and_the_next_run_resumes(tmp_path: Path) -> None:
    args, data = _writer_run(tmp_path, [f"i{i}" for i in range(4)], 100, 50)
    first = cli_popen(*args)
    wait_until_sync(lambda: _count(data, "running") == 3)
    first.send_signal(signal.SIGINT)
    _, stderr = first.communicate(timeout=30)
    assert first.returncode == 130
    assert "resume on the next run" in stderr and "could not run" not in stderr
    assert _db_rows(data, "select distinct state, attempt from task") == [("pending", 1)]
    second = cli(*args, "--json")
    assert second.returncode == 0, second.stderr
    assert [(t["state"], t["attempt"]) for t in json.loads(second.stdout)["tasks"]] == [("success", 1)] * 4


def test_operator_mistakes_get_a_clear_answer(tmp_path: Path) -> None:
    config = write_config(tmp_path / "c.toml")
    common = ("--config", str(config), "--data-dir", str(tmp_path / "d"))
    unknown_lane = cli("lanes", "pause", "sim-api", *common)  # the kind prefix forgotten
    assert unknown_lane.returncode == 2 and "no lane named 'sim-api'" in unknown_lane.stderr
    assert "api:sim-api" in unknown_lane.stderr
    assert cli("lanes", "pause", "api:sim-api", *common).returncode == 0
    unknown_task = cli("retry", "nosuch", *common)
    assert unknown_task.returncode == 2 and "no task 'nosuch'" in unknown_task.stderr
    nothing_failed = cli("retry", "--failed", *common)  # nothing is wrong: exit 0, said plainly
    assert nothing_failed.returncode == 0 and nothing_failed.stdout.strip() == "nothing to retry: no failed task"
    quoted = tmp_path / "quoted.toml"
    quoted.write_text('[[providers]]\nname="p"\nkind="api"\ntype="simulated"\nconcurrency="3"\n')
    bad = cli("status", "--config", str(quoted), "--data-dir", str(tmp_path / "d"))
    assert bad.returncode == 2
    assert f"{quoted}: providers[0].concurrency: '3' is not an integer" in bad.stderr
    no_display = cli(*common, env={"DISPLAY": "", "WAYLAND_DISPLAY": "", "QT_QPA_PLATFORM": ""})
    assert no_display.returncode == 1 and "no display" in no_display.stderr


def test_the_same_prompts_for_another_model_are_new_tasks(tmp_path: Path) -> None:
    config = write_config(tmp_path / "c.toml")
    prompts = tmp_path / "p.txt"
    prompts.write_text("one\ntwo\n", encoding="utf-8")
    common = ("--config", str(config), "--data-dir", str(tmp_path / "d"), "--speed", "200", "--json")
    first = json.loads(cli("run", str(prompts), "--model", "writer", *common).stdout)
    again = cli("run", str(prompts), "--model", "writer", *common)
    assert "nothing new queued, 2 tasks already in the store" in again.stderr
    other = json.loads(cli("run", str(prompts), "--model", "video", *common).stdout)
    assert {t["model"] for t in other["tasks"]} == {"video"} and other["success"] == 2
    assert not {t["task_id"] for t in first["tasks"]} & {t["task_id"] for t in other["tasks"]}


@pytest.mark.slow
def test_the_demo_resumes_remote_tasks_after_ctrl_c(tmp_path: Path) -> None:
    data = tmp_path / "d"
    args = ("run", str(RESOURCES / "examples" / "video-batch.csv"), "--demo", "--speed", "60",
            "--data-dir", str(data))
    first = cli_popen(*args)
    demo = data / "demo"
    try:
        wait_until_sync(lambda: _count(demo, "running") > 0 and bool(_db_rows(
            demo, "select count(*) from task where remote_id is not null")[0][0]), timeout=60)
    finally:
        first.send_signal(signal.SIGINT)
        first.communicate(timeout=60)
    submitted = dict(_db_rows(demo, "select task_id, remote_id from task where remote_id is not null"))
    assert submitted and first.returncode == 130
    second = cli(*args, "--json", timeout=300)
    assert second.returncode == 0, second.stderr
    out = json.loads(second.stdout)
    assert out["success"] == 8
    for task in out["tasks"]:  # polled where it was left, never created again
        if task["task_id"] in submitted:
            assert task["remote_id"] == submitted[task["task_id"]]
    remote = json.loads((demo / "demo-runninghub.json").read_text())["tasks"]
    assert len(remote) == 8 and all(t["files"] for t in remote)


def test_common_options_may_come_before_the_command(tmp_path: Path) -> None:
    """``mediaassist --data-dir D status`` is the status command, not the window opening a file
    named "status"."""
    before = cli("--data-dir", str(tmp_path / "d"), "--demo", "status", "--json")
    assert before.returncode == 0, before.stderr
    lanes = json.loads(before.stdout)["lanes"]
    assert any(lane["lane"] == "api:demo-openai" for lane in lanes)
    assert (tmp_path / "d" / "demo").is_dir()  # the option reached the command


CHINESE_LOCALE = {"LANG": "zh_CN.UTF-8", "LC_ALL": "", "LC_MESSAGES": ""}


def test_a_chinese_locale_reports_bad_rows_in_chinese(tmp_path: Path) -> None:
    """The shipped example of bad rows under LANG=zh_CN.UTF-8: row, column and reason in Chinese,
    the values (model names, the cell) as written; the good rows still run."""
    proc = cli("run", str(RESOURCES / "examples" / "bad-rows.csv"), "--demo", "--speed", "100",
               "--data-dir", str(tmp_path / "d"), env=CHINESE_LOCALE)
    assert proc.returncode == 2
    assert "bad-rows.csv：第 3 行：未知模型 'gpt-unknown'（已知模型：demo-writer" in proc.stderr
    assert "bad-rows.csv：第 4 行：提示词为空（模型 'demo-writer' 需要提示词）" in proc.stderr
    assert "bad-rows.csv：第 6 行：priority 'high' 不是整数" in proc.stderr
    assert "2 个任务已作为批次 bad-rows-" in proc.stderr and "跳过 3 个错误行" in proc.stderr
    assert "row 3" not in proc.stderr and "unknown model" not in proc.stderr


def test_lang_chooses_the_language_over_the_locale(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text('[[providers]]\nname="p"\nkind="api"\ntype="simulated"\nconcurrency=9\n', encoding="utf-8")
    chinese = cli("status", "--config", str(config), "--data-dir", str(tmp_path / "d"), "--lang", "zh_CN")
    assert chinese.returncode == 2
    assert "mediaassist：配置错误：" in chinese.stderr
    assert "providers[0].concurrency：9 超出范围（允许：整数 1..5）" in chinese.stderr
    english = cli("status", "--config", str(config), "--data-dir", str(tmp_path / "d"), "--lang", "en",
                  env=CHINESE_LOCALE)
    assert "mediaassist: config error: " in english.stderr
    assert "providers[0].concurrency: 9 is out of range (allowed: integer 1..5)" in english.stderr
    c_locale = cli("status", "--config", str(config), "--data-dir", str(tmp_path / "d"),
                   env={**CHINESE_LOCALE, "LC_ALL": "C"})  # LC_ALL wins over LANG
    assert "config error" in c_locale.stderr
    unknown = cli("status", "--lang", "fr_FR", "--data-dir", str(tmp_path / "d"))
    assert unknown.returncode == 2 and "unknown language 'fr_FR' (known: en, zh_CN)" in unknown.stderr


def _columns(text: str) -> int:
    """Terminal columns of ``text``: a wide (CJK) character takes two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _column_of(line: str, word: str) -> int:
    return _columns(line[:line.index(word)])


# The English of the operator's tables, headings and summaries, and the Chinese that replaces it.
COMMAND_TEXTS = {
    "status": (("running ", "pending ", "success ", "PAUSED:", "spent today", "at work"),
               ("运行中 ", "排队 ", "成功 ", "已暂停：", "今日花费", "正在使用此存储")),
    "accounts": ((" site ", "enabled", "disabled", "login", " on "), ("站点", "已启用", "已停用", "登录", "位于")),
    "estimate": (("task(s)", "about", "total:", "price table"), ("个任务", "约", "合计：", "价格表")),
    "doctor": (("backed up to", "integrity_check ok"), ("已备份到", "integrity_check 通过")),
    "profiles": (("# create (text only)", "# status (", "# results:", "<input image: "),
                 ("# 创建（仅文本）", "# 状态（", "# 结果：", "<输入 image：")),
}


def test_the_operators_tables_and_summaries_read_in_chinese(tmp_path: Path) -> None:
    """status, accounts list, estimate, lanes, doctor and profiles check under --lang zh_CN (and
    LANG=zh_CN.UTF-8): no English heading is left, the names and numbers stay, and the columns
    still line up with wide characters in them; --lang en and --json keep the English."""
    config = write_config(tmp_path / "c.toml", sim_config_text(accounts=("小明", "bob")))
    common = ("--config", str(config), "--data-dir", str(tmp_path / "d"))
    tasks = write_csv(tmp_path / "t.csv", [{"model": "writer", "prompt": f"p{i}"} for i in range(3)])

    def both(*args: str) -> tuple[str, str]:
        english, chinese = (cli(*args, *common, "--lang", lang) for lang in ("en", "zh_CN"))
        assert english.returncode == chinese.returncode == 0, chinese.stderr
        return english.stdout, chinese.stdout

    paused = both("lanes", "pause", "api:sim-api")
    assert paused[0].strip() == "api:sim-api: paused" and paused[1].strip().startswith("api:sim-api：")
    both("accounts", "disable", "bob")
    outputs = {"status": both("status"), "accounts": both("accounts", "list"), "estimate": both("estimate", str(tasks)),
               "doctor": both("doctor"), "profiles": both("profiles", "check", "kling")}
    for command, (english_words, chinese_words) in COMMAND_TEXTS.items():
        english, chinese = outputs[command]
        assert all(word in english for word in english_words), (command, english)
        assert not [word for word in english_words if word in chinese], (command, chinese)
        assert all(word in chinese for word in chinese_words), (command, chinese)
    status, accounts = outputs["status"][1].splitlines(), outputs["accounts"][1].splitlines()
    assert {"api:sim-api", "web:小明", "web:bob"} <= {line.split()[0] for line in status}
    lanes = [line for line in status if "运行中" in line]
    assert len({_column_of(line, "运行中") for line in lanes}) == 1, lanes
    assert sorted(line.split()[0] for line in accounts) == ["bob", "小明"]
    for word in ("站点", "登录", "位于"):
        assert len({_column_of(line, word) for line in accounts}) == 1, accounts
    by_locale = cli("status", *common, env=CHINESE_LOCALE)
    assert by_locale.stdout == outputs["status"][1]
    as_json = cli("status", "--json", *common, env=CHINESE_LOCALE)
    lanes_json = {lane["lane"]: lane for lane in json.loads(as_json.stdout)["lanes"]}
    assert lanes_json["api:sim-api"]["paused"] == "paused by operator" and "已暂停" not in as_json.stdout


def test_a_demo_command_ends_as_soon_as_its_work_is_done(tmp_path: Path) -> None:
    """estimate --demo starts every demo server to learn the demo models, then stops them: all at
    once, not one after another at up to half a second each (which made it take ~10 s)."""
    started = time.monotonic()
    done = cli("estimate", str(SEED), "--demo", "--data-dir", str(tmp_path / "data"), "--lang", "en")
    elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    assert "total: about" in done.stdout
    assert elapsed < 5.0, f"estimate --demo took {elapsed:.1f} s"


def test_a_reader_that_stops_early_gets_no_traceback(tmp_path: Path) -> None:
    """``mediaassist status | head -1``: the pipe closes before status has printed everything."""
    config = tmp_path / "config.toml"
    config.write_text("", encoding="utf-8")
    status = cli_popen("status", "--config", str(config), "--data-dir", str(tmp_path / "data"), "--lang", "en")
    assert status.stdout is not None and status.stderr is not None
    status.stdout.close()  # the reader has gone before the first line is written
    errors = status.stderr.read()
    assert status.wait(timeout=60) == 141  # as a shell reports a process ended by SIGPIPE
    assert errors == ""


def test_a_run_with_failures_ends_by_naming_their_kinds_and_the_retry_command(tmp_path: Path) -> None:
    tasks = write_csv(tmp_path / "fails.csv", [{"task_id": "f1", "model": "demo-video", "prompt": "#fail one"},
                                                {"task_id": "f2", "model": "demo-sora", "prompt": "#fail two"},
                                                {"task_id": "ok1", "model": "demo-writer", "prompt": "fine"}])
    done = cli("run", str(tasks), "--demo", "--speed", "500", "--data-dir", str(tmp_path / "data"), "--lang", "en")
    assert done.returncode == 1, done.stderr
    [batch] = re.findall(r"queued as batch (\S+)", done.stderr)
    assert done.stderr.rstrip().endswith(
        f"mediaassist: 2 tasks failed (provider 2); queue them again with: mediaassist retry --batch {batch}")
