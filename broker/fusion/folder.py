"""One ranking per location: sources that search one folder are fused before sources are.

The notes source and its meaning leg search the same folder and rank the same
chunks. Entered into cross-source fusion as two sources, a chunk both found
either counts once (the larger term: their agreement is lost) or twice (the
sum: the folder gets two votes against a task list's or a mailbox's one). So
the sources of one location are first fused into one list of its records,

    folder order: by sum over the location's sources s that ranked r of
                  prior(s) * relevance(s, r) / (FOLDER_RANK_CONSTANT + best_rank(s, r))

(ties by the larger term, then root), and that list enters cross-source fusion
as one source would: the record at the folder's i-th place scores the i-th
largest of the folder's records' own scores (each the larger of its sources'
terms, as without this step). The folder offers the same scores as before, so
it weighs no more against tasks or mail; agreement inside it only decides
which of its records holds which. A location only one source answered for
keeps that source's ranks and scores.

The folder's constant is 30, not cross-source fusion's 60: with two rankings of one
folder, one that puts a chunk first is more often right than two that agree on a
middling place (tried at 10, 20, 30 and 45 on the tuning halves: 30 was the one no
tuning half lost on; ``eval/README.md``).

When the location's best lexical match holds little of the question (its
relevance, the share of the question's words it matches times how dense they
are, under ``WEAK_LEXICAL``), the question is put in other words than the
folder's and its lexical ranking is mostly noise: the folder's order is then
its meaning leg's (agreement breaks ties). On the tuning halves this moved only
the command reference, where a task is asked in a user's words ("stop every
process that has a given name"); 0.30, 0.35 and 0.40 were tried
(``eval/README.md``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from broker.contracts import Candidate, FolderRank, LegRank, MatchSignal
from broker.fusion.relevance import fused_relevance
from broker.fusion.request import SourceFacts

WEAK_LEXICAL = 0.35
FOLDER_RANK_CONSTANT = 30


@dataclass(frozen=True)
class FolderPlace:
    """A record's place in its location's fused list, and the score that place carries."""

    rank: FolderRank
    score: float


def folder_places(
    by_root: Mapping[str, Sequence[Candidate]],
    sources: Mapping[str, SourceFacts],
    weight: Callable[[Candidate], float],
    term: Callable[[Candidate], float],
) -> dict[tuple[str, str], FolderPlace]:
    """The place of each (root, location) where two or more sources of one location answered;
    ``by_root`` holds each root's candidates in candidate order, ``weight`` is a candidate's
    prior times relevance and ``term`` its reciprocal-rank term in cross-source fusion."""
    best: dict[str, dict[str, dict[str, Candidate]]] = {}  # location -> root -> uid -> best candidate
    for root, candidates in by_root.items():
        if any(MatchSignal.exact_identifier in (c.match_signals or ()) for c in candidates):
            continue  # named by the question: it keeps its own score, agreement or not
        for c in candidates:
            location = sources[c.source_uid].location_key
            if location is not None:
                best.setdefault(location, {}).setdefault(root, {}).setdefault(c.source_uid, c)

    def within(c: Candidate) -> float:  # a candidate's term in its folder's own order
        return weight(c) / (FOLDER_RANK_CONSTANT + c.local_rank)

    places: dict[tuple[str, str], FolderPlace] = {}
    for location, records in best.items():
        if len({uid for legs in records.values() for uid in legs}) < 2:
            continue
        inside = {root: [within(c) for c in legs.values()] for root, legs in records.items()}
        weak = _weak_lexical_match(records)
        if weak is None:
            fused = sorted(records, key=lambda root: (-sum(inside[root]), -max(inside[root]), root))
        else:
            meaning = {root: max((within(c) for c in legs.values() if _by_meaning(c)), default=0.0)
                       for root, legs in records.items()}
            fused = sorted(records, key=lambda root: (-meaning[root], -sum(inside[root]), root))
        scores = sorted((max(term(c) for c in legs.values()) for legs in records.values()), reverse=True)
        for rank, (root, score) in enumerate(zip(fused, scores, strict=True), start=1):
            legs = sorted(records[root].values(), key=lambda c: c.source_id)
            places[(root, location)] = FolderPlace(
                rank=FolderRank.model_construct(
                    location=location,
                    legs=[LegRank.model_construct(source_id=c.source_id, local_rank=c.local_rank) for c in legs],
                    rank=rank,
                    weak_lexical_match=weak,
                ),
                score=score,
            )
    return places


def _by_meaning(c: Candidate) -> bool:
    return MatchSignal.semantic in (c.match_signals or ())


def _weak_lexical_match(records: Mapping[str, Mapping[str, Candidate]]) -> float | None:
    """The best relevance among the location's lexical candidates when it is under
    ``WEAK_LEXICAL`` and a meaning leg answered too; else None."""
    candidates = [c for legs in records.values() for c in legs.values()]
    lexical = [fused_relevance(c) for c in candidates if not _by_meaning(c)]
    if len(lexical) == len(candidates) or not lexical:  # one kind of evidence only
        return None
    best = max(lexical)
    return best if best < WEAK_LEXICAL else None
