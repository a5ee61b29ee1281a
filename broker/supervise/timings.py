"""The supervisor's clock: protocol v1's supervision constants, overridable as one value."""

from __future__ import annotations

from dataclasses import dataclass

HANDSHAKE_TIMEOUT = 10.0
"""Seconds a new process gets to answer ``recall/initialize`` (spawn included)."""
CANCEL_GRACE = 0.25
"""Seconds to wait for any reply after ``recall/cancel`` before calling a process wedged."""
TERM_GRACE = 2.0
"""Seconds between each step of stopping a process: exit, SIGTERM, SIGKILL."""
HEALTH_TTL = 30.0
"""Seconds a health probe (failed ones too) is reused."""
UNSETTLED_HEALTH_TTL = 1.0
"""Seconds a probe that found its source short of healthy (building, catching up,
degraded) is reused instead: a burst of callers shares it, the next command asks again."""
PROBE_TIMEOUT = 5.0
"""Seconds a health probe may take when the caller gave no deadline."""
DEFAULT_CALL_TIMEOUT = 30.0
"""Seconds granted to a call whose deadline is unset (the zero time)."""


@dataclass(frozen=True)
class Timings:
    """The supervisor's limits, in seconds."""

    handshake_timeout: float = HANDSHAKE_TIMEOUT
    cancel_grace: float = CANCEL_GRACE
    term_grace: float = TERM_GRACE
    health_ttl: float = HEALTH_TTL
    unsettled_health_ttl: float = UNSETTLED_HEALTH_TTL
    probe_timeout: float = PROBE_TIMEOUT
    default_call_timeout: float = DEFAULT_CALL_TIMEOUT
