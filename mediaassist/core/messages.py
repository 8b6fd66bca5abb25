"""The core's user-facing texts as message ids with parameters, rendered in English or Chinese.

A text is written once, where it happens::

    msg("attempt {attempt} started on {lane}", attempt=2, lane="web:acct-a")

The template is the message id -- gettext's msgid, so translators read English, and
``pybabel``/``resources/translations/build_translations.py`` find every ``msg("...")`` in the
source. A ``Message`` keeps the id and its parameters apart; it is stored that way (JSON) beside
the English it renders to, so the CLI, the window and a later reader each show it in their own
language. A parameter may itself be a ``Message`` (an error kind, a nested reason): it is rendered
in the same language. Any other value (a path, a number, what a service answered) is shown as is.

One catalogue per language (``resources/translations/core_<lang>.mo``, compiled from the .po
beside it) serves the CLI and the window. English needs none: the id is the English text.
How to add a text: docs/development-messages.md.
"""

from __future__ import annotations

import gettext
import json
import os
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, NoReturn, Union

if TYPE_CHECKING:
    from pathlib import Path

ENGLISH = "en"
CHINESE = "zh_CN"
LANGUAGES = (ENGLISH, CHINESE)
# The environment variables that name the language of messages, strongest first (POSIX order).
LOCALE_VARIABLES = ("LC_ALL", "LC_MESSAGES", "LANG")

# One encoder for every message: json.dumps with options builds a new one per call (a task's
# log lines are two messages each).
_TO_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
Param = Union[str, int, float, "Message", None]


class Message:
    """One user-facing text: its id (the English template) and the values for its ``{names}``.
    Immutable. A plain class, not a dataclass: every start imports this module, ``--version``
    too, and ``dataclasses`` (with the ``inspect`` it imports) cost a start 15 ms."""

    __slots__ = ("id", "params")
    id: str
    params: Mapping[str, Param]

    def __init__(self, id: str, params: Mapping[str, Param] | None = None) -> None:
        object.__setattr__(self, "id", id)
        object.__setattr__(self, "params", {} if params is None else params)

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError(f"a Message is immutable: cannot set {name!r}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Message):
            return NotImplemented
        return (self.id, self.params) == (other.id, other.params)

    def __hash__(self) -> int:
        return hash((self.id, self.params))

    def __repr__(self) -> str:
        return f"Message(id={self.id!r}, params={self.params!r})"

    def __reduce__(self) -> tuple[Any, ...]:  # pickled to and from the import child process
        return (Message, (self.id, dict(self.params)))

    def __str__(self) -> str:
        return render(self)

    def to_json(self) -> str:
        return _TO_JSON.encode(_plain(self))

    @staticmethod
    def from_json(text: str | None) -> Message | None:
        """The message stored as ``text``; None when there is none or it is not one (a row
        written by an older version, or damaged): the caller shows the stored English then."""
        if not text:
            return None
        try:
            return _from_plain(json.loads(text))
        except (ValueError, TypeError, KeyError, AttributeError):
            return None


def msg(template: str, /, **params: object) -> Message:
    """A user-facing text of the core; the marker ``build_translations.py`` extracts.

    A value that is not a number, a text or a message (a path, an exception) is kept as its
    ``str()``: a message is plain data, stored as JSON and sent between processes."""
    return Message(template, {name: _param(value) for name, value in params.items()})


def deferred(template: str, /) -> str:
    """A message id without parameters, kept as its English until it is shown; the other marker
    ``build_translations.py`` extracts. For texts a library takes as plain strings when they are
    set up but shows much later, if ever (argparse's help texts: mediaassist/arguments.py
    translates them when help is printed, so a start that prints none loads no catalogue)."""
    return template


def _param(value: object) -> Param:
    if value is None or (isinstance(value, (str, int, float, Message)) and not isinstance(value, bool)):
        return value
    return str(value)


def verbatim(text: str) -> Message:
    """A text that is not ours to translate (what a service or the OS said), as a message."""
    return msg("{text}", text=text)


def as_message(text: Message | str) -> Message:
    return text if isinstance(text, Message) else verbatim(text)


def is_warning(message: Message) -> bool:
    """An account check's warning (its English starts with "warning:")."""
    return message.id.startswith("warning:")


def either(parts: Sequence[Message]) -> Message:
    """"an image or a video": each part translated, joined with the language's "or"."""
    return _joined(parts, lambda first, rest: msg("{first} or {rest}", first=first, rest=rest))


def each_of(parts: Sequence[Message]) -> Message:
    """Several reasons in one line ("a; b"), joined with the language's separator."""
    return _joined(parts, lambda first, rest: msg("{first}; {rest}", first=first, rest=rest))


def listed(parts: Sequence[Message]) -> Message:
    """Items of one line ("a, b, c"), joined with the language's comma."""
    return _joined(parts, lambda first, rest: msg("{first}, {rest}", first=first, rest=rest))


def one_per_line(parts: Sequence[Message]) -> Message:
    """Several texts, one a line."""
    return _joined(parts, lambda first, rest: msg("{first}\n{rest}", first=first, rest=rest))


def _joined(parts: Sequence[Message], pair: Callable[[Message, Message], Message]) -> Message:
    if not parts:
        raise ValueError("nothing to join")
    result = parts[-1]
    for part in reversed(parts[:-1]):
        result = pair(part, result)
    return result


def render(message: Message, language: str = ENGLISH) -> str:
    """``message`` in ``language``; English when the language or the text has no translation."""
    return catalogue(language).render(message)


class Catalogue:
    """The translations of one language (none for English)."""

    def __init__(self, language: str, translations: gettext.NullTranslations) -> None:
        self.language = language
        self._translations = translations

    def translated(self, template: str) -> str:
        return self._translations.gettext(template)

    def has(self, template: str) -> bool:
        return self.language == ENGLISH or self._translations.gettext(template) is not template

    def render(self, message: Message) -> str:
        values = {name: self.render(value) if isinstance(value, Message) else ("" if value is None else value)
                  for name, value in message.params.items()}
        translated = self.translated(message.id)
        try:
            return _format(translated, values)
        except (ValueError, IndexError):  # a translation with broken braces: the English still reads
            return _format(message.id, values)


@lru_cache(maxsize=len(LANGUAGES))
def catalogue(language: str) -> Catalogue:
    """The catalogue of ``language`` (a name as ``normalized_language`` returns)."""
    if language == ENGLISH:
        return Catalogue(ENGLISH, gettext.NullTranslations())
    path = catalogue_file(language)
    with path.open("rb") as file:
        return Catalogue(language, gettext.GNUTranslations(file))


def catalogue_dir() -> Path:
    """Where the catalogues are (imported here, when a text is first translated: finding the
    package's resources costs a start 8 ms, and ``--version`` needs none)."""
    from mediaassist.core.paths import RESOURCES

    return RESOURCES / "translations"


def catalogue_file(language: str) -> Path:
    return catalogue_dir() / f"core_{language}.mo"


def normalized_language(name: str) -> str:
    """``zh_CN``, ``zh-CN``, ``zh_CN.UTF-8``, ``zh`` -> ``zh_CN``; ``en_US.UTF-8``, ``C`` -> ``en``.

    Raises ValueError for a language there is no catalogue for (the CLI's ``--lang`` names them)."""
    base = name.split(".")[0].split("@")[0].replace("-", "_").lower()
    if base.startswith("zh"):
        return CHINESE
    if base in ("", "c", "posix") or base.startswith("en"):
        return ENGLISH
    raise ValueError(f"unknown language {name!r} (known: {', '.join(LANGUAGES)})")


def language_from_environment(environ: Mapping[str, str] | None = None) -> str:
    """The language the locale variables ask for: the first one set decides (as in POSIX);
    a language without a catalogue reads English."""
    env = os.environ if environ is None else environ
    for variable in LOCALE_VARIABLES:
        value = env.get(variable)
        if value:
            try:
                return normalized_language(value)
            except ValueError:
                return ENGLISH
    return ENGLISH


class _KeepMissing(dict[str, object]):
    """A template's ``{name}`` without a value stays visible instead of raising."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def _format(template: str, values: Mapping[str, object]) -> str:
    return template.format_map(_KeepMissing(values))


def _plain(value: Param) -> object:
    if isinstance(value, Message):
        return {"id": value.id, "params": {name: _plain(v) for name, v in value.params.items()}}
    return value


def _from_plain(value: object) -> Message:
    if not isinstance(value, dict) or not isinstance(value["id"], str):
        raise TypeError("not a message")
    params = {name: _from_plain(v) if isinstance(v, dict) else v for name, v in value["params"].items()}
    return Message(value["id"], params)
