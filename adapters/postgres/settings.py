"""The postgres adapter's settings: where the rows are, and which column means what.

A source either maps a table or view the user already has (``table`` plus
``columns``), or reads the managed corpus ``recall-postgres ingest`` loads
(no ``table``: the corpus named by ``corpus``, default the source id). The
connection string never appears in configuration: ``dsn_env`` names the
environment variable that holds it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from adapter_sdk import ErrorCode, RpcError

DEFAULT_TEXT_CONFIG = "english"
DEFAULT_RECORD_TYPE = "document"
DEFAULT_POOL_SIZE = 2
MANAGED_TABLE = "recall_chunks"
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_$]*$")

REQUIRED_COLUMNS = ("id", "title", "body", "updated_at")
OPTIONAL_COLUMNS = (
    "tsvector", "locator", "record_type", "valid_from", "valid_to", "superseded_by",
)  # fmt: skip

_IDENTIFIER_SCHEMA = {"type": "string", "pattern": _IDENTIFIER.pattern}
# Settings that choose the credential or what it reads: only the user's own
# configuration may set them, never a project recall.toml (docs/security.md).
TRUSTED_ONLY = "trusted_only"
SETTINGS_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "additionalProperties": False,
    "required": ["dsn_env"],
    "properties": {
        "dsn_env": {
            TRUSTED_ONLY: True,
            "type": "string",
            "pattern": _ENV_NAME.pattern,
            "description": "The environment variable holding the connection string (libpq "
            "key=value or postgresql:// URI). Required; the string itself is never configured.",
        },
        "table": {
            TRUSTED_ONLY: True,
            "type": "string",
            "pattern": r"^[A-Za-z_][A-Za-z0-9_$]*(\.[A-Za-z_][A-Za-z0-9_$]*)?$",
            "description": "The table or view searched, optionally schema-qualified. Omitted: "
            "the managed corpus loaded by `recall-postgres ingest`.",
        },
        "columns": {
            TRUSTED_ONLY: True,
            "type": "object",
            "additionalProperties": False,
            "required": list(REQUIRED_COLUMNS),
            "properties": {name: _IDENTIFIER_SCHEMA for name in REQUIRED_COLUMNS + OPTIONAL_COLUMNS},
            "description": "Which column holds what (with `table`): id, title, body, updated_at; "
            "optionally tsvector (a stored tsvector with a GIN index), locator, record_type, "
            "valid_from, valid_to, superseded_by.",
        },
        "history_table": {
            TRUSTED_ONLY: True,
            "type": "string",
            "pattern": r"^[A-Za-z_][A-Za-z0-9_$]*(\.[A-Za-z_][A-Za-z0-9_$]*)?$",
            "description": "A table with the same columns holding one row per revision; "
            "`as_of` answers from the latest revision of each id at or before the instant.",
        },
        "corpus": {
            TRUSTED_ONLY: True,
            "type": "string",
            "minLength": 1,
            "description": "Without `table`: the managed corpus read (default: the source id).",
        },
        "text_config": {
            "type": "string",
            "pattern": r"^[A-Za-z_][A-Za-z0-9_$]*(\.[A-Za-z_][A-Za-z0-9_$]*)?$",
            "default": DEFAULT_TEXT_CONFIG,
            "description": "The text search configuration queries are parsed with.",
        },
        "record_type": {
            "type": "string",
            "minLength": 1,
            "default": DEFAULT_RECORD_TYPE,
            "description": "The record type of rows without a record_type column.",
        },
        "allow_definer_view": {
            TRUSTED_ONLY: True,
            "type": "boolean",
            "default": False,
            "description": "Search the mapped relation even when it is, or reads through, a view "
            "that runs as an owner other than the connecting role (no security_invoker) or a "
            "materialized view: row-level security then judges that owner, not this role. Off: "
            "such a source is refused (denied) and `recall sources` and `recall doctor` say why.",
        },
        "pool_size": {
            "type": "integer",
            "minimum": 1,
            "maximum": 16,
            "default": DEFAULT_POOL_SIZE,
            "description": "Idle connections a warm adapter keeps open.",
        },
    },
}


@dataclass(frozen=True)
class ColumnMap:
    id: str
    title: str
    body: str
    updated_at: str
    tsvector: str | None = None
    locator: str | None = None
    record_type: str | None = None
    valid_from: str | None = None
    valid_to: str | None = None
    superseded_by: str | None = None

    def named(self) -> dict[str, str]:
        """Mapping key → column, for the keys that are mapped."""
        keys = REQUIRED_COLUMNS + OPTIONAL_COLUMNS
        return {key: value for key in keys if (value := getattr(self, key)) is not None}


MANAGED_COLUMNS = ColumnMap(
    id="chunk_id",
    title="title",
    body="body",
    updated_at="updated_at",
    tsvector="search",
    valid_from="valid_from",
    valid_to="valid_to",
    superseded_by="superseded_by",
)


@dataclass(frozen=True)
class PostgresSettings:
    dsn_env: str
    table: tuple[str, ...] = ()
    columns: ColumnMap = MANAGED_COLUMNS
    history_table: tuple[str, ...] = ()
    corpus: str | None = None
    text_config: str = DEFAULT_TEXT_CONFIG
    record_type: str = DEFAULT_RECORD_TYPE
    pool_size: int = DEFAULT_POOL_SIZE
    allow_definer_view: bool = False

    @property
    def managed(self) -> bool:
        return not self.table

    @property
    def relation(self) -> tuple[str, ...]:
        return self.table or (MANAGED_TABLE,)

    @property
    def relation_name(self) -> str:
        return ".".join(self.relation)


def parse_settings(raw: dict[str, Any] | None, source_id: str) -> PostgresSettings:
    """Validate ``[sources.settings]``; any problem is a -32602 naming the key."""
    raw = dict(raw or {})
    known = SETTINGS_SCHEMA["properties"].keys()
    unknown = sorted(set(raw) - set(known))
    if unknown:
        raise _invalid(
            f"unknown postgres setting(s) {', '.join(map(repr, unknown))}; "
            f"known settings: {', '.join(sorted(known))}"
        )
    dsn_env = raw.get("dsn_env")
    if not isinstance(dsn_env, str) or not _ENV_NAME.match(dsn_env):
        raise _invalid(
            "setting 'dsn_env' is required: the name of the environment variable holding the "
            f"connection string (for example \"RECALL_KB_DSN\"); got {dsn_env!r}"
        )
    table = _relation(raw, "table")
    history = _relation(raw, "history_table")
    if table and "corpus" in raw:
        raise _invalid("setting 'corpus' names a managed corpus; it cannot be used with 'table'")
    if table and "columns" not in raw:
        raise _invalid(
            "setting 'table' needs 'columns': which columns hold "
            + ", ".join(REQUIRED_COLUMNS)
        )
    if not table and ("columns" in raw or history):
        raise _invalid("settings 'columns' and 'history_table' apply with 'table' only")
    columns = _columns(raw["columns"]) if table else MANAGED_COLUMNS
    corpus = raw.get("corpus", source_id)
    if not isinstance(corpus, str) or not corpus:
        raise _invalid(f"setting 'corpus' must be a non-empty string; got {corpus!r}")
    text_config = raw.get("text_config", DEFAULT_TEXT_CONFIG)
    if not isinstance(text_config, str) or not all(
        _IDENTIFIER.match(part) for part in text_config.split(".")
    ):
        raise _invalid(f"setting 'text_config' must name a text search configuration; got {text_config!r}")
    record_type = raw.get("record_type", DEFAULT_RECORD_TYPE)
    if not isinstance(record_type, str) or not record_type:
        raise _invalid(f"setting 'record_type' must be a non-empty string; got {record_type!r}")
    pool_size = raw.get("pool_size", DEFAULT_POOL_SIZE)
    if isinstance(pool_size, bool) or not isinstance(pool_size, int) or not 1 <= pool_size <= 16:
        raise _invalid(f"setting 'pool_size' must be an integer from 1 to 16; got {pool_size!r}")
    allow_definer_view = raw.get("allow_definer_view", False)
    if not isinstance(allow_definer_view, bool):
        raise _invalid(f"setting 'allow_definer_view' must be true or false; got {allow_definer_view!r}")
    return PostgresSettings(
        dsn_env=dsn_env,
        table=table,
        columns=columns,
        history_table=history,
        corpus=None if table else corpus,
        text_config=text_config,
        record_type=record_type,
        pool_size=pool_size,
        allow_definer_view=allow_definer_view,
    )


def _relation(raw: dict[str, Any], key: str) -> tuple[str, ...]:
    value = raw.get(key)
    if value is None:
        return ()
    parts = tuple(value.split(".")) if isinstance(value, str) else ()
    if not 1 <= len(parts) <= 2 or not all(_IDENTIFIER.match(part) for part in parts):
        raise _invalid(
            f"setting {key!r} must name a table or view as name or schema.name "
            f"(letters, digits, _ and $); got {value!r}"
        )
    return parts


def _columns(raw: Any) -> ColumnMap:
    if not isinstance(raw, dict):
        raise _invalid(f"setting 'columns' must be a table of column names; got {raw!r}")
    unknown = sorted(set(raw) - set(REQUIRED_COLUMNS + OPTIONAL_COLUMNS))
    if unknown:
        raise _invalid(
            f"unknown column mapping key(s) {', '.join(map(repr, unknown))}; known keys: "
            + ", ".join(REQUIRED_COLUMNS + OPTIONAL_COLUMNS)
        )
    missing = [key for key in REQUIRED_COLUMNS if key not in raw]
    if missing:
        raise _invalid(f"setting 'columns' must map {', '.join(map(repr, missing))}")
    for key, value in raw.items():
        if not isinstance(value, str) or not _IDENTIFIER.match(value):
            raise _invalid(f"setting 'columns.{key}' must be a column name; got {value!r}")
    return ColumnMap(**raw)


def _invalid(message: str) -> RpcError:
    return RpcError(ErrorCode.invalid_params, message)
