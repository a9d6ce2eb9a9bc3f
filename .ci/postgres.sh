#!/usr/bin/env bash
# A throwaway PostgreSQL for the store/pgstore tests: initdb into a temporary
# directory, serve on 127.0.0.1 at a free port, export BATON_PG_URL, and stop
# and delete it all when the shell exits.
#
# Two ways to use it:
#
#   .ci/postgres.sh go test ./store/pgstore      # run one command against a fresh server
#   source .ci/postgres.sh && baton_pg_start     # in a script: the server lives until it exits
#
# If BATON_PG_URL is already set, nothing is started and that server is used.
# The server binaries come from the Debian package postgresql; when none is
# found and the shell runs as root, the package is installed (apt-get). As root
# the server runs as the postgres user (initdb refuses root).

baton_pg_bindir() {
  local d
  d="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
  if [ -z "$d" ] && command -v pg_ctl >/dev/null 2>&1; then
    d="$(dirname "$(readlink -f "$(command -v pg_ctl)")")"
  fi
  echo "$d"
}

# baton_pg_as runs a command as the server's owner.
baton_pg_as() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

baton_pg_start() {
  if [ -n "${BATON_PG_URL:-}" ]; then
    echo "postgres: using BATON_PG_URL from the environment"
    return 0
  fi
  local bin
  bin="$(baton_pg_bindir)"
  if [ -z "$bin" ]; then
    if [ "$(id -u)" != 0 ]; then
      echo "postgres: no PostgreSQL server found; install the Debian package postgresql" >&2
      return 1
    fi
    echo "postgres: installing the Debian package postgresql"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
    bin="$(baton_pg_bindir)"
    if [ -z "$bin" ]; then
      echo "postgres: installed, but no server binaries found" >&2
      return 1
    fi
  fi

  BATON_PG_DIR="$(mktemp -d "${TMPDIR:-/tmp}/baton-pg.XXXXXX")"
  chmod 755 "$BATON_PG_DIR"
  if [ "$(id -u)" = 0 ]; then
    chown postgres: "$BATON_PG_DIR"
  fi
  baton_pg_as "$bin/initdb" -D "$BATON_PG_DIR/data" -U postgres -A trust -E UTF8 --no-sync >"$BATON_PG_DIR/initdb.log" 2>&1 || {
    cat "$BATON_PG_DIR/initdb.log" >&2
    return 1
  }

  # A free port: probe random ports until one refuses connections, and try
  # again if the server still loses a race for it.
  local port="" try
  for try in 1 2 3 4 5 6 7 8; do
    port=$((20000 + RANDOM % 40000))
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      continue
    fi
    if baton_pg_as "$bin/pg_ctl" -D "$BATON_PG_DIR/data" -l "$BATON_PG_DIR/server.log" -w -t 60 \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $BATON_PG_DIR -c max_connections=200" start >/dev/null; then
      break
    fi
    port=""
  done
  if [ -z "$port" ]; then
    echo "postgres: the server did not start; its log:" >&2
    cat "$BATON_PG_DIR/server.log" >&2
    return 1
  fi
  BATON_PG_BIN="$bin"
  trap baton_pg_stop EXIT
  baton_pg_as "$bin/createdb" -h 127.0.0.1 -p "$port" -U postgres baton
  export BATON_PG_URL="postgres://postgres@127.0.0.1:$port/baton?sslmode=disable"
  echo "postgres: $("$bin/postgres" --version) on 127.0.0.1:$port (BATON_PG_URL=$BATON_PG_URL)"
}

baton_pg_stop() {
  if [ -n "${BATON_PG_DIR:-}" ] && [ -d "$BATON_PG_DIR" ]; then
    baton_pg_as "$BATON_PG_BIN/pg_ctl" -D "$BATON_PG_DIR/data" -m fast -w stop >/dev/null 2>&1 || true
    rm -rf "$BATON_PG_DIR"
    BATON_PG_DIR=""
  fi
}

# Executed rather than sourced: run the arguments against a fresh server.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  if [ "$#" -eq 0 ]; then
    echo "usage: $0 command [args...]   (or: source $0 && baton_pg_start)" >&2
    exit 2
  fi
  baton_pg_start
  "$@"
fi
