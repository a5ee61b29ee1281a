"""Fusion: a pooled candidate list in, an ordered, explained, accounted answer out.

Raw scores from different sources are never compared: fusion reads each
candidate's local rank, its source's configured prior and the shared
``relevance``, and nothing else (``local_score`` is diagnostic only).
"""

from __future__ import annotations

from broker.fusion.pipeline import fuse
from broker.fusion.query_class import classify_query
from broker.fusion.request import FusionOutput, FusionParams, SourceFacts

__all__ = ["FusionOutput", "FusionParams", "SourceFacts", "classify_query", "fuse"]
