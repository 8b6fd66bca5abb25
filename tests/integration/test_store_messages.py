"""User-facing texts are stored as messages beside their English (core/messages.py, store.py).

Every reader -- the CLI, the window, an export, an older version -- finds the English where it
always was; a reader with a language renders the message kept beside it. A store written before
messages were kept migrates in place and its rows still show, in their English."""

from __future__ import annotations

import json

import pytest

from mediaassist.core.errors import ErrorKind
from mediaassist.core.messages import CHINESE, Message, msg, render
from mediaassist.core.secrets import register_secret
from mediaassist.core.store import SCHEMA_VERSION, NewTask, Store

pytestmark = pytest.mark.sqlite_only

COLUMNS = (("task", "error_message"), ("task_log", "message"), ("result", "text_message"),
           ("lane_state", "reason_message"), ("account", "last_error_message"))


def _claimed(store: Store, task_id: str = "t1"):
    store.enqueue("b", [NewTask(model="m", model_kind="api", route="api:p", prompt="hi", task_id=task_id)])
    (task,) = store.claim("api:p", "owner-1")
    return task


def test_a_failure_and_its_log_lines_keep_the_english_and_the_message(store: Store) -> None:
    task = _claimed(store)
    error = msg("model {model} is not in the config", model="'retired'")
    store.finish_failure(task, ErrorKind.BAD_INPUT, error, retry_at=None)
    row = store.get(task.task_id)
    assert row is not None and row.error == "model 'retired' is not in the config"
    assert row.error_text == error and render(row.error_text, CHINESE) == "配置中没有模型 'retired'"
    # The claim and the failure each wrote their line, in their own transactions.
    started, failed = store.logs(task.task_id)
    assert started.line == "attempt 1 started on api:p"
    assert json.loads(started.message) == {"id": "attempt {attempt} started on {lane}",
                                           "params": {"attempt": 1, "lane": "api:p"}}
    assert failed.line == "attempt 1 failed (bad_input): model 'retired' is not in the config"
    assert render(failed.text, CHINESE).endswith("配置中没有模型 'retired'")


def test_a_secret_in_a_messages_values_is_masked_in_both_columns(store: Store) -> None:
    key = "sk-messages-0123456789"
    register_secret(key)
    task = _claimed(store)
    store.log(task.task_id, msg("HTTP {status}: {detail}", status=401, detail=f"bad key {key}"))
    line = store.logs(task.task_id)[-1]
    assert key not in line.line and key not in line.message and "***" in line.message


def test_reasons_results_and_login_errors_are_messages_too(store: Store) -> None:
    store.pause_lane("api:p", msg("paused by operator"))
    assert store.paused_lanes() == {"api:p": "paused by operator"}
    assert render(store.paused_lane_reasons()["api:p"], CHINESE) == "已被操作员暂停"
    store.sync_accounts([type("Acct", (), {"name": "a", "site": "s", "enabled": True})()])
    store.set_login_state("a", "needs_login", msg("no login was seen before the window closed or the time ran out"))
    account = store.account("a")
    assert account is not None
    assert account.last_error == "no login was seen before the window closed or the time ran out"
    assert isinstance(account.last_error_text, Message)
    task = _claimed(store)
    summary = msg("{service} job {remote_id}: {n} output(s)", service="videos", remote_id="v1", n=1)
    assert store.finish_success(task, summary, [])
    result = store.result(task.task_id)
    assert result is not None and result.text == "videos job v1: 1 output(s)" and result.text_shown == summary


def test_an_answer_is_stored_as_text_only(store: Store) -> None:
    task = _claimed(store)
    store.finish_success(task, "success", [])  # a chat answer that happens to read like a log line
    result = store.result(task.task_id)
    assert result is not None and result.text_message is None
    assert result.text_shown is not None and render(result.text_shown, CHINESE) == "success"


def test_a_store_from_before_messages_migrates_and_its_rows_show_their_english(store_location: str) -> None:
    old = Store(store_location)
    task = _claimed(old)
    old.finish_failure(task, ErrorKind.PROVIDER, "HTTP 500: boom", retry_at=None)  # logs its line
    old.pause_lane("api:p", "paused by operator")
    for table, column in COLUMNS:  # as version 2 left it
        old.db.execute_sql(f'ALTER TABLE "{table}" DROP COLUMN "{column}"')
    old.db.execute_sql("UPDATE schema_version SET version = 2")
    old.close()
    store = Store(store_location)
    try:
        assert store.db.execute_sql("SELECT version FROM schema_version").fetchone()[0] == SCHEMA_VERSION
        row = store.get(task.task_id)
        assert row is not None and row.error_text is not None
        assert render(row.error_text, CHINESE) == "HTTP 500: boom"  # shown as written, never guessed at
        line = store.logs(task.task_id)[-1]
        assert render(line.text, CHINESE) == "attempt 1 failed (provider): HTTP 500: boom"
        assert render(store.paused_lane_reasons()["api:p"], CHINESE) == "paused by operator"
        store.log(task.task_id, msg("success"))  # new rows in the migrated store keep their message
        assert render(store.logs(task.task_id)[-1].text, CHINESE) == "成功"
    finally:
        store.close()
