#!/usr/bin/env bash
# Install a launcher entry and icon for the current user (freedesktop: GNOME, KDE, Xfce, ...).
#   packaging/install_desktop.sh /path/to/mediaassist   # the executable the launcher starts
# Used by `packaging/setup.sh --desktop` (the venv's script) and `packaging/build.sh --desktop`
# (the frozen build). Re-running it replaces the entry.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
exec_path="$(readlink -f "${1:?usage: install_desktop.sh EXECUTABLE}")"
[ -x "$exec_path" ] || { echo "install_desktop: $exec_path is not an executable" >&2; exit 2; }
share="${XDG_DATA_HOME:-$HOME/.local/share}"
icons="$here/../resources/icons"
install -Dm644 "$icons/mediaassist.png" "$share/icons/hicolor/64x64/apps/mediaassist.png"
install -Dm644 "$icons/mediaassist.svg" "$share/icons/hicolor/scalable/apps/mediaassist.svg"
mkdir -p "$share/applications"
sed "s#@EXEC@#$exec_path#g" "$here/mediaassist.desktop.in" > "$share/applications/mediaassist.desktop"
chmod 644 "$share/applications/mediaassist.desktop"
if command -v desktop-file-validate >/dev/null; then desktop-file-validate "$share/applications/mediaassist.desktop"; fi
command -v update-desktop-database >/dev/null && update-desktop-database -q "$share/applications" || true
echo "install_desktop: launcher entry $share/applications/mediaassist.desktop -> $exec_path"
