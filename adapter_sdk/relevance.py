"""The shared relevance definition: how much of a record the question explains.

    relevance     = coverage * concentration
    coverage      = weight of the distinct query terms matched / weight of all of them  (at most 1)
    concentration = d / (d + 0.02),  d = matched occurrences / record length in terms

A term's weight is how informative it is in the source searched: its inverse
document frequency (``term_weight``, BM25's), so a question's rare, decisive
words count for more than the generic words around them, and a word the
source never holds weighs most of all. A source that cannot count document
frequencies weighs every term 1, which makes coverage the plain share of
terms matched.

Measured over exactly the text that was matched, a query term matching a
record token when their term keys agree (``adapter_sdk.lexical``: ``exact``
spelling, or ``stemmed`` for a stemmed index). Every adapter reporting
``relevance_basis = lexical_span`` computes it this way, which is what lets the
broker scale priors by it without ever comparing raw scores.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from adapter_sdk.lexical import TermKey, exact

CONCENTRATION_REFERENCE = 0.02
DECISIVE_SHARE = 0.5
"""A term holding at least this share of a question's weight is decisive: it admits a
record on its own where a prose question otherwise needs two of its terms."""


def relevance(matched_weight: float, query_weight: float, occurrences: int, length: int) -> float:
    """``matched_weight`` and ``query_weight``: summed term weights of the matched and of
    all distinct query terms (counts of terms when every term weighs 1)."""
    if query_weight <= 0 or length <= 0:
        return 1.0
    if matched_weight <= 0 or occurrences <= 0:
        return 0.0
    coverage = min(matched_weight / query_weight, 1.0)
    density = occurrences / length
    return coverage * (density / (density + CONCENTRATION_REFERENCE))


def term_weight(document_frequency: int, documents: int) -> float:
    """BM25's inverse document frequency, ``ln(1 + (N - df + 0.5) / (df + 0.5))``: always
    positive, largest for a term no record holds."""
    df = min(max(document_frequency, 0), max(documents, 0))
    return math.log(1.0 + (documents - df + 0.5) / (df + 0.5))


def weighted_coverage(matched: Iterable[str], weights: Mapping[str, float]) -> float:
    """The share of the query's term weight (``weights``: each distinct term key → weight)
    held by the ``matched`` keys."""
    total = sum(weights.values())
    if total <= 0:
        return 0.0
    return min(sum(weights.get(key, 0.0) for key in set(matched)) / total, 1.0)


def decisive_terms(weights: Mapping[str, float]) -> set[str]:
    """The term keys of ``weights`` informative enough to admit a record on their own."""
    total = sum(weights.values())
    if total <= 0:
        return set()
    return {key for key, weight in weights.items() if weight / total >= DECISIVE_SHARE}


def lexical_relevance(
    query_terms: Iterable[str], record_terms: Sequence[str], key: TermKey = exact,
    weights: Mapping[str, float] | None = None,
) -> float:
    """Relevance of a tokenized record for a set of (already analyzed) query terms,
    each term and token compared by ``key``; ``weights`` maps term keys to their weight
    (every term weighs 1 without it)."""
    wanted = {key(term) for term in query_terms}
    matched: set[str] = set()
    occurrences = 0
    for token in record_terms:
        token_key = key(token)
        if token_key in wanted:
            matched.add(token_key)
            occurrences += 1
    weight = (lambda key: 1.0) if weights is None else (lambda key: weights.get(key, 1.0))
    return relevance(
        sum(map(weight, matched)), sum(map(weight, wanted)), occurrences, len(record_terms)
    )
