"""Check a source's mapping against the database before trusting it.

Each mapped column must exist (the message lists the ones that do), the
role must be allowed to read the relation, and a search's plan is read
with ``EXPLAIN`` (sequential scans disabled for the planning only): a plan
that still scans the relation sequentially has no index to use, which the
report carries as a warning naming the SQL that fixes it. A relation whose
row-level security the role escapes as its owner is warned about too.

A view runs with its owner's rights unless it is ``security_invoker``
(PostgreSQL 15 and later), and a materialized view holds the rows its owner
saw: either, owned by another role, lets the role read rows row-level security
would hide from it. Every such view a read of the relation goes through, at any
depth, refuses the source (denied) unless the user's own configuration accepts
it with ``allow_definer_view = true``; accepted, it is still reported.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from adapters.postgres import statements
from adapters.postgres.errors import ProblemKind, SourceProblem
from adapters.postgres.settings import PostgresSettings

INDEX_DOC = "docs/postgres.md#the-index-a-search-needs"


@dataclass(frozen=True)
class SchemaReport:
    key_type: str
    key_category: str
    index_used: bool
    estimated_rows: int | None
    warning: str | None = None
    definer_views: str | None = None
    """The views read with another role's rights, accepted by ``allow_definer_view``."""


@dataclass(frozen=True)
class DefinerView:
    """A view read with its owner's rights rather than the connecting role's."""

    name: str
    kind: str
    owner: str

    def __str__(self) -> str:
        return f"{self.kind} {self.name} (owner {self.owner})"


INVOKER_TRUE = frozenset({"t", "tr", "tru", "true", "y", "ye", "yes", "on", "1"})
"""How PostgreSQL may spell a true boolean reloption."""


async def inspect_schema(cursor: Any, settings: PostgresSettings, reuse: SchemaReport | None) -> SchemaReport:
    name = settings.relation_name
    columns = await _columns(cursor, settings.relation)
    if not columns:
        raise SourceProblem(
            ProblemKind.misconfigured,
            f"relation {name} does not exist (setting 'table'"
            + (", or run `recall-postgres ingest` to create the managed corpus" if settings.managed else "")
            + ")",
        )
    await cursor.execute("SELECT has_table_privilege(to_regclass(%s), 'SELECT')", [_quoted(settings.relation)])
    readable = await cursor.fetchone()
    if not readable or not readable[0]:
        raise SourceProblem(ProblemKind.denied, f"the role may not SELECT from {name}; GRANT SELECT ON {name} TO it")
    _require_columns(settings, columns, name, "columns")
    definers = await _definer_views(cursor, settings.relation)
    if settings.history_table:
        definers += await _definer_views(cursor, settings.history_table)
        history = await _columns(cursor, settings.history_table)
        if not history:
            raise SourceProblem(
                ProblemKind.misconfigured, f"history table {'.'.join(settings.history_table)} does not exist"
            )
        _require_columns(settings, history, ".".join(settings.history_table), "history_table")
    if settings.columns.tsvector and columns[settings.columns.tsvector][0] != "tsvector":
        raise SourceProblem(
            ProblemKind.misconfigured,
            f"column {settings.columns.tsvector} of {name} is {columns[settings.columns.tsvector][0]}, "
            "not tsvector (setting 'columns.tsvector')",
        )
    accepted = _judge_definer_views(definers, settings, name)
    key_type, key_category = columns[statements.key_column(settings)]
    warnings = []
    index_used = reuse.index_used if reuse is not None else await _index_serves(cursor, settings)
    if not index_used:
        warnings.append(
            f"searches of {name} scan every row: no index serves them; add a stored tsvector "
            f"column with a GIN index and map it as columns.tsvector ({INDEX_DOC})"
        )
    rls_gap = await _owner_escapes_row_security(cursor, settings)
    if rls_gap:
        warnings.append(
            f"row-level security on {name} does not apply to the role, which owns it; "
            f"ALTER TABLE {name} FORCE ROW LEVEL SECURITY, or connect as another role"
        )
    await cursor.execute("SELECT reltuples::bigint FROM pg_class WHERE oid = to_regclass(%s)", [_quoted(settings.relation)])
    estimate = await cursor.fetchone()
    rows = int(estimate[0]) if estimate and estimate[0] is not None and estimate[0] >= 0 else None
    return SchemaReport(key_type, key_category, index_used, rows, "; ".join(warnings) or None, accepted)


async def _columns(cursor: Any, parts: tuple[str, ...]) -> dict[str, tuple[str, str]]:
    query, args = statements.columns_of(parts)
    await cursor.execute(query, args)
    return {name: (type_name, category) for name, type_name, category in await cursor.fetchall()}


def _require_columns(settings: PostgresSettings, columns: dict[str, Any], name: str, where: str) -> None:
    mapped = settings.columns.named()
    missing = {key: column for key, column in mapped.items() if column not in columns}
    if settings.managed and "supersedes" not in columns:
        missing["supersedes"] = "supersedes"
    if missing:
        said = ", ".join(f"{column!r} (columns.{key})" for key, column in missing.items())
        raise SourceProblem(
            ProblemKind.misconfigured,
            f"{name} has no column {said} (setting {where!r}); its columns are: " + ", ".join(sorted(columns)),
        )


async def _index_serves(cursor: Any, settings: PostgresSettings) -> bool:
    """Whether a search's plan avoids a sequential scan when the planner is told to avoid one."""
    statement, args = statements.explain(settings)
    await cursor.execute("SET LOCAL enable_seqscan = off")
    await cursor.execute(statement, args)
    row = await cursor.fetchone()
    await cursor.execute("RESET enable_seqscan")
    plan = row[0] if row else []
    return not any(node.get("Node Type") == "Seq Scan" for node in _nodes(plan))


def _nodes(plan: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    stack = list(plan) if isinstance(plan, list) else [plan]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            inner = node.get("Plan")
            if isinstance(inner, dict):
                stack.append(inner)
            if "Node Type" in node:
                found.append(node)
            stack.extend(node.get("Plans", []))
    return found


async def _definer_views(cursor: Any, parts: tuple[str, ...]) -> list[DefinerView]:
    query, args = statements.views_reached(parts)
    await cursor.execute(query, args)
    found = []
    for name, relkind, owner, options in await cursor.fetchall():
        if relkind == "v" and _security_invoker(options or []):
            continue
        found.append(DefinerView(name, "view" if relkind == "v" else "materialized view", owner))
    return found


def _security_invoker(options: list[str]) -> bool:
    for option in options:
        key, _, value = option.partition("=")
        if key.strip().lower() == "security_invoker":
            return value.strip().lower() in INVOKER_TRUE
    return False


def _judge_definer_views(found: list[DefinerView], settings: PostgresSettings, name: str) -> str | None:
    """Refuse a relation read through another role's view, unless the user accepted it;
    the accepted views, said in words, to report in health and search diagnostics."""
    if not found:
        return None
    listed = ", ".join(str(view) for view in dict.fromkeys(found))
    if settings.allow_definer_view:
        return f"{name} is read through {listed}, with that owner's rights (accepted: allow_definer_view)"
    views = [view.name for view in found if view.kind == "view"]
    fix = f"ALTER VIEW {views[0]} SET (security_invoker = on), or " if views else ""
    raise SourceProblem(
        ProblemKind.denied,
        f"refusing to search {name}: it is read through {listed}, with that owner's rights, "
        "not the connecting role's, so row-level security would judge the owner; "
        f"{fix}accept it with the source setting allow_definer_view = true in your own "
        "configuration (see docs/postgres.md)",
    )


async def _owner_escapes_row_security(cursor: Any, settings: PostgresSettings) -> bool:
    query, args = statements.row_security(settings.relation)
    await cursor.execute(query, args)
    row = await cursor.fetchone()
    return bool(row and row[0] and not row[1] and row[2])


def _quoted(parts: tuple[str, ...]) -> str:
    return ".".join(f'"{part}"' for part in parts)
