"""Lineage groups: every candidate projecting one root, scored once.

    lineage_score(g) = max over sources s in g of
                       prior(s) * relevance(s, g) / (rank_constant + best_rank(s, g))

Maximum, not sum: one record seen from two sources is still one record. Per
source the best (lowest) local rank counts, with the relevance *of that same
candidate*. Where two sources search one location, their rankings are first
fused into the location's one list (:mod:`broker.fusion.folder`), and a record of
it scores by its place there instead. Fusion reads local rank, priors and relevance — never ``local_score``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import orjson

from broker.contracts import Candidate, FolderRank, MatchSignal, Prior, QueryClass, Verdict
from broker.errors import FusionError
from broker.fusion.folder import FolderPlace, folder_places
from broker.fusion.lineage import Lineage, LineageGraph
from broker.fusion.priors import effective_prior
from broker.fusion.relevance import fused_relevance
from broker.fusion.request import SourceFacts

_HEX_ID = re.compile(r"[0-9a-f]+(?:-[0-9a-f]+)*")
_HEX_ABBREVIATION = re.compile(r"[0-9a-f-]{8,}")


@dataclass
class Group:
    """Candidates that are one record, with the lineages they carry and the score they earned."""

    root: str
    candidates: list[Candidate]
    lineages: list[Lineage]
    score: float
    primary: Candidate
    prior: Prior
    exact: bool
    exact_alias: bool
    exact_identity: bool
    folder: FolderRank | None = None
    """The record's place in its location's fused list, when two sources search that location."""
    verdict: Verdict = Verdict.current
    """Set by the temporal stage; groups of different verdicts never cluster."""


def in_candidate_order(candidates: Sequence[Candidate]) -> list[Candidate]:
    """Candidates in a total order: best local rank, locator, identity.

    Candidates agreeing on all of those are further ordered by every other field,
    ``local_score`` last: it only ever separates copies that are otherwise the
    same record, so no stage depends on arrival order and the score still never
    decides between two different records.
    """
    keyed = [(_order_key(c), c) for c in candidates]
    counts = Counter(key for key, _ in keyed)
    keyed.sort(
        key=lambda pair: (
            pair[0],
            _canonical(pair[1]) if counts[pair[0]] > 1 else b"",
            repr(pair[1].local_score) if counts[pair[0]] > 1 else "",
        )
    )
    return [c for _, c in keyed]


def _order_key(c: Candidate) -> tuple[int, str, str, str]:
    return (c.local_rank, c.locator, c.candidate_id, c.source_uid)


def _canonical(c: Candidate) -> bytes:
    rest = c.model_dump(mode="json", exclude={"local_score"})
    return orjson.dumps(rest, option=orjson.OPT_SORT_KEYS)


def is_exact(c: Candidate) -> bool:
    return MatchSignal.exact_identifier in (c.match_signals or ())


def names_identifier(c: Candidate, identifiers: frozenset[str]) -> bool:
    """Whether one of the candidate's identity fields *is* a stable identifier of the query.

    Identity fields only (never content): candidate_id, source_record_id, locator
    local part, title, metadata name/path/relative_path — lowercased, ``#...``
    stripped, matched wholly, by basename, or as an abbreviated hex id (the
    first 8 or more hex digits of a UUID or digest, as ``8fbec7b8`` names a
    Taskwarrior task and a short hash a commit).
    """
    if not identifiers:
        return False
    identities = [c.candidate_id, c.source_record_id, c.local_part, c.title]
    for key in ("name", "path", "relative_path"):
        value = (c.metadata or {}).get(key)
        if isinstance(value, str):
            identities.append(value)
    for identity in identities:
        identity = identity.strip().lower().split("#", 1)[0]
        if not identity:
            continue
        base = identity.replace("\\", "/").rsplit("/", 1)[-1]
        if identity in identifiers or base in identifiers:
            return True
        if _HEX_ID.fullmatch(identity) and any(
            _HEX_ABBREVIATION.fullmatch(i) and identity.startswith(i) for i in identifiers
        ):
            return True
    return False


def build_groups(
    pool: Sequence[Candidate],
    sources: Mapping[str, SourceFacts],
    source_uid_by_id: Mapping[str, str],
    query_class: QueryClass | None,
    identifiers: frozenset[str],
    rank_constant: int,
) -> list[Group]:
    """Group ``pool`` (already in candidate order) by lineage root, in root order."""
    derivations = {
        uid: facts.derives_from_uid
        for uid, facts in sources.items()
        if facts.derives_from_uid is not None
    }
    graph = LineageGraph(pool, source_uid_by_id, derivations)
    priors = {uid: effective_prior(facts, query_class) for uid, facts in sources.items()}
    by_root: dict[str, tuple[list[Candidate], list[Lineage]]] = {}
    for candidate in pool:
        if candidate.local_rank < 1:
            raise FusionError(
                f"{candidate.locator} has local_rank {candidate.local_rank}; "
                "ranks are one-based and such candidates must be dropped at admission"
            )
        if candidate.source_uid not in priors:
            raise FusionError(
                f"{candidate.locator} comes from source uid {candidate.source_uid!r}, "
                "which has no source facts; pass every searched source to fusion"
            )
        lineage = graph.of(candidate)
        members, lineages = by_root.setdefault(lineage.root, ([], []))
        members.append(candidate)
        lineages.append(lineage)
    def weight(c: Candidate) -> float:
        return priors[c.source_uid].effective * fused_relevance(c)

    def term(c: Candidate) -> float:
        return weight(c) / (rank_constant + c.local_rank)

    places = folder_places({root: members for root, (members, _) in by_root.items()}, sources, weight, term)
    return [
        _score(root, *by_root[root], priors, identifiers, _located(root, sources, places), term)
        for root in sorted(by_root)
    ]


def _located(
    root: str, sources: Mapping[str, SourceFacts], places: Mapping[tuple[str, str], FolderPlace]
) -> dict[str, FolderPlace]:
    """Source uid -> the place ``root`` holds in that source's location's fused list, where it has one."""
    return {
        uid: places[(root, facts.location_key)]
        for uid, facts in sources.items()
        if facts.location_key is not None and (root, facts.location_key) in places
    }


def _score(
    root: str,
    candidates: list[Candidate],
    lineages: list[Lineage],
    priors: Mapping[str, Prior],
    identifiers: frozenset[str],
    located: Mapping[str, FolderPlace],
    term: Callable[[Candidate], float],
) -> Group:
    best: dict[str, Candidate] = {}
    for c in candidates:  # candidate order: the first per source holds its best rank
        best.setdefault(c.source_uid, c)
    score = max(located[uid].score if uid in located else term(c) for uid, c in best.items())
    primary = candidates[0]
    for c in candidates[1:]:
        if priors[c.source_uid].effective > priors[primary.source_uid].effective:
            primary = c
    return Group(
        root=root,
        candidates=candidates,
        lineages=lineages,
        score=score,
        primary=primary,
        prior=priors[primary.source_uid],
        exact=any(is_exact(c) for c in candidates),
        exact_alias=any(
            is_exact(c) and MatchSignal.alias in (c.match_signals or ()) for c in candidates
        ),
        exact_identity=any(is_exact(c) and names_identifier(c, identifiers) for c in candidates),
        folder=located[primary.source_uid].rank if primary.source_uid in located else None,
    )
