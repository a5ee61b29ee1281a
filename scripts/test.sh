#!/usr/bin/env bash
# Install everything the tests need and run the whole suite.
# Usage: ./scripts/test.sh [pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."

# Install Debian packages as root or through sudo; with neither, print the hint and stop.
apt_install() {
  local hint=$1
  shift
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
  elif command -v sudo >/dev/null 2>&1; then
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
  else
    echo "scripts/test.sh: $hint" >&2
    exit 1
  fi
}

# Taskwarrior is a real program the tests drive.
if ! command -v task >/dev/null 2>&1; then
  apt_install "install Taskwarrior ('task') first, e.g. apt-get install taskwarrior" taskwarrior
fi

# The page's tests drive Debian's Chromium headless (Playwright never downloads a browser).
if [ ! -x /usr/bin/chromium ]; then
  apt_install "install Chromium first, e.g. apt-get install chromium" --no-install-recommends chromium fonts-liberation
fi

# PostgreSQL is a real server the postgres adapter's tests search: Debian's package,
# and a throwaway cluster on a loopback port for this run (stopped on exit).
if [ "${RECALL_TEST_NO_POSTGRES:-}" != 1 ]; then
  if ! ls -d /usr/lib/postgresql/*/bin >/dev/null 2>&1; then
    apt_install "install PostgreSQL first, e.g. apt-get install postgresql" postgresql
  fi
  if [ -z "${RECALL_TEST_PG_DSN:-}" ]; then
    pg_dir=$(mktemp -d /tmp/recall-test-pg.XXXXXX)
    chmod 755 "$pg_dir"
    trap 'scripts/postgres-cluster.sh stop "$pg_dir/cluster"; rm -rf "$pg_dir"' EXIT
    RECALL_TEST_PG_DSN=$(scripts/postgres-cluster.sh start "$pg_dir/cluster")
    export RECALL_TEST_PG_DSN
  fi
fi

[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q -e '.[test,mcp,gmail,postgres]'
./scripts/install-polign.sh

.venv/bin/ruff check broker adapter_sdk adapters tests bench conformance_transcripts
.venv/bin/mypy broker adapter_sdk adapters
# the layering contracts in pyproject.toml ([tool.importlinter]); quiet unless one breaks
log=$(.venv/bin/lint-imports --no-cache 2>&1) || { echo "$log"; exit 1; }
# The semantic leg's model is a dependency of the default install, so its tests
# (tests/adapters/semantic, the semantic conformance suite) run here with the rest;
# RECALL_TEST_SEMANTIC=1 turns a missing model into a failure instead of a skip.
RECALL_TEST_SEMANTIC=1 .venv/bin/python -m pytest -q "$@"

