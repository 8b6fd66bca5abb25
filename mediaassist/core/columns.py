"""Texts laid out on a terminal, where a wide (CJK) character takes two columns: the CLI's tables
and its ``--help`` in Chinese line up and wrap by columns, never by characters."""

from __future__ import annotations

import itertools
import unicodedata

# Full-width punctuation that Chinese never starts a line with, and the brackets it never ends one with.
_NO_LINE_START = "，。；：、）」』》！？"
_NO_LINE_END = "（「『《"


def width(text: str) -> int:
    """The columns ``text`` takes on a terminal: a wide (CJK) character takes two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 0 if unicodedata.combining(c) else 1
               for c in text)


def wrapped(text: str, columns: int) -> list[str]:
    """``text`` (its whitespace collapsed) in lines of at most ``columns`` terminal columns. A line
    breaks at a space, or next to a wide character as Chinese does; a word longer than a line
    stays whole."""
    lines: list[str] = []
    line = ""
    for word in text.split():
        for index, unit in enumerate(_unbreakable_units(word)):
            piece = " " + unit if index == 0 and line else unit
            if line and width(line + piece) > columns:
                lines.append(line)
                piece = unit
                line = ""
            line += piece
    return [*lines, line] if line else lines


def _unbreakable_units(word: str) -> list[str]:
    """``word`` (no spaces) cut where a line may break: before and after each wide character."""
    units = [word[0]]
    for before, char in itertools.pairwise(word):
        if _may_break_between(before, char):
            units.append(char)
        else:
            units[-1] += char
    return units

def _may_break_between(before: str, after: str) -> bool:
    wide = width(before) == 2 or width(after) == 2
    return wide and after not in _NO_LINE_START and before not in _NO_LINE_END
