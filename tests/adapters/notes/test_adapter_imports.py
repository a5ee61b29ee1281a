"""The notes adapter starts on every cold query: it loads what a search runs, not expand's code."""

from __future__ import annotations

import os
import subprocess
import sys
import time

PROBE = """
import sys
import adapter_sdk.server, adapters.notes.adapter
print(" ".join(sorted(sys.modules)))
"""


def test_starting_the_notes_adapter_does_not_load_expand_snapshots_or_git() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True)
    loaded = set(done.stdout.split())
    assert "adapters.notes.search" in loaded
    assert sorted(loaded & {"adapter_sdk.folder.expand", "adapters.notes.snapshot_indexes", "adapters.notes.gitrepo"}) == []


# A folder of up to freshness.SWEEP_BELOW notes is swept whole before each search, which
# is index work; past it, a search checks folder mtimes and recent notes only. The probe
# lowers the threshold so one note stands for a large folder.
SEARCH = """
import sys
from adapter_sdk.protocol import InitializeParams, SearchParams
from adapters.notes import freshness
from adapters.notes.adapter import NotesAdapter

freshness.SWEEP_BELOW = 0

adapter = NotesAdapter()
adapter.initialize(InitializeParams(protocol_version_min=1, protocol_version_max=1,
                                    workdir=sys.argv[2], source_id="notes", location=sys.argv[1]))
result = adapter.search(SearchParams.model_validate(
    {"query": "restore drill", "limit": 5, "deadline": "2099-01-01T00:00:00Z"}))
print(result.outcome.value, len(result.candidates))
print(" ".join(sorted(sys.modules)))
"""
INDEXING = {"adapters.notes.sync", "adapters.notes.prepare", "adapters.notes.parse_worker"}


def test_a_checked_search_over_a_current_index_does_not_load_the_indexing_code(tmp_path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    note = notes / "restore.md"
    note.write_text("# Restore drill\n\nRestore the newest snapshot.\n")
    an_hour_ago = time.time() - 3600  # a note written just now is read again, to be sure
    os.utime(note, (an_hour_ago, an_hour_ago))
    os.utime(notes, (an_hour_ago, an_hour_ago))

    def search() -> tuple[str, set[str]]:
        done = subprocess.run([sys.executable, "-c", SEARCH, str(notes), str(tmp_path / "work")],
                              capture_output=True, text=True, check=True)
        answer, modules = done.stdout.splitlines()
        return answer, set(modules.split())

    first_answer, first = search()  # builds the index
    assert first_answer == "success 1" and INDEXING <= first
    answer, loaded = search()
    assert answer == "success 1"
    assert sorted(loaded & INDEXING) == []
