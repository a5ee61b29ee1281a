"""``recall init`` over an existing user configuration: only the sources its flags name change.

The file is edited with tomlkit, so its comments, layout and every table the
flags do not name stay as they were. Each named source (``--notes`` the notes
source, and its meaning leg where the semantic extra is installed or a leg is
already declared; ``--semantic`` that leg alone; ``--tasks`` the tasks source)
is, by its ``source_id``:

    added      absent: a new table with a fresh source_uid; its id joins the
               default profile's sources
    kept       there with that adapter and location: untouched, so its
               source_uid and index stay
    replaced   there, but over another location or adapter: those two keys
               change in place (the rest of its table stays) and it gets a new
               source_uid, since its index describes something else

Every other source is kept, untouched, and reported as kept.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from broker.config.identity import new_source_uid
from broker.config.starter_sources import (
    NOTES_ROLE,
    NOTES_SOURCE_ID,
    SEMANTIC_ROLE,
    SEMANTIC_SOURCE_ID,
    TASKS_ROLE,
    TASKS_SOURCE_ID,
    SourceChange,
    SourceRole,
    StarterSource,
    source_table,
)
from broker.errors import ConfigError, ConfigProblem, UsageError

ADDED, REPLACED, KEPT = "added", "replaced", "kept"
DEFAULT_PROFILE = "default"


@dataclass(frozen=True)
class Named:
    """Flags of one ``recall init``: the sources it names."""

    notes: Path | None
    tasks: Path | None
    semantic: bool
    """The meaning leg is wanted: asked with --semantic, or --notes with the extra installed."""


def edit_user_config(text: str, path: Path, named: Named, home: str | None) -> tuple[str, list[SourceChange]]:
    """The edited text and what happened to each source, in file order."""
    import tomlkit
    from tomlkit.exceptions import TOMLKitError
    from tomlkit.items import AoT

    try:
        doc = tomlkit.parse(text)
    except TOMLKitError as exc:
        raise _problem(path, f"is not valid TOML ({exc}); fix it or move it aside") from None
    sources = doc.get("sources")
    if sources is None:
        sources = tomlkit.aot()
        doc.append("sources", sources)
    elif not isinstance(sources, AoT):
        raise _problem(path, "declares 'sources' but not as [[sources]] tables; fix it first")
    tables: list[Any] = list(sources)
    outcome: dict[str, SourceChange] = {}

    def want(role: SourceRole, source_id: str, location: str, lexical: str = NOTES_SOURCE_ID) -> None:
        change = _apply(tables, sources, role, source_id, location, lexical, home)
        outcome[source_id] = change
        if change.change == ADDED:
            _join_profile(doc, source_id)

    if named.notes is not None:
        want(NOTES_ROLE, NOTES_SOURCE_ID, str(named.notes))
    if named.tasks is not None:
        want(TASKS_ROLE, TASKS_SOURCE_ID, str(named.tasks))
    lexical = _notes_table(tables, path) if named.semantic or named.notes is not None else None
    if lexical is not None:
        lexical_id = str(lexical["source_id"])
        semantic_id = SEMANTIC_SOURCE_ID if lexical_id == NOTES_SOURCE_ID else f"{lexical_id}-meaning"
        if named.semantic or _by_id(tables, semantic_id) is not None:
            want(SEMANTIC_ROLE, semantic_id, str(lexical["location"]), lexical_id)
    changes = [outcome.get(str(t.get("source_id"))) or _kept(t, named=False) for t in tables]
    return tomlkit.dumps(doc), changes


def _apply(
    tables: list[Any], sources: Any, role: SourceRole, source_id: str, location: str, lexical: str,
    home: str | None,
) -> SourceChange:
    import tomlkit

    table = _by_id(tables, source_id)
    fresh = StarterSource(role.adapter, source_id, new_source_uid(), location)
    if table is None:
        table = source_table(fresh, role, lexical)
        sources.append(table)
        tables.append(table)
        return SourceChange(ADDED, fresh)
    if _same_adapter(table, role.adapter) and _same_place(str(table.get("location", "")), location, home):
        return _kept(table, named=True)
    was = _described(table)
    table["source_uid"] = fresh.source_uid
    table["adapter"] = role.adapter
    table["location"] = location
    if role is SEMANTIC_ROLE:
        if "settings" not in table:
            table["settings"] = tomlkit.table()
        table["settings"]["lexical_source"] = lexical
    return SourceChange(REPLACED, fresh, was)


def _notes_table(tables: list[Any], path: Path) -> Any:
    """The notes source a meaning leg ranks: ``notes``, else the only notes-adapter source."""
    table = _by_id(tables, NOTES_SOURCE_ID)
    if table is not None and _same_adapter(table, NOTES_ROLE.adapter):
        return table
    candidates = [t for t in tables if _same_adapter(t, NOTES_ROLE.adapter)]
    if len(candidates) == 1:
        return candidates[0]
    if not candidates:
        raise UsageError(
            f"{path} declares no notes source for the semantic leg to rank; add one with "
            "'recall init --notes DIR --force'. Nothing was changed"
        )
    ids = ", ".join(str(t.get("source_id")) for t in candidates)
    raise UsageError(
        f"{path} declares several notes sources ({ids}); add the semantic leg to one of them by "
        "hand (see config.example.toml). Nothing was changed"
    )


def _join_profile(doc: Any, source_id: str) -> None:
    """Add ``source_id`` to the default profile's sources (the profile is made if missing)."""
    import tomlkit

    defaults = doc.get("defaults")
    name = str(defaults.get("profile", DEFAULT_PROFILE)) if isinstance(defaults, dict) else DEFAULT_PROFILE
    profiles = doc.get("profiles")
    if profiles is None:
        profiles = tomlkit.table(is_super_table=True)
        doc.append("profiles", profiles)
    profile = profiles.get(name)
    if profile is None:
        profile = tomlkit.table()
        profile.add("sources", tomlkit.array())
        profile.add("max_sensitivity", "internal")
        profiles.append(name, profile)
    listed = profile.get("sources")
    if listed is None:
        profile["sources"] = [source_id]
    elif source_id not in listed:
        listed.append(source_id)


def _by_id(tables: list[Any], source_id: str) -> Any:
    return next((t for t in tables if t.get("source_id") == source_id), None)


def _same_adapter(table: Any, adapter: str) -> bool:
    from broker.config.builtins import canonical_adapter_name

    return canonical_adapter_name(str(table.get("adapter", ""))) == adapter


def _same_place(declared: str, location: str, home: str | None) -> bool:
    def where(text: str) -> str:
        if home and (text == "~" or text.startswith("~/")):
            text = home + text[1:]
        return os.path.realpath(text)

    return bool(declared) and where(declared) == where(location)


def _described(table: Any) -> StarterSource:
    return StarterSource(str(table.get("adapter", "")), str(table.get("source_id", "")),
                         str(table.get("source_uid", "")), str(table.get("location", "")))


def _kept(table: Any, *, named: bool) -> SourceChange:
    return SourceChange(KEPT, _described(table), named=named)


def _problem(path: Path, what: str) -> ConfigError:
    return ConfigError([ConfigProblem(f"{path} {what}; nothing was changed")])
