"""The eventstore adapter: Polign Recall's folded beliefs through its own read-only MCP server.

Polign folds every pair itself at the request's ``as_of``; this adapter never
replays events. By default it runs Polign's ``recall mcp -typed`` without
``-write`` (the tool list is checked: a server offering remember or forget is
refused), one subprocess per adapter process, started on first use and
restarted after it dies. With transport ``serve`` it calls the same tools on a
running ``recall serve`` over HTTP with a Recall key; such keys always reach
the writing tools too (Polign 0.23 has no read-only key), which this adapter
never calls.
"""

from __future__ import annotations

import os
import threading
import time
from datetime import UTC, datetime
from typing import Any

from adapter_sdk import (
    PROTOCOL_VERSION_MAX,
    Adapter,
    AdapterSkipReason,
    AsOfSupport,
    Capability,
    ErrorCode,
    ExecutableRequirement,
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
    log,
)
from adapter_sdk.lexical import analyze_query
from adapters.eventstore.beliefs import (
    RECORD_BELIEF,
    RECORD_NOTE,
    MalformedBelief,
    PairLocator,
    to_candidates,
)
from adapters.eventstore.binary import BinaryUnavailable, PolignBinary, find_polign_server, locate
from adapters.eventstore.history import render
from adapters.eventstore.identity import StoreGuard, StoreRefused
from adapters.eventstore.mcp_http import McpHttpSession
from adapters.eventstore.mcp_stdio import (
    AccessDenied,
    CallTimedOut,
    McpFailure,
    McpStdioSession,
    ServerExited,
    ToolRefused,
)
from adapters.eventstore.settings import SETTINGS_SCHEMA, EventStoreSettings, parse_settings

ADAPTER_ID = "recall-eventstore/1"
SENSITIVITY = Sensitivity.internal
RECORD_TYPES = (RECORD_BELIEF, RECORD_NOTE)
POLIGN_MAX_LIMIT = 1000
REQUIRED_TOOLS = frozenset({"recall", "memory_history", "list_predicates"})
WRITING_TOOLS = frozenset({"remember", "forget"})
STARTUP_TIMEOUT_S = 10.0
HEALTH_PROBE_PAIR = {"subject": "recall-eventstore health probe", "predicate": "note"}

# Variables through which the environment could point Polign's binary at some
# other database than the configured one; the child never inherits them.
_DATABASE_VARS = (
    "RECALL_BACKEND",
    "RECALL_BACKEND_URL",
    "RECALL_BACKEND_KEY",
    "RECALL_COLLECTION",
    "RECALL_PREDICATES",
    "RECALL_HOME",
    "POLIGN_URL",
    "POLIGN_API_KEY",
    "POLIGN_COLLECTION",
    "POLIGN_PREDICATES",
    "DATABASE_URL",
    "PGPASSWORD",
    "MONGODB_URI",
    "MONGODB_PASSWORD",
    "QDRANT_URL",
    "QDRANT_API_KEY",
)
_UNREACHABLE_MARKERS = (
    "connection refused",
    "dial tcp",
    "no such host",
    "i/o timeout",
    "connection reset",
    "context deadline exceeded",
    "server closed",
    "tls:",
)
_DENIED_MARKERS = ("unauthorized", "forbidden", "permission denied", "(http 401)", "(http 403)")


class EventStoreAdapter(Adapter):
    def __init__(self) -> None:
        self._settings: EventStoreSettings | None = None
        self._source_id = ""
        self._binary: PolignBinary | None = None
        self._server_dir: str | None = None
        self._binary_problem = ""
        self._session: McpStdioSession | McpHttpSession | None = None
        self._session_lock = threading.Lock()
        self._startup_ms: float | None = None
        self._guard: StoreGuard | None = None

    # -- protocol handlers -------------------------------------------------

    def initialize(self, params: InitializeParams) -> Manifest:
        settings = parse_settings(params.location, params.settings, params.base_dir)
        self._settings, self._source_id = settings, params.source_id
        if settings.transport == "mcp" and settings.backend == "local":
            self._guard = StoreGuard(settings.location, params.workdir)
        requirements = None
        if settings.transport == "mcp":
            try:
                self._binary = locate(settings.polign_binary)
                self._server_dir = find_polign_server(settings.polign_server, self._binary)
            except BinaryUnavailable as exc:
                self._binary_problem = str(exc)
                log(f"eventstore: {exc}")
            command = self._binary.path if self._binary else settings.polign_binary or "recall"
            requirements = [
                ExecutableRequirement(
                    name="polign-recall",
                    command=command,
                    purpose="Polign Recall's own binary, run as `recall mcp -typed` (read-only)",
                )
            ]
        return Manifest(
            protocol_version=PROTOCOL_VERSION_MAX,
            adapter_id=ADAPTER_ID,
            display_name="Polign Recall event store",
            record_types=list(RECORD_TYPES),
            query_modes=[QueryMode.lexical, QueryMode.temporal],
            freshness_modes=[FreshnessMode.live],
            as_of_support=AsOfSupport.snapshot,
            relevance_basis=RelevanceBasis.lexical_span,
            capabilities=[Capability.search, Capability.expand],
            sensitivity=SENSITIVITY,
            freshness_policy="live: every search asks Polign Recall, which folds each belief "
            "from its complete history at the request's as_of (observation time)",
            settings_schema=SETTINGS_SCHEMA,
            executable_requirements=requirements,
        )

    def search(self, params: SearchParams) -> SearchResult:
        skipped = _skip_reason(params)
        if skipped is not None:
            reason, diagnostics = skipped
            return SearchResult(
                candidates=[], outcome=SearchOutcome.skipped, reason=reason, diagnostics=diagnostics
            )
        if params.limit == 0:
            return SearchResult(candidates=[], outcome=SearchOutcome.success)
        as_of = _rfc3339(params.as_of) if params.as_of else None
        arguments: dict[str, Any] = {
            "query": params.query,
            "limit": min(params.limit, POLIGN_MAX_LIMIT),
            "with_sources": True,
        }
        if as_of:
            arguments["as_of"] = as_of
        if params.filters.since:
            arguments["observed_after"] = _rfc3339(params.filters.since)
        if params.filters.until:
            arguments["observed_before"] = _rfc3339(params.filters.until)
        beliefs = self._call("recall", arguments, params.deadline) or []
        if not isinstance(beliefs, list):
            raise RpcError(ErrorCode.internal_error, "Polign's recall answered with a non-list")
        try:
            candidates = to_candidates(
                beliefs,
                self._source_id,
                analyze_query(params.query).content_terms,
                as_of,
                SENSITIVITY,
            )
        except MalformedBelief as exc:
            raise RpcError(
                ErrorCode.internal_error, f"Polign Recall answered a malformed belief: {exc}"
            ) from None
        wanted = params.filters.record_types
        if wanted:
            candidates = [c for c in candidates if c.record_type in wanted]
        superseded = sum(1 for c in candidates if c.metadata and "superseded_by" in c.metadata)
        return SearchResult(
            candidates=candidates,
            outcome=SearchOutcome.success,
            diagnostics={
                "as_of": as_of or _rfc3339(datetime.now(UTC)),
                "beliefs": len(candidates) - superseded,
                "superseded": superseded,
            },
        )

    def expand(self, params: ExpandParams) -> ExpandResult:
        local = params.locator.partition(":")[2]
        locator = PairLocator.parse(local)
        if locator is None:
            raise RpcError(
                ErrorCode.locator_unknown,
                f"{params.locator!r} is not an eventstore locator (<source>:<subject>/<predicate>#<event id>)",
            )
        events = (
            self._call(
                "memory_history",
                {"subject": locator.subject, "predicate": locator.predicate},
                params.deadline,
            )
            or []
        )
        if not isinstance(events, list):
            raise RpcError(
                ErrorCode.internal_error, "Polign's memory_history answered with a non-list"
            )
        if not any(isinstance(e, dict) and e.get("id") == locator.event_id for e in events):
            raise RpcError(
                ErrorCode.locator_expired,
                f"event {locator.event_id} is not in the history of {locator.subject}/{locator.predicate}",
            )
        rendered = render(locator, events, params.detail, params.budget_bytes)
        return ExpandResult(
            content=rendered.content,
            truncated=rendered.truncated,
            truncation_boundary="budget_bytes" if rendered.truncated else None,
            source_revision=str(events[-1].get("id") or "") or None,
            provenance=f"{locator.subject}/{locator.predicate}: {len(events)} events",
        )

    def health(self, params: HealthParams) -> HealthResult:
        diagnostics = self._identity()
        checked_at = datetime.now(UTC)
        try:
            self._call("memory_history", HEALTH_PROBE_PAIR, params.deadline)
        except RpcError as exc:
            reason = "store_refused" if isinstance(exc, StoreRefused) else "store_unreachable"
            if self._require_settings().transport == "mcp" and self._binary is None:
                reason = "binary_unavailable"
            status = (
                HealthStatus.denied
                if exc.code == ErrorCode.source_denied
                else HealthStatus.unavailable
            )
            diagnostics.update(reason=reason, message=exc.message)
            return HealthResult(
                status=status,
                checked_at=checked_at,
                coverage=IndexCoverage.unknown,
                diagnostics=diagnostics,
            )
        diagnostics.update(self._session_facts())
        try:
            predicates = self._call("list_predicates", {}, params.deadline)
            if not isinstance(predicates, list) or not predicates:
                raise RpcError(
                    ErrorCode.internal_error, "Polign's list_predicates answered no predicates"
                )
        except RpcError as exc:
            diagnostics.update(reason="registry_unreadable", message=exc.message)
            return HealthResult(
                status=HealthStatus.degraded,
                checked_at=checked_at,
                coverage=IndexCoverage.unknown,
                diagnostics=diagnostics,
            )
        diagnostics["predicates"] = len(predicates)
        return HealthResult(
            status=HealthStatus.healthy,
            checked_at=checked_at,
            coverage=IndexCoverage.complete,
            last_success_at=checked_at,
            diagnostics=diagnostics,
        )

    def shutdown(self) -> None:
        with self._session_lock:
            if self._session is not None:
                self._session.close()
                self._session = None

    # -- talking to Polign --------------------------------------------------

    def _call(self, tool: str, arguments: dict[str, Any], deadline: datetime) -> Any:
        """One tool call on the store the source last answered from (see :mod:`.identity`)."""
        identity = self._guard.check() if self._guard else None
        answer = self._call_tool(tool, arguments, deadline)
        if self._guard and identity is not None:
            if self._guard.check() != identity:  # replaced during the call: the answer is not its
                raise RpcError(ErrorCode.source_unavailable, f"Polign Recall store {self._guard.location} changed during {tool}")
            self._guard.answered(identity)
        return answer

    def _call_tool(self, tool: str, arguments: dict[str, Any], deadline: datetime) -> Any:
        """One tool call, with every failure turned into the protocol error it means."""
        session = self._open_session(deadline)
        try:
            return session.call_tool(tool, arguments, _seconds_until(deadline))
        except ToolRefused as exc:
            code = classify_refusal(exc.text)
            if code == ErrorCode.source_unavailable:
                self._drop(session)  # a fresh `recall mcp` restarts a local polign-server
                raise RpcError(
                    code, f"Polign Recall's store is unreachable ({tool}): {exc.text}"
                ) from None
            if code == ErrorCode.source_denied:
                raise RpcError(code, f"Polign Recall's store refused access ({tool})") from None
            raise RpcError(code, f"Polign Recall refused {tool}: {exc.text}") from None
        except AccessDenied:
            self._drop(session)
            raise RpcError(
                ErrorCode.source_denied, "Polign Recall refused the Recall key"
            ) from None
        except CallTimedOut as exc:
            self._drop(session)  # its state is unknown now
            raise RpcError(ErrorCode.deadline_exceeded, f"Polign Recall: {exc}") from None
        except ServerExited as exc:
            self._drop(session)
            raise RpcError(
                ErrorCode.source_unavailable,
                f"Polign's recall mcp died during {tool}: {exc}; it is restarted on the next request",
            ) from None
        except McpFailure as exc:
            self._drop(session)
            raise RpcError(
                ErrorCode.internal_error, f"Polign's recall mcp broke protocol: {exc}"
            ) from None

    def _open_session(self, deadline: datetime) -> McpStdioSession | McpHttpSession:
        with self._session_lock:
            if self._session is not None and self._session.alive:
                return self._session
            if self._session is not None:
                log(
                    f"eventstore: recall mcp (pid {self._session.pid}) had exited; starting another"
                )
                self._session.close()
                self._session = None
            started = time.monotonic()
            session = self._new_session()
            try:
                session.handshake(min(STARTUP_TIMEOUT_S, _seconds_until(deadline)))
                _check_surface(session, read_only=isinstance(session, McpStdioSession))
            except (McpFailure, RpcError) as exc:
                session.close()
                if isinstance(exc, RpcError):
                    raise
                code = ErrorCode.source_unavailable
                if isinstance(exc, CallTimedOut):
                    code = ErrorCode.deadline_exceeded
                elif isinstance(exc, AccessDenied):
                    code = ErrorCode.source_denied
                raise RpcError(code, f"Polign Recall did not answer the handshake: {exc}") from None
            self._startup_ms = round((time.monotonic() - started) * 1000, 1)
            self._session = session
            return session

    def _new_session(self) -> McpStdioSession | McpHttpSession:
        settings = self._require_settings()
        if settings.transport == "serve":
            key = os.environ.get(settings.api_key_env)
            if not key:
                raise RpcError(
                    ErrorCode.source_unavailable,
                    f"the Recall key for {settings.location} is missing: set {settings.api_key_env} "
                    "(setting api_key_env names the variable)",
                )
            return McpHttpSession(settings.location, key)
        if self._binary is None:
            raise RpcError(ErrorCode.source_unavailable, self._binary_problem)
        return McpStdioSession(self._argv(), self._child_env())

    def _drop(self, session: McpStdioSession | McpHttpSession) -> None:
        with self._session_lock:
            if self._session is session:
                self._session = None
        session.close(grace=0.5)

    def _argv(self) -> list[str]:
        settings = self._require_settings()
        assert self._binary is not None
        argv = [
            self._binary.path,
            "mcp",
            "-typed",
            "-backend",
            settings.backend,
            "-url",
            settings.location,
        ]
        if settings.collection:
            argv += ["-collection", settings.collection]
        if settings.predicates:
            argv += ["-predicates", settings.predicates]
        return argv

    def _child_env(self) -> dict[str, str]:
        settings = self._require_settings()
        env = {k: v for k, v in os.environ.items() if k not in _DATABASE_VARS}
        if settings.backend_key_env:
            key = os.environ.get(settings.backend_key_env)
            if not key:
                raise RpcError(
                    ErrorCode.source_unavailable,
                    f"setting backend_key_env names {settings.backend_key_env}, which is not set",
                )
            env["RECALL_BACKEND_KEY"] = key
        if self._server_dir:
            env["PATH"] = os.pathsep.join(filter(None, (self._server_dir, env.get("PATH"))))
        return env

    def _identity(self) -> dict[str, Any]:
        settings = self._require_settings()
        identity: dict[str, Any] = {
            "store_identity": settings.store_identity,
            "transport": settings.transport,
        }
        if settings.transport == "mcp":
            identity["backend"] = settings.backend
        if self._binary is not None:
            identity.update(polign_binary=self._binary.path, polign_version=self._binary.version)
        return identity

    def _session_facts(self) -> dict[str, Any]:
        session = self._session
        if session is None:
            return {}
        facts: dict[str, Any] = {"server_version": session.server_info.get("version", "")}
        if self._startup_ms is not None:
            facts["mcp_startup_ms"] = self._startup_ms
        return facts

    def _require_settings(self) -> EventStoreSettings:
        if self._settings is None:
            raise RpcError(
                ErrorCode.invalid_request, "recall/initialize has not configured a store"
            )
        return self._settings


def _check_surface(session: McpStdioSession | McpHttpSession, read_only: bool) -> None:
    """Only Polign's typed server will do, and one this adapter starts must be read-only."""
    missing = REQUIRED_TOOLS - session.tools
    if missing:
        raise RpcError(
            ErrorCode.source_unavailable,
            f"{session.argv[0]} lacks Polign's typed tools ({', '.join(sorted(missing))}); "
            "it is not Polign Recall 0.23 or later",
        )
    writable = WRITING_TOOLS & session.tools
    if read_only and writable:
        raise RpcError(
            ErrorCode.source_unavailable,
            f"{session.argv[0]} offers writing tools ({', '.join(sorted(writable))}); "
            "this adapter only uses Polign's read-only server",
        )


def _skip_reason(params: SearchParams) -> tuple[str, dict[str, Any]] | None:
    filters = params.filters
    unsupported = [name for name in ("entities", "project") if getattr(filters, name)]
    if unsupported:
        return AdapterSkipReason.filter_unsupported, {"unsupported_filters": unsupported}
    if filters.record_types and not set(filters.record_types) & set(RECORD_TYPES):
        return AdapterSkipReason.record_type_mismatch, {"record_types": list(RECORD_TYPES)}
    if not analyze_query(params.query).raw_terms:
        return AdapterSkipReason.not_applicable, {"why": "the query has no words to search for"}
    return None


def classify_refusal(text: str) -> ErrorCode:
    """Polign fails closed (incomplete history, registry mismatch): never an empty success."""
    lowered = text.lower()
    if any(marker in lowered for marker in _UNREACHABLE_MARKERS):
        return ErrorCode.source_unavailable
    if any(marker in lowered for marker in _DENIED_MARKERS):
        return ErrorCode.source_denied
    return ErrorCode.internal_error


def _rfc3339(instant: datetime) -> str:
    if instant.tzinfo is None:
        instant = instant.replace(tzinfo=UTC)
    return instant.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _seconds_until(deadline: datetime) -> float:
    if deadline.tzinfo is None:
        deadline = deadline.replace(tzinfo=UTC)
    return max((deadline - datetime.now(UTC)).total_seconds(), 0.0)
