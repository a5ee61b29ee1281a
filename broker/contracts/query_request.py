"""A question put to the broker: its query, scope and budget."""

from __future__ import annotations

from datetime import datetime

from adapter_sdk.wire import Field
from broker.contracts.model import Model
from broker.vocabulary import Mode, Surface


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
