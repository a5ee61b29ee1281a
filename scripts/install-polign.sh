#!/usr/bin/env bash
# Install Polign Recall (the event store the eventstore adapter reads) beside recall.
#
# Polign's wheel installs its own executable named `recall`, which overwrites
# this project's `recall` script in the same environment. This script keeps
# both: Polign's binary is renamed `polign-recall` (the name the eventstore
# adapter looks for first) and this project's script is put back.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${VENV:-.venv}

"$venv/bin/python" -m pip install -q polign-recall
if [ -f "$venv/bin/recall" ] && ! head -c 2 "$venv/bin/recall" | grep -q '#!'; then
  mv -f "$venv/bin/recall" "$venv/bin/polign-recall"
fi
"$venv/bin/python" -m pip install -q --no-deps --force-reinstall -e .
"$venv/bin/recall" version >/dev/null
"$venv/bin/polign-recall" -version >/dev/null
