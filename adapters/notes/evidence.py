"""The indexed section a notes locator names, as ``recall/expand`` reads it."""

from __future__ import annotations

import sqlite3

from adapter_sdk import ErrorCode, RpcError
from adapter_sdk.folder.expand import LineRange


def section_heading(conn: sqlite3.Connection, note_id: int, where: LineRange, locator: str) -> tuple[str, str]:
    """Title and heading of what the locator names: the chunk spanning exactly its lines,
    or for the whole note, the note's title and no heading."""
    if where.whole:
        note = conn.execute("SELECT title FROM notes WHERE id = ?", (note_id,)).fetchone()
        return str(note[0]), ""
    chunk = conn.execute(
        "SELECT t.title, c.heading FROM chunks c JOIN chunk_text t ON t.rowid = c.id"
        " WHERE c.note_id = ? AND c.start_line = ? AND c.end_line = ?",
        (note_id, where.start, where.end),
    ).fetchone()
    if chunk is None:
        raise RpcError(
            ErrorCode.locator_expired,
            f"{locator}: lines {where.start}-{where.end} of {where.path} no longer "
            "span one section (the note changed); search again",
        )
    return str(chunk[0]), str(chunk[1])
