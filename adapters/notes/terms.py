"""A question's content terms as this index spells them.

A term the index vocabulary does not hold is looked up under its regular
plural/singular spellings (``adapter_sdk.lexical.number_variants``); the ones
the vocabulary holds stand in for it. A term the index holds as written is
never widened, so a variant never competes with the caller's own spelling.
The vocabulary is FTS5's own (an ``fts5vocab`` table over ``chunk_text``),
the whole index rather than one note, so "this source does not use the word"
is what opens the lookup.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field

from adapter_sdk.lexical import number_variants

_VOCABULARY = "CREATE VIRTUAL TABLE IF NOT EXISTS temp.chunk_vocab USING fts5vocab(main, chunk_text, row)"


@dataclass(frozen=True)
class QueryTerms:
    """Each content term and the spellings that count as it in this index."""

    spellings: dict[str, tuple[str, ...]]
    variants: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def terms(self) -> set[str]:
        return set(self.spellings)

    def terms_spelled(self, token: str) -> set[str]:
        """The content terms an indexed token stands for (usually none or one)."""
        return {term for term, spelled in self.spellings.items() if token in spelled}

    @property
    def variant_spellings(self) -> set[str]:
        return {v for found in self.variants.values() for v in found}


def resolve_terms(conn: sqlite3.Connection, content_terms: Iterable[str]) -> QueryTerms:
    conn.execute(_VOCABULARY)
    spellings: dict[str, tuple[str, ...]] = {}
    variants: dict[str, tuple[str, ...]] = {}
    for term in content_terms:
        if term in spellings:
            continue
        if _holds(conn, term):
            spellings[term] = (term,)
            continue
        found = tuple(v for v in number_variants(term) if _holds(conn, v))
        spellings[term] = found or (term,)
        if found:
            variants[term] = found
    return QueryTerms(spellings, variants)


def _holds(conn: sqlite3.Connection, spelling: str) -> bool:
    # one equality probe per spelling: fts5vocab answers ``term = ?`` from the index, an IN list by scanning
    return conn.execute("SELECT 1 FROM temp.chunk_vocab WHERE term = ?", (spelling,)).fetchone() is not None
