"""Protocol v1 vocabulary: enumerations, error codes and method names.

Plain enums with no dependencies, so code that only needs a name (such as
configuration reading a sensitivity) does not pay for the payload models.
"""

from __future__ import annotations

from enum import IntEnum, StrEnum

PROTOCOL_VERSION_MIN = 1
PROTOCOL_VERSION_MAX = 1
MAX_FRAME_BYTES = 8 << 20
JSONRPC = "2.0"

class QueryMode(StrEnum):
    exact = "exact"
    lexical = "lexical"
    semantic = "semantic"
    structured = "structured"
    temporal = "temporal"


class FreshnessMode(StrEnum):
    live = "live"
    indexed = "indexed"
    hybrid = "hybrid"


class AsOfSupport(StrEnum):
    none = "none"
    filter = "filter"
    snapshot = "snapshot"


class RelevanceBasis(StrEnum):
    lexical_span = "lexical_span"
    vector_similarity = "vector_similarity"


class Capability(StrEnum):
    search = "search"
    expand = "expand"
    enumerate = "enumerate"
    checkpoint = "checkpoint"
    context_expansion = "context_expansion"


class Sensitivity(StrEnum):
    """Ordered scale: public < internal < confidential < restricted."""

    public = "public"
    internal = "internal"
    confidential = "confidential"
    restricted = "restricted"

    @property
    def level(self) -> int:
        return _SENSITIVITY_ORDER[self]

    def __lt__(self, other: object) -> bool:  # type: ignore[override]
        if not isinstance(other, Sensitivity):
            return NotImplemented
        return self.level < other.level

    def __le__(self, other: object) -> bool:  # type: ignore[override]
        if not isinstance(other, Sensitivity):
            return NotImplemented
        return self.level <= other.level

    def __gt__(self, other: object) -> bool:  # type: ignore[override]
        if not isinstance(other, Sensitivity):
            return NotImplemented
        return self.level > other.level

    def __ge__(self, other: object) -> bool:  # type: ignore[override]
        if not isinstance(other, Sensitivity):
            return NotImplemented
        return self.level >= other.level


_SENSITIVITY_ORDER = {
    Sensitivity.public: 0,
    Sensitivity.internal: 1,
    Sensitivity.confidential: 2,
    Sensitivity.restricted: 3,
}


class MatchSignal(StrEnum):
    exact_identifier = "exact_identifier"
    lexical = "lexical"
    semantic = "semantic"
    field = "field"
    alias = "alias"


class DetailLevel(StrEnum):
    summary = "summary"
    excerpt = "excerpt"
    full = "full"
    context = "context"


class SearchOutcome(StrEnum):
    success = "success"
    partial = "partial"
    unavailable = "unavailable"
    denied = "denied"
    failed = "failed"
    timeout = "timeout"
    skipped = "skipped"


class AdapterSkipReason(StrEnum):
    """Reasons an adapter may give with outcome ``skipped`` (decided before retrieval)."""

    not_applicable = "not_applicable"
    filter_unsupported = "filter_unsupported"
    record_type_mismatch = "record_type_mismatch"
    as_of_unsupported = "as_of_unsupported"


class HealthStatus(StrEnum):
    healthy = "healthy"
    degraded = "degraded"
    unavailable = "unavailable"
    denied = "denied"


class IndexCoverage(StrEnum):
    complete = "complete"
    partial = "partial"
    unknown = "unknown"


class CheckpointProgress(StrEnum):
    advanced = "advanced"
    unchanged = "unchanged"
    regressed = "regressed"


class ExcerptKind(StrEnum):
    matched = "matched"
    preview = "preview"


class ErrorCode(IntEnum):
    """JSON-RPC error codes: the standard block and protocol v1's own block."""

    parse_error = -32700
    invalid_request = -32600
    method_not_found = -32601
    invalid_params = -32602
    internal_error = -32603
    source_unavailable = -32000
    source_denied = -32001
    locator_unknown = -32002
    locator_expired = -32003
    source_not_configured = -32004
    as_of_unsupported = -32005
    budget_exceeded = -32006
    deadline_exceeded = -32007


class Method(StrEnum):
    initialize = "recall/initialize"
    search = "recall/search"
    expand = "recall/expand"
    health = "recall/health"
    refresh = "recall/refresh"
    cancel = "recall/cancel"
    shutdown = "recall/shutdown"
