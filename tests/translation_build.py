"""resources/translations/build_translations.py as a module: the tests compare what is committed
(the .mo, the currency symbols) with what the script would write now."""

from __future__ import annotations

import importlib.util
from functools import cache
from types import ModuleType

from mediaassist.core.paths import RESOURCES


@cache
def build_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("build_translations",
                                                  RESOURCES / "translations" / "build_translations.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
