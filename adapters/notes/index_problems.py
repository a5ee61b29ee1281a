"""What the notes index could not take as it is: samples for health and searches.

Files not indexed (unreadable, or declined by the settings), notes indexed with a
problem (not UTF-8, broken front matter), and ``supersedes`` references that name
no single note, each with what to do about it.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from adapter_sdk.folder.scan import one_line
from adapters.notes.supersession import resolve_supersedes

SAMPLE = 5


def table_count(conn: sqlite3.Connection, table: str) -> int:
    return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


def file_problems(conn: sqlite3.Connection) -> dict[str, Any]:
    """Samples of files not indexed, or indexed with a problem, each {path, reason, fix}."""
    found: dict[str, Any] = {}
    failures = conn.execute(
        "SELECT path, reason FROM failures ORDER BY path LIMIT ?", (SAMPLE,)
    ).fetchall()
    if failures:
        found["failures"] = [
            {"path": p, "reason": r, "fix": "make the file readable, or add it to the "
             "'exclude' setting"} for p, r in failures
        ]
    declined = conn.execute(
        "SELECT path, reason, fix FROM declined ORDER BY path LIMIT ?", (SAMPLE,)
    ).fetchall()
    if declined:
        found["declined"] = [{"path": one_line(p), "reason": r, "fix": f} for p, r, f in declined]
        found["declined_count"] = table_count(conn, "declined")
    repaired = conn.execute(
        "SELECT path, decode_problem FROM notes WHERE decode_problem != '' ORDER BY path LIMIT ?",
        (SAMPLE,),
    ).fetchall()
    if repaired:
        found["encoding_problems"] = [
            {"path": p, "reason": r, "fix": "re-save the note as UTF-8"} for p, r in repaired
        ]
    problems = conn.execute(
        "SELECT path, front FROM notes WHERE has_problems = 1 ORDER BY path LIMIT ?", (SAMPLE,)
    ).fetchall()
    if problems:
        found["front_matter_problems"] = [
            {"path": p, "problems": json.loads(f)["problems"]} for p, f in problems
        ]
    return found

def supersedes_issues(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """The ``supersedes`` references that name no single note (a sample)."""
    issues: list[dict[str, Any]] = []
    for path, front in conn.execute(
        "SELECT path, front FROM notes WHERE has_supersedes = 1 ORDER BY path"
    ):
        issues.extend(resolve_supersedes(conn, path, json.loads(front)["supersedes"])[1])
    return issues[: SAMPLE * 4]


def unresolved_warning(issues: list[dict[str, Any]]) -> str:
    """One line naming the ``supersedes`` references that name no single note."""
    named = "; ".join(
        f"{issue['note']}: {issue['supersedes']!r} "
        + ("names several notes" if issue.get("ambiguous") else "names no note")
        for issue in issues[:3]
    )
    more = f" and {len(issues) - 3} more" if len(issues) > 3 else ""
    return (
        f"{len(issues)} supersedes reference{'s name' if len(issues) != 1 else ' names'} no single note "
        f"({named}{more}), so the notes they meant stay current; a reference names a note by "
        "its path, its file name without the extension, or the id its front matter declares"
    )
