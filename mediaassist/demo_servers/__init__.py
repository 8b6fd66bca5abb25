"""Built-in demo providers: real HTTP servers on 127.0.0.1 for ``--demo`` and the tests."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import Any


def read_json_body(handler: BaseHTTPRequestHandler) -> dict[str, Any]:
    """The request's JSON object; anything else (empty, broken, a list) reads as {}."""
    length = int(handler.headers.get("Content-Length") or 0)
    raw = handler.rfile.read(length) if length else b""
    try:
        data = json.loads(raw or b"{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}
