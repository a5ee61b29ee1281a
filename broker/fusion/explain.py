"""Rendering a cluster as a result, with the explanation of the arithmetic that placed it.

The explanation describes the score basis (the group that earned the score),
which may differ from the displayed primary under the document-chunk rule.
Members are listed best first, and a record's further chunks only while they
score at least as well as the next result: every record of the cluster is
listed by its strongest chunk, but a long note matching loosely everywhere
does not list its weak chunks ahead of the next note's best one.
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
from broker.fusion.clusters import Cluster, strength
from broker.fusion.groups import Group
from broker.fusion.request import SourceFacts


def render(
    cluster: Cluster,
    sources: Mapping[str, SourceFacts],
    *,
    rank_constant: int,
    exact_promoted: bool,
    temporal: TemporalExplanation | None,
    next_score: float | None,
) -> Result:
    """``next_score``: the score of the result after this one, shown or cut by the limit
    (``None``: every member is listed)."""
    basis = cluster.basis.primary
    explanation = Explanation.model_construct(
        source_uid=basis.source_uid,
        source_id=basis.source_id,
        local_rank=basis.local_rank,
        local_pool_size=sources[basis.source_uid].pool_size,
        match_signals=list(basis.match_signals or ()),
        prior=cluster.basis.prior,
        relevance=basis.relevance,
        lineage_root=cluster.root,
        corroboration=cluster.corroboration,
        freshness=Freshness.model_construct(
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
        Member.model_construct(lineage_root=group.root, candidates=[c.model_copy() for c in group.candidates])
        for group in _listed_groups(cluster, next_score)
    ]
    return Result.model_construct(
        primary=cluster.representative.primary.model_copy(),
        members=members,
        explanation=explanation,
        score=cluster.score,
        verdict=None if cluster.verdict is Verdict.current else cluster.verdict,
    )


def _listed_groups(cluster: Cluster, next_score: float | None) -> list[Group]:
    """The cluster's groups to list as members, best first: the strongest group of each
    unit (one record seen once or again), the displayed and score-basis groups, and any
    other group scoring at least ``next_score``."""
    always = {id(cluster.basis), id(cluster.representative)}
    always.update(id(min(unit.groups, key=strength)) for unit in cluster.units)
    return [
        group
        for group in sorted(cluster.groups, key=strength)
        if id(group) in always or next_score is None or group.score >= next_score
    ]
