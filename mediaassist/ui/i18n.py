"""Qt translations: every UI string goes through ``tr()`` (one context), compiled .qm per language.
The core's texts (log lines, errors) are not Qt's: they come as messages and are rendered
through the core's gettext catalogue (mediaassist/ui/core_texts.py).

``resources/translations/build_translations.py`` extracts the ``tr("...")`` literals into the .ts
files and compiles them with ``pyside6-lrelease``; the compiled .qm files are shipped.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QCoreApplication, QLibraryInfo, QLocale, QTranslator

from mediaassist.core.paths import RESOURCES

CONTEXT = "mediaassist"
TRANSLATIONS_DIR = RESOURCES / "translations"
LANGUAGES = {"auto": "System", "en": "English", "zh_CN": "中文 (简体)"}


# Caches of translated texts (labels, the core's texts), emptied when the language changes. The
# modules that keep one register it here, so this module needs to know none of them.
_language_caches: list[Callable[[], None]] = []


def clear_on_language_change(clear: Callable[[], None]) -> None:
    _language_caches.append(clear)


def tr(text: str) -> str:
    return QCoreApplication.translate(CONTEXT, text)


def labelled(label: str, text: str) -> str:
    """``label: text`` with the language's own colon (Chinese uses the full-width ``：``)."""
    return tr("{label}: {text}").format(label=label, text=text)


def resolve_language(choice: str) -> str:
    """``auto`` follows the system locale: Chinese locales get zh_CN, everything else English."""
    if choice != "auto":
        return choice
    return "zh_CN" if QLocale.system().language() == QLocale.Language.Chinese else "en"


_language = ["en"]  # the window's language as applied last (one per process, like the translators)


def current_language() -> str:
    return _language[0]


# The translators installed in the application. One list for the process, not one per
# ``Translations``: the application is one, so switching language anywhere replaces them all.
_installed: list[QTranslator] = []


class Translations:
    """Installs (and swaps) the app's translator; English is the source text, so it needs none."""

    def __init__(self) -> None:
        self.language = "en"

    def apply(self, choice: str) -> str:
        app = QCoreApplication.instance()
        assert app is not None
        for old in _installed:
            app.removeTranslator(old)
        _installed.clear()
        for clear in _language_caches:
            clear()
        self.language = resolve_language(choice)
        # Dates and numbers in Qt's own widgets (a file dialog's "Date Modified") in the same language.
        QLocale.setDefault(QLocale("zh_CN" if self.language == "zh_CN" else "en_US"))
        _language[0] = self.language
        if self.language != "en":
            qt_dir = QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)
            # Qt's own strings (standard dialog buttons) come from qtbase_*.qm when it is shipped.
            for name, folder in ((f"mediaassist_{self.language}", str(TRANSLATIONS_DIR)),
                                 (f"qtbase_{self.language}", qt_dir)):
                translator = QTranslator(app)
                if translator.load(name, folder):
                    app.installTranslator(translator)
                    _installed.append(translator)
        return self.language
