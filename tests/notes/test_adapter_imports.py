"""The notes adapter starts on every cold query: it loads what a search runs, not expand's code."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import sys
import adapter_sdk.server, adapters.notes.adapter
print(" ".join(sorted(sys.modules)))
"""


def test_starting_the_notes_adapter_does_not_load_expand_snapshots_or_git() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True)
    loaded = set(done.stdout.split())
    assert "adapters.notes.search" in loaded
    assert sorted(loaded & {"adapters.notes.expand", "adapters.notes.snapshot", "adapters.notes.gitrepo"}) == []
