"""A query's plan: the sources asked, their limits and deadlines, the fusion constants."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from adapter_sdk.protocol import RelevanceBasis
from adapter_sdk.wire import Field
from broker.contracts.model import Model
from broker.vocabulary import CORROBORATION_CAP, PER_SOURCE_LIMIT, RANK_CONSTANT


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
