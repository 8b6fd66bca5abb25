"""Refresh the .ts files from the ``tr("...")`` and ``tr_noop("...")`` literals in mediaassist/ui
and compile the .qm.

    python resources/translations/build_translations.py

Translations already in a .ts file are kept; new strings are added as unfinished, strings no longer
used are dropped. Compiling uses ``pyside6-lrelease`` (shipped in PySide6-Essentials). The .qm
files are committed, so running the app never needs this script.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent
UI = HERE.parents[1] / "mediaassist" / "ui"
LANGUAGES = ("zh_CN",)
CONTEXT = "mediaassist"
MARKERS = ("tr", "tr_noop")  # tr_noop: stored in English, translated where shown


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


def main() -> int:
    strings = source_strings()
    for language in LANGUAGES:
        ts = HERE / f"mediaassist_{language}.ts"
        missing = write_ts(ts, language, strings, existing(ts))
        subprocess.run([lrelease(), "-silent", str(ts), "-qm", str(ts.with_suffix(".qm"))], check=True)
        print(f"{ts.name}: {len(strings)} strings, {missing} untranslated")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
