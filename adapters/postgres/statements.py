"""The SQL a source runs, composed from its column mapping.

Names come from settings and are always quoted identifiers; values are always
parameters. Ranking is ``ts_rank_cd`` over the mapped ``tsvector`` column
(or, without one, a vector computed per row, which no index serves); the
excerpt is ``ts_headline`` over the body, computed for the returned rows only.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from adapters.postgres.matching import Match, Shape
from adapters.postgres.settings import PostgresSettings

if TYPE_CHECKING:
    from psycopg import sql

# ts_headline marks matches with these; the adapter strips them and keeps the spans
START_SEL = "\x02"
STOP_SEL = "\x03"
HEADLINE_OPTIONS = f"StartSel={START_SEL}, StopSel={STOP_SEL}, MaxWords=40, MinWords=12, MaxFragments=2, FragmentDelimiter=\" … \""
FIELDS = ("key", "title", "updated_at", "record_type", "valid_from", "valid_to", "superseded_by", "supersedes")


@dataclass(frozen=True)
class Window:
    """Which rows a search may see: validity in transaction time, and the filters."""

    as_of: datetime | None = None
    since: datetime | None = None
    until: datetime | None = None
    record_types: tuple[str, ...] | None = None


def _sql() -> Any:
    from psycopg import sql

    return sql


def relation(parts: tuple[str, ...]) -> sql.Identifier:
    return _sql().Identifier(*parts)


def key_column(settings: PostgresSettings) -> str:
    """The column a locator names a row by: the mapped locator column, else the id."""
    return settings.columns.locator or settings.columns.id


def vector(settings: PostgresSettings) -> sql.Composable:
    sql = _sql()
    columns = settings.columns
    if columns.tsvector:
        return sql.SQL("t.{}").format(sql.Identifier(columns.tsvector))
    return sql.SQL("to_tsvector({cfg}::regconfig, coalesce(t.{title}, '') || ' ' || coalesce(t.{body}, ''))").format(
        cfg=sql.Literal(settings.text_config),
        title=sql.Identifier(columns.title),
        body=sql.Identifier(columns.body),
    )


def _selected(settings: PostgresSettings) -> list[sql.Composable]:
    """The row fields every statement returns, in :data:`FIELDS` order."""
    sql = _sql()
    columns = settings.columns

    def column(name: str | None, cast: str = "") -> Any:
        if name is None:
            return sql.SQL("NULL")
        return sql.SQL("t.{}{}").format(sql.Identifier(name), sql.SQL(cast))

    return [
        column(key_column(settings), "::text"),
        column(columns.title, "::text"),
        column(columns.updated_at),
        column(columns.record_type, "::text"),
        column(columns.valid_from),
        column(columns.valid_to),
        column(columns.superseded_by, "::text"),
        sql.SQL("t.supersedes") if settings.managed else sql.SQL("NULL::text[]"),
    ]


def _conditions(settings: PostgresSettings, window: Window, args: dict[str, Any]) -> list[sql.Composable]:
    sql = _sql()
    updated = sql.SQL("t.{}").format(sql.Identifier(settings.columns.updated_at))
    conditions: list[Any] = []
    if settings.managed:
        conditions.append(sql.SQL("t.corpus = %(corpus)s"))
        args["corpus"] = settings.corpus
    if window.as_of is not None and not settings.history_table:
        conditions.append(sql.SQL("{} <= %(as_of)s").format(updated))
        args["as_of"] = window.as_of
    if window.since is not None:
        conditions.append(sql.SQL("{} >= %(since)s").format(updated))
        args["since"] = window.since
    if window.until is not None:
        conditions.append(sql.SQL("{} <= %(until)s").format(updated))
        args["until"] = window.until
    if window.record_types is not None and settings.columns.record_type:
        conditions.append(
            sql.SQL("t.{}::text = ANY(%(record_types)s)").format(sql.Identifier(settings.columns.record_type))
        )
        args["record_types"] = list(window.record_types)
    return conditions


def _rows(settings: PostgresSettings, window: Window) -> sql.Composable:
    """The relation searched: the table, or each id's revision at ``as_of`` in the history."""
    sql = _sql()
    if window.as_of is None or not settings.history_table:
        return relation(settings.relation)
    return sql.SQL(
        "(SELECT DISTINCT ON (h.{key}) h.* FROM {history} h WHERE h.{updated} <= %(as_of)s"
        " ORDER BY h.{key}, h.{updated} DESC)"
    ).format(
        key=sql.Identifier(settings.columns.id),
        history=relation(settings.history_table),
        updated=sql.Identifier(settings.columns.updated_at),
    )


def tsquery(match: Match, args: dict[str, Any]) -> sql.Composable:
    """``match`` as a tsquery expression; its texts are added to ``args``."""
    sql = _sql()
    names = []
    for index, text in enumerate(match.texts):
        args[f"t{index}"] = text
        names.append(sql.SQL("websearch_to_tsquery(%(cfg)s::regconfig, %({})s)").format(sql.SQL(f"t{index}")))
    return sql.SQL(" || ").join(
        sql.SQL("({})").format(sql.SQL(" && ").join(names[index] for index in group)) for group in match.groups()
    )


def search(settings: PostgresSettings, match: Match, window: Window, limit: int) -> tuple[sql.Composed, dict[str, Any]]:
    """Top ``limit`` rows by ``ts_rank_cd``, each with its headline: the :data:`FIELDS`, then
    score, body and headline."""
    sql = _sql()
    args: dict[str, Any] = {"cfg": settings.text_config, "limit": limit}
    if window.as_of is not None and settings.history_table:
        args["as_of"] = window.as_of
    query = tsquery(match, args)
    conditions = [sql.SQL("{} @@ q.query").format(vector(settings)), *_conditions(settings, window, args)]
    statement = sql.SQL(
        "WITH q AS (SELECT {query} AS query),"
        " hits AS (SELECT {fields}, ts_rank_cd({vector}, q.query) AS score, t.{body}::text AS body"
        " FROM {rows} t, q WHERE {conditions} ORDER BY score DESC, 1 LIMIT %(limit)s)"
        " SELECT hits.*, ts_headline(%(cfg)s::regconfig, hits.body, q.query, {options})"
        " FROM hits, q ORDER BY hits.score DESC, hits.key"
    ).format(
        query=query,
        fields=sql.SQL(", ").join(
            sql.SQL("{} AS {}").format(expression, sql.Identifier(name))
            for expression, name in zip(_selected(settings), FIELDS, strict=True)
        ),
        vector=vector(settings),
        body=sql.Identifier(settings.columns.body),
        rows=_rows(settings, window),
        conditions=sql.SQL(" AND ").join(conditions),
        options=sql.Literal(HEADLINE_OPTIONS),
    )
    return statement, args


def by_key(settings: PostgresSettings, keys: list[str], window: Window, key_type: str) -> tuple[sql.Composed, dict[str, Any]]:
    """Rows whose key column equals one of ``keys`` (an exact identifier match); body included."""
    sql = _sql()
    args: dict[str, Any] = {"keys": keys}
    if window.as_of is not None and settings.history_table:
        args["as_of"] = window.as_of
    conditions = [
        sql.SQL("t.{} = ANY(%(keys)s::{}[])").format(sql.Identifier(key_column(settings)), sql.SQL(key_type)),
        *_conditions(settings, window, args),
    ]
    statement = sql.SQL("SELECT {fields}, t.{body}::text FROM {rows} t WHERE {conditions} ORDER BY 1").format(
        fields=sql.SQL(", ").join(_selected(settings)),
        body=sql.Identifier(settings.columns.body),
        rows=_rows(settings, window),
        conditions=sql.SQL(" AND ").join(conditions),
    )
    return statement, args


def explain(settings: PostgresSettings) -> tuple[sql.Composed, dict[str, Any]]:
    """The plan of a typical search, to tell whether an index serves it."""
    statement, args = search(settings, Match(Shape.any, ("recall",)), Window(), 10)
    return _sql().SQL("EXPLAIN (FORMAT JSON) {}").format(statement), args


def columns_of(parts: tuple[str, ...]) -> tuple[str, dict[str, Any]]:
    """Column names and types of a relation (none when it does not exist)."""
    return (
        "SELECT a.attname::text, format_type(a.atttypid, a.atttypmod), t.typcategory::text"
        " FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid"
        " WHERE a.attrelid = to_regclass(%(relation)s) AND a.attnum > 0 AND NOT a.attisdropped",
        {"relation": ".".join(f'"{part}"' for part in parts)},
    )


def row_security(parts: tuple[str, ...]) -> tuple[str, dict[str, Any]]:
    """Whether row-level security is on, forced, and whether the current role owns the relation."""
    return (
        "SELECT c.relrowsecurity, c.relforcerowsecurity, pg_has_role(c.relowner, 'USAGE')"
        " FROM pg_class c WHERE c.oid = to_regclass(%(relation)s)",
        {"relation": ".".join(f'"{part}"' for part in parts)},
    )


def views_reached(parts: tuple[str, ...]) -> tuple[str, dict[str, Any]]:
    """Every view and materialized view a read of the relation goes through (itself included)
    that the current role does not own: name, kind (``v`` or ``m``), owner, reloptions."""
    return (
        "WITH RECURSIVE reached(oid) AS ("
        " SELECT to_regclass(%(relation)s)::oid"
        " UNION"
        " SELECT d.refobjid FROM reached"
        " JOIN pg_rewrite r ON r.ev_class = reached.oid"
        " JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = r.oid"
        "  AND d.refclassid = 'pg_class'::regclass AND d.refobjid <> reached.oid"
        ")"
        " SELECT c.oid::regclass::text, c.relkind::text, pg_get_userbyid(c.relowner), c.reloptions"
        " FROM reached JOIN pg_class c ON c.oid = reached.oid"
        " WHERE c.relkind IN ('v', 'm')"
        "  AND c.relowner <> (SELECT r.oid FROM pg_roles r WHERE r.rolname = current_user)"
        " ORDER BY 1",
        {"relation": ".".join(f'"{part}"' for part in parts)},
    )
