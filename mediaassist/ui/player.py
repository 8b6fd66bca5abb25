"""Videos and sounds played inside the window (Qt Multimedia, from PySide6-Addons).

Where Qt Multimedia is missing (a build with PySide6-Essentials only) or has no backend, the
callers show the first frame and the system player instead: ``playback_available`` says which.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from PySide6.QtCore import QLoggingCategory, QObject, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QImage, QPixmap, QResizeEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QSizePolicy, QVBoxLayout, QWidget

from mediaassist.ui.i18n import tr

# Qt Multimedia reports, as warnings, every hardware decoder and sound server it does not find
# (VA-API, PipeWire, PulseAudio on a box without sound): normal on many machines, and noise in
# the operator's log. Playback errors still reach the player's own errorOccurred.
_QUIET = "\n".join(f"{category}=false" for category in (
    "qt.multimedia.symbolsresolver", "qt.multimedia.ffmpeg*", "qt.multimedia.playbackengine*",
    "qt.multimedia.pipewire*", "qt.multimedia.pulseaudio*"))


@cache
def playback_available() -> bool:
    """Qt Multimedia is installed and has a backend that can play (FFmpeg in the wheels)."""
    QLoggingCategory.setFilterRules(_QUIET)  # before the import: it looks for PipeWire at once
    try:
        from PySide6.QtMultimedia import QMediaFormat
        from PySide6.QtMultimediaWidgets import QVideoWidget  # noqa: F401
    except ImportError:
        return False
    return bool(QMediaFormat().supportedFileFormats(QMediaFormat.ConversionMode.Decode))


class MediaPlayer(QWidget):
    """One clip or sound with play/pause. A clip's frames are drawn in a label (a sink, not a
    native video surface: they scale with the tile, and a screenshot sees them); before it plays,
    the first frame stands as its poster. ``frame_shown`` once the first frame is on screen."""

    frame_shown = Signal()

    def __init__(self, path: Path, video: bool, parent: Any = None) -> None:
        super().__init__(parent)
        from PySide6.QtMultimedia import QAudioOutput, QMediaPlayer, QVideoSink

        self.player = QMediaPlayer(self)
        self.audio = QAudioOutput(self)
        self.player.setAudioOutput(self.audio)
        self.frames = 0
        self._image: QImage | None = None
        self._poster_only = video  # the first frame is fetched as a poster, then it waits for Play
        self.picture = QLabel("" if video else "♪")
        self.picture.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.picture.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Ignored)
        self.picture.setMinimumSize(160, 90)
        if video:
            self.sink = QVideoSink(self)
            self.player.setVideoSink(self.sink)
            self.sink.videoFrameChanged.connect(self._frame)
        self.button = QPushButton(tr("Play"))
        self.button.clicked.connect(self.toggle)
        self.status = QLabel()
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        controls = QHBoxLayout()
        controls.addWidget(self.button)
        controls.addWidget(self.status, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.picture, 1)
        layout.addLayout(controls)
        self.player.playbackStateChanged.connect(self._state_changed)
        self.player.errorOccurred.connect(lambda _error, text: self.status.setText(text))
        self.player.setSource(QUrl.fromLocalFile(str(path)))
        if video:
            self.audio.setMuted(True)  # the poster's own short play is silent
            self.player.play()

    def _frame(self, frame: Any) -> None:
        if not frame.isValid():
            return
        self.frames += 1
        self._image = frame.toImage()
        self._draw()
        if self.frames == 1:
            self.frame_shown.emit()
        if self._poster_only:
            self._poster_only = False
            self.player.pause()
            self.audio.setMuted(False)

    def _draw(self) -> None:
        if self._image is not None and not self._image.isNull():
            self.picture.setPixmap(QPixmap.fromImage(self._image).scaled(
                self.picture.size(), Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.SmoothTransformation))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._draw()

    def _state_changed(self, _state: Any) -> None:
        from PySide6.QtMultimedia import QMediaPlayer

        playing = self.player.playbackState() == QMediaPlayer.PlaybackState.PlayingState
        self.button.setText(tr("Pause") if playing else tr("Play"))

    def toggle(self) -> None:
        from PySide6.QtMultimedia import QMediaPlayer

        if self.player.playbackState() == QMediaPlayer.PlaybackState.PlayingState:
            self.player.pause()
        else:
            self.play_from(None)

    def play_from(self, position_ms: int | None) -> None:
        """Play; from ``position_ms`` when given (the compare view starts its clips together)."""
        self._poster_only = False
        self.audio.setMuted(False)
        if position_ms is not None:
            self.player.setPosition(position_ms)
        self.player.play()

    def stop(self) -> None:
        self.player.stop()
        self.player.setSource(QUrl())


SYNC_EVERY_MS = 400
SYNC_TOLERANCE_MS = 150  # two decoders drift by a frame or two; more than this is seen


class PlaybackGroup(QObject):
    """Clips that play together (the compare view): started from the start at once, then kept
    on the first clip's position while they play -- decoders start at different moments and
    drift apart -- and paused or played again together. ``playing_changed(bool)``."""

    playing_changed = Signal(bool)

    def __init__(self, players: list[MediaPlayer], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.players = players
        self.playing = False
        self._timer = QTimer(self)
        self._timer.setInterval(SYNC_EVERY_MS)
        self._timer.timeout.connect(self.align)

    def toggle(self) -> None:
        if self.playing:
            self.pause()
        else:
            self.play_from_start()

    def play_from_start(self) -> None:
        for player in self.players:
            player.play_from(0)
        self._set_playing(True)

    def pause(self) -> None:
        for player in self.players:
            player.player.pause()
        self._set_playing(False)

    def align(self) -> None:
        """Bring every clip to the first one's position, where the first has not outrun it."""
        from PySide6.QtMultimedia import QMediaPlayer

        if not self.players:
            return
        leader = self.players[0].player
        if leader.playbackState() != QMediaPlayer.PlaybackState.PlayingState:
            self._set_playing(False)  # it ended (or was paused by its own button): the group rests
            return
        position = leader.position()
        for follower in (p.player for p in self.players[1:]):
            inside = follower.duration() <= 0 or position < follower.duration()
            if inside and abs(follower.position() - position) > SYNC_TOLERANCE_MS:
                follower.setPosition(position)

    def _set_playing(self, playing: bool) -> None:
        if playing:
            self._timer.start()
        else:
            self._timer.stop()
        if playing != self.playing:
            self.playing = playing
            self.playing_changed.emit(playing)
