"""Rendering a cluster as a result, with the explanation of the arithmetic that placed it.

The explanation describes the score basis (the group that earned the score),
which may differ from the displayed primary under the document-chunk rule.
Members are listed best first, and a record's further chunks only while they
score at least as well as the next result: every record of the cluster is
listed by its strongest chunk, but a long note matching loosely everywhere
does not list its weak chunks ahead of the next note's best one. One exception:
when two sources rank one record (the notes source and its meaning leg) and
disagree on which of its chunks is best, each source's best chunk is listed if
that source ranks it above every candidate it gave the next result (a result from
the location that source searches). A page whose one-line summary the meaning leg
ranks first then still lists the section the lexical ranking found, which its
fused score alone would have left out.
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
    following: Cluster | None,
    list_every_member: bool = False,
) -> Result:
    """``following``: the result after this one, shown or cut by the limit (``None``:
    there is none); ``list_every_member``: list every member, whatever follows."""
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
        folder=cluster.basis.folder,
        exact_promoted=exact_promoted,
        score=cluster.score,
        rank_constant=rank_constant,
        temporal=temporal,
    )
    members = [
        Member.model_construct(lineage_root=group.root, candidates=[c.model_copy() for c in group.candidates])
        for group in _listed_groups(cluster, following, list_every_member, sources)
    ]
    return Result.model_construct(
        primary=cluster.representative.primary.model_copy(),
        members=members,
        explanation=explanation,
        score=cluster.score,
        verdict=None if cluster.verdict is Verdict.current else cluster.verdict,
    )


def _listed_groups(
    cluster: Cluster,
    following: Cluster | None,
    list_every_member: bool,
    sources: Mapping[str, SourceFacts],
) -> list[Group]:
    """The cluster's groups to list as members, best first: the strongest group of each
    unit (one record seen once or again), the displayed and score-basis groups, each
    source's best group where that source ranks it above all it gave ``following``, and
    any other group scoring at least as well as ``following``."""
    ordered = sorted(cluster.groups, key=strength)
    if list_every_member or following is None:
        return ordered
    always = {id(cluster.basis), id(cluster.representative)}
    always.update(id(min(unit.groups, key=strength)) for unit in cluster.units)
    always.update(id(group) for group in _each_sources_best(ordered, following, sources))
    return [group for group in ordered if id(group) in always or group.score >= following.score]


def _each_sources_best(
    ordered: list[Group], following: Cluster, sources: Mapping[str, SourceFacts]
) -> list[Group]:
    """Where two or more sources ranked this cluster: per source, the group holding its
    best-ranked candidate, when the source ranked it above every candidate of
    ``following``. Only a source over the location ``following`` comes from could have
    ranked that result: for any other source, its absence there says nothing."""
    best: dict[str, tuple[int, Group]] = {}
    for group in ordered:
        for c in group.candidates:
            if c.source_uid not in best or c.local_rank < best[c.source_uid][0]:
                best[c.source_uid] = (c.local_rank, group)
    if len(best) < 2:  # one ranking of the record: the scores already follow it
        return []
    rivals: dict[str, int] = {}
    for c in following.candidates:
        rivals[c.source_uid] = min(c.local_rank, rivals.get(c.source_uid, c.local_rank))
    locations = {sources[uid].location_key for uid in rivals} - {None}
    return [
        group
        for uid, (rank, group) in best.items()
        if sources[uid].location_key in locations and rank < rivals.get(uid, rank + 1)
    ]
