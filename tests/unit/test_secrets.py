"""Keys: stripped before use, and masked in every form a log line or exception can quote."""

from __future__ import annotations

import logging

import pytest

from mediaassist.core.secrets import SecretFilter, redact, resolve_api_key


def test_a_pasted_key_is_stripped_and_every_form_of_it_is_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PASTED_KEY", "sk-pasted-0123456789\n")
    key = resolve_api_key("prov", None, "PASTED_KEY")
    assert key == "sk-pasted-0123456789"
    quoted = "Illegal header value b'Bearer sk-pasted-0123456789\\n'"  # how h11 quotes it
    assert "0123456789" not in redact(quoted)
    assert "0123456789" not in redact(f"echo: {key}")


def test_log_records_and_tracebacks_are_masked(caplog: pytest.LogCaptureFixture) -> None:
    key = resolve_api_key("prov2", "sk-config-abcdefghijkl", None)
    logger = logging.getLogger("mediaassist.test")
    logger.addFilter(SecretFilter())
    try:
        raise RuntimeError(f"server said: bad key {key}")
    except RuntimeError:
        logger.exception("request with %s failed", key)
    text = caplog.text
    assert "abcdefghijkl" not in text and "***" in text


def test_the_console_shows_a_records_messages_in_the_operators_language_masked_and_the_file_stays_english() -> None:
    """The CLI's console handler (mediaassist/entry.py) renders a log record's messages (a task's
    failure) in the operator's language before the secret filter flattens the record; a key inside
    is masked there too, and the other handlers (the log file) still read the English."""
    import io

    from mediaassist.core.messages import CHINESE, msg, render
    from mediaassist.entry import _console_formatter, _console_language

    key = resolve_api_key("prov3", "sk-console-mnopqrstuv", None)
    reason = msg("{path}: {reason}", path="tasks.csv", reason=msg("1 task"))
    consoles, files = io.StringIO(), io.StringIO()
    console, log_file = logging.StreamHandler(consoles), logging.StreamHandler(files)
    console.setFormatter(_console_formatter("%(levelname)s %(message)s"))
    console.addFilter(_console_language(CHINESE))
    for handler in (console, log_file):
        handler.addFilter(SecretFilter())
    logger = logging.getLogger("mediaassist.test.console")
    logger.propagate = False
    for handler in (console, log_file):
        logger.addHandler(handler)
    try:
        logger.warning("[%s] failed: %s", key, reason)
    finally:
        for handler in (console, log_file):
            logger.removeHandler(handler)
    assert render(reason, CHINESE) in consoles.getvalue() and str(reason) not in consoles.getvalue()
    assert str(reason) in files.getvalue() and render(reason, CHINESE) not in files.getvalue()
    assert "mnopqrstuv" not in consoles.getvalue() + files.getvalue()
