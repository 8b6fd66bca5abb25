"""One window per user and data dir: a second launch hands its files over and exits.

The second process connects to the first one's ``QLocalServer`` and writes one JSON line: a list
of files, or ``{"login": ACCOUNT, "keep_login": BOOL}`` from ``mediaassist accounts login`` (the running window logs
the account in inside its lane's own browser, which holds the profile, and answers on the same
connection with ``{"ok": ..., "message": ...}`` when the login is seen or given up). If no
server answers, a socket file left by a crash is removed before listening, so it never blocks
start-up -- but only when nobody answers on it: removing a live instance's socket would give two
windows on one data dir. Hand-over and listen run under a ``QLockFile`` per user and data dir, so
two launches at the same moment (two files double-clicked) cannot both decide to be the first.
The blocking waits here run before the event loop starts, never inside a coroutine.
"""

from __future__ import annotations

import getpass
import hashlib
import json
import logging
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QDir, QLockFile, QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

log = logging.getLogger("mediaassist.ui")

CONNECT_MS = 500
LOCK_MS = 5000  # longest wait for a concurrent launch to finish its own start-up


def server_name(data_dir: Path, demo: bool = False) -> str:
    """Per user and data dir; a demo window has a name of its own, so it never takes (or hands
    over) the real app's files even if both were pointed at one folder."""
    key = hashlib.sha256(f"{getpass.getuser()}\0{data_dir}".encode()).hexdigest()[:16]
    return f"mediaassist-demo-{key}" if demo else f"mediaassist-{key}"


LoginReply = Callable[[bool, str], None]


class SingleInstance(QObject):
    """Signals: files_received(list) -- paths (str) a later launch handed over;
    login_requested(str, object, bool) -- an account to log in, the ``LoginReply`` to answer with,
    and whether the lane may keep the login typed (``accounts login --keep-login``)."""

    files_received = Signal(list)
    login_requested = Signal(str, object, bool)

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name
        self.server: QLocalServer | None = None
        self._clients: dict[QLocalSocket, bytearray] = {}

    def claim(self, files: list[Path]) -> bool:
        """Start-up: True if a running instance took ``files`` (this process should exit);
        otherwise this process listens (if it can) and is the instance from now on."""
        lock = QLockFile(str(Path(QDir.tempPath()) / f"{self.name}.lock"))
        locked = lock.tryLock(LOCK_MS)  # a crashed holder's lock is stale and taken over
        try:
            if self.hand_over(files):
                return True
            if not self.listen():
                log.warning("single-instance guard unavailable (%s); continuing", self.name)
            return False
        finally:
            if locked:
                lock.unlock()

    def hand_over(self, files: list[Path]) -> bool:
        """True if a running instance took the files (this process should exit)."""
        socket = QLocalSocket(self)
        try:
            return self._send(socket, files)
        finally:
            socket.abort()
            socket.deleteLater()

    def _send(self, socket: QLocalSocket, files: list[Path]) -> bool:
        socket.connectToServer(self.name)
        if not socket.waitForConnected(CONNECT_MS):
            return False
        payload = json.dumps([str(Path(f).resolve()) for f in files]).encode() + b"\n"
        socket.write(payload)
        socket.waitForBytesWritten(CONNECT_MS)
        socket.disconnectFromServer()
        if socket.state() != QLocalSocket.LocalSocketState.UnconnectedState:
            socket.waitForDisconnected(CONNECT_MS)
        return True

    def request_login(self, account: str, timeout_s: float, keep_login: bool = False) -> tuple[bool, str] | None:
        """Ask the running window to log ``account`` in inside its lane's browser and wait for its
        answer (``timeout_s`` plus a minute for the window to wind up); None when no window runs."""
        socket = QLocalSocket(self)
        try:
            socket.connectToServer(self.name)
            if not socket.waitForConnected(CONNECT_MS):
                return None
            socket.write(json.dumps({"login": account, "timeout_s": timeout_s, "keep_login": keep_login}).encode()
                         + b"\n")
            socket.waitForBytesWritten(CONNECT_MS)
            reply = bytearray()
            while b"\n" not in reply and socket.waitForReadyRead(int((timeout_s + 60) * 1000)):
                reply.extend(bytes(socket.readAll().data()))
            try:
                answer = json.loads(bytes(reply).partition(b"\n")[0].decode())
                return bool(answer["ok"]), str(answer["message"])
            except (UnicodeDecodeError, ValueError, KeyError, TypeError):
                return False, "the running window did not answer the login request"
        finally:
            socket.abort()
            socket.deleteLater()

    def listen(self) -> bool:
        # With socket options Qt binds elsewhere and renames over the path, so listen() would
        # silently take a live instance's name: ask first whether anybody answers there.
        if self._answers():
            return False
        server = QLocalServer(self)
        server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        if not server.listen(self.name):
            QLocalServer.removeServer(self.name)  # a stale socket from a crashed run
            if not server.listen(self.name):
                return False
        server.newConnection.connect(self._accept)
        self.server = server
        return True

    def _answers(self) -> bool:
        socket = QLocalSocket(self)
        try:
            socket.connectToServer(self.name)
            return socket.waitForConnected(CONNECT_MS)
        finally:
            socket.abort()
            socket.deleteLater()

    def close(self) -> None:
        for socket in list(self._clients):
            self._drop(socket)
        if self.server is not None:
            self.server.close()
            self.server = None

    def _accept(self) -> None:
        assert self.server is not None
        while (socket := self.server.nextPendingConnection()) is not None:
            self._clients[socket] = bytearray()
            socket.readyRead.connect(lambda sock=socket: self._read(sock))
            socket.disconnected.connect(lambda sock=socket: self._drop(sock))
            if socket.bytesAvailable():
                self._read(socket)

    def _read(self, socket: QLocalSocket) -> None:
        buffer = self._clients.get(socket)
        if buffer is None:
            return
        buffer.extend(bytes(socket.readAll().data()))
        if b"\n" in buffer:
            line = bytes(buffer).partition(b"\n")[0]
            request = _login_request(line)
            if request is None:
                self._drop(socket)
                self._deliver(line)
                return
            self._clients.pop(socket, None)  # kept open for the answer

            def reply(ok: bool, message: str) -> None:
                socket.write(json.dumps({"ok": ok, "message": message}).encode() + b"\n")
                socket.flush()
                socket.disconnectFromServer()
            self.login_requested.emit(request[0], reply, request[1])

    def _drop(self, socket: QLocalSocket) -> None:
        # The server owns (and finally deletes) its sockets; deleting one here, inside its own
        # signal, crashed PySide6 ("shared QObject was deleted directly").
        if self._clients.pop(socket, None) is not None:
            socket.disconnectFromServer()

    def _deliver(self, line: bytes) -> None:
        try:
            files = json.loads(line.decode())
        except (UnicodeDecodeError, json.JSONDecodeError):
            return
        if isinstance(files, list):
            self.files_received.emit([str(f) for f in files])


def _login_request(line: bytes) -> tuple[str, bool] | None:
    """The account of a ``{"login": ACCOUNT}`` line and its ``keep_login``; None for anything
    else (a list of files)."""
    try:
        data = json.loads(line.decode())
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("login"), str):
        return None
    return data["login"], data.get("keep_login") is True
