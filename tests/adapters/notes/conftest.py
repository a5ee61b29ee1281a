from __future__ import annotations

import os
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from .adapter_process import NotesProcess

# 2024-01-01T00:00:00Z: old enough that a stat match is trusted without re-reading
OLD_MTIME = 1_704_067_200

NOTES = {
    "runbooks/restore.md": """\
        ---
        title: Restore runbook
        aliases: [Quarterly restore]
        tags: [backup, postgres]
        id: RB-7
        valid_from: 2024-02-01
        ---
        # Restore

        How we get data back after a bad day.

        ## Point in time

        Run pgbackrest restore with a target time on the standby host.
        Then check the row counts against the drill log.

        ## Repositories

        Use restic to restore the Gitea repositories.
        """,
    "decisions/adr-001-borg.md": """\
        ---
        valid_until: 2024-03-31
        ---
        # Borg for backups

        We use Borg for every backup, including nightly database dumps.
        """,
    "decisions/adr-004-pgbackrest.md": """\
        ---
        supersedes: adr-001-borg
        ---
        # pgBackRest for PostgreSQL

        pgBackRest replaces the nightly dumps with continuous archiving.
        """,
    "meetings/2024-05-06.md": """\
        # Infra sync

        ## Notes

        The migration rehearsal took 31 minutes; the wiki was read-only.
        """,
    "ideas.txt": """\
        Move the wiki off the shared cluster.

        A status page that reads Alertmanager.
        """,
}


def write_note(root: Path, rel: str, text: str, mtime: int | None = OLD_MTIME) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


@pytest.fixture
def notes_dir(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    for rel, text in NOTES.items():
        write_note(root, rel, text)
    return root


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    return tmp_path / "work"


@pytest.fixture
def process() -> Iterator[NotesProcess]:
    proc = NotesProcess()
    try:
        yield proc
    finally:
        proc.close()


@pytest.fixture
def adapter(process: NotesProcess, notes_dir: Path, workdir: Path) -> NotesProcess:
    process.initialize(str(notes_dir), str(workdir))
    assert process.health()["indexed_count"] == len(NOTES)  # the first build is done
    return process


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NotesProcess]:
    """One adapter over the fixture notes for tests that only read; nothing may edit its folder."""
    base = tmp_path_factory.mktemp("shared")
    root = base / "notes"
    for rel, text in NOTES.items():
        write_note(root, rel, text)
    proc = NotesProcess()
    try:
        proc.manifest = proc.initialize(str(root), str(base / "work"))
        yield proc
    finally:
        proc.close()
