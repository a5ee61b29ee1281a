"""One status per source, and one for the sources together, decided here for every surface.

A probed source is ``healthy`` only when its health answer says so and it serves
its whole corpus: index coverage complete, every record indexed, none failed. A
usable source short of that is ``degraded``, whatever status it gave itself, and
:func:`shortfalls` says why. ``recall sources``, ``recall doctor``, the page, HTTP,
MCP and the Sidecar read a source's state from :func:`source_state` and the
listing's from :func:`overall_status`, so no surface calls a source whole that
another calls degraded; the listing's exit code follows from its status
(:mod:`broker.severity`): a header never says ``ok`` beside a degraded row.
"""

from __future__ import annotations

from collections.abc import Iterable

from adapter_sdk.protocol import HealthResult, HealthStatus, IndexCoverage
from broker.contracts import USABLE_STATES, ListingStatus, SourceState

_UNPROBED = frozenset({SourceState.disabled, SourceState.not_probed})


def source_state(
    health: HealthResult | None, *, error: str | None = None, enabled: bool = True, probed: bool = True
) -> SourceState:
    """A source's state from what its probe found: its health answer, or why there is none."""
    if not enabled:
        return SourceState.disabled
    if not probed:
        return SourceState.not_probed
    if error or health is None:
        return SourceState.error
    stated = SourceState(HealthStatus(health.status))
    if stated in USABLE_STATES and shortfalls(health):
        return SourceState.degraded
    return stated


def shortfalls(health: HealthResult) -> list[str]:
    """Why a source that answers is not serving its whole corpus; empty when it is."""
    found = []
    if health.status != HealthStatus.healthy:
        warning = (health.diagnostics or {}).get("warning")
        found.append(f"health {health.status}" + (f" ({warning})" if warning else ""))
    return found + corpus_shortfalls(health)


def corpus_shortfalls(health: HealthResult) -> list[str]:
    """What the source's index lacks of its corpus: coverage, records not indexed or failed."""
    found = []
    if health.coverage != IndexCoverage.complete:
        found.append(f"coverage {health.coverage}")
    records, indexed = health.record_count, health.indexed_count
    if records and indexed is not None and indexed < records:
        found.append(f"{indexed} of {records} records indexed")
    if health.failed_count:
        noun = "record" if health.failed_count == 1 else "records"
        found.append(f"{health.failed_count} {noun} failed to index")
    return found


def overall_status(states: Iterable[SourceState]) -> ListingStatus:
    """``failed`` when every probed source is unusable, ``degraded`` when any is not
    healthy, else ``ok`` (also when none was probed)."""
    probed = [state for state in states if state not in _UNPROBED]
    unusable = [state for state in probed if state not in USABLE_STATES]
    if probed and len(unusable) == len(probed):
        return ListingStatus.failed
    if any(state != SourceState.healthy for state in probed):
        return ListingStatus.degraded
    return ListingStatus.ok
