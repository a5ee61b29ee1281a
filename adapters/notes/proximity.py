"""How close together a chunk holds the question's words: its best passage's coverage.

A long chunk (a command's whole option list, a long how-to section) can hold
the words of a question scattered over hundreds of lines without saying
anything about what was asked. A chunk's coverage, which scales its score, is
therefore the largest share of the question's term weight held within
``PASSAGE_TOKENS`` consecutive tokens of its body, a term of its heading
counting in every passage. A chunk no longer than a passage is one passage: its
coverage is its plain weighted coverage.

Finding a long chunk's best passage reads every token of it, so chunks are
rescored best first and only while one could still reach the results shown:
a passage's share never exceeds the chunk's, so a chunk already scoring below
the last shown rescored one stays below it (``rescore_by_passages``).

``PASSAGE_TOKENS`` was chosen on the tuning halves of the judged packs (30, 50,
100 and 200 tried; eval/README.md).
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from itertools import compress
from typing import Protocol, TypeVar

from adapter_sdk.relevance import weighted_coverage

PASSAGE_TOKENS = 50


class Scored(Protocol):
    score: float
    exact: bool


S = TypeVar("S", bound=Scored)


def rescore_by_passages(ranked: Sequence[S], limit: int, share: Callable[[S], float]) -> None:
    """Multiply each score by ``share`` (at most 1) of its hit, ``ranked`` exact hits
    first and then best first, skipping the hits that cannot reach the first ``limit``
    whatever their share: those keep their score, which is already below the
    ``limit``-th rescored one, so the first ``limit`` and their order are as if every
    hit had been rescored."""
    room = limit - sum(hit.exact for hit in ranked)
    shown: list[float] = []  # the best ``room`` rescored scores of inexact hits, a min-heap
    for hit in ranked:
        if not hit.exact:
            if room <= 0 or (len(shown) == room and hit.score < shown[0]):
                break
        hit.score *= share(hit)
        if not hit.exact:
            if len(shown) < room:
                heapq.heappush(shown, hit.score)
            elif hit.score > shown[0]:
                heapq.heapreplace(shown, hit.score)


def passage_share(
    title_tokens: Sequence[str],
    body_tokens: Sequence[str],
    spelled: Collection[str],
    weights: Mapping[str, float],
    key: Callable[[str], str],
) -> float:
    """``passage_coverage`` as a share of the chunk's own weighted coverage (1 for a
    chunk of one passage): what its score is multiplied by."""
    whole = weighted_coverage({key(t) for t in spelled} & weights.keys(), weights)
    return passage_coverage(title_tokens, body_tokens, spelled, weights, key) / whole if whole else 1.0


def passage_coverage(
    title_tokens: Sequence[str],
    body_tokens: Sequence[str],
    spelled: Collection[str],
    weights: Mapping[str, float],
    key: Callable[[str], str],
) -> float:
    """The largest weighted share of ``weights``' terms that the heading plus any
    ``PASSAGE_TOKENS`` consecutive body tokens hold; ``spelled`` are the chunk's tokens
    that match a term (as ``key`` reduces them), the only ones looked up."""
    keys = {token: k for token in spelled if (k := key(token)) in weights}
    if len(body_tokens) <= PASSAGE_TOKENS or len(set(keys.values())) < 2:
        return weighted_coverage(keys.values(), weights)  # one passage, or one term: all of it
    in_title = {keys[t] for t in title_tokens if t in keys}
    total = sum(weights.values())
    if total <= 0:
        return 0.0
    # the positions of the body's matching tokens, found by C-level iteration
    hits = [
        (i, keys[body_tokens[i]])
        for i in compress(range(len(body_tokens)), map(keys.__contains__, body_tokens))
        if keys[body_tokens[i]] not in in_title
    ]
    best, window, start = 0.0, Counter[str](), 0
    for position, term in hits:
        window[term] += 1
        while hits[start][0] <= position - PASSAGE_TOKENS:
            gone = hits[start][1]
            window[gone] -= 1
            if not window[gone]:
                del window[gone]
            start += 1
        best = max(best, sum(weights[k] for k in window))
    return min((sum(weights[k] for k in in_title) + best) / total, 1.0)
