"""``recall refresh``: which sources to refresh, and how each one's refresh went."""

from __future__ import annotations

from enum import StrEnum

from adapter_sdk.protocol import HealthResult
from broker.contracts.model import Model


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
