"""The fusion pipeline, end to end.

lineage grouping → temporal verdicts → clustering and corroboration →
exact-match partition and ordering → successor promotion (the exact rule is
in :mod:`broker.fusion.succession`) → withholding of clusters whose verdict is
not shown as evidence (all but current and ambiguous_supersession) →
selection (floor, host suppression, near-duplicate, limit, duplicate views) →
rendering (each result lists its members down to the next result's score,
except in ``pre_reply``).

Pure: no I/O and no clock (the evaluation instant is a parameter), and the
output is identical under any order of ``candidates`` and ``sources``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from broker.contracts import SHOWN_VERDICTS, Candidate, Mode, Suppression
from broker.errors import FusionError
from broker.fusion.clusters import Cluster, build_clusters
from broker.fusion.explain import render
from broker.fusion.groups import build_groups, in_candidate_order
from broker.fusion.ordering import order_clusters
from broker.fusion.query_class import classify_query, query_identifiers
from broker.fusion.request import FusionOutput, FusionParams, SourceFacts
from broker.fusion.selection import select
from broker.fusion.succession import decide, promote, stale_suppression, temporal_explanation


def fuse(
    candidates: Sequence[Candidate],
    sources: Mapping[str, SourceFacts],
    source_uid_by_id: Mapping[str, str],
    params: FusionParams,
) -> FusionOutput:
    """Rank a pooled candidate list; ``sources`` is keyed by source uid."""
    _check(params)
    query_class = classify_query(params.query)
    identifiers = query_identifiers(params.query)
    out = FusionOutput(query_class=query_class)
    if not candidates:
        return out

    pool = in_candidate_order(candidates)
    groups = build_groups(
        pool, sources, source_uid_by_id, query_class, identifiers, params.rank_constant
    )
    state = decide(
        pool, groups, params.evaluated_at, frozenset(source_uid_by_id), params.known_at
    )
    locations = {uid: facts.location_key for uid, facts in sources.items()}
    clusters = build_clusters(groups, locations, params.corroboration_cap)
    ordered, promoted = order_clusters(clusters, query_class, identifiers)
    promotion = promote(ordered, state, params.relevance_floor, params.query)

    stale: list[Suppression] = []
    eligible: list[Cluster] = []
    for cluster in promotion.ordered:
        if cluster.verdict in SHOWN_VERDICTS or params.include_stale:
            eligible.append(cluster)
            continue
        stale.append(stale_suppression(cluster, promotion.successions.get(id(cluster))))

    selection = select(
        eligible,
        floor=params.relevance_floor,
        limit=params.limit,
        mode=params.mode,
        suppress_lineages=params.suppress_lineages,
        floor_exempt=promotion.floor_exempt,
    )
    # each shown cluster lists its members down to the cluster after it, but in pre_reply
    # all of them: the host's ledger of what it was shown is read from them
    following = [*selection.shown[1:], selection.following]
    out.results = [
        render(
            cluster,
            sources,
            rank_constant=params.rank_constant,
            exact_promoted=id(cluster) in promoted,
            temporal=temporal_explanation(cluster, state, promotion),
            following=after,
            list_every_member=params.mode is Mode.pre_reply,
        )
        for cluster, after in zip(selection.shown, following, strict=False)
    ]
    out.suppressed = sorted(
        stale + selection.suppressed,
        key=lambda s: (s.reason.value, s.lineage_root or "", s.fused_into or "", s.successor or ""),
    )
    out.dropped_results = selection.dropped
    out.truncated = selection.truncated
    out.missing_successors = list(state.supersessions.missing)
    out.temporal_problems = list(state.supersessions.problems)
    return out


def _check(params: FusionParams) -> None:
    if params.evaluated_at.tzinfo is None:
        raise FusionError("the evaluation instant must carry a time zone (UTC)")
    if params.known_at is not None and params.known_at.tzinfo is None:
        raise FusionError("the as_of instant must carry a time zone (UTC)")
    if params.rank_constant <= 0:
        raise FusionError(f"rank_constant = {params.rank_constant}; want a positive number")
    if not (math.isfinite(params.corroboration_cap) and params.corroboration_cap >= 1):
        raise FusionError(f"corroboration_cap = {params.corroboration_cap}; want >= 1")
    if not (0 <= params.relevance_floor < 1):
        raise FusionError(f"relevance_floor = {params.relevance_floor}; want [0, 1)")
    if params.limit < 0:
        raise FusionError(f"limit = {params.limit}; want >= 0 (0 = unbounded)")
