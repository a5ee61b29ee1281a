"""Selection: what of the fused order is shown, and an account of what is not.

Walking clusters in order:

1. relevance floor (floor > 0): a cluster nothing in which reaches the floor is
   withheld (``below_relevance_floor``), unless it is exact or floor-exempt;
2. ``pre_reply`` only: a cluster every record of which the host already showed
   (each view class holds a suppressed root) is ``lineage_suppressed``;
3. near-duplicate: a cluster sharing a (source, content fingerprint) with a kept
   cluster is withheld; scoped per source, so one source can only ever hide its
   own repetition. Kept clusters claim their fingerprints.

A floor may withhold but never abstain: if nothing survived, the pass reruns
with the floor stood down. Then the limit cuts the tail (``dropped_results``,
``truncated``), and every shown cluster reports each folded second view of a
record as ``duplicate_view`` (count 1, ``fused_into`` the shown root).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from broker.contracts import Mode, Suppression, SuppressionReason
from broker.fusion.clusters import Cluster


@dataclass
class Selection:
    """The clusters shown, those withheld, and how many the limit dropped."""

    shown: list[Cluster] = field(default_factory=list)
    following: Cluster | None = None
    """The first cluster the limit cut, which the last shown one lists its members down to."""
    suppressed: list[Suppression] = field(default_factory=list)
    dropped: int = 0
    truncated: bool = False


def withheld(reason: SuppressionReason, cluster: Cluster, **extra: str) -> Suppression:
    """One withheld cluster: counted in candidates, named only by its lineage root."""
    return Suppression(
        reason=reason, count=cluster.candidate_count, lineage_root=cluster.root, **extra
    )


def select(
    ordered: Sequence[Cluster],
    *,
    floor: float,
    limit: int,
    mode: Mode,
    suppress_lineages: frozenset[str],
    floor_exempt: set[int],
) -> Selection:
    suppress = suppress_lineages if mode is Mode.pre_reply else frozenset()
    kept, suppressed = _withhold(ordered, floor, suppress, floor_exempt)
    if not kept and floor > 0:
        kept, suppressed = _withhold(ordered, 0.0, suppress, floor_exempt)
    out = Selection(suppressed=suppressed)
    if limit > 0 and len(kept) > limit:
        out.dropped = len(kept) - limit
        out.truncated = True
        out.following = kept[limit]
        kept = kept[:limit]
    out.shown = kept
    for cluster in kept:
        for view_class in cluster.view_classes:
            out.suppressed += [
                Suppression(
                    reason=SuppressionReason.duplicate_view,
                    count=1,
                    lineage_root=group.root,
                    fused_into=cluster.root,
                )
                for group in view_class[1:]
            ]
    return out


def _withhold(
    ordered: Sequence[Cluster],
    floor: float,
    suppress: frozenset[str],
    floor_exempt: set[int],
) -> tuple[list[Cluster], list[Suppression]]:
    kept: list[Cluster] = []
    suppressed: list[Suppression] = []
    claimed: set[tuple[str, str]] = set()
    for cluster in ordered:
        if floor > 0 and id(cluster) not in floor_exempt and cluster.below_floor(floor):
            suppressed.append(withheld(SuppressionReason.below_relevance_floor, cluster))
            continue
        if suppress and all(
            any(group.root in suppress for group in view_class)
            for view_class in cluster.view_classes
        ):
            suppressed.append(withheld(SuppressionReason.lineage_suppressed, cluster))
            continue
        prints = {
            (c.source_uid, c.content_fingerprint)
            for c in cluster.candidates
            if c.content_fingerprint
        }
        if prints & claimed:
            suppressed.append(withheld(SuppressionReason.near_duplicate, cluster))
            continue
        claimed |= prints
        kept.append(cluster)
    return kept, suppressed
