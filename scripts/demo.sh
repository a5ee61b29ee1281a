#!/usr/bin/env bash
# Install recall and run a demo query over the bundled sample notes and tasks.
# Nothing outside this folder and a temporary directory is touched.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "demo: installing recall into .venv (about half a minute the first time)..."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q -e .
echo "demo: installed; running the demo over examples/sample"

demo=$(mktemp -d)
export XDG_CONFIG_HOME="$demo/config" XDG_STATE_HOME="$demo/state" XDG_CACHE_HOME="$demo/cache"
recall=.venv/bin/recall

run() {
  echo
  echo "\$ recall $*"
  "$recall" "$@" && code=0 || code=$?
  echo "(exit $code)"
}

run init --notes examples/sample/notes --tasks examples/sample/todo.txt
run refresh
run query "how do we restore the database from a backup"
run query --explain "postgres 16 upgrade plan" --limit 2
run query "submarine periscope"
# the demo's commands started a resident broker for its configuration: stop it
"$recall" daemon stop >/dev/null
echo
echo "demo configuration kept in $demo"
echo "to use recall yourself: export PATH=\"$PWD/.venv/bin:\$PATH\", then see docs/quickstart.md"
