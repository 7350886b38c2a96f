# shellcheck shell=bash
# A throwaway PostgreSQL for the relay benchmark (issue 26): Debian's `postgresql` (the
# newest installed), initdb in a folder of its own under /tmp (the server's user must
# reach it), removed by postgres_stop, with SCRAM-SHA-256, on a free loopback port, run as the
# `postgres` user through setpriv when this runs as root (the server refuses root; setpriv
# execs it, so the pid kept is the postmaster's). Sets PG_PID, PG_PORT, PG_PASSWORD_FILE.
# Needs wait_for_line and stop_pid from prosody.sh.

postgres_start() {
  local dir bin port run=()
  bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  [ -x "$bin/initdb" ] || { echo "postgres.sh: postgresql not installed (apt-get install postgresql)" >&2; return 1; }
  dir=$(mktemp -d /tmp/relay-bench-postgres.XXXXXX)
  PG_DIR=$dir
  PG_PASSWORD_FILE=$dir/db.password
  head -c 18 /dev/urandom | base64 | tr -d '/+=' > "$PG_PASSWORD_FILE"
  if [ "$(id -u)" = 0 ]; then
    chown -R postgres:postgres "$dir"
    run=(setpriv --reuid=postgres --regid=postgres --init-groups)
  fi
  "${run[@]}" "$bin/initdb" -D "$dir/data" -U bridge --auth=scram-sha-256 --pwfile="$PG_PASSWORD_FILE" -E UTF8 --locale=C --no-sync > "$dir/initdb.log" 2>&1 \
    || { cat "$dir/initdb.log" >&2; return 1; }
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "${run[@]}" "$bin/postgres" -D "$dir/data" -p "$port" -h 127.0.0.1 -k "$dir" > "$dir/postgres.log" 2>&1 &
  PG_PID=$!
  wait_for_line "$dir/postgres.log" "ready to accept connections" "$PG_PID" 30 || { cat "$dir/postgres.log" >&2; return 1; }
  PG_BIN=$bin
  PG_PORT=$port
  PGPASSWORD=$(cat "$PG_PASSWORD_FILE") "$bin/createdb" -h 127.0.0.1 -p "$port" -U bridge bridge
}

postgres_database() {  # NAME: a fresh database on the server; prints its URL
  PGPASSWORD=$(cat "$PG_PASSWORD_FILE") "$PG_BIN/createdb" -h 127.0.0.1 -p "$PG_PORT" -U bridge "$1"
  echo "postgresql://bridge@127.0.0.1:$PG_PORT/$1"
}

postgres_stop() {
  [ -n "${PG_PID:-}" ] || return 0
  # SIGINT: a fast shutdown; stop_pid follows with SIGTERM/SIGKILL if it lingers.
  kill -INT "$PG_PID" 2>/dev/null || true
  stop_pid "$PG_PID"
  PG_PID=
  if [ "${RELAY_BENCH_KEEP:-0}" = 1 ]; then echo "kept $PG_DIR" >&2; else rm -rf "$PG_DIR"; fi
}
