#!/usr/bin/env bash
# A throwaway PostgreSQL cluster on a loopback port, for the postgres adapter's tests.
#
#   scripts/postgres-cluster.sh start DIR   create DIR, initdb, start; print the admin DSN
#   scripts/postgres-cluster.sh stop DIR    stop the server and remove DIR
#   scripts/postgres-cluster.sh kill DIR    stop the server at once (immediate mode), keep DIR
#   scripts/postgres-cluster.sh resume DIR  start a killed server again on its port
#
# The server runs as a non-root user: as root, the system user recall-pg is created
# if missing and the server runs as it. Clients connect over TCP with a password
# (scram-sha-256), so authentication failures are real ones.
set -euo pipefail

RUN_AS=recall-pg
ADMIN=recall_admin

pg_bin() {
  local found
  found=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  if [ -z "$found" ] && command -v initdb >/dev/null 2>&1; then
    found=$(dirname "$(command -v initdb)")
  fi
  if [ -z "$found" ]; then
    echo "postgres-cluster: PostgreSQL is not installed (apt-get install postgresql)" >&2
    exit 1
  fi
  echo "$found"
}

as_server_user() {
  if [ "$(id -u)" = 0 ]; then
    (cd / && runuser -u "$RUN_AS" -- "$@")
  else
    "$@"
  fi
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start() {
  local dir=$1 bin port password
  bin=$(pg_bin)
  mkdir -p "$dir"
  if [ "$(id -u)" = 0 ]; then
    id -u "$RUN_AS" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$RUN_AS"
    chown "$RUN_AS" "$dir"
  fi
  chmod 700 "$dir"
  password=$(python3 -c 'import secrets; print(secrets.token_hex(16))')
  printf '%s\n' "$password" >"$dir/admin-password"
  [ "$(id -u)" = 0 ] && chown "$RUN_AS" "$dir/admin-password"
  as_server_user "$bin/initdb" -D "$dir/data" -U "$ADMIN" --pwfile="$dir/admin-password" \
    --auth-local=scram-sha-256 --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
    || { cat "$dir/initdb.log" >&2; exit 1; }
  port=$(free_port)
  as_server_user "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c full_page_writes=off" \
    start >/dev/null || { cat "$dir/server.log" >&2; exit 1; }
  echo "$port" >"$dir/port"
  echo "host=127.0.0.1 port=$port user=$ADMIN password=$password dbname=postgres"
}

kill_server() {
  as_server_user "$(pg_bin)/pg_ctl" -D "$1/data" -m immediate -w stop >/dev/null
}

resume() {
  local dir=$1 port
  port=$(cat "$dir/port")
  as_server_user "$(pg_bin)/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c full_page_writes=off" \
    start >/dev/null || { cat "$dir/server.log" >&2; exit 1; }
}

stop() {
  local dir=$1 bin
  bin=$(pg_bin)
  if [ -f "$dir/data/postmaster.pid" ]; then
    as_server_user "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
}

case "${1:-}" in
  start) start "$2" ;;
  stop) stop "$2" ;;
  kill) kill_server "$2" ;;
  resume) resume "$2" ;;
  *) echo "usage: $0 start|stop|kill|resume DIR" >&2; exit 2 ;;
esac
