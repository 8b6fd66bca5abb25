"""Every cookie of an account's profile kept across launches, session cookies included.

Chromium drops session cookies (no expiry: Gradio's ``access-token-*``, many SSO sessions) when
the profile closes, so a login that "worked" is gone at the next launch. The context's cookies
are saved beside the profile at the end of each task and of ``accounts login``, and added back
right after a launch, before the first navigation. The file holds login secrets: it is private
to the user, lives only in the profile folder, and its content is never logged.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from playwright.async_api import BrowserContext
from playwright.async_api import Error as PlaywrightError

SESSION_FILE = "mediaassist-cookies.json"


def session_file(profile: Path) -> Path:
    return profile / SESSION_FILE


async def save_session(context: BrowserContext, profile: Path) -> int:
    """Write the context's cookies (0600, replaced atomically); returns how many."""
    cookies = await context.cookies()
    path = session_file(profile)
    temp = path.with_suffix(".tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(cookies, handle)
    os.replace(temp, path)
    return len(cookies)


async def restore_session(context: BrowserContext, profile: Path, log_line: Callable[[str], None]) -> int:
    """Add the saved cookies the relaunched profile lost (the ones it kept are left alone)."""
    path = session_file(profile)
    if not path.is_file():
        return 0
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        log_line("the saved session cookies could not be read; logging in again may be needed")
        return 0
    have = {(c["name"], c["domain"], c["path"]) for c in await context.cookies()}
    missing = [c for c in saved if isinstance(c, dict) and (c.get("name"), c.get("domain"), c.get("path")) not in have]
    if not missing:
        return 0
    try:
        await context.add_cookies(missing)  # type: ignore[arg-type]  # as context.cookies() gave them
    except PlaywrightError as exc:
        log_line(f"the saved session cookies could not be restored ({type(exc).__name__})")
        return 0
    log_line(f"restored {len(missing)} session cookie(s) the browser had dropped")
    return len(missing)
