"""Output names by template: ``[outputs] naming = "{row:03}_{model}_{n}{ext}"``.

A template is checked when the config loads (an unknown field, a bad format spec or a path that
climbs out of its folder is a ``ConfigError`` naming the key) and rendered once per output file.
Every value is made safe for Windows and macOS as well as Linux -- reserved device names
(``CON``, ``NUL``, ``COM1`` ...), the characters ``<>:"/\\|?*``, control characters, trailing dots
and spaces, over-long names -- and only the template's own ``/`` makes folders: a ``/`` inside a
prompt or a column never does. ``unique_target`` then adds ``-2``, ``-3`` ... so an existing file
is never overwritten.
"""

from __future__ import annotations

import os
import re
import string
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from mediaassist.core.errors import ConfigError
from mediaassist.core.messages import msg

# Each field a template may name, with what it stands for (docs/outputs.md lists the same).
FIELDS = {
    "batch": "the batch's name: the task file's stem and its import time",
    "batch_id": "the batch's id",
    "row": "the task file's row number as the spreadsheet shows it",
    "task_id": "the task's id",
    "model": "the model's name",
    "provider": "the provider's name (a web model: its site)",
    "account": "the web account, or the API/poll provider's name; never a key",
    "n": "the output's 1-based index within the task",
    "ext": "the file's extension with its dot (.mp4)",
    "date": "the day the task finished (YYYY-MM-DD; {date:%Y%m%d} for another form)",
    "original": "the file name the provider gave",
    "col": "a task-file column: {col:NAME}",
}
DEFAULT_NAMING = "{task_id}/{original}"  # the layout from before templates: one folder per task
MAX_PART = 120  # characters per folder or file name: Windows' 260-character paths leave room for the folder
_RESERVED = {"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(1, 10)), *(f"LPT{i}" for i in range(1, 10))}
_UNSAFE = re.compile(r'[<>:"/\\|?*\x00-\x1f\x7f]')
_SAMPLE: dict[str, Any] = {"batch": "tasks-20260101T000000Z", "batch_id": "tasks-20260101T000000Z-0a1b2c3d",
                           "row": 2, "task_id": "t1", "model": "m", "provider": "p", "account": "a", "n": 1,
                           "ext": ".png", "date": date(2026, 1, 1), "original": "out.png"}


@dataclass(frozen=True)
class Template:
    text: str
    columns: frozenset[str] = field(default_factory=frozenset)  # the task-file columns it names


def parse_template(text: Any, where: str) -> Template:
    """The template ``text`` of config key ``where``, or a ConfigError saying what is wrong."""
    if not isinstance(text, str) or not text.strip():
        raise ConfigError(msg("{where}: must be a non-empty string such as \"{{row:03}}_{{model}}{{ext}}\"",
                              where=where))
    try:
        pieces = list(string.Formatter().parse(text))
    except ValueError as exc:
        raise ConfigError(msg("{where}: {text} is not a valid template ({reason}; write a literal brace as {{{{ or "
                              "}}}})", where=where, text=repr(text), reason=exc)) from None
    columns: set[str] = set()
    for _literal, name, spec, conversion in pieces:
        if name is None:
            continue
        if name not in FIELDS:
            raise ConfigError(msg("{where}: unknown field {field} (allowed: {allowed}, {{col:NAME}})", where=where,
                                  field="{" + name + "}",
                                  allowed=", ".join("{" + f + "}" for f in FIELDS if f != "col")))
        if conversion:
            raise ConfigError(msg("{where}: {field}: conversions are not allowed", where=where,
                                  field="{" + name + "!" + conversion + "}"))
        if name == "col":
            if not spec or not spec.strip():
                raise ConfigError(msg("{where}: {{col}} needs a column name: {{col:NAME}}", where=where))
            columns.add(spec.strip().lower())
    parts = text.replace("\\", "/").split("/")
    if text.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", text) or any(p in ("..", ".") for p in parts):
        raise ConfigError(msg("{where}: {text} must be a relative path inside the batch's folder (no leading /, "
                              "drive letter, . or ..)", where=where, text=repr(text)))
    template = Template(text, frozenset(columns))
    try:
        render(template, _SAMPLE, {name: "x" for name in columns})
    except (ValueError, TypeError) as exc:
        raise ConfigError(msg("{where}: {text} cannot be rendered ({reason}; e.g. {{row:03}} pads the row to 3 "
                              "digits)", where=where, text=repr(text), reason=exc)) from None
    return template


def render(template: Template, values: dict[str, Any], cells: dict[str, str]) -> str:
    """The relative path (``/``-separated) the template gives for these values; every part safe."""
    parts: list[str] = [""]
    for literal, name, spec, _conversion in string.Formatter().parse(template.text):
        chunks = literal.replace("\\", "/").split("/")
        parts[-1] += chunks[0]
        parts.extend(chunks[1:])
        if name is None:
            continue
        parts[-1] += _UNSAFE.sub("_", _value(name, spec or "", values, cells))  # a value never makes a folder
    return "/".join(safe_part(part) for part in parts)


def _value(name: str, spec: str, values: dict[str, Any], cells: dict[str, str]) -> str:
    if name == "col":
        return str(cells.get(spec.strip().lower(), ""))
    return format(values[name], spec)


def safe_part(name: str) -> str:
    """One folder or file name that Windows, macOS and Linux all accept as it is."""
    name = _UNSAFE.sub("_", name).strip()
    name = name.rstrip(". ") or "_"
    if name.partition(".")[0].rstrip().upper() in _RESERVED:  # "NUL.txt" is the device too
        name = "_" + name
    if len(name) > MAX_PART:
        base, ext = os.path.splitext(name)
        ext = ext if len(ext) <= 16 else ""
        name = base[:MAX_PART - len(ext)].rstrip(". ") + ext
    return name


def numbered(path: Path, number: int) -> Path:
    """``path`` itself for 1, else with ``-<number>`` before its extension (``a.mp4`` → ``a-2.mp4``)."""
    if number == 1:
        return path
    base, ext = os.path.splitext(path.name)
    return path.with_name(f"{base}-{number}{ext}")
