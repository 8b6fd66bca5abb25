"""Notice bodies per webhook format, how refusals are read, and the [[notify]] config's errors."""

from __future__ import annotations

import tomllib

import pytest

from mediaassist.core.config import NotifyConfig, parse_config
from mediaassist.core.errors import ConfigError
from mediaassist.core.notices import NoticeBody, hook_label, refusal, webhook_payload

NOTICE = NoticeBody("batch_finished", "Batch b1 finished", "3 succeeded, 1 failed, 0 canceled of 4",
                    {"batch_id": "b1", "total": 4})


@pytest.mark.parametrize(("fmt", "expected"), [
    ("wecom", {"msgtype": "text", "text": {"content": "Batch b1 finished\n3 succeeded, 1 failed, 0 canceled of 4"}}),
    ("dingtalk", {"msgtype": "text", "text": {"content": "Batch b1 finished\n3 succeeded, 1 failed, 0 canceled of 4"}}),
    ("feishu", {"msg_type": "text", "content": {"text": "Batch b1 finished\n3 succeeded, 1 failed, 0 canceled of 4"}}),
])
def test_group_robot_formats(fmt: str, expected: dict[str, object]) -> None:
    assert webhook_payload(fmt, NOTICE, 0.0) == expected


def test_json_format_carries_the_event_and_its_data() -> None:
    body = webhook_payload("json", NOTICE, 86400.0)
    assert body == {"event": "batch_finished", "title": "Batch b1 finished", "text": NOTICE.text,
                    "data": {"batch_id": "b1", "total": 4}, "at": "1970-01-02T00:00:00+00:00"}


@pytest.mark.parametrize(("fmt", "status", "body", "why"), [
    ("wecom", 200, b'{"errcode":0,"errmsg":"ok"}', None),
    ("wecom", 200, b'{"errcode":93000,"errmsg":"invalid webhook url"}', "error 93000 invalid webhook url"),
    ("dingtalk", 200, b'{"errcode":310000,"errmsg":"keywords not in content"}', "error 310000 keywords not in content"),
    ("feishu", 200, b'{"code":0,"msg":"success"}', None),
    ("feishu", 200, b'{"code":19021,"msg":"sign match fail"}', "error 19021 sign match fail"),
    ("feishu", 200, b'{"StatusCode":0,"StatusMessage":"success"}', None),
    ("json", 204, b"", None),
    ("json", 502, b"bad gateway", "HTTP 502"),
    ("wecom", 200, b"<html>", "an answer that is not JSON (b'<html>')"),
])
def test_refusals_are_read_from_the_body(fmt: str, status: int, body: bytes, why: str | None) -> None:
    assert refusal(fmt, status, body) == why


def test_a_hook_is_named_by_its_host_never_its_key(monkeypatch: pytest.MonkeyPatch) -> None:
    hook = NotifyConfig(name="team", url="https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=abc-secret")
    assert hook_label(hook) == "team (qyapi.weixin.qq.com)"
    assert "abc-secret" not in repr(hook)
    unset = NotifyConfig(name="ops", url_env="OPS_HOOK_URL")
    monkeypatch.delenv("OPS_HOOK_URL", raising=False)
    assert hook_label(unset) == "ops (no URL: OPS_HOOK_URL is not set)"


def _notify(text: str) -> list[NotifyConfig]:
    return parse_config(tomllib.loads(text)).notify


def test_notify_config_defaults_to_json_and_every_event() -> None:
    [hook] = _notify('[[notify]]\nurl_env = "HOOK"\n')
    assert (hook.name, hook.format, hook.events) == ("notify[0]", "json", ("batch_finished", "needs_login",
                                                                          "lane_paused"))


@pytest.mark.parametrize(("text", "message"), [
    ('[[notify]]\nformat = "json"\n', "notify[0]: give the webhook as url"),
    ('[[notify]]\nurl = "https://x"\nurl_env = "Y"\n', "notify[0]: give the webhook as url"),
    ('[[notify]]\nurl = "ftp://x"\n', "notify[0].url: not an http(s) URL"),
    ('[[notify]]\nurl_env = "H"\nformat = "slack"\n', "notify[0].format: 'slack' is not allowed "
                                                      "(allowed: json, wecom, feishu, dingtalk)"),
    ('[[notify]]\nurl_env = "H"\nevents = ["batch_done"]\n', "notify[0].events: 'batch_done' is not an event "
                                                             "(allowed: batch_finished, needs_login, lane_paused)"),
    ('[[notify]]\nurl_env = "H"\nevents = []\n', "notify[0].events: a non-empty list"),
    ('[[notify]]\nurl_env = "H"\nwhen = "always"\n', "notify[0]"),
])
def test_bad_notify_config_names_the_key(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        _notify(text)
    assert message in str(caught.value)
