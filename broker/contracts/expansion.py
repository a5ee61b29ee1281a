"""``recall expand``: a locator's content asked for, and returned."""

from __future__ import annotations

from datetime import datetime

from adapter_sdk.protocol import DetailLevel
from adapter_sdk.wire import Field
from broker.contracts.model import Model


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
