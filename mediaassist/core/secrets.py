"""API keys: where they come from, and the guard that keeps them out of every log line.

Order: ``api_key_env`` (an environment variable), the OS keyring (service ``mediaassist``,
user = provider name, when a keyring backend is available), then ``api_key`` in the config file.
Every key resolved here is registered with ``SecretFilter``, which masks it in all log records
(message, arguments and formatted tracebacks) of the ``mediaassist`` logger tree.
"""

from __future__ import annotations

import logging
import os
import threading

from mediaassist.core.messages import Message

KEYRING_SERVICE = "mediaassist"
_MASK = "***"
_known: set[str] = set()
_lock = threading.Lock()


def register_secret(secret: str) -> None:
    """Mask ``secret`` from now on -- also in its repr() form, which is how an exception about a
    bad header value quotes it (a newline becomes the two characters \\n)."""
    if secret and len(secret) >= 4:
        with _lock:
            _known.update({secret, repr(secret)[1:-1]})


def redact(text: str) -> str:
    for secret in sorted(_known, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, _MASK)
    return text


def redacted(message: Message) -> Message:
    """``message`` with every known key masked in its values (a message's id is our own text)."""
    params = {name: redacted(value) if isinstance(value, Message) else redact(value) if isinstance(value, str)
              else value for name, value in message.params.items()}
    return Message(message.id, params)


def resolve_api_key(provider_name: str, api_key: str | None, api_key_env: str | None) -> str | None:
    key = None
    if api_key_env:
        key = os.environ.get(api_key_env) or None
    if key is None:
        key = keyring_password(KEYRING_SERVICE, provider_name)
    if key is None:
        key = api_key
    if key:
        register_secret(key)  # as given, in case a copy with the stray whitespace is echoed
        key = key.strip()  # a pasted key often ends in a newline; no header may carry one
        register_secret(key)
    return key or None


def keyring_password(service: str, user: str) -> str | None:
    """The OS keyring's entry, or None when there is none or no usable keyring."""
    try:
        import keyring
        from keyring.backends import fail

        if isinstance(keyring.get_keyring(), fail.Keyring):
            return None
        return keyring.get_password(service, user)
    except Exception:  # no usable backend (headless box, locked store): fall through
        return None


def keep_in_keyring(service: str, user: str, secret: str) -> bool:
    """Store ``secret`` in the OS keyring; False when there is no usable keyring (never a file
    of ours instead)."""
    try:
        import keyring
        from keyring.backends import fail

        if isinstance(keyring.get_keyring(), fail.Keyring):
            return False
        keyring.set_password(service, user, secret)
        return True
    except Exception:  # no usable backend, a locked store, a refused write
        return False


class SecretFilter(logging.Filter):
    """Rewrites a record so no registered secret survives formatting."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not _known:
            return True
        record.msg = redact(record.getMessage())
        record.args = None
        if record.exc_info:
            formatter = logging.Formatter()
            record.exc_text = redact(formatter.formatException(record.exc_info))
            record.exc_info = None
        return True


def install_log_filter() -> None:
    """Attach the filter to every handler of the root logger (call after logging is set up)."""
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, SecretFilter) for f in handler.filters):
            handler.addFilter(SecretFilter())
