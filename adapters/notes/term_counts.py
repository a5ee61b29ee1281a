"""How many chunks of the index hold each term of a question: the IDF weights' inputs.

Counting the chunks of a common term grows with the folder, so the counts are
remembered per generation (one state of the index) in this process and in the
store, and read from FTS5's vocabulary table only for terms not counted yet.
"""

from __future__ import annotations

import sqlite3

from adapters.notes.store import Store, row_counts

# (generation, stemmed term) → chunks holding it; (generation, "") → all chunks
_FREQUENCIES: dict[tuple[str, str], int] = {}
_FREQUENCIES_KEPT = 1 << 14


def document_frequencies(
    conn: sqlite3.Connection, index_terms: dict[str, str], generation: str | None, kept: Store | None
) -> tuple[dict[str, int], int]:
    """Each term (a key of ``index_terms``, valued by the term the index stores for it)
    → how many chunks the index holds it in, and how many chunks there are: the IDF
    weights' inputs (``adapter_sdk.relevance``). Remembered per ``generation`` (one
    state of the index, given only while no index work is pending), in this process and
    in ``kept``, since counting the chunks of a common term grows with the folder."""
    terms = set(index_terms.values())
    if not terms:
        return {}, 0
    frequencies, documents = _index_frequencies(conn, terms, generation, kept)
    return {term: frequencies[stored] for term, stored in index_terms.items()}, documents


def _index_frequencies(
    conn: sqlite3.Connection, terms: set[str], generation: str | None, kept: Store | None
) -> tuple[dict[str, int], int]:
    if generation and all((generation, term) in _FREQUENCIES for term in terms | {""}):
        return {term: _FREQUENCIES[generation, term] for term in terms}, _FREQUENCIES[generation, ""]
    documents = row_counts(conn)[1]
    found = kept.kept_term_counts(generation, sorted(terms)) if generation and kept else {}
    counted = sorted(terms - found.keys())
    if counted:
        conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.chunk_terms USING fts5vocab(main, chunk_text, row)"
        )
        marks = ",".join("?" * len(counted))
        rows = conn.execute(f"SELECT term, doc FROM temp.chunk_terms WHERE term IN ({marks})", counted)
        held = dict(rows.fetchall())
        now = {term: int(held.get(term, 0)) for term in counted}
        if generation and kept:
            kept.keep_term_counts(generation, now)
        found.update(now)
    frequencies = {term: found[term] for term in terms}
    if generation:
        if len(_FREQUENCIES) > _FREQUENCIES_KEPT:
            _FREQUENCIES.clear()
        _FREQUENCIES.update({(generation, term): n for term, n in frequencies.items()})
        _FREQUENCIES[generation, ""] = documents
    return frequencies, documents
