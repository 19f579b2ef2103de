# shellcheck shell=bash
# Sourced by benchmarks that run Darkroom's catalog in PostgreSQL: a scratch server of their
# own (Debian's postgresql), in PG_DIR (default /tmp/darkroom-bench-pg, where the postgres
# user can reach it), on a Unix socket there only, started by start_postgres and stopped when
# the script exits. Debian's own cluster is not touched.
#
# Settings: PostgreSQL's defaults but synchronous_commit=off, the durability of the SQLite
# catalog's WAL with synchronous=NORMAL (a power cut may lose the last commits, never the
# database's consistency), so that both are measured making the same promise.
PG_DIR="${PG_DIR:-/tmp/darkroom-bench-pg}"
PG_BIN="/usr/lib/postgresql/$(ls /usr/lib/postgresql | sort -V | tail -1)/bin"

# From /tmp: initdb and pg_ctl fail in a folder the postgres user cannot read (/root).
as_postgres() {
  if [ "$(id -u)" = 0 ]; then (cd /tmp && runuser -u postgres -- "$@"); else "$@"; fi
}

start_postgres() {
  "$ROOT/Scripts/install-deps.sh" postgresql
  if [ ! -f "$PG_DIR/data/PG_VERSION" ]; then
    rm -rf "$PG_DIR"
    mkdir -p "$PG_DIR/socket"
    [ "$(id -u)" != 0 ] || chown -R postgres "$PG_DIR"
    as_postgres "$PG_BIN/initdb" -D "$PG_DIR/data" -U postgres --auth=trust -E UTF8 >/dev/null
  fi
  # One left running by a run that was killed is stopped first (its settings may differ).
  as_postgres "$PG_BIN/pg_ctl" -D "$PG_DIR/data" status >/dev/null 2>&1 && stop_postgres
  as_postgres "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/log" -w \
    -o "-c listen_addresses='' -k $PG_DIR/socket -p 5432 -c synchronous_commit=off" start >/dev/null
}

stop_postgres() {
  as_postgres "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m fast -w stop >/dev/null 2>&1 || true
}

# new_database NAME: an empty database NAME (dropped first if there); prints its URL.
new_database() {
  local url="postgresql://postgres@/postgres?host=$PG_DIR/socket&port=5432"
  PGOPTIONS="-c client_min_messages=warning" psql -q "$url" -c "DROP DATABASE IF EXISTS $1" -c "CREATE DATABASE $1" >/dev/null
  echo "postgresql://postgres@/$1?host=$PG_DIR/socket&port=5432"
}
