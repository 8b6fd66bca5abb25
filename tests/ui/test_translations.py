from __future__ import annotations

import importlib.util

from mediaassist.ui.i18n import TRANSLATIONS_DIR


def _builder():
    spec = importlib.util.spec_from_file_location("build_translations", TRANSLATIONS_DIR / "build_translations.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_ui_string_has_a_chinese_translation_and_the_qm_is_newer() -> None:
    builder = _builder()
    ts = TRANSLATIONS_DIR / "mediaassist_zh_CN.ts"
    known = builder.existing(ts)
    assert [s for s in builder.source_strings() if s not in known] == []
    assert (TRANSLATIONS_DIR / "mediaassist_zh_CN.qm").stat().st_mtime >= ts.stat().st_mtime - 1
