"""The broker's contracts: request, response, candidate, report and plan models.

JSON field names and enum vocabularies match the reference broker's so that
programs reading ``recall --json`` or the HTTP API work against either. Wire
vocabulary shared with adapters (sensitivity, outcomes, match signals, detail
levels) is defined once in :mod:`adapter_sdk.vocabulary`, the broker's own in
:mod:`broker.vocabulary`; both are re-exported here, so callers import every
contract from this one place.

Temporal verdicts (``verdict``, the ``superseded`` / ``expired`` /
``completed`` / ``not_yet_valid`` / ``not_yet_known`` suppression reasons,
``successor``, ``completed_at``, ``include_stale``, ``valid_at``) are this
broker's additions; they only ever add fields.

One module an exchange:

- :mod:`~broker.contracts.model`: ``Model``, the base of every model here
- :mod:`~broker.contracts.query_request`: the question, its scope and budget
- :mod:`~broker.contracts.candidate`: a candidate after admission
- :mod:`~broker.contracts.explanation`: why a result ranks where it does
- :mod:`~broker.contracts.query_plan`: the sources a query asks, under which deadlines
- :mod:`~broker.contracts.query_response`: results, source reports, suppressions, outcome
- :mod:`~broker.contracts.expansion`: ``recall expand``
- :mod:`~broker.contracts.source_refresh`: ``recall refresh``
- :mod:`~broker.contracts.source_listing`: ``recall sources``
"""

from __future__ import annotations

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
from broker.contracts.candidate import Candidate
from broker.contracts.expansion import ExpandRequest, ExpandResponse
from broker.contracts.explanation import (
    Corroboration,
    Explanation,
    FolderRank,
    Freshness,
    LegRank,
    Prior,
    Reranker,
    TemporalExplanation,
)
from broker.contracts.model import Model
from broker.contracts.query_plan import Plan, PlanSource
from broker.contracts.query_request import Budget, QueryRequest, Scope
from broker.contracts.query_response import (
    Member,
    QueryResponse,
    Result,
    SourceReport,
    SourceSummary,
    Suppression,
    TimeoutDetail,
)
from broker.contracts.source_listing import (
    USABLE_STATES,
    ListingStatus,
    SourceRow,
    SourcesResponse,
    SourceState,
)
from broker.contracts.source_refresh import (
    RefreshOutcome,
    RefreshRequest,
    RefreshResponse,
    RefreshStatus,
    SourceRefresh,
)
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

__all__ = [
    # the base of the models below
    "Model",
    # a query: the question, the plan that answers it, the answer
    "Budget",
    "QueryRequest",
    "Scope",
    "Plan",
    "PlanSource",
    "Candidate",
    "Member",
    "Result",
    "QueryResponse",
    "SourceReport",
    "SourceSummary",
    "Suppression",
    "TimeoutDetail",
    # why a result ranks where it does
    "Corroboration",
    "Explanation",
    "FolderRank",
    "Freshness",
    "LegRank",
    "Prior",
    "Reranker",
    "TemporalExplanation",
    # recall expand
    "ExpandRequest",
    "ExpandResponse",
    # recall refresh
    "RefreshOutcome",
    "RefreshRequest",
    "RefreshResponse",
    "RefreshStatus",
    "SourceRefresh",
    # recall sources
    "ListingStatus",
    "SourceRow",
    "SourceState",
    "SourcesResponse",
    "USABLE_STATES",
    # the wire vocabulary shared with adapters (adapter_sdk.protocol)
    "AsOfSupport",
    "Capability",
    "DetailLevel",
    "ExcerptKind",
    "FreshnessMode",
    "HealthResult",
    "HealthStatus",
    "IndexCoverage",
    "Manifest",
    "MatchSignal",
    "RelevanceBasis",
    "SearchOutcome",
    "Sensitivity",
    # the broker's own vocabulary (broker.vocabulary): enumerations
    "Clock",
    "Coverage",
    "Mode",
    "OmittedPart",
    "Outcome",
    "QueryClass",
    "SkipReason",
    "SuppressionReason",
    "Surface",
    "TimeoutBudget",
    "Verdict",
    # and constants
    "CORROBORATION_CAP",
    "DEFAULT_EXPAND_BUDGET_BYTES",
    "DEFAULT_FUSION_RESERVE_MS",
    "DEFAULT_LATENCY_MS",
    "DEFAULT_MAX_RESULTS",
    "DEFAULT_RELEVANCE_FLOOR",
    "DEFAULT_RESPONSE_TOKENS",
    "DEFAULT_SOURCE_TIMEOUT_MS",
    "LINEAGE_MAX_DEPTH",
    "MAX_LATENCY_MS",
    "MAX_LIMIT",
    "NON_DEGRADING_REASONS",
    "PER_SOURCE_LIMIT",
    "PRIOR_RANGE",
    "RANK_CONSTANT",
    "SHOWN_VERDICTS",
    "VERDICT_DEFINITIONS",
]
