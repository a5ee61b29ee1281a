"""Which files of a folder are notes: the settings every folder adapter shares.

An adapter publishes :data:`SELECTION_SCHEMA` among its settings, reads them with
:func:`parse_selection` and keeps them in a subclass of :class:`FolderSelection`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from adapter_sdk import ErrorCode, RpcError

DEFAULT_EXTENSIONS = (".md", ".markdown", ".txt")
DEFAULT_EXCLUDE_DIRS = (".*", "node_modules")
DEFAULT_MAX_FILE_BYTES = 1 << 20

SELECTION_SCHEMA: dict[str, Any] = {
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
}


@dataclass(frozen=True)
class FolderSelection:
    extensions: tuple[str, ...] = DEFAULT_EXTENSIONS
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    exclude_dirs: tuple[str, ...] = DEFAULT_EXCLUDE_DIRS
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES


def parse_selection(raw: dict[str, Any]) -> dict[str, Any]:
    """The :class:`FolderSelection` fields ``raw`` sets, validated; any problem is a
    -32602 naming the key. Keys of other settings are left to the caller."""
    values: dict[str, Any] = {}
    for key in ("extensions", "include", "exclude", "exclude_dirs"):
        if key in raw:
            values[key] = string_list(key, raw[key])
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
    return values


def string_list(key: str, value: Any) -> tuple[str, ...]:
    """``value`` as a tuple of non-empty strings, else a -32602 naming ``key``."""
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise RpcError(
            ErrorCode.invalid_params,
            f"setting {key!r} must be a list of non-empty strings; got {value!r}",
        )
    return tuple(value)
