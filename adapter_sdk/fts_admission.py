"""The FTS5 expressions that admit records for a question, narrowest first.

FTS5 stems each quoted term as it stems the index, so a term meets all its
spellings. The admission rule: with ``required`` 2 (a prose question), a pair of
the terms or one ``decisive`` term (``adapter_sdk.relevance.decisive_terms``)
admits a record; otherwise any one term does.

BM25 is computed for every record an expression admits, and a common word admits
a share of every record in the source: ranking the records that hold only some
of the terms is the one cost that grows with the corpus. So admission is tried in
tiers, the records holding every term first, then all but one of them, then the
rule itself; an index asks for the first tier whose records fill its candidate
pool, and ranks only those. BM25 sums over an expression's phrases, so ranks from
two tiers are never mixed.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

MAX_TIERED_TERMS = 6  # beyond it, "all but one term" is too many conjunctions to be cheap


def admission_tiers(
    terms: Sequence[str], held: Sequence[str], required: int, decisive: Sequence[str] = ()
) -> list[tuple[str, str]]:
    """(name, FTS5 expression) of each tier, narrowest first: ``every_term`` of ``held``
    (the terms some record holds), ``all_but_one_term`` of them, and the
    ``admission_rule`` over all ``terms``."""
    tiers = []
    if len(held) >= 2:
        tiers.append(("every_term", _all_of(held)))
    if 3 <= len(held) <= MAX_TIERED_TERMS and len(held) - 1 > required:
        tiers.append(("all_but_one_term", " OR ".join(
            f"({_all_of(subset)})" for subset in combinations(held, len(held) - 1)
        )))
    return [*tiers, ("admission_rule", match_expression(terms, required, decisive))]


def match_expression(terms: Sequence[str], required: int, decisive: Sequence[str] = ()) -> str:
    """The admission rule: a pair of ``terms`` or one ``decisive`` term when ``required``
    is 2, else any one term."""
    quoted = [f'"{t}"' for t in terms]
    if required == 2:
        pairs = [f"({a} AND {b})" for a, b in combinations(quoted, 2)]
        return " OR ".join(pairs + [f'"{t}"' for t in decisive])
    return " OR ".join(quoted)


def _all_of(terms: Sequence[str]) -> str:
    return " AND ".join(f'"{t}"' for t in terms)
