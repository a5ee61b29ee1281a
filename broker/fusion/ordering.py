"""Exact-match partition and the total order of clusters.

Promotion is a partition, not a bonus: promotable clusters sort above all
others, each partition by cluster score. Within a partition ties break by the
score basis's rank in its folder's fused list (two records of one folder can
carry one score, :mod:`broker.fusion.folder`), by its local rank (only when both scores are exactly 0, where the score
discarded every source's ordering), then its locator, candidate id, and the
cluster's lineage root — a unique key, so arrival order never matters.
"""

from __future__ import annotations

from broker.contracts import QueryClass
from broker.fusion.clusters import Cluster, folder_rank


def promotable(
    cluster: Cluster, query_class: QueryClass | None, identifiers: frozenset[str]
) -> bool:
    """Whether an exact match means the caller named this record.

    A declared alias always does. In a natural-language question a named subject
    is prose. In an identifier query with stable identifier syntax the matching
    candidate's own identity must be one of them; a plain one-token name keeps
    plain exact behaviour, as does a query with no class.
    """
    if not cluster.exact:
        return False
    if cluster.exact_alias:
        return True
    if query_class is QueryClass.natural_language:
        return False
    if query_class is QueryClass.identifier_query:
        return not identifiers or cluster.exact_identity
    return True


def order_clusters(
    clusters: list[Cluster], query_class: QueryClass | None, identifiers: frozenset[str]
) -> tuple[list[Cluster], set[int]]:
    """Clusters in fused order, and the ids of the promoted ones."""
    promoted = {id(c) for c in clusters if promotable(c, query_class, identifiers)}

    def key(c: Cluster) -> tuple[object, ...]:
        basis = c.basis.primary
        return (
            id(c) not in promoted,
            -c.score,
            folder_rank(c.basis),
            basis.local_rank if c.score == 0 else 0,
            basis.locator,
            basis.candidate_id,
            c.root,
        )

    return sorted(clusters, key=key), promoted
