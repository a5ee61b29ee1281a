"""Query class and the stable identifiers a query names.

Stable identifier syntax wins over sentence shape ("what is the state of
aaaa0001?" is an identifier lookup); a single term is the terse lookup shape;
every other query is natural language. An empty query has no class.
"""

from __future__ import annotations

import re

from adapter_sdk.lexical import stable_identifiers
from broker.contracts import QueryClass

_TERM = re.compile(r"[^\W_]+")


def classify_query(query: str) -> QueryClass | None:
    terms = _TERM.findall(query)
    if not terms:
        return None
    if len(terms) == 1 or stable_identifiers(query):
        return QueryClass.identifier_query
    return QueryClass.natural_language


def query_identifiers(query: str) -> frozenset[str]:
    """The query's stable identifier tokens, lowercased for comparison with identities."""
    return frozenset(token.lower() for token in stable_identifiers(query))
