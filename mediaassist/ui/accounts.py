"""Accounts panel: site, enabled toggle, login state, last error, the machine whose browser
profile holds the login (a shared queue runs an account's tasks only there) and a "log in" button,
whose menu logs in keeping the login (``accounts login NAME --keep-login``)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QMenu, QTableWidget, QTableWidgetItem, QToolButton, QVBoxLayout, QWidget

from mediaassist.core.store import Account
from mediaassist.ui.core_texts import translated
from mediaassist.ui.i18n import tr


def login_label(state: str) -> str:
    return {"ok": tr("logged in"), "needs_login": tr("needs login"), "unknown": tr("unknown")}.get(state, state)


class AccountsPanel(QWidget):
    COLUMNS = 7

    def __init__(self, accounts: Callable[[], list[Account]], on_enabled: Callable[[str, bool], None],
                 on_login: Callable[[str, bool], None]) -> None:
        super().__init__()
        self.accounts = accounts
        self.on_enabled = on_enabled
        self.on_login = on_login  # (name, keep_login)
        self.table = QTableWidget(0, self.COLUMNS)
        self.table.setHorizontalHeaderLabels([tr("Account"), tr("Site"), tr("Enabled"), tr("Login"),
                                              tr("Last error"), tr("Machine"), ""])
        header = self.table.horizontalHeader()
        header.setStretchLastSection(False)
        # Every column as wide as its text, the Last error column gets the rest: a default
        # 100 px column wrapped "any (not bound yet)" in English and cut it off in Chinese, and
        # squeezed the Log in button's menu arrow.
        header.setSectionResizeMode(header.ResizeMode.ResizeToContents)
        header.setMinimumSectionSize(header.defaultSectionSize())  # short texts not crammed together
        header.setSectionResizeMode(4, header.ResizeMode.Stretch)
        self.table.verticalHeader().setVisible(False)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table)
        self._names: list[str] = []

    def refresh(self) -> None:
        accounts = self.accounts()
        names = [a.name for a in accounts]
        if names != self._names:
            self._rebuild(names)
        for row, acct in enumerate(accounts):
            self._cell(row, 1).setText(acct.site)
            box = self.table.cellWidget(row, 2)
            assert isinstance(box, QCheckBox)
            box.blockSignals(True)
            box.setChecked(acct.enabled)
            box.blockSignals(False)
            self._cell(row, 3).setText(login_label(acct.login_state))
            self._cell(row, 4).setText(translated(acct.last_error_text))
            self._cell(row, 5).setText(acct.host or tr("any (not bound yet)"))

    def _login_button(self, name: str) -> QToolButton:
        """"Log in", and in its menu the same keeping the login: the operator's explicit yes to
        the OS keyring holding what is typed into the site's form."""
        button = QToolButton()
        button.setText(tr("Log in"))
        button.setPopupMode(QToolButton.ToolButtonPopupMode.MenuButtonPopup)
        button.clicked.connect(lambda _=False: self.on_login(name, False))
        menu = QMenu(button)
        keep = menu.addAction(tr("Log in and keep me logged in (OS keyring)"))
        keep.setToolTip(tr("What you type into the site's login form is kept in the OS keyring (never a file) "
                           "and typed again whenever a new browser finds the page logged out."))
        keep.triggered.connect(lambda _=False: self.on_login(name, True))
        menu.setToolTipsVisible(True)
        button.setMenu(menu)
        return button

    def _cell(self, row: int, col: int) -> QTableWidgetItem:
        item = self.table.item(row, col)
        assert item is not None  # _rebuild puts an item in every text column of every row
        return item

    def _rebuild(self, names: list[str]) -> None:
        self._names = names
        self.table.setRowCount(len(names))
        for row, name in enumerate(names):
            self.table.setItem(row, 0, QTableWidgetItem(name))
            for col in (1, 3, 4, 5):
                self.table.setItem(row, col, QTableWidgetItem(""))
            box = QCheckBox()
            box.toggled.connect(lambda on, n=name: self.on_enabled(n, on))
            self.table.setCellWidget(row, 2, box)
            self.table.setCellWidget(row, 6, self._login_button(name))
            for col in (0, 1, 3, 4, 5):
                item = self._cell(row, col)
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
