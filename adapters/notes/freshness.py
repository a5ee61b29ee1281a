"""How a search learns what changed in the folder without listing all of it.

A *watched* folder needs no check: the watcher (``watch.py``) hands every
change to the catch-up thread as it happens. An unwatched one (an adapter
started for one query) is checked cheaply before each search:

* every folder the last scan listed is stat'ed; one whose mtime moved gained,
  lost or renamed an entry (an editor's atomic save among them), and only that
  folder is listed again; a folder that appeared or vanished asks for a sweep;
* the :data:`RECENT_NOTES` most recently modified notes are stat'ed, because
  the note edited in place a minute ago is the one likely edited again; when at
  least :data:`BULK_HINT` of them changed, something rewrote notes wholesale (a
  script appending to each, a tool writing in place), and the change likely
  reaches beyond them: the folder is swept;
* a folder of at most :data:`SWEEP_BELOW` notes is simply swept whole.

What this cannot see, an in-place edit of an older note in an unwatched
folder, the search still catches for every note it returns (its bytes are
hashed against the indexed revision, and a changed note is re-indexed), and
``recall refresh`` or a watching adapter catches for the rest. The guarantee a
search had is reported with it (:func:`describe`). This check is the whole
guarantee of an adapter started for one command, whose answers are complete on
it. An adapter a long-lived broker spawned watches the folder at once and then
sweeps it; a search waits for both a little while (the adapter's
``WAIT_FOR_WATCH_S``, within its deadline: a sweep of thousands of notes takes under
a second), and an answer it gives from this check before both are done is partial
and says so (:func:`unwatched_guess`): it cannot know of such an edit, so it does
not claim to be complete.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from adapter_sdk.folder.scan import decodable, excluded_dir, printable, settled, wanted
from adapters.notes.settings import NotesSettings

if TYPE_CHECKING:
    from adapters.notes.catchup import Progress

RECENT_NOTES = 256
BULK_HINT = RECENT_NOTES // 4
SWEEP_BELOW = 2000
NOT_YET_WATCHED = "not_yet_watched"  # the partial reason of an answer from a cheap check
_TABLES = ("notes", "failures", "declined")


@dataclass
class Check:
    """What a cheap check found: paths to re-read or forget, notes to read again only
    because they were recorded too soon after a write to trust their stat, folders
    listed anew."""

    paths: list[str] = field(default_factory=list)
    rechecks: list[str] = field(default_factory=list)
    dirs: dict[str, int] = field(default_factory=dict)
    sweep: bool = False  # only a scan of the whole folder can settle what changed
    files_checked: int = 0
    dirs_checked: int = 0


def quick_check(conn: sqlite3.Connection, root: str, settings: NotesSettings, note_count: int) -> Check:
    check = Check()
    recorded = dict(conn.execute("SELECT path, mtime_ns FROM dirs").fetchall())
    if note_count <= SWEEP_BELOW or not recorded:
        check.sweep = True
        return check
    for rel_dir, mtime_ns in recorded.items():
        check.dirs_checked += 1
        try:
            now = os.stat(os.path.join(root, rel_dir)).st_mtime_ns
        except OSError:
            check.sweep = True
            return check
        if now != mtime_ns:
            if not _relist(conn, root, settings, rel_dir, recorded, check):
                return check
            check.dirs[rel_dir] = now
    _recent(conn, root, check)
    return check


def _relist(
    conn: sqlite3.Connection, root: str, settings: NotesSettings, rel_dir: str,
    recorded: dict[str, int], check: Check,
) -> bool:
    """Compare one folder's entries with what is recorded for it; False if a sweep is due."""
    prefix = f"{rel_dir}/" if rel_dir else ""
    known = _recorded_in(conn, prefix)
    seen: set[str] = set()
    try:
        entries = list(os.scandir(os.path.join(root, rel_dir)))
    except OSError:
        check.sweep = True
        return False
    for entry in entries:
        rel = prefix + entry.name
        if not decodable(entry.name):  # skipped or declined by the sweep, under its printed name
            seen.add(printable(rel))
            continue
        try:
            is_dir = entry.is_dir(follow_symlinks=True)
        except OSError:
            continue
        if is_dir:
            if rel not in recorded and not excluded_dir(entry.name, settings):
                check.sweep = True  # a new folder: its whole subtree is unknown
                return False
            continue
        if not wanted(rel, entry.name, settings):
            continue
        seen.add(rel)
        check.files_checked += 1
        try:
            info = entry.stat(follow_symlinks=True)
        except OSError:
            check.paths.append(rel)
            continue
        stat = known.get(rel)
        if stat is None or stat != (info.st_size, info.st_mtime_ns):
            check.paths.append(rel)
    check.paths += [rel for rel in known if rel not in seen]
    return True


def _recorded_in(conn: sqlite3.Connection, prefix: str) -> dict[str, tuple[int, int]]:
    """Recorded files directly in the folder ``prefix`` names, with their (size, mtime)."""
    found: dict[str, tuple[int, int]] = {}
    for table in _TABLES:
        if prefix:
            rows = conn.execute(
                f"SELECT path, size, mtime_ns FROM {table} WHERE path >= ? AND path < ?",
                (prefix, prefix[:-1] + "0"),
            )
        else:
            rows = conn.execute(f"SELECT path, size, mtime_ns FROM {table} WHERE instr(path, '/') = 0")
        for path, size, mtime_ns in rows:
            if "/" not in path[len(prefix):]:
                found[path] = (size, mtime_ns)
    return found


def _recent(conn: sqlite3.Connection, root: str, check: Check) -> None:
    """Stat the most recently modified notes, and any recorded too soon after a write;
    ask for a sweep when many of them changed (see the module)."""
    rows = conn.execute(
        "SELECT path, size, mtime_ns, checked_ns FROM notes ORDER BY mtime_ns DESC LIMIT ?",
        (RECENT_NOTES,),
    ).fetchall()
    already = set(check.paths)
    changed = 0
    for path, size, mtime_ns, checked_ns in rows:
        if path in already:
            continue
        check.files_checked += 1
        try:
            info = os.stat(os.path.join(root, path))
        except OSError:
            check.paths.append(path)
            continue
        if (info.st_size, info.st_mtime_ns) != (size, mtime_ns):
            changed += 1
            check.paths.append(path)
        elif not settled(mtime_ns, checked_ns):
            check.rechecks.append(path)
    if changed >= BULK_HINT:
        check.sweep = True


def describe(mode: str, checked_at: datetime, pending: int, swept_ns: str) -> dict[str, Any]:
    """The freshness guarantee one answer had, flat, for health and ``--explain``.

    ``mode``: ``watched`` (changes applied as they happen), ``checked`` (folders and
    recent notes stat'ed at ``checked_at``), ``swept`` (every file stat'ed then),
    ``building`` (the first build has not finished: ``pending`` says how much is left).
    """
    described: dict[str, Any] = {
        "mode": mode,
        "checked_at": checked_at.isoformat().replace("+00:00", "Z"),
        "pending": pending,
    }
    if swept_ns:
        swept = datetime.fromtimestamp(int(swept_ns) / 1e9, tz=UTC)
        described["full_check_at"] = swept.isoformat().replace("+00:00", "Z")
    return described


def unwatched_guess(mode: str, watch_error: str | None) -> tuple[str, str] | None:
    """Why an answer whose freshness is ``mode`` cannot claim to be complete, as a
    (reason, sentence) pair, or None when it can. Only a cheap check (``checked``)
    leaves notes unseen: those edited in place that are neither in a folder whose
    listing changed nor among the notes edited last. ``watch_error`` says why the
    folder cannot be watched, when it cannot."""
    if mode != "checked":
        return None
    if watch_error:
        state = f"not watched ({watch_error})"
    else:
        state = "not yet watched (the watch and its first check of every note are under way)"
    return NOT_YET_WATCHED, (
        f"freshness: {state}; only folder listings and the {RECENT_NOTES} notes edited last "
        "were checked, so an older note edited in place may not be seen yet "
        "(recall refresh checks every note)"
    )


def partial_reason(
    progress: Progress, indexed: int, building: bool, failed: int, stale: set[str]
) -> tuple[str, str] | None:
    """Why an answer is partial (a short reason and a sentence), or None if it is not:
    ``indexed`` notes are in the index, whose first build is still running if
    ``building``; ``failed`` notes could not be read; ``stale`` returned notes changed."""
    if not progress.idle:
        changes = progress.pending - progress.rechecks
        pending = f"{changes} notes are waiting to be indexed"
        if progress.rechecks:  # written too recently for their unchanged stat to be trusted
            again = f"{progress.rechecks} recently written notes are being read again"
            pending = f"{pending}, and {again}" if changes else again
        if progress.scanning:
            pending = "the folder is still being listed"
        if progress.elsewhere:
            pending = "another process is indexing this folder"
        what = "the first index build is running" if building else "the index is catching up"
        reason = "index_building" if building else "index_catching_up"
        return reason, (
            f"{what}: {pending}; answered from the {indexed} notes indexed so far "
            "(recall refresh finishes it)"
        )
    if progress.error:
        return "index_update_failed", f"{progress.error}; answered from the previous index"
    if stale:
        return "notes_changed", f"{len(stale)} returned notes changed while the search ran"
    if failed:
        return "unreadable_notes", f"{failed} notes could not be read (see health diagnostics)"
    return None
