#!/usr/bin/env bash
# Idempotent set-up for a fresh Debian/Ubuntu machine: system packages, a venv in .venv and the
# project (editable) with what the job needs. Re-running it only installs what is missing.
#   packaging/setup.sh --app ...  # the app only, then start it (args go to mediaassist)
#   packaging/setup.sh --test ... # the app and the test tools, then the test suite (args go to
#                                 # pytest) on SQLite and on a throw-away PostgreSQL
#                                 # (packaging/pg_test_cluster.sh)
#   packaging/setup.sh --test-fast ... # the same install, then the unit tier only (tests/unit: seconds)
#   packaging/setup.sh --desktop  # the app only, then add mediaassist to the desktop's launcher
#   packaging/setup.sh            # the app only
# Optional parts of the app, in MEDIAASSIST_EXTRAS (comma-separated):
#   video     PyAV (~100 MB with its FFmpeg): videos' first frames in the gallery, their size and
#             duration in the manifest, a downloaded video decoded before it counts as whole
#   postgres  a team's shared queue on PostgreSQL ([store] url)
#   player    videos and sounds play inside the gallery (Qt Multimedia, ~440 MB); without it
#             they open in the desktop's player
# e.g. MEDIAASSIST_EXTRAS=video,postgres,player packaging/setup.sh --app
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(ca-certificates python3 python3-venv python3-pip
  chromium xvfb xauth fonts-noto-cjk libatomic1 libegl1 libgl1 libfontconfig1 libdbus-1-3
  libxkbcommon-x11-0 libxcb-cursor0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1
  libxcb-render-util0 libxcb-util1 libxcb-xkb1 libxcb-shape0 libxcb-randr0 libxcb-xinerama0)
# The tests also run the store, scheduler and multi-process tests on a real PostgreSQL server,
# and the window-placement test under a real window manager (openbox).
[ "${1:-}" = "--test" ] && APT_PACKAGES+=(postgresql openbox)

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "setup: installing ${missing[*]}" >&2
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

case "${1:-}" in
  --test|--test-fast) extras="test,postgres,player,video" ;;
  *) extras="${MEDIAASSIST_EXTRAS:-}" ;;
esac
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
  # Python 3.11's venv seeds setuptools (10 MB) that nothing run from .venv uses: pip builds the
  # project in an isolated environment of its own. (3.12's seeds none: pip only notes that.)
  .venv/bin/pip uninstall -q -y setuptools >/dev/null 2>&1
fi
# One stamp per set of extras: the app's install does not satisfy the tests', and a later
# --app keeps the test tools a --test put there.
stamp=".venv/.mediaassist-installed${extras:+-${extras//,/-}}"
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  echo "setup: installing mediaassist${extras:+ with $extras} into .venv (a few minutes the first time)" >&2
  # pip's and setuptools' own chatter (an editable-install banner among it) goes to the log;
  # a failure shows its end.
  log=.venv/setup.log
  if ! { .venv/bin/pip install -q -U pip && .venv/bin/pip install -q -e ".${extras:+[$extras]}"; } >"$log" 2>&1; then
    tail -n 30 "$log" >&2
    echo "setup: the install failed; the whole log is in $log" >&2
    exit 1
  fi
  touch "$stamp"
  echo "setup: .venv holds $(du -sh .venv | cut -f1)" >&2
fi
# Never `playwright install`: it downloads a browser (fails here); we use Debian's chromium.

case "${1:-}" in
  --app)
    shift
    if [ -z "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
      echo "setup: no display found; starting the app on a virtual screen (xvfb-run)" >&2
      exec xvfb-run -a .venv/bin/mediaassist "$@"
    fi
    exec .venv/bin/mediaassist "$@" ;;
  --desktop)
    exec packaging/install_desktop.sh .venv/bin/mediaassist ;;
  --test-fast)
    # No network, browser, Qt loop or PostgreSQL: what to run between two edits.
    shift
    exec .venv/bin/python -m pytest tests/unit -q "$@" ;;
  --test)
    shift
    pg_dir=$(mktemp -d "${TMPDIR:-/tmp}/mediaassist-pg.XXXXXX")
    trap 'packaging/pg_test_cluster.sh stop "$pg_dir"; rm -rf "$pg_dir"' EXIT
    MEDIAASSIST_TEST_PG=$(packaging/pg_test_cluster.sh start "$pg_dir")
    export MEDIAASSIST_TEST_PG
    echo "setup: tests run on SQLite and on PostgreSQL at $MEDIAASSIST_TEST_PG" >&2
    # timeout: pytest-timeout cannot interrupt a hang inside Qt's loop on its own.
    # No exec: the trap must stop the cluster when pytest ends.
    # With no arguments: everything but the long remainder on the real third-party chat UIs
    # (marker webui: ~3,000-character prompts, a server killed mid-answer), which would push CI
    # past its 35 minutes; their core set (tests/integration/test_webui_*.py, ~3 min) runs here. Run the
    # remainder with `packaging/setup.sh --test -m webui`. Two worker processes: most tests wait on
    # servers, browsers and child processes rather than the CPU; a module stays on one worker.
    if [ $# -gt 0 ]; then
      timeout 2100 xvfb-run -a .venv/bin/python -m pytest "$@"
      exit
    fi
    # The windows one after another: they share one display, its window manager and the
    # single-instance channel, and a Qt abort would take a worker down with a module's state.
    rc=0
    timeout 1500 xvfb-run -a .venv/bin/python -m pytest -m "not webui" -n 2 --dist loadfile --durations=25 \
      tests/unit tests/integration || rc=$?
    timeout 900 xvfb-run -a .venv/bin/python -m pytest -m "not webui" --durations=10 tests/ui || rc=$((rc ? rc : $?))
    exit "$rc" ;;
esac
