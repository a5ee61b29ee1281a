"""The notes a search returns and the section a locator names, read as the folder
holds them now and only inside it.

A note found changed since it was indexed, gone, or resolving outside the folder
(a link swapped in for it) is never served: it is handed back to be indexed again
and the locator expires.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING

from adapter_sdk import ErrorCode, RpcError
from adapters.notes.reading import OutsideRoot, read_inside

if TYPE_CHECKING:
    from adapter_sdk.folder.expand import LineRange, Section


class LiveNotes:
    def __init__(
        self, root: str, real_root: str, max_file_bytes: int, recheck: Callable[[list[str]], None]
    ) -> None:
        self.root = root
        self.real_root = real_root  # what every read is checked against
        self.max_file_bytes = max_file_bytes
        self.recheck = recheck  # hands notes found changed to the catch-up

    def read_or_none(self, path: str) -> bytes | None:
        """The note's bytes, or None when it cannot be read inside the folder now."""
        try:
            return read_inside(self.root, path, self.max_file_bytes + 1, self.real_root)
        except OSError:
            return None

    def read(self, locator: str, path: str) -> bytes:
        """The note's bytes as they are now; a note that now resolves outside the folder
        (a link swapped in for it) is refused and forgotten, reported as a skipped link."""
        try:
            return read_inside(self.root, path, self.max_file_bytes + 1, self.real_root)
        except OutsideRoot:
            self.recheck([path])
            raise RpcError(
                ErrorCode.locator_expired,
                f"{locator}: {path} now resolves outside the notes folder and is skipped as "
                "a link; it is not read",
            ) from None
        except FileNotFoundError:
            self.recheck([path])
            raise RpcError(
                ErrorCode.locator_expired, f"{locator}: {path} is no longer a note; search again"
            ) from None
        except OSError as exc:
            raise RpcError(
                ErrorCode.source_unavailable, f"cannot read note {path}: {exc.strerror or exc}"
            ) from None

    def section(self, conn: sqlite3.Connection, locator: str, where: LineRange) -> Section:
        """The indexed section ``locator`` names, with the bytes of its note now, while
        they are still the bytes that were indexed."""
        from adapter_sdk.folder.expand import Section

        note = conn.execute("SELECT id, sha256 FROM notes WHERE path = ?", (where.path,)).fetchone()
        if note is None:  # never read a path the index does not hold (the scan skipped it)
            raise RpcError(
                ErrorCode.locator_expired,
                f"{locator}: {where.path} is not an indexed note; search again",
            )
        data = self.read(locator, where.path)
        if hashlib.sha256(data).hexdigest() != note[1]:
            self.recheck([where.path])
            raise RpcError(
                ErrorCode.locator_expired,
                f"{locator}: {where.path} changed since it was indexed; search again",
            )
        title, heading = section_heading(conn, note[0], where, locator)
        return Section(title=title, heading=heading, data=data)


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
