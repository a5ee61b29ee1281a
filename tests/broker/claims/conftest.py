"""Two notes, one superseding the other in fact but not yet in front matter, behind the real CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.recall_home import RecallHome, write_note

OLD = """---
title: Backups run with Borg
tags: [backup]
---
# Backups

Every server is backed up nightly with Borg to the storage box.
"""

NEW = """---
title: Backups run with restic
tags: [backup]
---
# Backups

Since March every server is backed up nightly with restic to S3.
"""

OLD_QUOTE = "backed up nightly with Borg to the storage box"
NEW_QUOTE = "backed up nightly with restic to S3"
OLD_LOCATOR = "notes:borg.md#L5-L7"
NEW_LOCATOR = "notes:restic.md#L5-L7"
QUESTION = "how are servers backed up nightly"


@pytest.fixture
def home(tmp_path: Path) -> RecallHome:
    notes = tmp_path / "notes"
    write_note(notes, "borg.md", OLD)
    write_note(notes, "restic.md", NEW)
    todo = tmp_path / "todo.txt"
    todo.write_text("2024-05-01 Check the nightly Borg backup of every server +backup\n")
    return RecallHome.build(tmp_path, notes={"notes": notes}, others={"tasks": ("tasks", todo)})


def report(home: RecallHome, *, new_quote: str = NEW_QUOTE, old_locator: str = OLD_LOCATOR,
           old_quote: str = OLD_QUOTE, flags: tuple[str, ...] = ("--json",)):
    return home.recall("report-stale", "--successor", NEW_LOCATOR, "--successor-quote", new_quote,
                       "--superseded", old_locator, "--superseded-quote", old_quote,
                       "--reporter", "test-agent", *flags)
