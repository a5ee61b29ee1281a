"""Supersession links between notes, as the notes adapter reports them on its candidates.

A note's front matter ``supersedes`` names the notes it replaces (by path, file
name or declared ``id``). A search replaces those references by locators on the
retrieved replacing note (``attach_supersedes``) and names the replacing note on
a retrieved replaced one (``attach_superseded_by``), so the broker withholds the
old note even when the question did not find its successor.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from adapter_sdk import Candidate
from adapter_sdk.folder.selection import DEFAULT_EXTENSIONS as NOTE_EXTENSIONS
from adapter_sdk.lexical import tokenize
from adapter_sdk.markdown.front_matter import normalize_reference


def attach_supersedes(
    conn: sqlite3.Connection, candidates: list[Candidate], source_id: str
) -> list[dict[str, Any]]:
    """Replace raw ``supersedes`` references by locators; report those that do not resolve."""
    problems: list[dict[str, Any]] = []
    resolved_cache: dict[str, tuple[list[str], list[dict[str, Any]]]] = {}
    for candidate in candidates:
        metadata = candidate.metadata or {}
        refs = metadata.get("supersedes")
        if not refs:
            continue
        path = metadata["path"]
        if path not in resolved_cache:
            resolved_cache[path] = resolve_supersedes(conn, path, refs)
        targets, issues = resolved_cache[path]
        if targets:
            metadata["supersedes"] = [f"{source_id}:{t}" for t in targets]
        else:
            del metadata["supersedes"]
        problems.extend(i for i in issues if i not in problems)
    return problems


@dataclass(frozen=True)
class Succession:
    """A note whose front matter names the notes it replaces, resolved to their paths."""

    path: str
    front: dict[str, Any]
    mtime_ns: int
    targets: tuple[str, ...]


# generation → the notes that supersede others in that state of the index
_SUCCESSIONS: dict[str, list[Succession]] = {}


def successions(conn: sqlite3.Connection, generation: str | None) -> list[Succession]:
    """Every note that supersedes others, remembered per ``generation`` (one state of the
    index, given only while no index work is pending): reading and resolving them all
    grows with the folder, and every search needs them."""
    if generation and generation in _SUCCESSIONS:
        return _SUCCESSIONS[generation]
    found = []
    for path, front_json, mtime_ns in conn.execute(
        "SELECT path, front, mtime_ns FROM notes WHERE has_supersedes = 1 ORDER BY path"
    ):
        front = json.loads(front_json)
        targets, _ = resolve_supersedes(conn, path, front["supersedes"])
        found.append(Succession(path, front, mtime_ns, tuple(targets)))
    if generation:
        _SUCCESSIONS.clear()  # one state of one index is ever asked about twice
        _SUCCESSIONS[generation] = found
    return found


def attach_superseded_by(
    successions: list[Succession],
    candidates: list[Candidate],
    source_id: str,
    as_of: datetime | None,
    *,
    as_of_on_mtime: bool = True,
) -> None:
    """Name the note that replaces a retrieved note, so it is withheld even when the
    query did not find its successor. Only successors that existed at ``as_of``
    count, so asking about an earlier instant still shows what was current then (in a
    snapshot every note existed then; only its validity is checked); a note replaced by
    two others is left for the broker to report, not guessed."""
    wanted = {(c.metadata or {}).get("path") for c in candidates} - {None}
    if not wanted:
        return
    successors: dict[str, list[str]] = {}
    for succession in successions:
        if as_of is not None and not _existed_at(
            succession.front, succession.mtime_ns if as_of_on_mtime else None, as_of
        ):
            continue
        for target in succession.targets:
            if target in wanted:
                successors.setdefault(target, []).append(succession.path)
    for candidate in candidates:
        metadata = candidate.metadata or {}
        found = successors.get(metadata.get("path", ""))
        if found and len(found) == 1:
            metadata["superseded_by"] = f"{source_id}:{found[0]}"
        elif found:
            metadata["superseded_by_candidates"] = [f"{source_id}:{p}" for p in found]


def _existed_at(front: dict[str, Any], mtime_ns: int | None, as_of: datetime) -> bool:
    if mtime_ns is not None and mtime_ns > as_of.timestamp() * 1e9:
        return False
    valid_from = front.get("valid_from")
    if not valid_from:
        return True
    try:
        start = datetime.fromisoformat(str(valid_from))
    except ValueError:
        return True
    return (start if start.tzinfo else start.replace(tzinfo=UTC)) <= as_of


def resolve_supersedes(
    conn: sqlite3.Connection, path: str, refs: list[str]
) -> tuple[list[str], list[dict[str, Any]]]:
    """Relative paths of the notes ``path`` supersedes, and the references that did not
    name exactly one other note (``ambiguous`` lists the candidates; never guessed).

    A reference names a note by its path (with or without the extension), else its
    file name without the extension, else the ``id`` its front matter declares."""
    targets: list[str] = []
    issues: list[dict[str, Any]] = []
    for ref in refs:
        ref = normalize_reference(ref)
        key = ref.lower()
        if "/" in key:
            rows = conn.execute(
                "SELECT DISTINCT n.path FROM identifiers i JOIN notes n ON n.id = i.note_id"
                " WHERE i.kind = 'path' AND i.key IN (?, ?)",
                (key, _without_extension(key)),
            ).fetchall()
        else:
            stem = _without_extension(key)
            rows = conn.execute("SELECT path FROM notes WHERE stem = ?", (stem,)).fetchall()
        if not [r for r in rows if r[0] != path]:
            rows = conn.execute(
                "SELECT DISTINCT n.path FROM identifiers i JOIN notes n ON n.id = i.note_id"
                " WHERE i.kind = 'id' AND i.key = ?",
                (" ".join(tokenize(ref)),),
            ).fetchall()
        found = sorted(r[0] for r in rows if r[0] != path)
        if len(found) == 1:
            targets.append(found[0])
        elif found:
            issues.append({"note": path, "supersedes": ref, "ambiguous": found})
        else:
            issues.append({"note": path, "supersedes": ref, "unresolved": True})
    return list(dict.fromkeys(targets)), issues


def _without_extension(ref: str) -> str:
    for extension in NOTE_EXTENSIONS:
        if ref.endswith(extension):
            return ref[: -len(extension)]
    return ref
