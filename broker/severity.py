"""A query's outcome and coverage, and the one ladder every status is read on.

The ladder, most severe first: ``failed`` > ``degraded`` > ``abstained`` >
``answered``. A query's severity folds its coverage into its outcome: a search
that abstained or answered while some source could not answer is ``degraded``;
one where every source asked failed stays ``failed``. The sources listing, a
refresh and a diagnosis have statuses on the same ladder (their ``ok`` and
``refreshed`` are its ``answered`` rung; they have no ``abstained``).

Every surface reads a :class:`Severity` from :func:`severity` and translates it
with one table of its own: the command's exit code (:data:`EXIT_CODES`), an
HTTP status, MCP's ``isError``, the Sidecar's outcome and tone, the page's alert.
"""

from __future__ import annotations

from enum import IntEnum, StrEnum

from broker.contracts import ListingStatus, RefreshOutcome, SearchOutcome, SkipReason, SourceReport
from broker.vocabulary import Coverage, DiagnosisStatus, Outcome


class Severity(IntEnum):
    """A rung of the ladder; a higher value is more severe, so the worst of several is ``max``."""

    answered = 0
    abstained = 1
    degraded = 2
    failed = 3

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self]


EXIT_CODES: dict[Severity, int] = {
    Severity.answered: 0,
    Severity.abstained: 2,
    Severity.degraded: 3,
    Severity.failed: 4,
}

# One table a status enumeration, every member in it. Members of two StrEnums that share
# a value compare and hash equal, so a single table keyed by member would hand one
# enumeration's member the rung of another's; keyed by the status's own enumeration,
# a member missing from its table is a KeyError instead.
_RUNGS: dict[type[StrEnum], dict[StrEnum, Severity]] = {
    Outcome: {
        Outcome.answered: Severity.answered,
        Outcome.abstained: Severity.abstained,
        Outcome.failed: Severity.failed,
    },
    ListingStatus: {
        ListingStatus.ok: Severity.answered,
        ListingStatus.degraded: Severity.degraded,
        ListingStatus.failed: Severity.failed,
    },
    RefreshOutcome: {
        RefreshOutcome.refreshed: Severity.answered,
        RefreshOutcome.degraded: Severity.degraded,
        RefreshOutcome.failed: Severity.failed,
    },
    DiagnosisStatus: {
        DiagnosisStatus.ok: Severity.answered,
        DiagnosisStatus.degraded: Severity.degraded,
        DiagnosisStatus.failed: Severity.failed,
    },
}


def severity(status: StrEnum, coverage: Coverage = Coverage.complete) -> Severity:
    """The rung of a query's outcome (with its coverage), a listing's, a refresh's or a diagnosis's status."""
    rung = _RUNGS[type(status)][status]
    return max(rung, Severity.degraded) if coverage == Coverage.degraded else rung


def decide_outcome(has_results: bool, reports: list[SourceReport]) -> Outcome:
    """Decided on fused results, before shaping; never a threshold on scores."""
    if has_results:
        return Outcome.answered
    asked = [r for r in reports if r.outcome != SearchOutcome.skipped]
    answered = [r for r in asked if r.outcome in (SearchOutcome.success, SearchOutcome.partial)]
    return Outcome.failed if asked and not answered else Outcome.abstained


def decide_coverage(reports: list[SourceReport]) -> Coverage:
    if any(report.degrades for report in reports):
        return Coverage.degraded
    searched = any(r.outcome != SearchOutcome.skipped for r in reports)
    if not searched and any(r.reason == SkipReason.not_applicable for r in reports):
        return Coverage.degraded  # nobody looked
    return Coverage.complete
