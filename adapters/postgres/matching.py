"""Which rows a question matches: the tsqueries a search runs, most demanding first.

A question written in ``websearch_to_tsquery`` syntax (double quotes, ``or``,
``-word``) is passed as typed: the user said what must match. Otherwise each
content term goes through ``websearch_to_tsquery`` on its own (so the text
configuration stems it and drops its stop words) and the terms are combined:

* one term: that term;
* two to :data:`MAX_PAIRED_TERMS` terms: rows holding at least two of them,
  or, only when no row does, rows holding any;
* more terms: rows holding any.

Requiring two terms keeps a question's common words from matching most of a
large table (every matching row is ranked), as the notes adapter admits a
question; the second stage keeps a row that has one rare term findable when
nothing better exists.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from itertools import combinations

from adapter_sdk.lexical import AnalyzedQuery

MAX_PAIRED_TERMS = 6
_WEBSEARCH_OPERATORS = ('"', " or ", " OR ", " -")


class Shape(StrEnum):
    websearch = "websearch"  # the question as typed
    pairs = "pairs"  # at least two of the terms
    any = "any"  # at least one of the terms


@dataclass(frozen=True)
class Match:
    shape: Shape
    texts: tuple[str, ...]

    def groups(self) -> list[tuple[int, ...]]:
        """Indexes into ``texts`` ANDed together; the groups are ORed."""
        if self.shape is Shape.pairs:
            return list(combinations(range(len(self.texts)), 2))
        return [(index,) for index in range(len(self.texts))]


def stages(query: str, analyzed: AnalyzedQuery) -> list[Match]:
    if any(operator in f" {query} " for operator in _WEBSEARCH_OPERATORS):
        return [Match(Shape.websearch, (query,))]
    terms = analyzed.content_terms
    if not terms:
        return []
    if 2 <= len(terms) <= MAX_PAIRED_TERMS:
        return [Match(Shape.pairs, terms), Match(Shape.any, terms)]
    return [Match(Shape.any, terms)]
