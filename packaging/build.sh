#!/usr/bin/env bash
# A desktop build: a PyInstaller one-folder build in dist/mediaassist/ that runs with no Python
# installed (the window and every CLI command). The browser is not bundled: the web lane uses the
# system Chromium (or [app] chromium_path). Linux is tested here; the same spec builds on Windows
# and macOS (see docs/install.md, "Desktop build").
#   packaging/build.sh              # build dist/mediaassist/
#   packaging/build.sh --smoke      # build, then run the demo batch and a window start from it
#   packaging/build.sh --desktop    # build, then add it to the launcher (install_desktop.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
venv="$root/.venv-build"  # apart from .venv: the build must see only the wheel's dependencies
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q -U pip
rm -rf build/wheel && "$venv/bin/pip" wheel -q --no-deps -w build/wheel .
wheel=$(echo build/wheel/mediaassist-*.whl)
# Known good: pyinstaller 6.22.3 (the spec relies on collect_data_files for the playwright driver).
# [video]: a desktop build has no pip to add PyAV later, so it carries the videos' first frames.
"$venv/bin/pip" install -q "$wheel[video]" 'pyinstaller==6.22.3'
"$venv/bin/pip" install -q --force-reinstall --no-deps "$wheel"  # same version, new code
"$venv/bin/pyinstaller" --noconfirm --log-level WARN --distpath "$root/dist" \
  --workpath "$root/build/pyinstaller" packaging/mediaassist.spec
app="$root/dist/mediaassist/mediaassist"
echo "build: $app ($(du -sh "$root/dist/mediaassist" | cut -f1))"

case "${1:-}" in
  --smoke)
    work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
    cp resources/examples/seed-batch.csv "$work/"
    cd "$work"  # away from the checkout: only the build's own files are used
    "$app" --version
    "$app" run seed-batch.csv --demo --speed 60 --data-dir "$work/data" --json > "$work/run.json"
    python3 - "$work/run.json" <<'PY'
import json, sys
tasks = json.load(open(sys.argv[1]))["tasks"]
ok = sum(t["state"] == "success" for t in tasks)
print(f"build smoke: {ok}/{len(tasks)} demo tasks succeeded")
sys.exit(0 if ok == len(tasks) == 40 else 1)
PY
    # The window: start offscreen on the demo, wait until it is open, stop it as a logout would.
    QT_QPA_PLATFORM=offscreen "$app" --demo --data-dir "$work/data" -v 2> "$work/gui.log" &
    gui=$!
    for _ in $(seq 120); do grep -q "window open" "$work/gui.log" && break; sleep 0.5; done
    kill -TERM "$gui"; code=0; wait "$gui" || code=$?
    grep -q "SIGTERM: quitting" "$work/gui.log" && [ "$code" -eq 130 ] \
      || { cat "$work/gui.log" >&2; echo "build smoke: the window did not start and stop cleanly ($code)" >&2; exit 1; }
    echo "build smoke: window started and stopped cleanly" ;;
  --desktop)
    packaging/install_desktop.sh "$app" ;;
esac
