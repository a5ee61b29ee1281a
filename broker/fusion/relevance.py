"""How fusion reads a candidate's ``relevance``: the shared definition's value, made safe."""

from __future__ import annotations

import math

from broker.contracts import Candidate


def fused_relevance(c: Candidate) -> float:
    """Relevance as scored: missing → 1, NaN or negative → 0, above 1 → 1."""
    if c.relevance is None:
        return 1.0
    if math.isnan(c.relevance) or c.relevance < 0:
        return 0.0
    return min(c.relevance, 1.0)


def floor_relevance(c: Candidate) -> float:
    """Relevance as the floor reads it: a missing or non-finite value asserts nothing."""
    if c.relevance is None or not math.isfinite(c.relevance):
        return 1.0
    return fused_relevance(c)
