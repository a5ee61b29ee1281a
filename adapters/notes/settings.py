"""The notes adapter's settings: defaults, validation and the schema it publishes."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from adapter_sdk import ErrorCode, RpcError
from adapter_sdk.folder.selection import (
    SELECTION_SCHEMA,
    FolderSelection,
    parse_selection,
    string_list,
)

SETTINGS_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "additionalProperties": False,
    "properties": {
        **SELECTION_SCHEMA,
        "aliases": {
            "type": "object",
            "additionalProperties": {"type": "array", "items": {"type": "string", "minLength": 1}},
            "default": {},
            "description": "Relative note path -> names a query may use for that note exactly, "
            "as front-matter aliases are.",
        },
        "examples_quote_queries": {
            "type": "boolean",
            "default": False,
            "description": "The notes quote example queries: text inside quotes or backticks "
            "is indexed and found, but does not count toward how much a note is about a query, "
            "so a note that only cites a query's words is withheld below the relevance floor.",
        },
        "watch": {
            "type": "boolean",
            "default": True,
            "description": "Watch the folder and apply changes as they happen, once the "
            "adapter has run for a few seconds (a resident broker keeps it running); false: check "
            "the folder before each search instead.",
        },
        "ranker": {
            "enum": ["auto", "tantivy", "fts5"],
            "default": "auto",
            "description": "What ranks the candidates: 'auto' ranks a folder of 20,000 "
            "chunks or more with a tantivy index kept beside the SQLite one (it skips the "
            "chunks that cannot reach the top, where FTS5 scores every chunk holding a "
            "common word), smaller folders with FTS5; 'tantivy' or 'fts5' always.",
        },
        "git_snapshots": {
            "type": "boolean",
            "description": "Answer as_of from git history. Default: only when the folder is "
            "the root of a git work tree (a folder inside someone else's repository is not "
            "its own history).",
        },
    },
}


# Bumped when what the chunker indexes changes, so an index built under older rules is rebuilt.
INDEXING_RULES = 2


@dataclass(frozen=True)
class NotesSettings(FolderSelection):
    aliases: tuple[tuple[str, tuple[str, ...]], ...] = ()
    examples_quote_queries: bool = False  # not in the digest: it changes how a match is measured
    git_snapshots: bool | None = None  # None: only at a work tree's root
    watch: bool = True
    ranker: str = "auto"  # not in the digest: the SQLite index is the same either way

    @property
    def digest(self) -> str:
        """12 hex naming everything that changes what gets indexed."""
        blob = json.dumps([
            INDEXING_RULES, self.extensions, self.include, self.exclude, self.exclude_dirs, self.max_file_bytes,
            self.aliases,
        ])
        return hashlib.sha256(blob.encode()).hexdigest()[:12]

    def aliases_of(self, rel: str) -> tuple[str, ...]:
        """The names the ``aliases`` setting gives the note at ``rel``."""
        return dict(self.aliases).get(rel, ())


def parse_settings(raw: dict[str, Any] | None) -> NotesSettings:
    """Validate ``[sources.settings]``; any problem is a -32602 naming the key."""
    raw = raw or {}
    known = SETTINGS_SCHEMA["properties"].keys()
    unknown = sorted(set(raw) - set(known))
    if unknown:
        raise RpcError(
            ErrorCode.invalid_params,
            f"unknown notes setting(s) {', '.join(map(repr, unknown))}; "
            f"known settings: {', '.join(sorted(known))}",
        )
    values = parse_selection(raw)
    if "aliases" in raw:
        values["aliases"] = _aliases(raw["aliases"])
    if "ranker" in raw:
        allowed = SETTINGS_SCHEMA["properties"]["ranker"]["enum"]
        if raw["ranker"] not in allowed:
            raise RpcError(
                ErrorCode.invalid_params,
                f"setting 'ranker' must be one of {', '.join(allowed)}; got {raw['ranker']!r}",
            )
        values["ranker"] = raw["ranker"]
    for key in ("examples_quote_queries", "git_snapshots", "watch"):
        if key in raw:
            if not isinstance(raw[key], bool):
                raise RpcError(
                    ErrorCode.invalid_params, f"setting {key!r} must be true or false; got {raw[key]!r}"
                )
            values[key] = raw[key]
    return NotesSettings(**values)


def _aliases(value: Any) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if not isinstance(value, dict):
        raise RpcError(
            ErrorCode.invalid_params,
            f"setting 'aliases' maps a relative note path to a list of names; got {value!r}",
        )
    pairs = []
    for path, names in sorted(value.items()):
        if path.startswith("/") or "\\" in path or ".." in path.split("/"):
            raise RpcError(
                ErrorCode.invalid_params,
                f"setting 'aliases' needs paths relative to the notes folder; got {path!r}",
            )
        pairs.append((path, string_list(f"aliases.{path}", names)))
    return tuple(pairs)

