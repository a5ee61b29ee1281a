"""What fusion is given and what it returns. Everything it reads arrives here."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from broker.contracts import (
    CORROBORATION_CAP,
    DEFAULT_MAX_RESULTS,
    DEFAULT_RELEVANCE_FLOOR,
    RANK_CONSTANT,
    Mode,
    QueryClass,
    Result,
    Suppression,
)


@dataclass(frozen=True)
class SourceFacts:
    """The configuration and manifest facts fusion knows about one source."""

    source_uid: str
    source_id: str
    base_prior: float
    intent_priors: Mapping[str, float]
    derives_from_uid: str | None
    """Manifest ``derives_from``, already resolved to a uid (``None`` if unknown)."""
    location_key: str | None
    """Resolved location, for the location-record cluster key."""
    pool_size: int
    """Candidates that source returned."""


@dataclass(frozen=True)
class FusionParams:
    """What fusion needs from the request and the plan."""

    query: str
    evaluated_at: datetime
    """Valid time: the request's ``valid_at``, else its ``as_of``, else the moment it is served (aware UTC)."""
    known_at: datetime | None = None
    """Transaction time: the request's ``as_of``; ``None`` judges the sources as they are."""
    relevance_floor: float = DEFAULT_RELEVANCE_FLOOR
    limit: int = DEFAULT_MAX_RESULTS
    """0 means unbounded."""
    mode: Mode = Mode.explicit
    suppress_lineages: frozenset[str] = frozenset()
    include_stale: bool = False
    rank_constant: int = RANK_CONSTANT
    corroboration_cap: float = CORROBORATION_CAP


@dataclass
class FusionOutput:
    """What fusion returns: results, what it withheld, and what the limit dropped."""

    results: list[Result] = field(default_factory=list)
    """Ordered; explanations complete except ``freshness`` beyond what candidates carry."""
    suppressed: list[Suppression] = field(default_factory=list)
    """Fusion's withheld clusters, sorted by (reason, lineage_root)."""
    dropped_results: int = 0
    truncated: bool = False
    query_class: QueryClass | None = None
    missing_successors: list[str] = field(default_factory=list)
    """Display locators named as successors that were not in the pool."""
    temporal_problems: list[str] = field(default_factory=list)
    """Supersession cycles and ambiguous successors, human-readable."""
