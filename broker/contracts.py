"""The broker's contracts: request, response, candidate, report and plan models.

JSON field names and enum vocabularies match the reference broker's so that
programs reading ``recall --json`` or the HTTP API work against either. Wire
vocabulary shared with adapters (sensitivity, outcomes, match signals, detail
levels) is defined once in :mod:`adapter_sdk.vocabulary`, the broker's own in
:mod:`broker.vocabulary`; both are re-exported here.

Temporal verdicts (``verdict``, the ``superseded`` / ``expired`` /
``completed`` / ``not_yet_valid`` / ``not_yet_known`` suppression reasons,
``successor``, ``completed_at``, ``include_stale``, ``valid_at``) are this
broker's additions; they only ever add fields.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

from adapter_sdk.protocol import (
    AsOfSupport,
    Capability,
    DetailLevel,
    ExcerptKind,
    FreshnessMode,
    HealthResult,
    HealthStatus,
    IndexCoverage,
    Manifest,
    MatchSignal,
    RelevanceBasis,
    SearchOutcome,
    Sensitivity,
)
from adapter_sdk.protocol import Candidate as WireCandidate
from adapter_sdk.wire import Field, WireModel, dump_fields
from broker.vocabulary import (
    CORROBORATION_CAP,
    DEFAULT_EXPAND_BUDGET_BYTES,
    DEFAULT_FUSION_RESERVE_MS,
    DEFAULT_LATENCY_MS,
    DEFAULT_MAX_RESULTS,
    DEFAULT_RELEVANCE_FLOOR,
    DEFAULT_RESPONSE_TOKENS,
    DEFAULT_SOURCE_TIMEOUT_MS,
    LINEAGE_MAX_DEPTH,
    MAX_LATENCY_MS,
    MAX_LIMIT,
    NON_DEGRADING_REASONS,
    PER_SOURCE_LIMIT,
    PRIOR_RANGE,
    RANK_CONSTANT,
    SHOWN_VERDICTS,
    VERDICT_DEFINITIONS,
    Clock,
    Coverage,
    Mode,
    OmittedPart,
    Outcome,
    QueryClass,
    SkipReason,
    SuppressionReason,
    Surface,
    TimeoutBudget,
    Verdict,
)

# vocabulary re-exported so callers import contracts from one place
__all__ = [
    "AsOfSupport", "CORROBORATION_CAP", "Capability", "Clock", "Coverage",
    "DEFAULT_EXPAND_BUDGET_BYTES", "DEFAULT_FUSION_RESERVE_MS", "DEFAULT_LATENCY_MS",
    "DEFAULT_MAX_RESULTS", "DEFAULT_RELEVANCE_FLOOR", "DEFAULT_RESPONSE_TOKENS",
    "DEFAULT_SOURCE_TIMEOUT_MS", "DetailLevel", "ExcerptKind", "FreshnessMode", "HealthResult",
    "HealthStatus", "IndexCoverage", "LINEAGE_MAX_DEPTH", "MAX_LATENCY_MS", "MAX_LIMIT", "Manifest",
    "MatchSignal", "Mode", "NON_DEGRADING_REASONS", "OmittedPart", "Outcome", "PER_SOURCE_LIMIT",
    "PRIOR_RANGE", "QueryClass", "RANK_CONSTANT", "RelevanceBasis", "SHOWN_VERDICTS",
    "SearchOutcome", "Sensitivity", "SkipReason", "SuppressionReason", "Surface", "TimeoutBudget",
    "VERDICT_DEFINITIONS", "Verdict"
]

# ---------------------------------------------------------------------------
# Request


class Model(WireModel):
    """Base of the broker's models: validated on construction, unknown fields refused."""

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)


class Scope(Model):
    source_ids: list[str] | None = None
    record_types: list[str] | None = None
    since: datetime | None = None
    until: datetime | None = None
    entities: list[str] | None = None
    project: str | None = None


class Budget(Model):
    """Bounds are request rules, checked in :mod:`broker.requests`."""

    latency_ms: int = 0
    response_tokens: int = 0
    surface: Surface = Surface.structured


class QueryRequest(Model):
    """A question's shape; what makes one servable is decided in :mod:`broker.requests`."""

    query: str
    profile: str = ""
    scope: Scope = Field(default_factory=Scope)
    as_of: datetime | None = None
    """Transaction time: answer from what the sources held at this instant."""
    valid_at: datetime | None = None
    """Valid time: judge verdicts at this instant (default ``as_of``, else now)."""
    context: list[str] | None = None
    conversation_id: str | None = None
    request_id: str | None = None
    suppress_lineages: list[str] | None = None
    mode: Mode = Mode.explicit
    budget: Budget = Field(default_factory=Budget)
    limit: int = 0
    include_stale: bool = False


# ---------------------------------------------------------------------------
# Response

FieldValue = TypeVar("FieldValue")


class _FromWire(Generic[FieldValue]):
    """One field of a candidate's wire record, read and written as the candidate's own.

    What the type checker sees. As the class is made it puts in its own place a property
    over :func:`operator.attrgetter`, which reads at C speed: fusion reads thousands of
    candidate fields a query, and a descriptor written in Python made it slower.
    """

    def __set_name__(self, owner: type, name: str) -> None:
        if name not in WireCandidate._fields:
            raise TypeError(f"{owner.__name__}.{name} names no field of the wire candidate")
        reader = attrgetter(f"wire.{name}")
        setattr(owner, name, property(reader, lambda c, value: setattr(c.wire, name, value)))

    if TYPE_CHECKING:

        @overload
        def __get__(self, candidate: None, owner: type) -> _FromWire[FieldValue]: ...
        @overload
        def __get__(self, candidate: Candidate, owner: type) -> FieldValue: ...
        def __get__(self, candidate: Candidate | None, owner: type) -> Any: ...
        def __set__(self, candidate: Candidate, value: FieldValue) -> None: ...


class Candidate(Model):
    """A candidate after admission: the adapter's record, and what the broker stamps on it.

    ``wire`` is the record as admitted (its locator's source part the configured source
    id, its text sanitized, its sensitivity raised to the source's floor); the fields the
    broker reads are spelled below as the candidate's own. Dumped and validated flat, as
    ``--json`` prints a candidate: the wire fields in their order, the source identity in
    place of the adapter's empty one, ``project_file`` last.
    """

    wire: WireCandidate
    source_uid: str
    source_id: str
    project_file: str | None = None
    """The project file (``recall.toml``) that added this candidate's source; ``None`` for
    the user's own sources. Stamped by the broker, never taken from an adapter."""

    candidate_id = _FromWire[str]()
    source_record_id = _FromWire[str]()
    locator = _FromWire[str]()
    derived_from = _FromWire[list[str] | None]()
    record_type = _FromWire[str]()
    title = _FromWire[str]()
    excerpt = _FromWire[str | None]()
    excerpt_kind = _FromWire[ExcerptKind | None]()
    local_rank = _FromWire[int]()
    local_score = _FromWire[float | None]()
    relevance = _FromWire[float | None]()
    match_signals = _FromWire[list[MatchSignal] | None]()
    observed_at = _FromWire[datetime | None]()
    confirmed_at = _FromWire[datetime | None]()
    event_time = _FromWire[datetime | None]()
    valid_from = _FromWire[datetime | None]()
    valid_to = _FromWire[datetime | None]()
    source_revision = _FromWire[str | None]()
    sensitivity = _FromWire[Sensitivity]()
    metadata = _FromWire[dict[str, Any] | None]()
    content_fingerprint = _FromWire[str | None]()

    @property
    def local_part(self) -> str:
        return self.locator.split(":", 1)[1]

    @property
    def persisted_locator(self) -> str:
        """``<source_uid>:<local>``: the form lineage roots and judgments use."""
        return f"{self.source_uid}:{self.local_part}"

    def model_dump(
        self,
        *,
        mode: str = "python",
        exclude_none: bool = False,
        exclude: set[str] | None = None,
    ) -> dict[str, Any]:
        flat = {
            **self.wire.__dict__,
            "source_uid": self.source_uid,
            "source_id": self.source_id,
            "project_file": self.project_file,
        }
        return dump_fields(flat, mode=mode, exclude_none=exclude_none, exclude=exclude)

    def model_copy(self, *, update: dict[str, Any] | None = None, deep: bool = False) -> Any:
        """A copy with its own wire record; ``update`` takes stamped and wire fields alike."""
        stamped, record = _split_flat(update or {})
        copy = super().model_copy(update=stamped, deep=deep)
        copy.wire = copy.wire.model_copy(update=record)
        return copy

    @classmethod
    def _validated(
        cls, data: dict[Any, Any], loc: tuple[Any, ...], problems: list[dict[str, Any]]
    ) -> dict[str, Any]:
        stamped, record = _split_flat(data)
        found = len(problems)
        values = super()._validated({"wire": record, **stamped}, loc, problems)
        depth = len(loc)
        for problem in problems[found:]:  # located at the flat key, as the input spells it
            if problem["loc"][depth : depth + 1] == ("wire",):
                problem["loc"] = (*loc, *problem["loc"][depth + 1 :])
        return values


_STAMPED = frozenset(Candidate._fields) - {"wire"}
"""The flat candidate's keys the broker stamps; every other key is the wire record's."""


def _split_flat(flat: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A flat candidate's values parted: the stamped ones, the wire record's."""
    stamped = {name: value for name, value in flat.items() if name in _STAMPED}
    record = {name: value for name, value in flat.items() if name not in _STAMPED}
    return stamped, record


class Member(Model):
    lineage_root: str
    candidates: list[Candidate]


class Prior(Model):
    base: float
    intent: float
    rule: str | None = None
    effective: float


class Corroboration(Model):
    independent_units: int
    sources: list[str]
    cap: float
    cap_applied: bool


class Freshness(Model):
    mode: str | None = None
    source_revision: str | None = None
    index_generation: str | None = None
    index_model: str | None = None
    index_config: str | None = None
    observed_at: datetime | None = None
    confirmed_at: datetime | None = None
    as_of_honored: str | None = None


class Reranker(Model):
    used: bool = False
    model: str | None = None
    delta: float | None = None
    rank_before: int | None = None


class LegRank(Model):
    """One source's rank of a record, among the sources that search its location."""

    source_id: str
    local_rank: int


class FolderRank(Model):
    """Where two sources search one location (the notes source and its meaning leg):
    each one's rank of the record, and its rank in the location's one fused list,
    the place whose score cross-source fusion gave it."""

    location: str
    legs: list[LegRank]
    rank: int


class TemporalExplanation(Model):
    """The verdict, the clock that decided it, and the inputs it was decided from."""

    verdict: Verdict
    clock: Clock = Clock.valid_time
    evaluated_at: datetime
    """The valid-time instant."""
    known_at: datetime | None = None
    """The transaction-time instant (the request's ``as_of``); absent: the sources as they are."""
    recorded_at: datetime | None = None
    """When the source recorded the record (its ``event_time``), read on the transaction clock."""
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    superseded_by: str | None = None
    supersedes: list[str] | None = None
    claimed_by: list[str] | None = None
    """``ambiguous_supersession``: the successors that each claim to replace the record."""
    note: str | None = None


class Explanation(Model):
    source_uid: str
    source_id: str
    local_rank: int
    local_pool_size: int
    match_signals: list[MatchSignal] = Field(default_factory=list)
    prior: Prior
    relevance: float | None = None
    lineage_root: str
    corroboration: Corroboration
    freshness: Freshness = Field(default_factory=Freshness)
    reranker: Reranker = Field(default_factory=Reranker)
    folder: FolderRank | None = None
    exact_promoted: bool = False
    score: float
    rank_constant: int = RANK_CONSTANT
    temporal: TemporalExplanation | None = None


class Result(Model):
    primary: Candidate
    members: list[Member]
    explanation: Explanation
    score: float
    verdict: Verdict | None = None


class TimeoutDetail(Model):
    budget: TimeoutBudget
    limit_ns: int | None = None
    deadline: datetime | None = None
    catching_up: str | None = None  # the source's index was behind: what it said, what to run


class SourceReport(Model):
    source_uid: str
    source_id: str
    outcome: SearchOutcome
    reason: str | None = None
    candidates: int = 0
    elapsed_ns: int = 0
    cold_start_ns: int | None = None
    source_watermark: str | None = None
    index_generation: str | None = None
    confirmed_at: datetime | None = None
    diagnostics: dict[str, Any] | None = None
    timeout: TimeoutDetail | None = None

    @property
    def degrades(self) -> bool:
        """Whether this source's part leaves coverage incomplete."""
        if self.outcome == SearchOutcome.skipped:
            return self.reason not in NON_DEGRADING_REASONS
        return self.outcome != SearchOutcome.success


class SourceSummary(Model):
    sources: int
    outcomes: dict[str, int]
    degraded: list[str] = Field(default_factory=list)


class PlanSource(Model):
    source_uid: str
    source_id: str
    relevance_basis: RelevanceBasis | None = None
    eligible: bool
    reason: str | None = None
    diagnostics: dict[str, Any] | None = None
    limit: int = PER_SOURCE_LIMIT
    timeout_ns: int = 0
    prior: float = 1.0


class Plan(Model):
    profile: str
    sources: list[PlanSource] = Field(default_factory=list)
    deadline: datetime
    fusion_reserve_ns: int
    limit: int
    rank_constant: int = RANK_CONSTANT
    corroboration_cap: float = CORROBORATION_CAP
    relevance_floor: float
    evaluated_at: datetime | None = None


class Suppression(Model):
    """Evidence found and withheld. ``count`` is in candidates for the reference's
    reasons, in records for the temporal verdicts (a note's four sections are one
    superseded note)."""

    reason: SuppressionReason
    count: int
    lineage_root: str | None = None
    fused_into: str | None = None
    successor: str | None = None
    completed_at: datetime | None = None
    """For ``completed``: when the record was done."""


class QueryResponse(Model):
    results: list[Result] = Field(default_factory=list)
    source_outcomes: list[SourceReport] | None = Field(default_factory=list)
    source_summary: SourceSummary | None = None
    plan: Plan
    suppressed: list[Suppression] = Field(default_factory=list)
    omitted: list[OmittedPart] = Field(default_factory=list)
    outcome: Outcome
    coverage: Coverage
    truncated: bool = False
    dropped_results: int = 0
    elapsed_ns: int = 0
    temporal_problems: list[str] | None = None

    def to_json(self) -> dict[str, Any]:
        data = self.model_dump(mode="json", exclude_none=True)
        if not data.get("omitted"):
            data.pop("omitted", None)
        if not data.get("dropped_results"):
            data.pop("dropped_results", None)
        return data


# ---------------------------------------------------------------------------
# Expand, refresh


class ExpandRequest(Model):
    locator: str
    detail: DetailLevel = DetailLevel.excerpt
    budget_bytes: int = Field(default=0, ge=0)
    deadline: datetime | None = None
    profile: str = ""


class ExpandResponse(Model):
    content: str
    source_revision: str | None = None
    truncated: bool = False
    truncation_boundary: str | None = None
    provenance: str | None = None


class RefreshStatus(StrEnum):
    refreshed = "refreshed"
    degraded = "degraded"
    skipped = "skipped"
    failed = "failed"


class RefreshOutcome(StrEnum):
    refreshed = "refreshed"
    degraded = "degraded"
    failed = "failed"


class RefreshRequest(Model):
    profile: str = ""
    source_id: str | None = None
    full: bool = False


class SourceRefresh(Model):
    source_id: str
    source_uid: str | None = None
    status: RefreshStatus
    reason: str | None = None
    health: HealthResult | None = None
    diagnostic_detail: str | None = None
    elapsed_ns: int | None = None


class RefreshResponse(Model):
    outcome: RefreshOutcome
    sources: list[SourceRefresh]
    elapsed_ns: int = 0


# ---------------------------------------------------------------------------
# Sources


class SourceState(StrEnum):
    """One row of ``recall sources``: a health status, or why there is none."""

    healthy = "healthy"
    degraded = "degraded"
    unavailable = "unavailable"
    denied = "denied"
    error = "error"  # the probe itself failed: no manifest or no health answer
    disabled = "disabled"
    not_probed = "not_probed"  # outside the profile or above its ceiling: never contacted


USABLE_STATES = frozenset({SourceState.healthy, SourceState.degraded})


class ListingStatus(StrEnum):
    """The listing as a whole, decided once for every surface (``broker.status``).

    ``ok``: every probed source is healthy (or none was probed). ``degraded``:
    some probed source is not. ``failed``: every probed source is unusable.
    """

    ok = "ok"
    degraded = "degraded"
    failed = "failed"


class SourceRow(Model):
    source_uid: str
    source_id: str
    adapter: str
    enabled: bool
    in_profile: bool
    location: str | None = None
    sensitivity: Sensitivity
    permitted: bool
    freshness_mode: str | None = None
    freshness_policy: str | None = None
    base_prior: float | None = None
    intent_priors: dict[str, float] | None = None
    record_types: list[str] | None = None
    timeout_ms: int
    probed: bool = False
    status: SourceState
    adapter_id: str | None = None
    display_name: str | None = None
    capabilities: list[str] | None = None
    query_modes: list[str] | None = None
    as_of_support: str | None = None
    derives_from: str | None = None
    executable_requirements: list[dict[str, Any]] | None = None
    health: HealthResult | None = None
    error: str | None = None

    @property
    def unusable(self) -> bool:
        """Probed, and could not answer a search now."""
        return self.probed and self.status not in USABLE_STATES


class SourcesResponse(Model):
    profile: str
    max_sensitivity: Sensitivity
    status: ListingStatus
    sources: list[SourceRow] = Field(default_factory=list)

    @property
    def unusable(self) -> list[SourceRow]:
        return [row for row in self.sources if row.unusable]
