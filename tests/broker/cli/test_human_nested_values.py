"""Human output says nested diagnostics as ``key value`` pairs, never a language's map syntax.

The notes source reports the freshness its answer had as a map (mode, when it was
checked, how much is pending); ``recall query --explain`` prints it within the
source's ledger line and ``recall sources`` on a line of its own.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.recall_home import RecallHome, write_note

GO_SYNTAX = re.compile(r"map\[|<nil>|\w+:\S+ \w+:")


def _home(tmp_path: Path) -> RecallHome:
    folder = tmp_path / "kb"
    write_note(folder, "restore.md", "# Restore drill\n\nRestore the newest snapshot.\n", modified="2024-01-02")
    return RecallHome.build(tmp_path, notes={"notes": folder})


def test_query_explain_prints_the_freshness_map_as_key_value_pairs(tmp_path: Path) -> None:
    done = _home(tmp_path).recall("query", "--explain", "restore", "drill")
    assert done.code == 0, done.stdout + done.stderr
    ledger = next(line for line in done.stdout.splitlines() if line.strip().startswith("notes ("))
    assert re.search(r"freshness=\(checked_at \S+, full_check_at \S+, mode swept, pending 0\)", ledger), ledger
    assert not GO_SYNTAX.search(done.stdout), done.stdout


def test_sources_prints_the_freshness_map_on_its_own_line(tmp_path: Path) -> None:
    done = _home(tmp_path).recall("sources")
    assert done.code == 0, done.stdout + done.stderr
    assert re.search(r"^  freshness: checked_at \S+, full_check_at \S+, mode checked, pending 0$",
                     done.stdout, re.MULTILINE), done.stdout
    assert "freshness=" not in done.stdout
    assert not GO_SYNTAX.search(done.stdout), done.stdout
