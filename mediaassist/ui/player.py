"""Videos and sounds played inside the window (Qt Multimedia, from PySide6-Addons).

Where Qt Multimedia is missing (a build with PySide6-Essentials only) or has no backend, the
callers show the first frame and the system player instead: ``playback_available`` says which.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from PySide6.QtCore import QLoggingCategory, Qt, QUrl, Signal
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
    """One clip or sound with play/pause; ``frame_shown`` once the first video frame is on screen."""

    frame_shown = Signal()

    def __init__(self, path: Path, video: bool, parent: Any = None) -> None:
        super().__init__(parent)
        from PySide6.QtMultimedia import QAudioOutput, QMediaPlayer
        from PySide6.QtMultimediaWidgets import QVideoWidget

        self.player = QMediaPlayer(self)
        self.audio = QAudioOutput(self)
        self.player.setAudioOutput(self.audio)
        self.frames = 0
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        if video:
            self.screen_widget: QWidget = QVideoWidget()
            self.player.setVideoOutput(self.screen_widget)
            self.screen_widget.videoSink().videoFrameChanged.connect(self._frame)
        else:
            self.screen_widget = QLabel("♪")
            self.screen_widget.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.screen_widget.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Ignored)
        self.screen_widget.setMinimumSize(160, 90)
        self.button = QPushButton(tr("Play"))
        self.button.clicked.connect(self.toggle)
        self.status = QLabel()
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        controls = QHBoxLayout()
        controls.addWidget(self.button)
        controls.addWidget(self.status, 1)
        layout.addWidget(self.screen_widget, 1)
        layout.addLayout(controls)
        self.player.playbackStateChanged.connect(self._state_changed)
        self.player.errorOccurred.connect(lambda _error, text: self.status.setText(text))
        self.player.setSource(QUrl.fromLocalFile(str(path)))

    def _frame(self, frame: Any) -> None:
        if frame.isValid():
            self.frames += 1
            if self.frames == 1:
                self.frame_shown.emit()

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
        if position_ms is not None:
            self.player.setPosition(position_ms)
        self.player.play()

    def stop(self) -> None:
        self.player.stop()
        self.player.setSource(QUrl())
