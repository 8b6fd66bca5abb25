"""Budgets across processes and machines, and money on the command line: real ``mediaassist``
processes on one SQLite store and, with MEDIAASSIST_TEST_PG, two "machines" on PostgreSQL."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from mediaassist.core.location import HOST_ID_ENV
from mediaassist.core.store import SPEND_SETTLED, Spend, Store
from mediaassist.demo_servers.openai_server import DemoOpenAIServer
from tests.helpers import PG_URL, cli, cli_popen, fresh_pg_database, toml_table, write_config, write_csv

DAILY = Decimal(5)
PRICE = Decimal(1)  # a flat price: the estimate is the actual, so "within one estimate's error" is exact


def _config_text(daily: Decimal = DAILY) -> str:
    return (f"[budget]\ndaily = {{ CNY = {daily} }}\n\n"
            + toml_table("providers", name="sim-api", kind="api", type="simulated", concurrency=2,
                         min_duration_s=2, max_duration_s=4)
            + toml_table("models", name="writer", kind="api", provider="sim-api")
            + f'price = {{ currency = "CNY", per_task = {PRICE} }}\n')


def _tasks_file(path: Path, prefix: str, n: int) -> Path:
    return write_csv(path, [{"model": "writer", "prompt": f"{prefix} {i}", "task_id": f"{prefix}{i}"}
                            for i in range(n)])


def _run_two(tmp_path: Path, data_dirs: list[Path], store_args: list[str],
             envs: list[dict[str, str]]) -> list[tuple[int, str, str]]:
    """Two ``run`` processes at once, each with 6 tasks of its own file: (exit, stdout, stderr)."""
    config = write_config(tmp_path / "config.toml", _config_text())
    procs = []
    for number, (data, env) in enumerate(zip(data_dirs, envs, strict=True)):
        tasks = _tasks_file(tmp_path / f"tasks{number}.csv", f"p{number}-", 6)
        procs.append(cli_popen("run", "--config", str(config), "--data-dir", str(data),
                               *store_args, "--speed", "20", "--json", str(tasks), env=env))
    outcomes = []
    for proc in procs:
        out, err = proc.communicate(timeout=240)
        outcomes.append((proc.returncode, out, err))
    return outcomes


def _check_budget_held(store: Store, outcomes: list[tuple[int, str, str]]) -> None:
    settled = [r for r in Spend.select() if r.state == SPEND_SETTLED]
    spent = sum((r.money.amount for r in settled), Decimal(0))
    assert spent <= DAILY  # never overspent (the flat price has no estimate error)
    assert spent == DAILY  # and the budget was used up, not left idle
    assert len(settled) == 5
    for code, out, err in outcomes:
        assert code == 1, err  # tasks left queued: exit 1
        assert "budget: ¥5.00 of ¥5.00 spent today" in err
        summary = json.loads(out)
        assert summary["pending"] == 6 - summary["success"]  # nothing lost: the rest stays queued
        assert summary["cost"] == ({"CNY": str(summary["success"])} if summary["success"] else {})
        for task in summary["tasks"]:
            if task["state"] == "success":
                assert task["cost"] == [{"amount": "1", "currency": "CNY", "source": "price table", "attempt": 1}]
                assert task["estimate"] == [{"amount": "1", "currency": "CNY", "attempt": 1}]


@pytest.mark.slow
def test_a_daily_budget_is_shared_by_two_processes_on_one_store(tmp_path: Path) -> None:
    data = tmp_path / "data"
    outcomes = _run_two(tmp_path, [data, data], [], [{}, {}])
    store = Store(data / "mediaassist.sqlite3")
    try:
        _check_budget_held(store, outcomes)
    finally:
        store.close()


@pytest.mark.slow
@pytest.mark.skipif(not PG_URL, reason="set MEDIAASSIST_TEST_PG to a postgresql:// server URL")
def test_a_daily_budget_is_shared_by_two_machines_on_postgresql(tmp_path: Path) -> None:
    with fresh_pg_database(PG_URL) as url:  # type: ignore[arg-type]
        outcomes = _run_two(tmp_path, [tmp_path / "machine-a", tmp_path / "machine-b"], ["--store", url],
                            [{HOST_ID_ENV: "machine-a"}, {HOST_ID_ENV: "machine-b"}])
        store = Store(url)
        try:
            _check_budget_held(store, outcomes)
            assert {r.task_id.split("-")[0] for r in Spend.select()} <= {"p0", "p1"}
        finally:
            store.close()


TOKEN_DAILY = Decimal(4)


@pytest.mark.slow
@pytest.mark.skipif(not PG_URL, reason="set MEDIAASSIST_TEST_PG to a postgresql:// server URL")
def test_a_token_priced_daily_budget_is_shared_by_two_machines_on_postgresql(tmp_path: Path) -> None:
    """Prices by tokens: an estimate is not the actual. Reservations in the shared store still
    keep two machines from spending the same yuan, and each stops only when the next task's
    estimate no longer fits."""
    key = "sk-money-procs-0123456789"
    with DemoOpenAIServer(api_key=key, models=("writer",), latency_s=(0.2, 0.4)) as server, \
            fresh_pg_database(PG_URL) as url:  # type: ignore[arg-type]
        config = write_config(tmp_path / "config.toml", f"[budget]\ndaily = {{ CNY = {TOKEN_DAILY} }}\n\n"
                              + toml_table("providers", name="acme", kind="api", type="openai",
                                           base_url=server.base_url, api_key=key, concurrency=2)
                              + 'price = { currency = "CNY", per_1k_input_tokens = 2, per_1k_output_tokens = 8 }\n\n'
                              + toml_table("models", name="writer", kind="api", provider="acme", endpoint="chat"))
        procs = [cli_popen("run", "--config", str(config), "--data-dir", str(tmp_path / machine), "--store", url,
                           "--speed", "20", "--json", str(_tasks_file(tmp_path / f"{machine}.csv", machine, 12)),
                           env={HOST_ID_ENV: machine}) for machine in ("machine-a", "machine-b")]
        outcomes = [proc.communicate(timeout=240) for proc in procs]
        store = Store(url)
        try:
            rows = list(Spend.select())
        finally:
            store.close()
    settled = [r for r in rows if r.state == SPEND_SETTLED]
    spent = sum((r.money.amount for r in settled), Decimal(0))
    assert all(r.state == SPEND_SETTLED for r in rows)  # no reservation left behind
    assert 0 < spent <= TOKEN_DAILY
    assert TOKEN_DAILY - spent < max(r.estimate for r in settled) / Decimal(10**6)  # stopped when the next did not fit
    assert {r.source for r in settled} == {"price table"}
    assert len(settled) < 24 and sum(json.loads(out)["success"] for out, _err in outcomes) == len(settled)
    assert all("budget: " in err for _out, err in outcomes)


def test_estimate_status_and_a_raised_budget_on_the_command_line(tmp_path: Path) -> None:
    config = write_config(tmp_path / "config.toml", _config_text(daily=Decimal(2)))
    data = tmp_path / "data"
    tasks = _tasks_file(tmp_path / "tasks.csv", "t", 3)
    estimate = cli("estimate", "--config", str(config), "--data-dir", str(data), "--json", str(tasks))
    assert estimate.returncode == 0, estimate.stderr
    assert json.loads(estimate.stdout) == {
        "models": [{"model": "writer", "tasks": 3, "unknown": 0, "total": {"CNY": "3"}, "basis": "price table"}],
        "total": {"CNY": "3"}, "unknown": 0}
    assert "writer: 3 task(s), about ¥3.00 (price table)" in cli(
        "estimate", "--config", str(config), "--data-dir", str(data), str(tasks)).stdout
    run = cli("run", "--config", str(config), "--data-dir", str(data), "--speed", "20", str(tasks))
    assert run.returncode == 1
    assert "cost: ¥2.00 (estimated ¥2.00)" in run.stderr
    assert "api:sim-api: budget: ¥2.00 of ¥2.00 spent today; raise the budget" in run.stderr
    status = cli("status", "--config", str(config), "--data-dir", str(data), "--json")
    spent = json.loads(status.stdout)["spent_today"]
    assert (spent["total"], spent["by_lane"]) == ({"CNY": "2"}, {"api:sim-api": {"CNY": "2"}})
    assert "PAUSED: budget: ¥2.00 of ¥2.00 spent today" in cli(
        "status", "--config", str(config), "--data-dir", str(data)).stdout
    # The budget raised: the same file resumes and the last task runs; the lane resumed by itself.
    raised = write_config(tmp_path / "config.toml", _config_text(daily=Decimal(10)))
    again = cli("run", "--config", str(raised), "--data-dir", str(data), "--speed", "20", str(tasks))
    assert again.returncode == 0, again.stderr
    assert "PAUSED" not in cli("status", "--config", str(raised), "--data-dir", str(data)).stdout


def test_run_stops_a_batch_at_its_budget_exits_1_and_keeps_the_rest_queued(tmp_path: Path) -> None:
    text = _config_text(daily=Decimal(100)).replace("[budget]\n", '[budget]\nper_batch = { CNY = "2.50" }\n')
    config = write_config(tmp_path / "config.toml", text)
    data = tmp_path / "data"
    tasks = _tasks_file(tmp_path / "tasks.csv", "t", 4)
    run = cli("run", "--config", str(config), "--data-dir", str(data), "--speed", "20", "--json", str(tasks))
    assert run.returncode == 1
    summary = json.loads(run.stdout)
    assert (summary["success"], summary["pending"], summary["cost"]) == (2, 2, {"CNY": "2"})
    [batch] = summary["batch_ids"]
    assert f"batch {batch}: budget: ¥2.00 of ¥2.50 spent on batch {batch}; raise [budget] per_batch" in run.stderr
    status = cli("status", "--config", str(config), "--data-dir", str(data), "--json")
    assert json.loads(status.stdout)["stopped_batches"] == {batch: f"budget: ¥2.00 of ¥2.50 spent on batch {batch}"}
    assert "PAUSED" not in cli("status", "--config", str(config), "--data-dir", str(data)).stdout  # the lane runs on
