"""The notes adapter's settings: defaults, validation and the schema it publishes."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from adapter_sdk import ErrorCode, RpcError

DEFAULT_EXTENSIONS = (".md", ".markdown", ".txt")
DEFAULT_EXCLUDE_DIRS = (".*", "node_modules")
DEFAULT_MAX_FILE_BYTES = 1 << 20

SETTINGS_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "extensions": {
            "type": "array",
            "items": {"type": "string", "pattern": r"^\.[^/\\]+$"},
            "default": list(DEFAULT_EXTENSIONS),
            "description": "File extensions read as notes (case-insensitive).",
        },
        "include": {
            "type": "array",
            "items": {"type": "string", "minLength": 1},
            "default": [],
            "description": "Globs over the relative POSIX path ('*' crosses '/'); "
            "when non-empty a note must match one of them.",
        },
        "exclude": {
            "type": "array",
            "items": {"type": "string", "minLength": 1},
            "default": [],
            "description": "Globs over the relative POSIX path; a matching note is skipped.",
        },
        "exclude_dirs": {
            "type": "array",
            "items": {"type": "string", "minLength": 1, "pattern": r"^[^/]+$"},
            "default": list(DEFAULT_EXCLUDE_DIRS),
            "description": "Directory-name globs never descended into "
            "(hidden folders such as .git, and node_modules by default).",
        },
        "max_file_bytes": {
            "type": "integer",
            "minimum": 1,
            "default": DEFAULT_MAX_FILE_BYTES,
            "description": "Larger notes are not indexed; they are reported as declined "
            "(with this setting as the fix) and coverage stays complete.",
        },
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
class NotesSettings:
    extensions: tuple[str, ...] = DEFAULT_EXTENSIONS
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    exclude_dirs: tuple[str, ...] = DEFAULT_EXCLUDE_DIRS
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
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
    values: dict[str, Any] = {}
    for key in ("extensions", "include", "exclude", "exclude_dirs"):
        if key in raw:
            values[key] = _string_list(key, raw[key])
    if "extensions" in values:
        extensions = tuple(e.lower() for e in values["extensions"])
        bad = [e for e in extensions if not e.startswith(".") or "/" in e or len(e) < 2]
        if bad or not extensions:
            raise RpcError(
                ErrorCode.invalid_params,
                f"setting 'extensions' needs entries like \".md\"; got {list(values['extensions'])}",
            )
        values["extensions"] = extensions
    if any("/" in d for d in values.get("exclude_dirs", ())):
        raise RpcError(
            ErrorCode.invalid_params,
            "setting 'exclude_dirs' holds directory-name globs without '/'; "
            "use 'exclude' for path globs",
        )
    if "max_file_bytes" in raw:
        size = raw["max_file_bytes"]
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise RpcError(
                ErrorCode.invalid_params,
                f"setting 'max_file_bytes' must be a positive integer; got {size!r}",
            )
        values["max_file_bytes"] = size
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
        pairs.append((path, _string_list(f"aliases.{path}", names)))
    return tuple(pairs)


def _string_list(key: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise RpcError(
            ErrorCode.invalid_params,
            f"setting {key!r} must be a list of non-empty strings; got {value!r}",
        )
    return tuple(value)
