"""Qt translations: every UI string goes through ``tr()`` (one context), compiled .qm per language.

``resources/translations/build_translations.py`` extracts the ``tr("...")`` literals into the .ts
files and compiles them with ``pyside6-lrelease``; the compiled .qm files are shipped.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QLocale, QTranslator

from mediaassist.core.paths import RESOURCES

CONTEXT = "mediaassist"
TRANSLATIONS_DIR = RESOURCES / "translations"
LANGUAGES = {"auto": "System", "en": "English", "zh_CN": "中文 (简体)"}


def tr(text: str) -> str:
    return QCoreApplication.translate(CONTEXT, text)


def resolve_language(choice: str) -> str:
    """``auto`` follows the system locale: Chinese locales get zh_CN, everything else English."""
    if choice != "auto":
        return choice
    return "zh_CN" if QLocale.system().language() == QLocale.Language.Chinese else "en"


class Translations:
    """Installs (and swaps) the app's translator; English is the source text, so it needs none."""

    def __init__(self) -> None:
        self._translator: QTranslator | None = None
        self.language = "en"

    def apply(self, choice: str) -> str:
        app = QCoreApplication.instance()
        assert app is not None
        if self._translator is not None:
            app.removeTranslator(self._translator)
            self._translator = None
        from mediaassist.ui.labels import clear_label_cache

        clear_label_cache()
        self.language = resolve_language(choice)
        if self.language != "en":
            translator = QTranslator(app)
            if translator.load(f"mediaassist_{self.language}", str(TRANSLATIONS_DIR)):
                app.installTranslator(translator)
                self._translator = translator
        return self.language
