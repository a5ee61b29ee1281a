"""The shared relevance definition: how much of a record the question explains.

    relevance     = coverage * concentration
    coverage      = distinct query terms matched / distinct query terms   (at most 1)
    concentration = d / (d + 0.02),  d = matched occurrences / record length in terms

Measured over exactly the text that was matched, a query term matching a
record token when their term keys agree (``adapter_sdk.lexical``: ``exact``
spelling, or ``stemmed`` for a stemmed index). Every adapter reporting
``relevance_basis = lexical_span`` computes it this way, which is what lets the
broker scale priors by it without ever comparing raw scores.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from adapter_sdk.lexical import TermKey, exact

CONCENTRATION_REFERENCE = 0.02


def relevance(matched_terms: int, query_terms: int, occurrences: int, length: int) -> float:
    if query_terms <= 0 or length <= 0:
        return 1.0
    if matched_terms <= 0 or occurrences <= 0:
        return 0.0
    coverage = min(matched_terms / query_terms, 1.0)
    density = occurrences / length
    return coverage * (density / (density + CONCENTRATION_REFERENCE))


def lexical_relevance(
    query_terms: Iterable[str], record_terms: Sequence[str], key: TermKey = exact
) -> float:
    """Relevance of a tokenized record for a set of (already analyzed) query terms,
    each term and token compared by ``key``."""
    wanted = {key(term) for term in query_terms}
    matched: set[str] = set()
    occurrences = 0
    for token in record_terms:
        token_key = key(token)
        if token_key in wanted:
            matched.add(token_key)
            occurrences += 1
    return relevance(len(matched), len(wanted), occurrences, len(record_terms))
