"""The broker's vocabulary: constants and enumerations, free of any dependency.

Kept apart from the models in :mod:`broker.contracts` so that configuration and
the CLI can name an outcome or a query class without importing pydantic.
"""

from __future__ import annotations

from enum import StrEnum

RANK_CONSTANT = 60
CORROBORATION_CAP = 2.0
PRIOR_RANGE = (0.5, 2.0)
DEFAULT_RELEVANCE_FLOOR = 0.10
DEFAULT_MAX_RESULTS = 20
PER_SOURCE_LIMIT = 20
LINEAGE_MAX_DEPTH = 4
DEFAULT_LATENCY_MS = 5000
DEFAULT_SOURCE_TIMEOUT_MS = 2000
DEFAULT_FUSION_RESERVE_MS = 25
DEFAULT_RESPONSE_TOKENS = 8000
DEFAULT_EXPAND_BUDGET_BYTES = 65_536
MAX_LIMIT = 10_000
"""Largest result limit a request may set; more than fusion can ever return."""
MAX_LATENCY_MS = 86_400_000
"""Largest latency budget a request may set (one day); every source keeps its own timeout."""


# ---------------------------------------------------------------------------
# Vocabulary


class Outcome(StrEnum):
    answered = "answered"
    abstained = "abstained"
    failed = "failed"


class DiagnosisStatus(StrEnum):
    """``recall doctor``'s status as a whole: ``failed`` when a check failed, ``degraded``
    when none failed and one is degraded, else ``ok``."""

    ok = "ok"
    degraded = "degraded"
    failed = "failed"


class Coverage(StrEnum):
    complete = "complete"
    degraded = "degraded"


class Mode(StrEnum):
    explicit = "explicit"
    pre_reply = "pre_reply"


class Surface(StrEnum):
    """What a response-token budget is priced in."""

    structured = "structured"
    structured_pointer = "structured_pointer"
    tool = "tool"
    tool_explained = "tool_explained"
    pointer = "pointer"
    explained = "explained"


class QueryClass(StrEnum):
    identifier_query = "identifier_query"
    natural_language = "natural_language"


class SkipReason(StrEnum):
    """Why a source was not searched or how its search ended (report ``reason``)."""

    # planner exclusions
    out_of_scope = "out_of_scope"
    out_of_profile = "out_of_profile"
    disabled = "disabled"
    sensitivity_ceiling = "sensitivity_ceiling"
    unhealthy = "unhealthy"
    denied = "denied"
    as_of_unsupported = "as_of_unsupported"
    record_type_mismatch = "record_type_mismatch"
    budget_exhausted = "budget_exhausted"
    adapter_unavailable = "adapter_unavailable"
    store_identity_conflict = "store_identity_conflict"
    # adapter-stated skips
    not_applicable = "not_applicable"
    filter_unsupported = "filter_unsupported"
    skip_unstated = "skip_unstated"
    # classified search errors
    timeout = "timeout"
    cancelled = "cancelled"
    unreachable = "unreachable"
    budget_exceeded = "budget_exceeded"
    failed = "failed"


NON_DEGRADING_REASONS = frozenset(
    {
        SkipReason.out_of_scope,
        SkipReason.disabled,
        SkipReason.sensitivity_ceiling,
        SkipReason.record_type_mismatch,
        SkipReason.not_applicable,
    }
)


class SuppressionReason(StrEnum):
    sensitivity = "sensitivity"
    below_relevance_floor = "below_relevance_floor"
    lineage_suppressed = "lineage_suppressed"
    near_duplicate = "near_duplicate"
    diversity = "diversity"
    duplicate_view = "duplicate_view"
    superseded = "superseded"
    expired = "expired"
    completed = "completed"
    not_yet_valid = "not_yet_valid"
    not_yet_known = "not_yet_known"


class Verdict(StrEnum):
    """Temporal verdict of a cluster; :data:`VERDICT_DEFINITIONS` says what each means."""

    current = "current"
    superseded = "superseded"
    expired = "expired"
    completed = "completed"
    not_yet_valid = "not_yet_valid"
    not_yet_known = "not_yet_known"
    ambiguous_supersession = "ambiguous_supersession"


class Clock(StrEnum):
    """The time axis a verdict is judged on.

    ``valid_time``: what was true at an instant, by the authors' declarations
    (``valid_from`` / ``valid_to``, supersession dates), judged over what the
    sources hold now (``--valid-at``; default the ``as_of`` instant, else now).
    ``transaction_time``: what the sources held at an instant (``--as-of``): a
    record the source recorded later was not yet known then.
    """

    valid_time = "valid_time"
    transaction_time = "transaction_time"


VERDICT_DEFINITIONS: dict[Verdict, str] = {
    Verdict.current: (
        "nothing known at the instants asked about says the record stopped, or had not "
        "started, being true; as opposed to ambiguous_supersession, where something does "
        "claim to replace it"
    ),
    Verdict.superseded: (
        "another record, in force at the valid-time instant, replaces it by a named link "
        "(supersedes / superseded_by); as opposed to expired, where the record itself "
        "says when it stopped being true"
    ),
    Verdict.expired: (
        "its own valid_to is at or before the valid-time instant: it ran out of time; as "
        "opposed to superseded, where a named successor replaced it, and completed, where "
        "it was done"
    ),
    Verdict.completed: (
        "it was done (a task completed) at or before the valid-time instant: its valid_to "
        "is when, and its metadata status says completed; as opposed to expired, where a "
        "record ran out of time without being done"
    ),
    Verdict.not_yet_valid: (
        "its own valid_from is after the valid-time instant: the fact was not yet true; "
        "as opposed to not_yet_known, where the record had not yet been written"
    ),
    Verdict.not_yet_known: (
        "the source recorded it after the as_of instant: at that time nobody could have "
        "read it, whatever it says about validity; as opposed to not_yet_valid, where the "
        "record existed but the fact had not started"
    ),
    Verdict.ambiguous_supersession: (
        "two different successors each claim to replace it, so neither is chosen: it is "
        "shown, marked, with both claimants named, never withheld; as opposed to "
        "superseded, where exactly one successor does"
    ),
}
SHOWN_VERDICTS = frozenset({Verdict.current, Verdict.ambiguous_supersession})
"""Verdicts shown as evidence; every other verdict is withheld and counted (shown marked with include_stale)."""


class TimeoutBudget(StrEnum):
    request_latency = "request_latency"
    source_timeout = "source_timeout"
    adapter_internal = "adapter_internal"
    caller_deadline = "caller_deadline"


class OmittedPart(StrEnum):
    source_outcomes = "source_outcomes"
    plan_sources = "plan_sources"
