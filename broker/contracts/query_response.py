"""A query's answer: its results, each source's report, what was withheld, the outcome."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from adapter_sdk.protocol import SearchOutcome
from adapter_sdk.wire import Field
from broker.contracts.candidate import Candidate
from broker.contracts.explanation import Explanation
from broker.contracts.model import Model
from broker.contracts.query_plan import Plan
from broker.vocabulary import (
    NON_DEGRADING_REASONS,
    Coverage,
    OmittedPart,
    Outcome,
    SuppressionReason,
    TimeoutBudget,
    Verdict,
)


class Member(Model):
    lineage_root: str
    candidates: list[Candidate]


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
