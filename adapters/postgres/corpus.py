"""The managed corpus: a folder of markdown notes loaded into tables the adapter owns.

Notes are chunked at headings with the notes adapter's rules
(:mod:`adapter_sdk.markdown`), so a chunk's id is its note's relative path and
line range (``decisions/db.md#L12-L30``), as the notes adapter's locators
are. ``recall_documents`` holds one row per note with its content hash;
``recall_chunks`` one row per chunk with a generated, GIN-indexed tsvector.
Many corpora share the two tables, told apart by ``corpus``.

Loading is incremental and resumable: a note whose hash is unchanged is not
touched, and notes are written in batches, each its own transaction, so an
interrupted load keeps every finished batch and the next run carries on.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from adapter_sdk.markdown.chunking import parse_note
from adapter_sdk.markdown.front_matter import normalize_reference

NOTE_EXTENSIONS = (".md", ".markdown", ".txt")
BATCH_FILES = 200


INDEX_STATEMENT = "CREATE INDEX IF NOT EXISTS recall_chunks_search ON recall_chunks USING gin (search)"


def table_statements(text_config: str) -> list[str]:
    """DDL for the managed tables; ``text_config`` is fixed into the generated column."""
    from psycopg import sql

    config = sql.Literal(text_config).as_string(None)
    return [
        "CREATE TABLE IF NOT EXISTS recall_documents ("
        " corpus text NOT NULL, path text NOT NULL, content_sha256 text NOT NULL,"
        " title text NOT NULL, updated_at timestamptz NOT NULL,"
        " PRIMARY KEY (corpus, path))",
        "CREATE TABLE IF NOT EXISTS recall_chunks ("
        " corpus text NOT NULL, chunk_id text NOT NULL, path text NOT NULL, ordinal integer NOT NULL,"
        " title text NOT NULL, body text NOT NULL, updated_at timestamptz NOT NULL,"
        " valid_from timestamptz, valid_to timestamptz, superseded_by text, supersedes text[],"
        f" search tsvector GENERATED ALWAYS AS (setweight(to_tsvector({config}::regconfig, title), 'A')"
        f" || to_tsvector({config}::regconfig, body)) STORED,"
        " PRIMARY KEY (corpus, chunk_id),"
        " FOREIGN KEY (corpus, path) REFERENCES recall_documents (corpus, path) ON DELETE CASCADE)",
    ]


CHUNK_COLUMNS = (
    "corpus", "chunk_id", "path", "ordinal", "title", "body", "updated_at",
    "valid_from", "valid_to", "supersedes",
)  # fmt: skip


@dataclass
class IngestReport:
    scanned: int = 0
    added: int = 0
    changed: int = 0
    removed: int = 0
    unchanged: int = 0
    chunks_written: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)

    @property
    def written(self) -> int:
        return self.added + self.changed


@dataclass(frozen=True)
class Note:
    path: str
    sha256: str
    mtime: datetime
    text: str


def scan(root: Path) -> Iterator[tuple[str, Path]]:
    """Note files under ``root`` (hidden folders skipped), as (relative POSIX path, path), sorted."""
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.lower().endswith(NOTE_EXTENSIONS) and not name.startswith("."):
                path = Path(folder) / name
                yield path.relative_to(root).as_posix(), path


def chunk_rows(corpus: str, note: Note) -> list[tuple[Any, ...]]:
    parsed = parse_note(note.path, note.text)
    front = parsed.front
    supersedes = [ref for ref in (normalize_reference(r) for r in front.supersedes) if ref] or None
    return [
        (
            corpus,
            f"{note.path}#L{chunk.start_line}-L{chunk.end_line}",
            note.path,
            chunk.ordinal,
            chunk.title,
            chunk.indexed_body,
            note.mtime,
            front.valid_from,
            front.valid_to,
            supersedes,
        )
        for chunk in parsed.chunks
    ]


def ingest(
    conn: Any,
    root: Path,
    corpus: str,
    *,
    text_config: str,
    progress: Callable[[IngestReport], None] = lambda report: None,
) -> IngestReport:
    """Bring corpus ``corpus`` in line with the notes under ``root``; ``conn`` may write."""
    with conn.transaction():
        for statement in [*table_statements(text_config), INDEX_STATEMENT]:
            conn.execute(statement)
    known = dict(conn.execute("SELECT path, content_sha256 FROM recall_documents WHERE corpus = %s", [corpus]).fetchall())
    report = IngestReport()
    seen: set[str] = set()
    batch: list[Note] = []
    for relative, path in scan(root):
        report.scanned += 1
        seen.add(relative)
        try:
            data = path.read_bytes()
            text = data.decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            report.failed.append((relative, str(exc)))
            continue
        digest = hashlib.sha256(data).hexdigest()
        if known.get(relative) == digest:
            report.unchanged += 1
            continue
        mtime = datetime.fromtimestamp(path.stat().st_mtime, tz=UTC)
        batch.append(Note(relative, digest, mtime, text))
        if len(batch) >= BATCH_FILES:
            _write(conn, corpus, batch, known, report)
            batch = []
            progress(report)
    if batch:
        _write(conn, corpus, batch, known, report)
    gone = sorted(set(known) - seen)
    if gone:
        with conn.transaction():
            conn.execute("DELETE FROM recall_documents WHERE corpus = %s AND path = ANY(%s)", [corpus, gone])
        report.removed = len(gone)
    progress(report)
    return report


def _write(conn: Any, corpus: str, notes: list[Note], known: dict[str, str], report: IngestReport) -> None:
    """One batch in one transaction: replace each note's document row and chunks."""
    rows = [row for note in notes for row in chunk_rows(corpus, note)]
    titles = {row[2]: row[4].split(" > ", 1)[0] for row in reversed(rows)}
    with conn.transaction():
        conn.execute(
            "DELETE FROM recall_documents WHERE corpus = %s AND path = ANY(%s)", [corpus, [n.path for n in notes]]
        )
        with conn.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO recall_documents (corpus, path, content_sha256, title, updated_at)"
                " VALUES (%s, %s, %s, %s, %s)",
                [(corpus, n.path, n.sha256, titles.get(n.path, n.path), n.mtime) for n in notes],
            )
            with cursor.copy(f"COPY recall_chunks ({', '.join(CHUNK_COLUMNS)}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
    for note in notes:
        if note.path in known:
            report.changed += 1
        else:
            report.added += 1
    report.chunks_written += len(rows)
