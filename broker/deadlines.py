"""The plan's deadline rule: how long a query may take, and by when each source must answer.

    query_budget    = latency_ms if > 0 else 5000 ms
    plan.deadline   = start + query_budget
    usable          = plan.deadline - fusion_reserve
    source_deadline = min(now + source.timeout_ms, usable)

:mod:`broker.plan` plans by it, and a cold command's probe written ahead
(:func:`broker.static_eligibility.start_contacted`) is given the same deadline before the plan
exists, so it lives here, below both: standard library only.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from broker.vocabulary import DEFAULT_LATENCY_MS


def query_budget(latency_ms: int) -> timedelta:
    """How long a query asking for ``latency_ms`` (0 or less: the default) may take."""
    return timedelta(milliseconds=latency_ms if latency_ms > 0 else DEFAULT_LATENCY_MS)


def source_deadline(now: datetime, timeout_ms: int, usable: datetime) -> tuple[datetime, bool]:
    """By when a source with ``timeout_ms`` asked at ``now`` must answer, and whether that
    is its own timeout (else the query's ``usable`` time ran out first)."""
    own = now + timedelta(milliseconds=timeout_ms)
    return (own, True) if own <= usable else (usable, False)
