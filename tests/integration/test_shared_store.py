"""A team's shared store: choosing it, its schema version, accounts bound to machines, owners on
other machines. Store-backed tests run on SQLite and on PostgreSQL (see conftest.py)."""

from __future__ import annotations

import asyncio
import multiprocessing
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest
from keyring.backend import KeyringBackend

from mediaassist.core.clock import Clock
from mediaassist.core.config import AppConfig, parse_config
from mediaassist.core.errors import ConfigError
from mediaassist.core.location import (
    HOST_ID_ENV,
    STORE_URL_ENV,
    StoreUnavailable,
    choose_store_url,
    connect_kwargs,
    keyring_user,
    redact_url,
)
from mediaassist.core.scheduler import STALL_S
from mediaassist.core.secrets import KEYRING_SERVICE, redact
from mediaassist.core.store import SCHEMA_VERSION, NewTask, Presence, Store, Task
from tests.harness import (
    make_scheduler,
    run_to_end,
    scheduler_running,
    sim_api_tasks,
    sim_web_tasks,
    wait_until_sync,
)
from tests.helpers import PG_URL, cli, cli_popen, sim_config_text, write_config, write_csv

HOSTED_CONFIG = sim_config_text().replace('name = "alice"\nsite = "simulated"\n',
                                          'name = "alice"\nsite = "simulated"\nhost = "machine-a"\n'
                                          ).replace('name = "bob"\nsite = "simulated"\n',
                                                    'name = "bob"\nsite = "simulated"\nhost = "machine-b"\n')


def _hosted_config() -> AppConfig:
    import tomllib

    return parse_config(tomllib.loads(HOSTED_CONFIG))


def _web(n: int, prefix: str = "w", account: str | None = None) -> list[NewTask]:
    return sim_web_tasks(n, prefix, id_digits=1, prompt="q", account=account, sim_duration_s=1)


def _api(n: int) -> list[NewTask]:
    return sim_api_tasks(n, id_digits=1, prompt="p", sim_duration_s=1)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# --- choosing the store ------------------------------------------------------------------------

def test_the_flag_wins_over_the_environment_which_wins_over_the_config(monkeypatch: pytest.MonkeyPatch) -> None:
    config_url = "postgresql://team@db.example/queue"
    assert choose_store_url(None, None) is None  # the local SQLite file
    assert choose_store_url(None, config_url) == config_url
    monkeypatch.setenv(STORE_URL_ENV, "postgresql://env@db.example/queue")
    assert choose_store_url(None, config_url) == "postgresql://env@db.example/queue"
    assert choose_store_url("postgresql://flag@db.example/queue", config_url) == "postgresql://flag@db.example/queue"
    monkeypatch.setenv(STORE_URL_ENV, "mysql://env@db.example/queue")
    with pytest.raises(ConfigError, match=STORE_URL_ENV):
        choose_store_url(None, config_url)


@pytest.mark.parametrize(("url", "reason"), [
    ("mysql://u@h/db", "not a postgresql:// URL"),
    ("postgresql://u@h/", "names no database"),
    ("postgresql://u@h:99999/db", "invalid port"),
])
def test_a_bad_store_url_in_the_config_names_the_key(url: str, reason: str) -> None:
    with pytest.raises(ConfigError, match=f"store.url: .*{reason}"):
        parse_config({"store": {"url": url}})
    with pytest.raises(ConfigError, match=r"store\.pool: unknown key"):
        parse_config({"store": {"url": "postgresql://u@h/db", "pool": 3}})


def test_passwords_are_redacted_and_the_keyring_supplies_a_missing_one(monkeypatch: pytest.MonkeyPatch) -> None:
    assert redact_url("postgresql://team:s3cr3t-pw@db.example:5433/queue") == \
        "postgresql://team:***@db.example:5433/queue"
    assert keyring_user("postgresql://team:s3cr3t-pw@db.example:5433/queue") == \
        "postgresql://team@db.example:5433/queue"

    class Memory(KeyringBackend):
        priority = 1  # type: ignore[assignment]

        def __init__(self) -> None:
            super().__init__()
            self.items = {(KEYRING_SERVICE, "postgresql://team@db.example/queue"): "kr-pass-7781"}

        def get_password(self, service: str, username: str) -> str | None:
            return self.items.get((service, username))

        def set_password(self, service: str, username: str, password: str) -> None:
            self.items[(service, username)] = password

        def delete_password(self, service: str, username: str) -> None:
            self.items.pop((service, username), None)

    previous = keyring.get_keyring()
    keyring.set_keyring(Memory())
    try:
        assert connect_kwargs("postgresql://team@db.example/queue") == {"password": "kr-pass-7781"}
        assert redact("connect failed for kr-pass-7781") == "connect failed for ***"  # registered secret
        assert connect_kwargs("postgresql://other@db.example/queue") == {}  # libpq tries .pgpass
        assert connect_kwargs("postgresql://team:inline-pw-55@db.example/queue") == {}
        assert redact("inline-pw-55") == "***"
    finally:
        keyring.set_keyring(previous)


def test_an_unreachable_server_is_one_line_and_exit_2_without_the_password(tmp_path: Path) -> None:
    url = f"postgresql://team:hunter2-pw@127.0.0.1:{_closed_port()}/queue"
    for args in (["status"], ["cancel", "x"], ["accounts", "list"]):
        done = cli(*args, "--store", url, "--data-dir", str(tmp_path / "data"))
        assert done.returncode == 2, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "cannot reach the shared store" in lines[0], done.stderr
        assert "hunter2-pw" not in done.stderr + done.stdout and "team:***@" in lines[0]
    with pytest.raises(StoreUnavailable, match="cannot reach"):
        Store(url)


def test_a_bad_store_url_from_the_flag_is_exit_2(tmp_path: Path) -> None:
    done = cli("status", "--store", "sqlite:///x.db", "--data-dir", str(tmp_path / "data"))
    assert done.returncode == 2 and "--store" in done.stderr and "Traceback" not in done.stderr


# --- schema version ----------------------------------------------------------------------------

def _version(store: Store) -> int:
    return store.db.execute_sql("SELECT version FROM schema_version").fetchone()[0]


def test_a_store_from_before_schema_versions_is_migrated_and_keeps_its_rows(store_location: str) -> None:
    store = Store(store_location)
    store.enqueue("b", _api(3))
    for table, column in (("account", "host"), ("task", "host")):
        store.db.execute_sql(f'ALTER TABLE "{table}" DROP COLUMN "{column}"')
    store.db.execute_sql('DROP TABLE "schema_version"')
    store.close()

    again = Store(store_location)
    assert _version(again) == SCHEMA_VERSION
    assert [t.task_id for t in again.tasks()] == ["a0", "a1", "a2"]
    (claimed,) = again.claim("api:sim-api", "machine-a:1:2:abc")
    assert again.get(claimed.task_id).host == "machine-a"
    again.close()


# The task table's indexes as schema 7 made them: whole-table, every state in each.
SCHEMA_7_INDEXES = {
    "task_state_heartbeat_at": '"state", "heartbeat_at"', "task_state_not_before": '"state", "not_before"',
    "task_route_account_state": '"route", "account", "state"',
    "task_batch_id_route_account_state": '"batch_id", "route", "account", "state"',
    "task_route_state_remote_id": '"route", "state", "remote_id"', "task_create_hold_until": '"create_hold_until"',
    "task_claim_order": '"route", "state", "priority" DESC, "seq"',
    "task_batch_claim_order": '"batch_id", "route", "state", "priority" DESC, "seq"',
    "task_longest_order": '"route", "state", "priority" DESC, "expected_s" DESC, "seq"',
    "task_route_batches": '"route", "state", "batch_id"',
}


def test_a_store_of_version_7_trades_its_whole_table_indexes_for_partial_ones(store_location: str) -> None:
    old = Store(store_location)
    old.enqueue("b", _api(3))
    (running,) = old.claim("api:sim-api", "machine-a:1:2:abc", lane_limit=2)
    made_by_8 = {index.name for index in old.db.get_indexes("task")} - {"task_pkey", "task_task_id", "task_updated_at"}
    for name in made_by_8:
        old.db.execute_sql(f'DROP INDEX "{name}"')
    for name, columns in SCHEMA_7_INDEXES.items():
        old.db.execute_sql(f'CREATE INDEX "{name}" ON "task" ({columns})')
    old.db.execute_sql("UPDATE schema_version SET version = 7")
    old.close()

    store = Store(store_location)
    try:
        indexes = {index.name for index in store.db.get_indexes("task")}
        assert _version(store) == SCHEMA_VERSION
        assert {"task_pending_order", "task_running", "task_pending_later"} <= made_by_8 <= indexes
        assert not indexes & set(SCHEMA_7_INDEXES)
        # The rows are as they were: the running one holds its slot, the queue goes on in order.
        assert store.get(running.task_id).state == "running"
        assert [t.task_id for t in store.claim("api:sim-api", "me", limit=3, lane_limit=2)] == ["a1"]
    finally:
        store.close()


def test_a_newer_schema_is_refused_in_one_line_with_exit_2(store_location: str, tmp_path: Path) -> None:
    store = Store(store_location)
    store.db.execute_sql(f"UPDATE schema_version SET version = {SCHEMA_VERSION + 7:d}")
    store.close()
    with pytest.raises(StoreUnavailable, match=f"version {SCHEMA_VERSION + 7}, newer than this program"):
        Store(store_location)
    if store_location.startswith("postgresql://"):
        args = ["--store", store_location, "--data-dir", str(tmp_path / "elsewhere")]
    else:
        args = ["--data-dir", str(Path(store_location).parent)]
    done = cli("status", *args)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "upgrade mediaassist" in done.stderr


def _open_store_worker(location: str, queue: multiprocessing.Queue) -> None:
    try:
        Store(location).close()
        queue.put("ok")
    except Exception as exc:  # reported to the test, which names it
        queue.put(f"{type(exc).__name__}: {exc}")


def test_processes_starting_together_create_the_schema_once(store_location: str) -> None:
    ctx = multiprocessing.get_context("spawn")
    queue: multiprocessing.Queue = ctx.Queue()
    workers = [ctx.Process(target=_open_store_worker, args=(store_location, queue)) for _ in range(4)]
    for worker in workers:
        worker.start()
    outcomes = [queue.get(timeout=60) for _ in workers]
    for worker in workers:
        worker.join(timeout=30)
    assert outcomes == ["ok"] * 4
    store = Store(store_location)
    assert store.db.execute_sql("SELECT COUNT(*), MAX(version) FROM schema_version").fetchone() == (1, SCHEMA_VERSION)
    store.close()


# --- accounts live on one machine --------------------------------------------------------------

@pytest.mark.asyncio
async def test_web_tasks_run_only_on_the_machine_of_their_account(
        store: Store, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = _hosted_config()
    store.enqueue("b", _web(4) + _web(1, prefix="for-bob", account="bob"))
    monkeypatch.setenv(HOST_ID_ENV, "machine-a")
    async with scheduler_running(store, config, data_dir, Clock(200)) as sched:
        await asyncio.wait_for(sched.wait_for_batches(["b"]), 60)
        assert {lane: str(why) for lane, why in sched.blocked_lanes().items()} == {
            "web:bob": "account lives on machine-b"}
    tasks = {t.task_id: t for t in store.tasks(["b"])}
    # The site's unpinned tasks went to the free account here; bob's waits for bob's machine.
    assert {(tasks[f"w{i}"].state, tasks[f"w{i}"].account, tasks[f"w{i}"].host) for i in range(4)} == \
        {("success", "alice", "machine-a")}
    assert tasks["for-bob0"].state == "pending"

    monkeypatch.setenv(HOST_ID_ENV, "machine-b")
    await run_to_end(make_scheduler(store, config, data_dir, Clock(200)), "b", 60)
    bobs = store.get("for-bob0")
    assert (bobs.state, bobs.account, bobs.host) == ("success", "bob", "machine-b")


@pytest.mark.asyncio
async def test_a_batch_waits_for_its_accounts_machine_only_while_that_machine_works_on_it(
        store: Store, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store.enqueue("b", _web(1, prefix="for-bob", account="bob"))
    bobs_machine = "machine-b:4242:12345:abc"
    monkeypatch.setenv(HOST_ID_ENV, "machine-a")
    async with scheduler_running(store, _hosted_config(), data_dir, Clock(1)) as sched:
        async def waits_on(owner_batches: list[str]) -> bool:
            store.announce(bobs_machine, owner_batches)
            waiting = asyncio.ensure_future(sched.wait_for_batches(["b"]))
            await asyncio.sleep(1.0)  # four of its checks
            still = not waiting.done()
            waiting.cancel()
            return still

        assert "machine-a" in store.hosts_present(0.0, ["b"])  # this scheduler says it is at work
        # Bob's machine takes this batch: the task will run there, so a `run` here waits.
        assert await waits_on(["b"])
        assert await waits_on(None)  # a window (every batch) counts too
        assert not await waits_on(["another-batch"])  # at work, but never on this batch
        Presence.update(beat_at=store.now() - STALL_S - 1).where(Presence.owner == bobs_machine).execute()
        waiting = asyncio.ensure_future(sched.wait_for_batches(["b"]))
        await asyncio.wait_for(waiting, 5)  # silent past the stall limit: gone, do not wait for it
    # ... and withdrew when it stopped.
    assert [p.host for p in Presence.select()] == ["machine-b"]


def test_a_login_binds_an_unbound_account_to_its_machine(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    config = _hosted_config()
    config.accounts.append(type(config.accounts[0])(name="carol", site="simulated"))
    store.sync_accounts(config.accounts)
    hosts = {a.name: a.host for a in store.accounts()}
    assert hosts == {"alice": "machine-a", "bob": "machine-b", "carol": None}
    monkeypatch.setenv(HOST_ID_ENV, "machine-c")
    store.set_login_state("carol", "needs_login", "expired")
    assert store.account("carol").host is None  # a failed login binds nothing
    store.set_login_state("carol", "ok")
    assert store.account("carol").host == "machine-c"
    monkeypatch.setenv(HOST_ID_ENV, "machine-a")
    store.set_login_state("carol", "ok")
    assert store.account("carol").host == "machine-c"  # the first machine keeps it...
    config.accounts[-1].host = "machine-a"
    store.sync_accounts(config.accounts)
    assert store.account("carol").host == "machine-a"  # ...until the config moves it


def test_status_and_accounts_list_say_where_each_account_lives(tmp_path: Path) -> None:
    config = write_config(tmp_path / "config.toml", HOSTED_CONFIG)
    data = str(tmp_path / "data")
    done = cli("status", "--json", "--config", str(config), "--data-dir", data)
    hosts = {lane["lane"]: lane.get("host") for lane in __import__("json").loads(done.stdout)["lanes"]}
    assert hosts["web:alice"] == "machine-a" and hosts["web:bob"] == "machine-b"
    listed = cli("accounts", "list", "--config", str(config), "--data-dir", data).stdout
    assert "on machine-a" in listed and "on machine-b" in listed


# --- owners on other machines ------------------------------------------------------------------

def test_another_machines_owner_is_judged_by_heartbeat_age_only(
        store: Store, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(HOST_ID_ENV, "machine-a")
    store.enqueue("b", _api(2))
    # pid 1 is alive here, and a pid that does not exist here proves nothing on machine-b.
    live, silent = store.claim("api:sim-api", "machine-b:1:12345:abc", limit=2)
    store.save_remote_id(silent, "1904737800233889793")
    Task.update(heartbeat_at=store.now() - STALL_S - 5).where(Task.task_id == silent.task_id).execute()
    sched = make_scheduler(store, _hosted_config(), data_dir, Clock(1))
    assert sched.recover_dead_owners() == 0  # no PID judgement across machines
    sched.reap_stalled()
    kept = store.get(live.task_id)
    assert (kept.state, kept.owner) == ("running", "machine-b:1:12345:abc")
    reaped = store.get(silent.task_id)
    assert (reaped.state, reaped.attempt, reaped.error_kind) == ("pending", 2, "stalled")
    assert reaped.remote_id == "1904737800233889793"  # the retry polls it, never creates a second


def test_a_dead_process_on_this_machine_is_found_at_once_under_the_host_id(
        store: Store, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(HOST_ID_ENV, "machine-a")
    store.enqueue("b", _api(1))
    store.claim("api:sim-api", "machine-a:999999:12345:abc")  # no such pid here
    sched = make_scheduler(store, _hosted_config(), data_dir, Clock(1))
    assert sched.recover_dead_owners() == 1
    assert store.get("a0").state == "pending"


# --- a server that goes away -------------------------------------------------------------------

CLUSTER = Path(__file__).resolve().parents[2] / "packaging" / "pg_test_cluster.sh"
needs_pg = pytest.mark.skipif(not PG_URL, reason="needs PostgreSQL's binaries (CI: MEDIAASSIST_TEST_PG is set)")


@pytest.fixture
def own_server() -> Iterator[tuple[str, Path]]:
    """A PostgreSQL server of this test's own, which it may stop and start. Its folder is not
    under tmp_path: run as root the server runs as nobody, who cannot enter pytest's folders."""
    folder = Path(tempfile.mkdtemp(prefix="mediaassist-test-pg-"))
    url = subprocess.run([str(CLUSTER), "start", str(folder)], check=True, capture_output=True,
                         text=True).stdout.strip()
    try:
        yield url, folder
    finally:
        subprocess.run([str(CLUSTER), "stop", str(folder)], check=False)
        shutil.rmtree(folder, ignore_errors=True)


def _cluster(action: str, folder: Path) -> None:
    subprocess.run([str(CLUSTER), action, str(folder)], check=True, capture_output=True)


@needs_pg
def test_a_dropped_connection_is_reopened_and_a_stopped_server_is_a_fault_until_it_is_back(
        own_server: tuple[str, Path]) -> None:
    url, folder = own_server
    store = Store(url)
    store.enqueue("b", _api(2))
    import psycopg2

    admin = psycopg2.connect(url)  # an administrator cutting every client off
    admin.autocommit = True
    admin.cursor().execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                           "WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'")
    admin.close()
    assert store.get("a0").state == "pending"  # connected again, nothing lost

    _cluster("stop", folder)
    with pytest.raises(StoreUnavailable, match="cannot reach the shared store"):
        store.get("a0")
    with pytest.raises(StoreUnavailable):
        store.claim("api:sim-api", "machine-a:1:2:abc", lane_limit=3)  # inside a transaction too
    _cluster("start", folder)
    assert [t.task_id for t in store.claim("api:sim-api", "machine-a:1:2:abc", limit=2, lane_limit=3)] == ["a0", "a1"]
    store.close()


@needs_pg
def test_run_stops_with_one_line_and_exit_2_when_the_server_goes_away(
        own_server: tuple[str, Path], tmp_path: Path) -> None:
    url, folder = own_server
    config = write_config(tmp_path / "config.toml", sim_config_text(api_s=(600, 600)))
    batch = write_csv(tmp_path / "long.csv", [{"model": "writer", "prompt": f"p{i}"} for i in range(4)])
    run = cli_popen("run", str(batch), "--config", str(config), "--data-dir", str(tmp_path / "data"),
                    "--store", url)
    store = Store(url)
    wait_until_sync(lambda: store.tasks() and {t.state for t in store.tasks()} != {"pending"}, 60,
                    "a task started by the run")
    store.close()
    _cluster("stop", folder)
    _stdout, stderr = run.communicate(timeout=60)
    assert run.returncode == 2, stderr
    assert "Traceback" not in stderr and "cannot reach the shared store" in stderr.strip().splitlines()[-1]
