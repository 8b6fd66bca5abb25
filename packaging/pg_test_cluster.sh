#!/usr/bin/env bash
# A throw-away PostgreSQL cluster for the tests (and for trying a shared queue by hand).
#   packaging/pg_test_cluster.sh start DIR   # initdb in DIR, start on a free port, print the URL
#   packaging/pg_test_cluster.sh stop DIR    # stop it (the files stay until DIR is deleted)
#   packaging/pg_test_cluster.sh url DIR     # print the URL of a running cluster again
# The server runs as an unprivileged user (initdb refuses root): the caller itself, or `nobody`
# when called as root. Only 127.0.0.1 is listened on, with trust auth: never use it for real data.
# Needs Debian's `postgresql` package (PostgreSQL 15+); PG_BIN overrides where its binaries are.
set -euo pipefail

SUPERUSER=mediaassist_test

die() { echo "pg_test_cluster: $*" >&2; exit 2; }

pg_bin() {
  if [ -n "${PG_BIN:-}" ]; then echo "$PG_BIN"; return; fi
  local found
  found=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  [ -n "$found" ] || die "no PostgreSQL binaries in /usr/lib/postgresql/*/bin (apt-get install postgresql)"
  echo "$found"
}

# Run a command as the cluster's owner: ourselves, or `nobody` when we are root.
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u nobody -- "$@"
  else
    "$@"
  fi
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

url_of() {
  local dir=$1
  [ -f "$dir/port" ] || die "no cluster in $dir (start it first)"
  echo "postgresql://$SUPERUSER@127.0.0.1:$(cat "$dir/port")/postgres"
}

start() {
  local dir=$1 bin port
  bin=$(pg_bin)
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  if [ "$(id -u)" -eq 0 ]; then
    chown nobody "$dir"
    as_owner test -w "$dir" || die "$dir is not reachable by user nobody (a parent folder is private); use a folder under /tmp"
  fi
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    as_owner "$bin/initdb" -D "$dir/data" -U "$SUPERUSER" --auth=trust --encoding=UTF8 \
      --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; die "initdb failed"; }
  fi
  # A restarted cluster keeps its port when it is still free (its URL stays valid). A port
  # taken between choosing and binding makes pg_ctl fail: choose again a few times.
  for try in 1 2 3 4 5; do
    if [ "$try" -eq 1 ] && [ -f "$dir/port" ]; then port=$(cat "$dir/port"); else port=$(free_port); fi
    # fsync off: a test cluster trades durability for speed (the data is thrown away anyway).
    if as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start \
        -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off \
            -c full_page_writes=off -c max_connections=200" >/dev/null; then
      echo "$port" >"$dir/port"
      url_of "$dir"
      return 0
    fi
  done
  tail -n 20 "$dir/server.log" >&2 || true
  die "the server did not start (log: $dir/server.log)"
}

stop() {
  local dir=$1
  [ -f "$dir/data/postmaster.pid" ] || return 0
  as_owner "$(pg_bin)/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
}

case "${1:-}" in
  start) [ $# -eq 2 ] || die "usage: $0 start DIR"; start "$2" ;;
  stop) [ $# -eq 2 ] || die "usage: $0 stop DIR"; stop "$2" ;;
  url) [ $# -eq 2 ] || die "usage: $0 url DIR"; url_of "$2" ;;
  *) die "usage: $0 start|stop|url DIR" ;;
esac
