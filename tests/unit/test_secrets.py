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
