"""The eventstore adapter's settings: where Polign Recall's memory is and how to reach it."""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from adapter_sdk import ErrorCode, RpcError, trusted_only

BACKENDS = ("local", "polign", "pgvector", "mongodb", "qdrant")
TRANSPORTS = ("mcp", "serve")
DEFAULT_API_KEY_ENV = "RECALL_API_KEY"
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_MCP_ONLY = frozenset(
    {"polign_binary", "polign_server", "backend", "backend_key_env", "collection", "predicates"}
)

SETTINGS_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "transport": {
            "enum": list(TRANSPORTS),
            "default": "mcp",
            "description": "mcp: run Polign's binary as `recall mcp -typed` (read-only) on the "
            "location; serve: the location is the URL of a running `recall serve`.",
        },
        "api_key_env": trusted_only({
            "type": "string",
            "pattern": f"^{_ENV_NAME.pattern}$",
            "default": DEFAULT_API_KEY_ENV,
            "description": "transport serve: the environment variable holding the Recall key "
            "(rcl_<id>_<secret>).",
        }),
        "polign_binary": trusted_only({
            "type": "string",
            "minLength": 1,
            "description": "Path to Polign's `recall` binary (relative paths start at the "
            "config file's directory). Omitted: found by its version output.",
        }),
        "polign_server": trusted_only({
            "type": "string",
            "minLength": 1,
            "description": "Path to `polign-server`, which Polign's binary starts for a "
            "local data directory. Omitted: next to the binary, this Python's scripts "
            "directory, then PATH.",
        }),
        "backend": {
            "enum": list(BACKENDS),
            "default": "local",
            "description": "Where Polign keeps memory, as its -backend flag: local (the "
            "location is a data directory) or a database named by URL.",
        },
        "backend_key_env": trusted_only({
            "type": "string",
            "pattern": f"^{_ENV_NAME.pattern}$",
            "description": "Name of the environment variable holding the database "
            "credential (Polign's -key); the credential never appears in a command line.",
        }),
        "collection": {
            "type": "string",
            "minLength": 1,
            "description": "Memory collection, as Polign's -collection. Omitted: Polign's default.",
        },
        "predicates": trusted_only({
            "type": "string",
            "minLength": 1,
            "description": "Predicate registry JSON the store was written with, as Polign's "
            "-predicates. Omitted: Polign's starter registry.",
        }),
    },
}


@dataclass(frozen=True)
class EventStoreSettings:
    location: str
    transport: str = "mcp"
    api_key_env: str = DEFAULT_API_KEY_ENV
    backend: str = "local"
    polign_binary: str | None = None
    polign_server: str | None = None
    backend_key_env: str | None = None
    collection: str | None = None
    predicates: str | None = None

    @property
    def store_identity(self) -> str:
        """Opaque name of the store this instance opens (no path or URL in clear)."""
        if self.transport == "mcp" and self.backend == "local":
            digest = hashlib.sha256(os.path.realpath(self.location).encode()).hexdigest()
            return f"dir:{digest[:16]}"
        named = "\0".join((self.transport, self.backend, self.location, self.collection or ""))
        return f"url:{hashlib.sha256(named.encode()).hexdigest()[:16]}"


def parse_settings(
    location: str | None, raw: dict[str, Any] | None, base_dir: str | None
) -> EventStoreSettings:
    """Validate the source's location and settings; any problem is a -32602 naming the key."""
    raw = raw or {}
    unknown = sorted(set(raw) - set(SETTINGS_SCHEMA["properties"]))
    if unknown:
        raise _invalid(
            f"unknown setting(s) {', '.join(unknown)}; "
            f"known: {', '.join(SETTINGS_SCHEMA['properties'])}"
        )
    for key, value in raw.items():
        if not isinstance(value, str) or not value:
            raise _invalid(f"setting {key!r} must be a non-empty string")
    backend = raw.get("backend", "local")
    if backend not in BACKENDS:
        raise _invalid(f"setting 'backend' is {backend!r}; use one of {', '.join(BACKENDS)}")
    transport = raw.get("transport", "mcp")
    if transport not in TRANSPORTS:
        raise _invalid(f"setting 'transport' is {transport!r}; use one of {', '.join(TRANSPORTS)}")
    for name in ("backend_key_env", "api_key_env"):
        if name in raw and not _ENV_NAME.fullmatch(raw[name]):
            raise _invalid(f"setting {name!r} ({raw[name]!r}) must name an environment variable")
    if transport == "serve":
        misplaced = sorted(set(raw) & _MCP_ONLY)
        if misplaced:
            raise _invalid(
                f"setting(s) {', '.join(misplaced)} configure `recall mcp`, not transport serve"
            )
        if not location or not location.startswith(("http://", "https://")):
            raise _invalid(
                f"transport serve needs the http(s) URL of a `recall serve`, got {location!r}"
            )
        return EventStoreSettings(
            location=location,
            transport="serve",
            api_key_env=raw.get("api_key_env", DEFAULT_API_KEY_ENV),
        )
    if "api_key_env" in raw:
        raise _invalid("setting 'api_key_env' applies to transport serve only")
    if not location:
        raise _invalid(
            "the source needs a location: Polign Recall's data directory "
            "(backend local) or its database URL"
        )
    anchor = Path(base_dir) if base_dir else Path.cwd()
    if backend == "local":
        location = str(_resolve(location, anchor))
        _check_data_directory(location)
    elif "://" not in location:
        raise _invalid(f"backend {backend!r} needs a URL location, got {location!r}")
    return EventStoreSettings(
        location=location,
        backend=backend,
        polign_binary=_optional_path(raw.get("polign_binary"), anchor),
        polign_server=_optional_path(raw.get("polign_server"), anchor),
        backend_key_env=raw.get("backend_key_env"),
        collection=raw.get("collection"),
        predicates=_optional_path(raw.get("predicates"), anchor),
    )


def _check_data_directory(location: str) -> None:
    """Refuse a directory Polign has never opened.

    Polign's binary creates a fresh, empty store wherever it is pointed, and an
    empty store would answer every question with a confident "nothing".
    """
    path = Path(location)
    if not path.is_dir():
        raise _invalid(f"Polign Recall data directory {location} does not exist")
    if not (path / "local-key").is_file():
        raise _invalid(
            f"{location} is not a Polign Recall data directory (it has no local-key); "
            "point the location at the directory Polign's client was opened with"
        )


def _optional_path(value: str | None, anchor: Path) -> str | None:
    return None if value is None else str(_resolve(value, anchor))


def _resolve(value: str, anchor: Path) -> Path:
    path = Path(value).expanduser()
    return path if path.is_absolute() else (anchor / path).resolve()


def _invalid(message: str) -> RpcError:
    return RpcError(ErrorCode.invalid_params, message)
