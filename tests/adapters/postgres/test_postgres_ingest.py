"""``recall-postgres ingest``: a folder of notes becomes a corpus many brokers can share."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.adapters.postgres.conftest import REPO, Workspace, assert_no_secret, write_workspace
from tests.support.postgres import Server

INGEST = [sys.executable, "-m", "adapters.postgres", "ingest"]
NOTES = {
    "decisions/database.md": """\
---
title: Database choice
supersedes: decisions/old-database.md
---
# Database choice

We run PostgreSQL 16 with nightly backups.

## Replication

A streaming replica sits in the second region.
""",
    "decisions/old-database.md": """\
# Old database choice

We ran MySQL with weekly backups.
""",
    "runbooks/restore.md": """\
# Restore runbook

Restore the newest backup, then compare checksums.
""",
}


def write_notes(root: Path, notes: dict[str, str]) -> None:
    for relative, text in notes.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def ingest(folder: Path, dsn: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*INGEST, str(folder), "--source", "kb", "--dsn-env", "RECALL_INGEST_DSN", "--grant", "recall_reader", *extra],
        capture_output=True, text=True, timeout=120, cwd=REPO,
        env={**os.environ, "RECALL_INGEST_DSN": dsn},
    )


def reader_workspace(tmp_path: Path, pg_server: Server, database: str) -> Workspace:
    dsn = pg_server.dsn("recall_reader", database)
    return write_workspace(tmp_path / "ws", dsn, {"kb": {}}, [dsn, pg_server.passwords["recall_reader"]])


def test_ingested_notes_are_searched_with_note_locators(tmp_path: Path, pg_server: Server, pg_database: str) -> None:
    notes = tmp_path / "notes"
    write_notes(notes, NOTES)
    owner = pg_server.dsn("admin", pg_database)

    loaded = ingest(notes, owner)

    assert loaded.returncode == 0, loaded.stderr
    assert "3 notes, 3 added" in loaded.stdout
    assert owner not in loaded.stdout + loaded.stderr
    ws = reader_workspace(tmp_path, pg_server, pg_database)
    code, answer, printed = ws.query("streaming replica region")
    assert code == 0, printed
    assert answer["results"][0]["locator"] == "kb:decisions/database.md#L9-L11"
    assert answer["results"][0]["title"] == "Database choice > Replication"
    assert_no_secret(ws, printed)

    expanded = ws.recall("expand", "kb:decisions/database.md#L9-L11")
    assert "second region" in expanded.stdout, expanded.stderr


def test_front_matter_supersedes_withholds_the_older_note(tmp_path: Path, pg_server: Server, pg_database: str) -> None:
    notes = tmp_path / "notes"
    write_notes(notes, NOTES)
    assert ingest(notes, pg_server.dsn("admin", pg_database)).returncode == 0
    ws = reader_workspace(tmp_path, pg_server, pg_database)

    code, answer, printed = ws.query("database backups")

    assert code == 0, printed
    shown = [result["locator"] for result in answer["results"]]
    assert not any(locator.startswith("kb:decisions/old-database.md") for locator in shown)
    assert [entry["reason"] for entry in answer["suppressed"]] == ["superseded"]


def test_a_second_load_writes_only_what_changed(tmp_path: Path, pg_server: Server, pg_database: str) -> None:
    notes = tmp_path / "notes"
    write_notes(notes, NOTES)
    owner = pg_server.dsn("admin", pg_database)
    assert ingest(notes, owner).returncode == 0

    again = ingest(notes, owner)
    assert "0 added, 0 changed, 0 removed, 3 unchanged" in again.stdout, again.stdout

    (notes / "runbooks" / "restore.md").write_text("# Restore runbook\n\nRestore from the replica first.\n")
    (notes / "decisions" / "old-database.md").unlink()
    changed = ingest(notes, owner)
    assert "0 added, 1 changed, 1 removed, 1 unchanged" in changed.stdout, changed.stdout

    ws = reader_workspace(tmp_path, pg_server, pg_database)
    _, answer, printed = ws.query("replica first")
    assert answer["results"][0]["locator"] == "kb:runbooks/restore.md#L1-L3", printed
    _, gone, _ = ws.query("MySQL")
    assert gone["results"] == []


def test_an_unreadable_note_is_reported_and_the_rest_loaded(tmp_path: Path, pg_server: Server, pg_database: str) -> None:
    notes = tmp_path / "notes"
    write_notes(notes, NOTES)
    (notes / "broken.md").write_bytes(b"# Broken\n\n\xff\xfe not utf-8\n")

    loaded = ingest(notes, pg_server.dsn("admin", pg_database))

    assert loaded.returncode == 3
    assert "not loaded: broken.md" in loaded.stderr
    assert "3 added" in loaded.stdout


def test_ingest_without_a_connection_string_says_which_variable(tmp_path: Path) -> None:
    write_notes(tmp_path, NOTES)

    loaded = ingest(tmp_path, "")

    assert loaded.returncode == 1
    assert "RECALL_INGEST_DSN holds no connection string" in loaded.stderr
