"""argparse in the operator's language: ``--help``, usage lines and argument errors in English or
Chinese, like every other line of the CLI.

The parsers are built on every start, ``--version`` included, so their texts (descriptions,
command summaries, option help) are message ids kept as their English (``deferred("...")``), and
nothing is translated then. Only when argparse prints something does the language get resolved
(the command line's ``--lang``, else the locale) and its catalogue load: the help formatter
translates the parser's texts, and argparse's own words ("usage: ", "options", "error: ") reach
the same catalogue through the gettext name argparse asks (``command_line_language``).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from typing import Any

from mediaassist.core.columns import width, wrapped
from mediaassist.core.messages import (
    Catalogue,
    Message,
    catalogue,
    deferred,
    language_from_environment,
    normalized_language,
)

# The words argparse itself may print for our parsers, as it asks gettext for them (Python 3.11's
# argparse.py). Listed so that build_translations.py puts them in the catalogue.
ARGPARSE_WORDS = (
    deferred("usage: "),
    deferred("positional arguments"),
    deferred("options"),
    deferred("show this help message and exit"),
    deferred("%(prog)s: error: %(message)s\n"),
    deferred("argument %(argument_name)s: %(message)s"),
    deferred("the following arguments are required: %s"),
    deferred("unrecognized arguments: %s"),
    deferred("invalid choice: %(value)r (choose from %(choices)s)"),
    deferred("invalid %(type)s value: %(value)r"),
    deferred("ambiguous option: %(option)s could match %(matches)s"),
    deferred("ignored explicit argument %r"),
    deferred("expected one argument"),
    deferred("expected at most one argument"),
    deferred("expected at least one argument"),
)


# The --lang of the command line being parsed (command_line_language).
_ASKED_LANGUAGE: ContextVar[str | None] = ContextVar("asked_language", default=None)


def _catalogue() -> Catalogue:
    """The catalogue of the command line being parsed: its ``--lang`` if that names a known
    language, else the locale's. Called only when a text is shown, so only then loaded."""
    asked = _ASKED_LANGUAGE.get()
    if asked:
        with suppress(ValueError):  # an unknown --lang: argparse says so, in the locale's language
            return catalogue(normalized_language(asked))
    return catalogue(language_from_environment())


def _translated(text: str) -> str:
    return _catalogue().translated(text)


def asked_language(argv: Sequence[str]) -> str | None:
    """The last ``--lang`` value in ``argv`` (argparse keeps the last one too), read before
    parsing: help can be asked for ahead of it (``mediaassist --help --lang zh_CN``)."""
    asked = None
    for index, word in enumerate(argv):
        if word == "--":
            break
        if word == "--lang" and index + 1 < len(argv):
            asked = argv[index + 1]
        elif word.startswith("--lang="):
            asked = word.removeprefix("--lang=")
    return asked


@contextmanager
def command_line_language(argv: Sequence[str]) -> Iterator[None]:
    """Parse ``argv`` inside this: what argparse prints meanwhile is in ``argv``'s language.
    argparse looks its own words up with the module-level name ``_`` (gettext's default domain,
    which knows nothing of ``--lang``); for as long, that name is our catalogue's lookup."""
    token = _ASKED_LANGUAGE.set(asked_language(argv))
    argparse_names = vars(argparse)
    stdlib_gettext = argparse_names["_"]
    argparse_names["_"] = _translated
    try:
        yield
    finally:
        argparse_names["_"] = stdlib_gettext
        _ASKED_LANGUAGE.reset(token)


def argument_error(message: Message) -> argparse.ArgumentTypeError:
    """The error a ``type=`` function raises; argparse prints its text as it is, so it is
    rendered here, in the command line's language."""
    return argparse.ArgumentTypeError(_catalogue().render(message))


class HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, showing a parser's texts translated and wrapping them by terminal
    columns (a Chinese character takes two; textwrap counts it as one and has no place to
    break a sentence without spaces)."""

    def _format_usage(self, usage: str | None, actions: Iterable[argparse.Action],
                      groups: Iterable[argparse._MutuallyExclusiveGroup], prefix: str | None) -> str:
        # argparse indents the usage's continuation lines by len(prefix): "用法：" takes 6
        # columns in 3 characters, so it lays out with spaces as wide and the prefix goes back on.
        shown_prefix = _translated("usage: ") if prefix is None else prefix
        stand_in = " " * width(shown_prefix)
        return shown_prefix + super()._format_usage(usage, actions, groups, stand_in)[len(stand_in):]

    def start_section(self, heading: str | None) -> None:
        super().start_section(_translated(heading) if heading else heading)

    def _format_text(self, text: str) -> str:
        return super()._format_text(_translated(text))

    def _get_help_string(self, action: argparse.Action) -> str | None:
        return _translated(action.help) if action.help else action.help

    def _split_lines(self, text: str, width: int) -> list[str]:
        return wrapped(text, width)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        return "\n".join(indent + line for line in wrapped(text, width - len(indent)))


class Parser(argparse.ArgumentParser):
    """An ArgumentParser with the formatter above; argparse makes a subcommand's parser of its
    parent's class, so they all have it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)


class VersionAction(argparse.Action):
    """``--version``: prints the version as it is. argparse's own version action passes it
    through the help formatter, whose lookup would load a catalogue for a start that needs none."""

    def __init__(self, option_strings: Sequence[str], version: str, dest: str = argparse.SUPPRESS,
                 help: str | None = None) -> None:
        super().__init__(option_strings, dest=dest, default=argparse.SUPPRESS, nargs=0, help=help)
        self.version = version

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        print(self.version)
        parser.exit()
