"""One ladder for every status: failed > degraded > abstained > answered, and each surface's table over it."""

from __future__ import annotations

from enum import StrEnum

import pytest

from broker.contracts import ListingStatus, RefreshOutcome
from broker.doctor.diagnosis import DiagnosisStatus
from broker.severity import EXIT_CODES, Severity, severity
from broker.surfaces.http.api_routes import HTTP_STATUS
from broker.vocabulary import Coverage, Outcome


@pytest.mark.parametrize(
    ("outcome", "coverage", "rung"),
    [
        (Outcome.answered, Coverage.complete, Severity.answered),
        (Outcome.abstained, Coverage.complete, Severity.abstained),
        (Outcome.answered, Coverage.degraded, Severity.degraded),
        (Outcome.abstained, Coverage.degraded, Severity.degraded),
        (Outcome.failed, Coverage.complete, Severity.failed),
        (Outcome.failed, Coverage.degraded, Severity.failed),
    ],
)
def test_a_query_folds_its_coverage_into_its_outcome(outcome: Outcome, coverage: Coverage, rung: Severity) -> None:
    assert severity(outcome, coverage) is rung


@pytest.mark.parametrize(
    ("status", "rung"),
    [
        (ListingStatus.ok, Severity.answered),
        (ListingStatus.degraded, Severity.degraded),
        (ListingStatus.failed, Severity.failed),
        (RefreshOutcome.refreshed, Severity.answered),
        (RefreshOutcome.degraded, Severity.degraded),
        (RefreshOutcome.failed, Severity.failed),
        (DiagnosisStatus.ok, Severity.answered),
        (DiagnosisStatus.degraded, Severity.degraded),
        (DiagnosisStatus.failed, Severity.failed),
    ],
)
def test_listings_refreshes_and_diagnoses_sit_on_the_same_ladder(status: StrEnum, rung: Severity) -> None:
    assert severity(status) is rung


# Every enumeration a surface reads a rung of: a query's outcome, a listing's, a
# refresh's and a diagnosis's status.
STATUS_ENUMERATIONS: tuple[type[StrEnum], ...] = (Outcome, ListingStatus, RefreshOutcome, DiagnosisStatus)


@pytest.mark.parametrize(
    "status",
    [member for enumeration in STATUS_ENUMERATIONS for member in enumeration],
    ids=lambda member: f"{type(member).__name__}.{member.name}",
)
def test_every_member_of_every_status_enumeration_has_a_rung(status: StrEnum) -> None:
    assert isinstance(severity(status), Severity)


def test_a_status_takes_no_rung_from_another_enumeration_spelt_alike() -> None:
    namesake = StrEnum("Namesake", {"failed": "failed"})
    assert namesake.failed == ListingStatus.failed  # equal by value, as StrEnum members are
    with pytest.raises(KeyError):
        severity(namesake.failed)


def test_the_exit_codes_are_4_3_2_0_from_failed_down() -> None:
    assert [rung.exit_code for rung in sorted(Severity, reverse=True)] == [4, 3, 2, 0]


@pytest.mark.parametrize("table", [EXIT_CODES, HTTP_STATUS], ids=["exit codes", "http statuses"])
def test_a_surface_translates_every_rung(table: dict[Severity, int]) -> None:
    assert set(table) == set(Severity)
