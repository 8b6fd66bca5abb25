"""Settings: limits (validated by the core's ranges, applied live), chromium path, data dir, language.

Where they are kept: the operator's TOML config stays the source of the provider definitions and
is never rewritten by the app; edits made here are kept in QSettings (``limits/<provider>/<key>``,
``app/...``) and laid over the loaded config at every start. The data dir takes effect at the next
start (it holds the open database).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QSettings, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from mediaassist.core.config import (
    API_CONCURRENCY_RANGE,
    INTERVAL_RANGE,
    POLLING_TASKS_RANGE,
    TIMEOUT_RANGE,
    check_setting,
)
from mediaassist.core.errors import ConfigError
from mediaassist.core.paths import is_demo_dir
from mediaassist.runtime import Runtime
from mediaassist.ui.fit import scrollable
from mediaassist.ui.i18n import LANGUAGES, tr
from mediaassist.ui.labels import lane_kind_label

PROVIDER_KEYS = {
    "api": ("concurrency", "timeout_s"),
    "poll": ("max_polling_tasks", "poll_interval_s", "queue_check_interval_s", "timeout_s"),
}
RANGES = {"concurrency": API_CONCURRENCY_RANGE, "max_polling_tasks": POLLING_TASKS_RANGE,
          "poll_interval_s": INTERVAL_RANGE, "queue_check_interval_s": INTERVAL_RANGE,
          "timeout_s": TIMEOUT_RANGE}
INT_KEYS = {"concurrency", "max_polling_tasks"}
SCREEN_SHARE = 80  # percent of the screen's height the dialog may take


def key_label(key: str) -> str:
    return {"concurrency": tr("Concurrency"), "max_polling_tasks": tr("Polling pool"),
            "poll_interval_s": tr("Poll interval (s)"), "queue_check_interval_s": tr("Queue sweep (s)"),
            "timeout_s": tr("Time-out (s)")}[key]


def parse_value(key: str, text: str) -> Any:
    """The typed value, or the text itself (check_setting then names the allowed range)."""
    text = text.strip()
    try:
        return int(text) if key in INT_KEYS else float(text)
    except ValueError:
        return text


@dataclass
class LimitEdit:
    provider: str
    key: str
    value: Any


def apply_saved(settings: QSettings, rt: Runtime) -> list[str]:
    """Lay the saved edits over the loaded config; returns the ones refused (range changed)."""
    refused = []
    for provider in rt.config.providers:
        for key in PROVIDER_KEYS[provider.kind]:
            saved = settings.value(f"limits/{provider.name}/{key}")
            if saved is None:
                continue
            try:
                rt.set_limit(provider.name, key, parse_value(key, str(saved)))
            except ConfigError as exc:
                refused.append(str(exc))
    chromium = settings.value("app/chromium_path")
    if chromium:
        rt.set_chromium_path(str(chromium))
    return refused


class SettingsDialog(QDialog):
    """Signals: applied(list) -- LimitEdit items accepted; the app settings go to QSettings."""

    applied = Signal(list)

    def __init__(self, rt: Runtime, settings: QSettings, data_dir: str, demo: bool = False,
                 parent: Any = None) -> None:
        super().__init__(parent)
        self.rt = rt
        self.settings = settings
        self.setWindowTitle(tr("Settings"))
        layout = QVBoxLayout(self)
        # The providers' boxes scroll: the demo's eleven made the dialog 1,816 px tall, its OK
        # button below a 768-px screen.
        providers = QWidget()
        provider_layout = QVBoxLayout(providers)
        provider_layout.setContentsMargins(0, 0, 0, 0)
        self.edits: dict[tuple[str, str], QLineEdit] = {}
        for provider in rt.config.providers:
            box = QGroupBox(f"{provider.name} ({lane_kind_label(provider.kind)})")
            form = QFormLayout(box)
            for key in PROVIDER_KEYS[provider.kind]:
                edit = QLineEdit(str(getattr(provider, key)))
                low, high = RANGES[key]
                edit.setToolTip(tr("allowed: {low}..{high}").format(low=low, high=high))
                form.addRow(f"{key_label(key)} [{low}..{high}]", edit)
                self.edits[(provider.name, key)] = edit
            provider_layout.addWidget(box)
        provider_layout.addStretch(1)
        self.providers = scrollable(providers)
        # as wide as its boxes (it never scrolls sideways); as tall as the screen leaves room for
        self.providers.setMinimumWidth(providers.sizeHint().width()
                                       + self.providers.verticalScrollBar().sizeHint().width())
        layout.addWidget(self.providers, 1)
        app_box = QGroupBox(tr("Application"))
        form = QFormLayout(app_box)
        self.chromium = QLineEdit(rt.config.app.chromium_path or "")
        self.chromium.setPlaceholderText(tr("found automatically"))
        # Only a folder the operator chose is shown: pre-filling the one in use saved the demo's
        # folder as the real app's data dir.
        self.data_dir = QLineEdit(str(settings.value("app/data_dir", "") or ""))
        self.data_dir.setPlaceholderText(tr("in use now: {path}").format(path=data_dir))
        if demo:
            self.data_dir.setEnabled(False)
            self.data_dir.setPlaceholderText(tr("set in the real app's settings, not in the demo"))
            self.data_dir.setToolTip(self.data_dir.placeholderText())
        self.language = QComboBox()
        for code, name in LANGUAGES.items():
            self.language.addItem(tr("System") if code == "auto" else name, code)
        self.language.setCurrentIndex(max(0, self.language.findData(settings.value("app/language", "auto"))))
        form.addRow(tr("Chromium path"), self.chromium)
        form.addRow(tr("Data dir (next start)"), self.data_dir)
        form.addRow(tr("Language"), self.language)
        layout.addWidget(app_box)
        self.errors = QLabel()
        self.errors.setStyleSheet("color: #c62828")
        self.errors.setWordWrap(True)
        layout.addWidget(self.errors)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.try_apply)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        # The providers get the screen's room: at its size hint a 768-px screen showed two and a
        # half of the demo's thirteen boxes in a 530-px dialog.
        room = self.screen().availableGeometry().height() * SCREEN_SHARE // 100
        self.resize(self.sizeHint().width(), min(room, self.sizeHint().height() + providers.sizeHint().height()))

    def pending_edits(self) -> tuple[list[LimitEdit], list[str]]:
        edits, errors = [], []
        chosen_dir = self.data_dir.text().strip()
        if chosen_dir and is_demo_dir(chosen_dir):
            errors.append(tr("Data dir: {path} is the demo's folder; choose another one, or leave "
                             "it empty for the default.").format(path=chosen_dir))
        for (provider, key), field in self.edits.items():
            value = parse_value(key, field.text())
            try:
                check_setting(key, value)
            except ConfigError as exc:
                errors.append(f"{provider}: {exc}")
                continue
            edits.append(LimitEdit(provider, key, value))
        return edits, errors

    def try_apply(self) -> None:
        """Refuse everything if one value is out of range, naming the range; else apply and save."""
        edits, errors = self.pending_edits()
        if errors:
            self.errors.setText("\n".join(errors))
            return
        for edit in edits:
            provider = self.rt.config.provider(edit.provider)
            assert provider is not None
            if getattr(provider, edit.key) != edit.value:
                self.rt.set_limit(edit.provider, edit.key, edit.value)
                self.settings.setValue(f"limits/{edit.provider}/{edit.key}", edit.value)
        self.rt.set_chromium_path(self.chromium.text().strip() or None)
        self.settings.setValue("app/chromium_path", self.chromium.text().strip())
        if self.data_dir.isEnabled():
            self.settings.setValue("app/data_dir", self.data_dir.text().strip())
        self.settings.setValue("app/language", self.language.currentData())
        self.settings.sync()
        self.applied.emit(edits)
        self.accept()
