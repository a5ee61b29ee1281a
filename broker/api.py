"""The operations every broker offers, wherever it runs.

:class:`broker.app.Broker` serves them in this process; the HTTP client
(:class:`broker.surfaces.remote_broker.RemoteBroker`) asks a running ``recall serve``
for them. A surface that only needs these operations is typed against
:class:`BrokerAPI`, so the type checker sees each call it makes and either
broker can stand behind it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from broker.contracts import (
        ExpandRequest,
        ExpandResponse,
        QueryRequest,
        QueryResponse,
        RefreshRequest,
        RefreshResponse,
        SourcesResponse,
    )
    from broker.doctor import Diagnosis
    from broker.refresh import Progress


class BrokerAPI(Protocol):
    async def query(self, request: QueryRequest) -> QueryResponse:
        """Ask every eligible source; raises ``InvalidRequest`` for a request it cannot serve."""
        ...

    async def expand(self, request: ExpandRequest) -> ExpandResponse:
        """Read what a locator points at; raises ``ExpandError`` with its code."""
        ...

    async def refresh(
        self, request: RefreshRequest, progress: Progress | None = None
    ) -> RefreshResponse: ...

    async def sources(self, profile: str = "") -> SourcesResponse:
        """Every configured source, probed where the profile may use it."""
        ...

    async def doctor(self, profile: str = "") -> Diagnosis: ...


# Runs ``work(broker)`` on the resident broker's event loop, from a command's thread
# there (``broker.warm.daemon``); a command given one asks it, not a broker of its own.
OnTheBroker = Callable[[Callable[[BrokerAPI], Awaitable[Any]]], Any]
