"""The postgres adapter: PostgreSQL full-text search over a table the user maps, or a managed corpus.

The connection string is read from the environment variable the ``dsn_env``
setting names, at the handshake; it is never logged or reported. A missing
variable or an unreachable server does not fail the handshake: health says
why (unavailable or denied), and each search fails with the matching code, so
the broker reports the source as not answering rather than as empty.

Searches run read-only (see :mod:`adapters.postgres.pool`), each statement
bounded by a ``statement_timeout`` a little inside the request's deadline, so
a slow search ends as a typed timeout with the server's own word for it; a
``recall/cancel`` cancels the statement on the server. ``as_of`` filters on
the updated-at column, or, with ``history_table``, answers from each id's
latest revision at or before the instant.
"""

from __future__ import annotations

import hashlib
import os
import time
import uuid
from datetime import UTC, datetime
from typing import Any

from adapter_sdk import (
    Adapter,
    AdapterSkipReason,
    AsOfSupport,
    Capability,
    ErrorCode,
    ExpandParams,
    ExpandResult,
    FreshnessMode,
    HealthParams,
    HealthResult,
    HealthStatus,
    IndexCoverage,
    InitializeParams,
    Manifest,
    QueryMode,
    RelevanceBasis,
    RpcError,
    SearchOutcome,
    SearchParams,
    SearchResult,
    Sensitivity,
)
from adapter_sdk.lexical import analyze_query, stable_identifiers, stemmed
from adapters.postgres import statements
from adapters.postgres.errors import ProblemKind, SourceProblem, dsn_secrets
from adapters.postgres.expand import render
from adapters.postgres.matching import stages
from adapters.postgres.pool import ConnectionPool
from adapters.postgres.rows import Row, candidates_from
from adapters.postgres.schema import SchemaReport, inspect_schema
from adapters.postgres.settings import SETTINGS_SCHEMA, PostgresSettings, parse_settings

ADAPTER_ID = "recall-postgres/1"
DEFAULT_LIMIT = 20
SCHEMA_RECHECK_S = 60.0
MAX_EXACT_KEYS = 5
MAX_STATEMENT_TIMEOUT_MS = 2_147_483_647  # PostgreSQL's upper bound for the setting


class PostgresAdapter(Adapter):
    def __init__(self) -> None:
        self.source_id = ""
        self.settings: PostgresSettings | None = None
        self.pool: ConnectionPool | None = None
        self.missing_secret: str | None = None
        self.store_identity = ""
        self.last_success_at: datetime | None = None
        self._schema: SchemaReport | None = None
        self._schema_checked = 0.0

    # -- handshake -------------------------------------------------------------------

    def initialize(self, params: InitializeParams) -> Manifest:
        settings = parse_settings(params.settings, params.source_id)
        self.settings = settings
        self.source_id = params.source_id
        dsn = os.environ.get(settings.dsn_env, "").strip()
        if not dsn:
            self.missing_secret = (
                f"source {params.source_id}: the environment variable {settings.dsn_env} "
                "(setting 'dsn_env') holds no connection string; export it before starting recall"
            )
        else:
            self.pool = ConnectionPool(dsn, settings.pool_size, dsn_secrets(dsn))
            self.store_identity = _store_identity(dsn, settings)
        return Manifest(
            protocol_version=1,
            adapter_id=ADAPTER_ID,
            display_name="PostgreSQL",
            record_types=[settings.record_type],
            query_modes=[QueryMode.lexical, QueryMode.exact],
            freshness_modes=[FreshnessMode.live],
            as_of_support=AsOfSupport.snapshot if settings.history_table else AsOfSupport.filter,
            relevance_basis=RelevanceBasis.lexical_span,
            capabilities=[Capability.search, Capability.expand],
            sensitivity=Sensitivity.internal,
            max_concurrency=settings.pool_size * 2,
            freshness_policy="live: every search reads the database as it is",
            settings_schema=SETTINGS_SCHEMA,
        )

    # -- search ----------------------------------------------------------------------

    async def search(self, params: SearchParams) -> SearchResult:  # type: ignore[override]
        settings = self._settings()
        wanted = params.filters.record_types
        if wanted is not None and not settings.columns.record_type and settings.record_type not in wanted:
            return SearchResult(
                candidates=[],
                outcome=SearchOutcome.skipped,
                reason=AdapterSkipReason.record_type_mismatch,
                diagnostics={"record_types": [settings.record_type]},
            )
        started = time.perf_counter()
        schema = await self._request_schema(params.deadline)
        analyzed = analyze_query(params.query)
        matches = stages(params.query, analyzed)
        window = statements.Window(
            as_of=params.as_of,
            since=params.filters.since,
            until=params.filters.until,
            record_types=tuple(wanted) if wanted is not None else None,
        )
        limit = params.limit or DEFAULT_LIMIT
        keys = _exact_keys(params.query, schema.key_category)

        async def run(cursor: Any) -> tuple[list[Row], list[Row], list[str]]:
            import psycopg

            ranked: list[Row] = []
            cut_short: list[str] = []
            for position, match in enumerate(matches):
                if position and ranked:
                    break  # rows holding two of the terms are the evidence; one-term rows only stand in
                statement, args = statements.search(settings, match, window, limit)
                if position == 0:
                    await cursor.execute(statement, args)
                    ranked += [Row.ranked(values) for values in await cursor.fetchall()]
                    continue
                try:  # a wider stage may run out of time; what the first found still stands
                    async with cursor.connection.transaction():
                        await cursor.execute(f"SET LOCAL statement_timeout = {_statement_timeout_ms(params.deadline)}")
                        await cursor.execute(statement, args)
                        ranked += [Row.ranked(values) for values in await cursor.fetchall()]
                except (psycopg.errors.QueryCanceled, RpcError):
                    cut_short.append(match.shape)
            exact: list[Row] = []
            if keys:
                statement, args = statements.by_key(settings, keys, window, schema.key_type)
                await cursor.execute(statement, args)
                exact = [Row.exact(values) for values in await cursor.fetchall()]
            return ranked, exact, cut_short

        ranked, exact, cut_short = await self._run(run, params.deadline, "searching")
        self.last_success_at = datetime.now(UTC)
        candidates = candidates_from(
            ranked,
            exact,
            source_id=self.source_id,
            settings=settings,
            query_terms=[stemmed(term) for term in analyzed.content_terms],
            observed_at=self.last_success_at,
            limit=limit,
        )
        diagnostics: dict[str, Any] = {
            "query_mode": "lexical",
            "text_config": settings.text_config,
            "match_stages": [match.shape for match in matches],
            "ranked": len(ranked),
            "exact": len(exact),
            "elapsed_ms": round((time.perf_counter() - started) * 1000, 1),
        }
        if cut_short:
            diagnostics["stages_cut_short"] = cut_short
        if params.as_of is not None:
            diagnostics["as_of"] = "history_table" if settings.history_table else "filter_on_updated_at"
        if schema.warning:
            diagnostics["warning"] = schema.warning
        if schema.definer_views:
            diagnostics["definer_view"] = schema.definer_views
        outcome = SearchOutcome.partial if cut_short else SearchOutcome.success
        return SearchResult(candidates=candidates, outcome=outcome, diagnostics=diagnostics)

    # -- expand ----------------------------------------------------------------------

    async def expand(self, params: ExpandParams) -> ExpandResult:  # type: ignore[override]
        settings = self._settings()
        key = params.locator.split(":", 1)[1]
        schema = await self._request_schema(params.deadline)
        if not _fits(key, schema.key_category):
            raise RpcError(ErrorCode.locator_unknown, f"{params.locator}: not a key of {settings.relation_name}")

        async def read(cursor: Any) -> list[Row]:
            statement, args = statements.by_key(settings, [key], statements.Window(), schema.key_type)
            await cursor.execute(statement, args)
            return [Row.exact(values) for values in await cursor.fetchall()]

        rows = await self._run(read, params.deadline, f"expanding {params.locator}")
        if not rows:
            raise RpcError(
                ErrorCode.locator_expired,
                f"{params.locator}: no row of {settings.relation_name} has this key any more; search again",
            )
        return render(rows[0], params.detail, params.budget_bytes)

    # -- health ----------------------------------------------------------------------

    async def health(self, params: HealthParams) -> HealthResult:  # type: ignore[override]
        now = datetime.now(UTC)
        diagnostics: dict[str, Any] = {"relation": self._settings().relation_name}
        if self.missing_secret is not None:
            diagnostics["reason"] = self.missing_secret
            return HealthResult(
                status=HealthStatus.unavailable, checked_at=now, coverage=IndexCoverage.unknown, diagnostics=diagnostics
            )
        diagnostics["store_identity"] = self.store_identity
        try:
            schema = await self._checked_schema(params.deadline)
        except SourceProblem as problem:
            diagnostics["reason"] = problem.message
            return HealthResult(
                status=problem.health_status, checked_at=now, coverage=IndexCoverage.unknown, diagnostics=diagnostics
            )
        diagnostics["role"] = self._pool().role
        diagnostics["index"] = "gin" if schema.index_used else "none"
        if schema.warning:
            diagnostics["warning"] = schema.warning
        if schema.definer_views:
            diagnostics["definer_view"] = schema.definer_views
        self.last_success_at = now
        return HealthResult(
            status=HealthStatus.degraded if schema.warning else HealthStatus.healthy,
            checked_at=now,
            coverage=IndexCoverage.complete,
            last_success_at=now,
            record_count=schema.estimated_rows,
            index_config=f"postgres-fts text_config={self._settings().text_config} rank=ts_rank_cd",
            diagnostics=diagnostics,
        )

    async def shutdown(self) -> None:  # type: ignore[override]
        if self.pool is not None:
            await self.pool.close()

    # -- plumbing --------------------------------------------------------------------

    def _settings(self) -> PostgresSettings:
        if self.settings is None:
            raise RpcError(ErrorCode.invalid_request, "recall/initialize has not completed")
        return self.settings

    def _pool(self) -> ConnectionPool:
        if self.pool is None:
            raise RpcError(ErrorCode.source_unavailable, self.missing_secret or "not initialized")
        return self.pool

    async def _run(self, statement: Any, deadline: datetime, doing: str) -> Any:
        try:
            return await self._pool().run(
                statement, timeout_ms=_statement_timeout_ms(deadline), doing=f"source {self.source_id}: {doing}"
            )
        except SourceProblem as problem:
            if problem.kind is ProblemKind.unreachable or problem.kind is ProblemKind.misconfigured:
                self._schema = None  # the next request looks again
            raise problem.rpc() from None

    async def _request_schema(self, deadline: datetime) -> SchemaReport:
        try:
            return await self._checked_schema(deadline)
        except SourceProblem as problem:
            raise problem.rpc() from None

    async def _checked_schema(self, deadline: datetime) -> SchemaReport:
        """The mapping checked against the relation, at most once a minute: a warm adapter's
        health probe, made before every query, then costs the database nothing. A search
        that finds the server gone or the mapping broken clears it, so the next probe looks."""
        fresh = time.monotonic() - self._schema_checked < SCHEMA_RECHECK_S
        if self._schema is not None and fresh:
            return self._schema
        settings = self._settings()
        label = f"source {self.source_id}: checking {settings.relation_name}"
        report = await self._pool().run(
            lambda cursor: inspect_schema(cursor, settings, reuse=self._schema),
            timeout_ms=_statement_timeout_ms(deadline),
            doing=label,
        )
        self._schema, self._schema_checked = report, time.monotonic()
        return report


def _statement_timeout_ms(deadline: datetime) -> int:
    """Milliseconds a statement may run: the time left, less a margin for the reply."""
    left_ms = (deadline - datetime.now(UTC)).total_seconds() * 1000
    if left_ms <= 1:
        raise RpcError(ErrorCode.deadline_exceeded, "deadline exceeded before the search started")
    return min(MAX_STATEMENT_TIMEOUT_MS, max(1, int(left_ms - min(100.0, left_ms * 0.1))))


def _exact_keys(query: str, category: str) -> list[str]:
    """The query, and identifiers inside it, that could be a row's key."""
    wanted = [query.strip(), *stable_identifiers(query)] if query.strip() else []
    return [key for key in dict.fromkeys(wanted) if _fits(key, category)][:MAX_EXACT_KEYS]


def _fits(key: str, category: str) -> bool:
    """Whether ``key`` is a value of a key column in type category ``category``."""
    if category == "S":
        return bool(key)
    if category == "N":
        return key.lstrip("-").isdigit() and len(key) <= 18
    if category == "U":  # uuid is the user-defined type keys use
        try:
            uuid.UUID(key)
        except ValueError:
            return False
        return True
    return False


def _store_identity(dsn: str, settings: PostgresSettings) -> str:
    """Which rows this source reads, as a hash: server, database, relation, corpus."""
    from psycopg.conninfo import conninfo_to_dict

    try:
        info = conninfo_to_dict(dsn)
    except Exception:
        info = {"dsn": dsn}
    where = [str(info.get(k, "")) for k in ("host", "hostaddr", "port", "dbname", "service", "dsn")]
    blob = "\0".join([*where, settings.relation_name, settings.corpus or ""])
    return "postgres:" + hashlib.sha256(blob.encode()).hexdigest()[:16]

