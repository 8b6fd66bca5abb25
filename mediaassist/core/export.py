"""Cell values made safe for the files the operator opens in a spreadsheet.

A prompt or an answer is data, never a formula: a CSV cell starting with ``= + - @`` (or a tab or
carriage return, which Excel strips before looking) gets a leading apostrophe, as OWASP advises
against CSV injection; an XLSX cell is stored as a string, which Excel never evaluates. Control
characters, which XLSX cannot hold at all (openpyxl refuses them), become U+FFFD in both.
"""

from __future__ import annotations

import re
from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
REPLACEMENT = "\ufffd"
# What XML 1.0 (and so XLSX) cannot carry: C0 controls other than tab, newline, carriage return.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")


def clean_text(value: str) -> str:
    return _CONTROL.sub(REPLACEMENT, value)


def csv_value(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    value = clean_text(value)
    return f"'{value}" if value.startswith(FORMULA_STARTS) else value


def csv_row(values: list[Any]) -> list[Any]:
    return [csv_value(value) for value in values]


def xlsx_row(sheet: Any, values: list[Any]) -> list[Any]:
    """Cells for ``sheet.append`` on a write-only openpyxl sheet; strings stay strings."""
    from openpyxl.cell import WriteOnlyCell  # imported here: only an XLSX export needs it

    cells = []
    for value in values:
        if isinstance(value, str):
            cell = WriteOnlyCell(sheet, value=clean_text(value))
            cell.data_type = "s"  # openpyxl would make "=..." a live formula
            cells.append(cell)
        else:
            cells.append(value)
    return cells
