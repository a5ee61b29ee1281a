"""``recall sources``: one row a source, and the listing's status as a whole."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from adapter_sdk.protocol import HealthResult, Sensitivity
from adapter_sdk.wire import Field
from broker.contracts.model import Model


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
