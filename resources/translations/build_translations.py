"""Refresh the .ts files from the ``tr("...")`` literals in mediaassist/ui
and compile the .qm; refresh the core's gettext catalogues (``core_<lang>.po``) from the
``msg("...")`` and ``deferred("...")`` literals outside mediaassist/ui and compile the .mo
(with Babel); write the currency symbols of the app's languages from Babel's CLDR data (currency_symbols.json).

    python resources/translations/build_translations.py

Translations already in a .ts file are kept; new strings are added as unfinished, strings no longer
used are dropped. Compiling uses ``pyside6-lrelease`` (shipped in PySide6-Essentials). In a .po,
new ids are added untranslated and ids no longer used become obsolete (``#~``, kept for reuse, not
compiled). The .qm, .mo and .json files are committed, so running the app (or building a wheel) never
needs this script nor Babel; tests/unit/test_messages.py fails when a .mo is older than its .po, and
tests/unit/test_money.py when the symbols differ from Babel's.
"""

from __future__ import annotations

import ast
import io
import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from babel import Locale
from babel.messages.catalog import Catalog
from babel.messages.extract import extract
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po

HERE = Path(__file__).resolve().parent
PACKAGE = HERE.parents[1] / "mediaassist"
UI = PACKAGE / "ui"
LANGUAGES = ("zh_CN",)
# The languages the app writes amounts in (mediaassist.core.messages.LANGUAGES).
AMOUNT_LANGUAGES = ("en", *LANGUAGES)
CURRENCY_SYMBOLS = HERE / "currency_symbols.json"
CONTEXT = "mediaassist"
MARKERS = ("tr",)
# The core's markers (mediaassist/core/messages.py): a message, and an id a library shows later.
CORE_MARKERS = {"msg": None, "deferred": None}


def source_strings() -> list[str]:
    found: dict[str, None] = {}
    for path in sorted(UI.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in MARKERS
                    and node.args and isinstance(node.args[0], ast.Constant)
                    and isinstance(node.args[0].value, str)):
                found[node.args[0].value] = None
    return list(found)


def existing(ts: Path) -> dict[str, str]:
    if not ts.exists():
        return {}
    done = {}
    for message in ET.parse(ts).getroot().iter("message"):
        source, translation = message.find("source"), message.find("translation")
        if source is not None and translation is not None and translation.text:
            done[source.text or ""] = translation.text
    return done


def write_ts(ts: Path, language: str, strings: list[str], known: dict[str, str]) -> int:
    root = ET.Element("TS", version="2.1", language=language)
    context = ET.SubElement(root, "context")
    ET.SubElement(context, "name").text = CONTEXT
    missing = 0
    for text in strings:
        message = ET.SubElement(context, "message")
        ET.SubElement(message, "source").text = text
        translation = ET.SubElement(message, "translation")
        if text in known:
            translation.text = known[text]
        else:
            translation.set("type", "unfinished")
            missing += 1
    ET.indent(root)
    ts.write_text('<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE TS>\n'
                  + ET.tostring(root, encoding="unicode") + "\n", encoding="utf-8")
    return missing


def lrelease() -> str:
    found = shutil.which("pyside6-lrelease") or str(Path(sys.executable).with_name("pyside6-lrelease"))
    return found


PO_HEADER = """\
# Chinese translations of mediaassist's core texts (log lines, errors, CLI lines).
# The ids are the English texts written with msg("...") in the source; fill the msgstr lines, then
# run resources/translations/build_translations.py to refresh this file and compile the .mo.
# See docs/development-messages.md."""


def core_message_ids() -> dict[str, list[tuple[str, int]]]:
    """Every ``msg("...")`` and ``deferred("...")`` id outside mediaassist/ui, with where it is written."""
    found: dict[str, list[tuple[str, int]]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if UI in path.parents:
            continue
        with path.open("rb") as source:
            for line, message_id, _comments, _context in extract("python", source, keywords=CORE_MARKERS):
                if isinstance(message_id, str):
                    found.setdefault(message_id, []).append((str(path.relative_to(PACKAGE.parent)), line))
    return found


def core_catalogue(language: str) -> Catalog:
    with (HERE / f"core_{language}.po").open("rb") as po:
        return read_po(po)


def compiled(catalogue: Catalog) -> bytes:
    out = io.BytesIO()
    write_mo(out, catalogue)
    return out.getvalue()


def refresh_core(language: str) -> int:
    """Rewrites core_<language>.po from the source and compiles its .mo; returns how many ids lack a translation."""
    known = core_catalogue(language)
    fresh = Catalog(locale=language, project="mediaassist", version="", domain="core", fuzzy=False,
                    header_comment=PO_HEADER, creation_date=known.creation_date,
                    revision_date=known.revision_date)
    ids = core_message_ids()
    for message_id, places in ids.items():
        old = known.get(message_id)
        fresh.add(message_id, old.string if old is not None else "", locations=places,
                  flags=("python-brace-format",))
    for old in [*known, *known.obsolete.values()]:
        if old.id and old.id not in ids and old.string:
            fresh.obsolete[old.id] = old
    with (HERE / f"core_{language}.po").open("wb") as po:
        # no line numbers: every edit above a text would otherwise touch the .po
        write_po(po, fresh, width=0, include_previous=False, include_lineno=False)
    (HERE / f"core_{language}.mo").write_bytes(compiled(fresh))
    return sum(1 for message in fresh if message.id and not message.string)


def currency_symbols() -> dict[str, dict[str, str]]:
    """Per language, the ISO currencies CLDR writes with a symbol other than their code ("USD":
    "$" in English, "US$" in Chinese); money.format_money reads this instead of Babel's 36 MB."""
    return {language: {code: symbol for code, symbol in sorted(Locale.parse(language).currency_symbols.items())
                       if symbol != code}
            for language in AMOUNT_LANGUAGES}


def currency_symbols_json() -> str:
    return json.dumps(currency_symbols(), ensure_ascii=False, indent=1, sort_keys=True) + "\n"


def main() -> int:
    strings = source_strings()
    for language in LANGUAGES:
        ts = HERE / f"mediaassist_{language}.ts"
        missing = write_ts(ts, language, strings, existing(ts))
        subprocess.run([lrelease(), "-silent", str(ts), "-qm", str(ts.with_suffix(".qm"))], check=True)
        print(f"{ts.name}: {len(strings)} strings, {missing} untranslated")
        print(f"core_{language}.po: {len(core_message_ids())} ids, {refresh_core(language)} untranslated")
    CURRENCY_SYMBOLS.write_text(currency_symbols_json(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
