"""The two small languages of a task-API profile: paths into a JSON answer, and request templates.

A path is dotted keys with list indexes: ``data.task_result.videos[0].url``; ``[*]`` takes every
element (``output[*]``). A template is any TOML value -- strings, numbers, nested tables and
lists -- whose strings may hold placeholders ``{prompt}``, ``{remote_model}``, ``{input.image}``
...: a string that is exactly one placeholder becomes the value itself (a number stays a number,
a list a list); a placeholder inside a longer string is written as text. A value whose
placeholder has nothing to fill it (an image-to-video field on a text-only task) is left out:
the table key or list element disappears -- and so does a table none of whose placeholders
could be filled (``{type = "image_url", image_url = {url = "{input.image}"}}`` as a whole).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any, Final

from mediaassist.core.errors import ConfigError
from mediaassist.core.messages import msg


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final[Any] = _Missing()
PathPart = str | int | None  # None = every element ("[*]")
JsonPath = tuple[PathPart, ...]
_SEGMENT = re.compile(r"([^.\[\]]+)?((?:\[(?:\d+|\*)\])*)")
_INDEX = re.compile(r"\[(\d+|\*)\]")
PLACEHOLDER = re.compile(r"\{([a-z_][a-z0-9_]*(?:\.[a-z0-9_]+)*)\}")
# The forms of one media input: as the service wants it in JSON.
INPUT_FORMS = ("url_or_data_uri", "url_or_base64", "base64", "mime", "url")


class Several(list[Any]):
    """The values of an input given several files: spread inside a list, a list elsewhere."""


def parse_path(text: str, where: str) -> JsonPath:
    """``a.b[0].c`` → ("a", "b", 0, "c"); a ConfigError naming ``where`` when it is malformed."""
    parts: list[PathPart] = []
    for segment in text.split("."):
        match = _SEGMENT.fullmatch(segment)
        if not segment or match is None or (match.group(1) is None and not parts):
            raise ConfigError(msg("{where}: {text} is not a path (dotted names with [n] or [*] indexes, e.g. "
                                  "\"data.task_result.videos[0].url\")",
                                  where=where, text=repr(text)))
        if match.group(1) is not None:
            parts.append(match.group(1))
        for index in _INDEX.findall(match.group(2)):
            parts.append(None if index == "*" else int(index))
    return tuple(parts)


def dig_one(body: Any, path: JsonPath) -> Any:
    """The value at ``path``, or MISSING; with ``[*]``, the list of what each element holds."""
    value = body
    for position, part in enumerate(path):
        if part is None:
            if not isinstance(value, list):
                return MISSING
            rest = path[position + 1:]
            kept: list[Any] = []
            for item in value:
                found = dig_one(item, rest)
                if found is MISSING:
                    continue
                # a further [*] gives a list per element: one flat list of what they all hold
                kept.extend(found if None in rest else [found])
            return kept or MISSING
        if isinstance(part, int):
            if not isinstance(value, list) or part >= len(value):
                return MISSING
            value = value[part]
        elif isinstance(value, dict) and part in value:
            value = value[part]
        else:
            return MISSING
    return value


def dig(body: Any, paths: Iterable[JsonPath]) -> Any:
    """The first value found at one of the paths (null and "" count as absent), else MISSING."""
    for path in paths:
        value = dig_one(body, path)
        if value is not MISSING and value is not None and value != "":
            return value
    return MISSING


def placeholders(template: Any) -> set[str]:
    """Every placeholder name the template uses."""
    if isinstance(template, str):
        return set(PLACEHOLDER.findall(template))
    if isinstance(template, dict):
        return set().union(*(placeholders(v) for v in template.values())) if template else set()
    if isinstance(template, list):
        return set().union(*(placeholders(v) for v in template)) if template else set()
    return set()


def check_placeholders(template: Any, allowed: Callable[[str], bool], where: str, hint: str) -> None:
    """A ConfigError naming ``where`` for the first placeholder that ``allowed`` refuses."""
    for name in sorted(placeholders(template)):
        if not allowed(name):
            raise ConfigError(msg("{where}: unknown placeholder {{{name}}} (allowed: {hint})",
                                  where=where, name=name, hint=hint))


def is_input_placeholder(name: str) -> bool:
    parts = name.split(".")
    return parts[0] == "input" and (len(parts) == 2 or (len(parts) == 3 and parts[2] in INPUT_FORMS))


def render(template: Any, lookup: Callable[[str], Any]) -> Any:
    """The template with its placeholders filled by ``lookup`` (MISSING: nothing to fill it)."""
    if isinstance(template, str):
        whole = PLACEHOLDER.fullmatch(template)
        if whole is not None:
            return lookup(whole.group(1))
        missing = False

        def text(match: re.Match[str]) -> str:
            nonlocal missing
            value = lookup(match.group(1))
            if value is MISSING:
                missing = True
                return ""
            return ",".join(map(str, value)) if isinstance(value, list) else str(value)

        rendered = PLACEHOLDER.sub(text, template)
        return MISSING if missing else rendered
    if isinstance(template, dict):
        names = placeholders(template)
        if names and all(lookup(name) is MISSING for name in names):
            return MISSING
        table = {key: render(value, lookup) for key, value in template.items()}
        return {key: value for key, value in table.items() if value is not MISSING}
    if isinstance(template, list):
        items: list[Any] = []
        for element in template:
            value = render(element, lookup)
            if isinstance(value, Several):
                items.extend(value)
            elif value is not MISSING:
                items.append(value)
        return items
    return template


def plain(value: Any) -> Any:
    """``Several`` as a plain list (outside a list an input's several files are a list)."""
    if isinstance(value, Several):
        return list(value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value
