"""Building blocks for a suite's cases: request frames for one source, and the
cases whose content the protocol fixes.

Every suite sends the same kinds of request (the handshake, searches, expands,
health, refresh, cancel, shutdown), all with :data:`FAR_DEADLINE` so a case
replays the same in any year. :class:`CaseRequests` builds them for one source
id and location; :func:`version_rejection`, :func:`cancel_inflight` and
:func:`shutdown` build the required cases that read the same for any adapter.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from adapter_sdk.conformance.record import CaseSpec
from adapter_sdk.conformance.transcript import FAR_DEADLINE
from adapter_sdk.protocol import Method, notification_frame, request_frame

VERSION_REJECTION = "A range the adapter cannot speak (2..3) is refused with -32602 and no manifest."
CANCEL_INFLIGHT = "A search cancelled in flight is answered with -32007, never a late result."
SHUTDOWN_AFTER_SEARCH = "recall/shutdown after a search is answered with {} and nothing is written after it."


@dataclass(frozen=True)
class CaseRequests:
    """Request frames for the source ``source_id`` found at ``location``.

    Locators are written without the source id (``expand(2, "rec-1", ...)``
    asks for ``<source_id>:rec-1``).
    """

    source_id: str
    location: str = "${FIXTURE}"

    def initialize(self, *, versions: tuple[int, int] = (1, 1), **settings: Any) -> dict[str, Any]:
        return request_frame(
            1,
            Method.initialize,
            {
                "protocol_version_min": versions[0],
                "protocol_version_max": versions[1],
                "workdir": "${WORKDIR}",
                "source_id": self.source_id,
                "location": self.location,
                "settings": settings,
            },
        )

    def search(self, request_id: int, query: str, *, as_of: str | None = None, **filters: Any) -> dict[str, Any]:
        params: dict[str, Any] = {"query": query, "filters": filters, "limit": 10, "deadline": FAR_DEADLINE}
        if as_of is not None:
            params["as_of"] = as_of
        return request_frame(request_id, Method.search, params)

    def expand(self, request_id: int, local: str, detail: str, budget_bytes: int = 4096) -> dict[str, Any]:
        params = {
            "locator": f"{self.source_id}:{local}",
            "detail": detail,
            "budget_bytes": budget_bytes,
            "deadline": FAR_DEADLINE,
        }
        return request_frame(request_id, Method.expand, params)

    def health(self, request_id: int) -> dict[str, Any]:
        return request_frame(request_id, Method.health, {"deadline": FAR_DEADLINE})

    def refresh(self, request_id: int, *, full: bool) -> dict[str, Any]:
        return request_frame(request_id, Method.refresh, {"deadline": FAR_DEADLINE, "full": full})

    def cancel(self, request_id: int) -> dict[str, Any]:
        return notification_frame(Method.cancel, {"id": request_id})

    def shutdown(self, request_id: int) -> dict[str, Any]:
        return request_frame(request_id, Method.shutdown, {})


def version_rejection(requests: CaseRequests, *, fixture: Path | None = None) -> CaseSpec:
    """A version range without 1 is refused with -32602 and no manifest."""
    return CaseSpec("version-rejection", VERSION_REJECTION, [requests.initialize(versions=(2, 3))], fixture=fixture)


def cancel_inflight(
    requests: CaseRequests,
    query: str,
    *,
    settings: Mapping[str, Any] | None = None,
    description: str = CANCEL_INFLIGHT,
    fixture: Path | None = None,
    volatile: Sequence[str] = (),
) -> CaseSpec:
    """A search for ``query`` cancelled while it runs, which must answer -32007.

    ``settings`` are the handshake's: whatever holds the search long enough
    for the cancel to find it in flight.
    """
    frames = [requests.initialize(**dict(settings or {})), requests.search(2, query), requests.cancel(2)]
    return CaseSpec("cancel-inflight", description, frames, fixture=fixture, volatile=volatile)


def shutdown(
    requests: CaseRequests,
    query: str,
    *,
    as_of: str | None = None,
    fixture: Path | None = None,
    volatile: Sequence[str] = (),
) -> CaseSpec:
    """recall/shutdown after a search for ``query``: answered with {}, then silence."""
    frames = [requests.initialize(), requests.search(2, query, as_of=as_of), requests.shutdown(3)]
    return CaseSpec("shutdown", SHUTDOWN_AFTER_SEARCH, frames, fixture=fixture, volatile=volatile)
