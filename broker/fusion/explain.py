"""Rendering a cluster as a result, with the explanation of the arithmetic that placed it.

The explanation describes the score basis (the group that earned the score),
which may differ from the displayed primary under the document-chunk rule.
``freshness`` carries only what the candidate knows; the application layer
completes it from the source's health and manifest.
"""

from __future__ import annotations

from collections.abc import Mapping

from broker.contracts import (
    Explanation,
    Freshness,
    Member,
    Result,
    TemporalExplanation,
    Verdict,
)
from broker.fusion.clusters import Cluster
from broker.fusion.request import SourceFacts


def render(
    cluster: Cluster,
    sources: Mapping[str, SourceFacts],
    *,
    rank_constant: int,
    exact_promoted: bool,
    temporal: TemporalExplanation | None,
) -> Result:
    basis = cluster.basis.primary
    explanation = Explanation(
        source_uid=basis.source_uid,
        source_id=basis.source_id,
        local_rank=basis.local_rank,
        local_pool_size=sources[basis.source_uid].pool_size,
        match_signals=list(basis.match_signals or ()),
        prior=cluster.basis.prior,
        relevance=basis.relevance,
        lineage_root=cluster.root,
        corroboration=cluster.corroboration,
        freshness=Freshness(
            source_revision=basis.source_revision,
            observed_at=basis.observed_at,
            confirmed_at=basis.confirmed_at,
        ),
        exact_promoted=exact_promoted,
        score=cluster.score,
        rank_constant=rank_constant,
        temporal=temporal,
    )
    members = [
        Member(lineage_root=group.root, candidates=[c.model_copy() for c in group.candidates])
        for group in sorted(cluster.groups, key=lambda g: (-g.score, g.root))
    ]
    return Result(
        primary=cluster.representative.primary.model_copy(),
        members=members,
        explanation=explanation,
        score=cluster.score,
        verdict=None if cluster.verdict is Verdict.current else cluster.verdict,
    )
