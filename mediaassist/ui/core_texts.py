"""The core's texts (task log lines, errors, lane reasons, account checks, results) in the
window's language.

The core writes each user-facing text as a ``Message`` (mediaassist/core/messages.py) and the
store keeps it beside its English; the window renders it through the core's own gettext
catalogue -- the one the CLI uses -- in the language chosen in the settings. A text without a
message (a row written by an older version, a model's answer, a service's own words) is shown
as it is. How to add a core text: docs/development-messages.md.
"""

from __future__ import annotations

from mediaassist.core.errors import MessageError
from mediaassist.core.messages import Message, render
from mediaassist.core.secrets import redact
from mediaassist.ui.i18n import current_language


def error_text(exc: BaseException) -> Message | str:
    """What an exception says: its message when it carries one (the core's errors), else its text."""
    return exc.message if isinstance(exc, MessageError) else str(exc)


def translated(text: Message | str | None) -> str:
    """``text`` in the window's language (a plain text as it is), any known key masked."""
    if text is None:
        return ""
    return redact(render(text, current_language()) if isinstance(text, Message) else text)
