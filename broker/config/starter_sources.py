"""The sources ``recall init`` writes: their ids, kinds and ``[[sources]]`` tables.

Shared by writing a new configuration (:mod:`broker.config.init`) and editing an
existing one (:mod:`broker.config.init_edit`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

NOTES_SOURCE_ID = "notes"
SEMANTIC_SOURCE_ID = "notes-meaning"
TASKS_SOURCE_ID = "tasks"


@dataclass(frozen=True)
class StarterSource:
    adapter: str
    source_id: str
    source_uid: str
    location: str


@dataclass(frozen=True)
class SourceRole:
    """What ``init`` writes for one kind of starter source."""

    adapter: str
    freshness_mode: str
    comment: str


NOTES_ROLE = SourceRole("notes", "indexed", "A folder of markdown and text notes, indexed in the adapter's workdir.")
TASKS_ROLE = SourceRole("tasks", "live", "Taskwarrior data (a directory) or a todo.txt file, read live.")
SEMANTIC_ROLE = SourceRole(
    "semantic", "indexed", "The same notes ranked by meaning (the semantic leg); fused with the notes source."
)


@dataclass(frozen=True)
class SourceChange:
    """What ``init`` did to one source of the file: added, replaced or kept."""

    change: str
    source: StarterSource
    """The source as the file now declares it."""
    was: StarterSource | None = None
    """A replaced source as it was (its old source_uid and location)."""
    named: bool = True
    """A flag named it; ``False``: another source, kept untouched."""


def source_table(source: StarterSource, role: SourceRole, lexical_source: str = NOTES_SOURCE_ID) -> Any:
    """A ``[[sources]]`` table for ``source``, with the comment that says what it is."""
    import tomlkit

    table = tomlkit.table()
    table.add(tomlkit.comment(role.comment))
    table.add("source_uid", source.source_uid)
    table.add("source_id", source.source_id)
    table.add("adapter", source.adapter)
    table.add("location", source.location)
    table.add("location_kind", "path")
    table.add("freshness_mode", role.freshness_mode)
    table.add("sensitivity", "internal")
    table.add("base_prior", 1.0)
    if role is SEMANTIC_ROLE:
        settings = tomlkit.table()
        settings.add("lexical_source", lexical_source)
        table.add("settings", settings)
    table.add(tomlkit.nl())
    return table
