"""Answer one search from the index: rank chunks, name exact matches, cut excerpts.

Ranking is FTS5's BM25 (k1 1.2, b 0.75) over each chunk's title (its heading
path, weighted 2) and body, multiplied by the share of the question's term
weight the chunk holds (each content term weighted by its IDF over the
chunks, ``adapter_sdk.relevance``), so the generic words of a question count
for less than its decisive ones; in a long chunk, the share its best passage
holds (``adapters.notes.proximity``). A natural-language question (one that lost
function words) admits only chunks holding at least two of its content terms,
or one term carrying at least half the question's weight (a rare, decisive
word), so scaffolding cannot manufacture a hit. Admission is tried narrowest first
(every term, then all but one, then the rule): when the chunks holding every term
fill the candidate pool, no chunk holding fewer is ranked (``admitted_by`` in the
diagnostics names the tier). A chunk whose own heading, or
whose note's title or file name, is spelled entirely by the question's terms
is the page about the thing asked: its score is multiplied by
``NAME_MATCH_BOOST``, and its relevance is at least the relevance measured
over that name alone (a name is matched text of its own). A query word naming
a note's relative path or file name, or a run of query tokens spelling a
declared alias or id, makes that note an exact-identifier hit; exact hits
rank first.

The index stores Porter stems (``adapter_sdk.lexical.STEMMED_FTS5_TOKENIZER``),
so a term matches every spelling sharing its stem ("backups", "backed up");
coverage, admission, relevance and excerpts count a term as held exactly when
a token of the chunk has its stem, except that a name Porter would turn into
another one ("https", "ipv6") must be spelled as asked
(``adapter_sdk.lexical.matching_stem``). Terms sharing a stem are one term.

A search with ``as_of`` filters on modification time, unless it is answered
from a git snapshot (``snapshot_indexes.py``): then the index searched already holds
the notes as committed at that instant, and only validity still applies.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from adapter_sdk import Candidate, ExcerptKind, MatchSignal, SearchParams, Sensitivity
from adapter_sdk.folder.revision import REVISION_PREFIX
from adapter_sdk.fts_admission import admission_tiers
from adapter_sdk.lexical import AnalyzedQuery, analyze_query, term_keys, tokenize, tokenize_unmarked
from adapter_sdk.lexical import matching_stem as stem_token
from adapter_sdk.lexical import stemmed as index_term
from adapter_sdk.markdown.chunking import split_lines, without_quotations
from adapter_sdk.relevance import decisive_terms, relevance, term_weight, weighted_coverage
from adapters.notes.excerpts import matched_window
from adapters.notes.proximity import passage_share, rescore_by_passages
from adapters.notes.ranker import RankerUnreadable
from adapters.notes.store import Store
from adapters.notes.supersession import attach_superseded_by, attach_supersedes, successions
from adapters.notes.term_counts import document_frequencies

if TYPE_CHECKING:
    from adapters.notes.ranker import Ranker

# chunks repeat their words: stemming each distinct token once is most of a search's CPU saved
stemmed = lru_cache(maxsize=1 << 16)(stem_token)

QUERY_ANALYZER = "alnum-fold+english-function-words+diacritic-fold+porter"
DEFAULT_LIMIT = 20
MAX_ADMISSION_TERMS = 10
NAME_MATCH_BOOST = 2.0
MAX_IDENTIFIER_TOKENS = 8
_WORD_TRIM = "\"'()[]{}<>,;!?`"
_CHUNK_COLUMNS = """c.id, c.note_id, c.ordinal, c.start_line, c.end_line, c.heading,
    c.heading_path, c.preview, n.path, n.project, n.mtime_ns, n.sha256, n.title AS doc_title,
    n.front, n.chunk_count, t.title AS chunk_title, t.body AS chunk_body"""


@dataclass
class Hit:
    row: sqlite3.Row
    score: float = 0.0
    matched: set[str] = field(default_factory=set)  # stems of the content terms the chunk holds
    spelled: set[str] = field(default_factory=set)  # the spellings it holds them under
    occurrences: int = 0
    length: int = 0
    body_terms: list[str] = field(default_factory=list)  # the body's tokens, as measured
    measured: bool = False  # whether _measure has read its text
    exact: bool = False
    alias: bool = False
    named: bool = False  # its heading, title or file name is what the question names

    @property
    def path(self) -> str:
        return str(self.row["path"])


@dataclass
class SearchContext:
    source_id: str
    observed_at: datetime
    complete: bool
    generation: str
    # a note's bytes as they are now (folder) or were committed (snapshot); None if unreadable
    read_note: Callable[[str], bytes | None]
    # 12 hex of the commit a snapshot index was built from; None for the folder's own index
    snapshot: str | None = None
    # where term counts are kept across processes, per generation (the folder's index)
    term_counts: Store | None = None
    # ranks the pool instead of FTS5: given only when it holds exactly what the index does
    ranker: Ranker | None = None
    # ``examples_quote_queries``: words a note quotes are found but do not count toward its relevance
    discount_quotations: bool = False

    def locator(self, path: str, start: int, end: int) -> str:
        local = f"{path}#L{start}-L{end}"
        return f"{self.source_id}:{local}@{self.snapshot}" if self.snapshot else f"{self.source_id}:{local}"


def run_search(
    conn: sqlite3.Connection, params: SearchParams, context: SearchContext
) -> tuple[list[Candidate], dict[str, Any]]:
    started = time.perf_counter()
    query = analyze_query(params.query)
    keyed = term_keys(query.content_terms, stemmed)  # stem → the question's first spelling of it
    terms = set(keyed)
    frequencies, documents = document_frequencies(
        conn, {term: index_term(spelling) for term, spelling in keyed.items()},
        context.generation if context.complete else None, context.term_counts,
    )
    weights = {term: term_weight(frequencies.get(term, 0), documents) for term in terms}
    where, args = _note_filters(params, as_of_on_mtime=context.snapshot is None)
    entity_terms = [t for entity in params.filters.entities or [] for t in tokenize(entity)]
    required = _required_terms(query, len(keyed))
    decisive = decisive_terms(weights) if required > 1 else set()
    diagnostics: dict[str, Any] = {
        "query_mode": "lexical",
        "query_analyzer": QUERY_ANALYZER,
        "query_term_count": len(query.content_terms),
    }
    if query.removed:
        diagnostics["query_terms_removed"] = list(query.removed)
    if required > 1:
        diagnostics["query_terms_required"] = required
        if decisive:
            diagnostics["query_terms_decisive"] = sorted(keyed[t] for t in decisive)
    if weights:
        diagnostics["query_term_weights"] = {keyed[t]: round(w, 3) for t, w in sorted(weights.items())}
    if entity_terms or params.filters.entities:
        diagnostics["entity_filter"] = "lexical_tokens"
    if params.as_of is not None:
        diagnostics["as_of"] = "git_snapshot" if context.snapshot else "filter_on_mtime"

    limit = params.limit or DEFAULT_LIMIT
    pool_size = max(limit * 3, 50)
    hits: dict[int, Hit] = {}
    if terms:
        held = [spelling for term, spelling in keyed.items() if frequencies.get(term)]
        tiers = [
            (name, _with_entities(expression, entity_terms))
            for name, expression in admission_tiers(
                list(keyed.values()), held, required, [keyed[t] for t in sorted(decisive)]
            )
        ]
        ranker = context.ranker if not where else None  # filters are SQL: FTS5 ranks
        ranked_pool: tuple[str, list[tuple[int, float]]] | None = None
        if ranker is not None:
            try:
                ranked_pool = _ranked_pool(conn, tiers, where, args, pool_size, ranker)
            except RankerUnreadable as exc:
                diagnostics["ranker_unused"] = str(exc)
        diagnostics["ranked_by"] = "tantivy" if ranked_pool else "fts5"
        diagnostics["admitted_by"], ranked = ranked_pool or _ranked_pool(conn, tiers, where, args, pool_size)
        for row in _load_chunks(conn, [r[0] for r in ranked]):
            hits[row["id"]] = Hit(row)
        for chunk_id, rank in ranked:
            if chunk_id in hits:  # a chunk the ranker held may be gone from the index since
                hits[chunk_id].score = -rank
    diagnostics["pool_size"] = len(hits)

    exact = _exact_notes(conn, params.query, query, terms, where, args)
    if diagnostics.get("admitted_by") == "every_term" and all(
        term == index_term(spelling) for term, spelling in keyed.items()
    ):
        # each chunk of this tier holds every held term, as the index matched it (the
        # ranker's stems nearly always agree), so its coverage is known; only the chunks
        # that are returned are measured below (not so for a name kept whole: the index
        # matched its stem)
        held_stems = {term for term in terms if frequencies.get(term)}
        for hit in hits.values():
            hit.matched = set(held_stems)
    else:
        for hit in hits.values():
            _measure(hit, terms)
    pooled_notes = {h.row["note_id"] for h in hits.values()}
    entity_stems = {stemmed(t) for t in entity_terms}
    for row in _first_chunks(conn, [n for n in exact if n not in pooled_notes]):
        if entity_stems and not entity_stems <= {
            stemmed(t) for t in tokenize(row["chunk_title"] + " " + row["chunk_body"])
        }:
            continue
        hit = Hit(row)
        _measure(hit, terms)
        hits[row["id"]] = hit
    identifier_coverage: dict[int, float] = {}
    for hit in hits.values():
        kinds = exact.get(hit.row["note_id"])
        if kinds:
            hit.exact = True
            hit.alias = "alias" in kinds[0]
            identifier_coverage[hit.row["id"]] = kinds[1]

    for hit in hits.values():
        hit.score *= weighted_coverage(hit.matched, weights)
        if hit.matched and _names_the_question(hit, terms):
            hit.score *= NAME_MATCH_BOOST
            hit.named = True
    rescore_by_passages(
        sorted(hits.values(), key=lambda h: (not h.exact, -h.score)),
        limit,
        lambda h: passage_share(
            tokenize_unmarked(h.row["chunk_title"]), h.body_terms, h.spelled, weights, stemmed
        ) if h.measured else 1.0,
    )
    # a chunk the index admitted by a stem it shares with no term of the question (a
    # name kept whole: "http" for "https") holds nothing asked for
    ordered = sorted(
        (h for h in hits.values() if h.matched or h.exact or not terms),
        key=lambda h: (not h.exact, -h.score, h.path, h.row["ordinal"]),
    )[:limit]
    for hit in ordered:
        if not hit.measured:
            _measure(hit, terms)
    candidates, unverified = _candidates(ordered, weights, identifier_coverage, context)
    supersedes_problems = attach_supersedes(conn, candidates, context.source_id)
    attach_superseded_by(
        successions(conn, context.generation if context.complete else None),
        candidates, context.source_id, params.as_of, as_of_on_mtime=context.snapshot is None,
    )
    if supersedes_problems:
        diagnostics["supersedes_unresolved"] = supersedes_problems
    if unverified:
        diagnostics["excerpt_basis_unavailable"] = unverified
    diagnostics["elapsed_ms"] = round((time.perf_counter() - started) * 1000, 1)
    return candidates, diagnostics


def _required_terms(query: AnalyzedQuery, distinct_terms: int) -> int:
    if query.normalized and 2 <= distinct_terms <= MAX_ADMISSION_TERMS:
        return 2
    return 1


def _names_the_question(hit: Hit, terms: set[str]) -> bool:
    """Whether the chunk's own heading, or its note's title or file name, is spelled
    entirely by the question's content terms (function words aside)."""
    return any(
        name_terms and name_terms <= terms for name_terms in map(_name_terms, _names(hit.row))
    )


def _names(row: sqlite3.Row) -> tuple[str, ...]:
    """What names a chunk: its own heading, and its note's title and file name."""
    heading_path = json.loads(row["heading_path"])
    stem = row["path"].rsplit("/", 1)[-1].rsplit(".", 1)[0]
    return (row["doc_title"], stem, *heading_path[-1:])


@lru_cache(maxsize=4096)
def _name_terms(name: str) -> frozenset[str]:
    return frozenset(stemmed(t) for t in analyze_query(name).content_terms)


def _field_relevance(name: str, weights: dict[str, float]) -> float:
    """Relevance measured over a name field alone: the heading, title or file name that
    a question spells is matched text of its own, so a page named for the thing asked
    is not outweighed by passages that merely mention it densely."""
    tokens = [stemmed(t) for t in tokenize(name)]
    matched = {t for t in tokens if t in weights}
    if not matched:
        return 0.0
    occurrences = sum(t in weights for t in tokens)
    return relevance(sum(weights[t] for t in matched), sum(weights.values()), occurrences, len(tokens))


def _ranked_pool(
    conn: sqlite3.Connection, tiers: list[tuple[str, str]], where: str, args: list[Any],
    pool_size: int, ranker: Ranker | None = None,
) -> tuple[str, list[tuple[int, float]]]:
    """The name of the first tier that fills the pool (else the last), and the pool's
    (chunk id, rank) pairs, lower ranks first (``adapter_sdk.fts_admission``: the weaker tiers
    are ranked only when the narrower ones do not fill it); by ``ranker`` when given,
    else by FTS5."""
    if ranker is not None:
        for name, expression in tiers:
            ranked = ranker.pool(expression, pool_size)
            if len(ranked) >= pool_size:
                return name, ranked
        return tiers[-1][0], ranked
    if where:
        sql = (
            "SELECT c.id, chunk_text.rank FROM chunk_text"
            " JOIN chunks c ON c.id = chunk_text.rowid JOIN notes n ON n.id = c.note_id"
            f" WHERE chunk_text MATCH ?{where} ORDER BY chunk_text.rank LIMIT ?"
        )
    else:  # FTS5 alone keeps its top-k sort cheap
        sql = "SELECT rowid, rank FROM chunk_text WHERE chunk_text MATCH ? ORDER BY rank LIMIT ?"
    for name, expression in tiers:
        ranked = conn.execute(sql, [expression, *args, pool_size]).fetchall()
        if len(ranked) >= pool_size:
            return name, ranked
    return tiers[-1][0], ranked


def _with_entities(expression: str, entity_terms: list[str]) -> str:
    if entity_terms:
        return f"({expression}) AND " + " AND ".join(f'"{t}"' for t in entity_terms)
    return expression


def _note_filters(params: SearchParams, as_of_on_mtime: bool) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    args: list[Any] = []
    filters = params.filters
    if filters.since is not None:
        clauses.append("n.mtime_ns >= ?")
        args.append(_ns(filters.since))
    if filters.until is not None:
        clauses.append("n.mtime_ns <= ?")
        args.append(_ns(filters.until))
    if params.as_of is not None and as_of_on_mtime:
        clauses.append("n.mtime_ns <= ?")
        args.append(_ns(params.as_of))
    if filters.project is not None:
        clauses.append("n.project = ?")
        args.append(filters.project.lower())
    return "".join(f" AND {c}" for c in clauses), args


# the nanosecond instants SQLite's INTEGER holds (1677-09-21 to 2262-04-11): an instant
# beyond them, at the calendar's edges, is clamped to the nearest, as no note is older
# or newer than those
_NS_RANGE = (-(2**63), 2**63 - 1)


def _ns(instant: datetime) -> int:
    if instant.tzinfo is None:
        instant = instant.replace(tzinfo=UTC)
    ns = int(instant.timestamp() * 1_000_000) * 1000
    return min(max(ns, _NS_RANGE[0]), _NS_RANGE[1])


def _load_chunks(conn: sqlite3.Connection, chunk_ids: list[int]) -> list[sqlite3.Row]:
    if not chunk_ids:
        return []
    marks = ",".join("?" * len(chunk_ids))
    cursor = conn.cursor()
    cursor.row_factory = sqlite3.Row
    return cursor.execute(
        f"SELECT {_CHUNK_COLUMNS} FROM chunks c JOIN notes n ON n.id = c.note_id"
        f" JOIN chunk_text t ON t.rowid = c.id WHERE c.id IN ({marks})",
        chunk_ids,
    ).fetchall()


def _first_chunks(conn: sqlite3.Connection, note_ids: list[int]) -> list[sqlite3.Row]:
    if not note_ids:
        return []
    marks = ",".join("?" * len(note_ids))
    ids = conn.execute(
        f"SELECT id FROM chunks WHERE ordinal = 0 AND note_id IN ({marks})", note_ids
    ).fetchall()
    return _load_chunks(conn, [r[0] for r in ids])


def _exact_notes(
    conn: sqlite3.Connection, raw: str, query: AnalyzedQuery, terms: set[str], where: str,
    args: list[Any],
) -> dict[int, tuple[set[str], float]]:
    """note id → (identifier kinds matched, share of content terms the identifier spells)."""
    names = _query_words(raw)
    tokens = query.raw_terms
    runs = {
        " ".join(tokens[i:j])
        for i in range(len(tokens))
        for j in range(i + 1, min(len(tokens), i + MAX_IDENTIFIER_TOKENS) + 1)
    }
    found: dict[int, tuple[set[str], float]] = {}
    for keys, kinds in ((names, ("path", "name")), (runs, ("alias", "id"))):
        if not keys:
            continue
        marks = ",".join("?" * len(keys))
        kind_marks = ",".join("?" * len(kinds))
        rows = conn.execute(
            f"SELECT i.note_id, i.kind, i.key FROM identifiers i JOIN notes n ON n.id = i.note_id"
            f" WHERE i.key IN ({marks}) AND i.kind IN ({kind_marks}){where}",
            [*keys, *kinds, *args],
        ).fetchall()
        for note_id, kind, key in rows:
            spelled = {stemmed(t) for t in tokenize(key)} & terms
            share = len(spelled) / len(terms) if terms else 1.0
            kinds_seen, best = found.get(note_id, (set(), 0.0))
            kinds_seen.add(kind)
            found[note_id] = (kinds_seen, max(best, share))
    return found


def _query_words(raw: str) -> set[str]:
    words = set()
    for word in raw.split():
        word = word.strip(_WORD_TRIM).rstrip(".").lower()
        if not word:
            continue
        words.add(word)
        if "#" in word:
            words.add(word.split("#", 1)[0])
        if ":" in word:
            local = word.split(":", 1)[1]
            words.add(local)
            words.add(local.split("#", 1)[0])
    return {w for w in words if w}


def _measure(hit: Hit, terms: set[str]) -> None:
    # the index stores text already unmarked (``chunking.indexable``)
    hit.measured = True
    hit.body_terms = tokenize_unmarked(hit.row["chunk_body"])
    record_terms = tokenize_unmarked(hit.row["chunk_title"]) + hit.body_terms
    hit.length = len(record_terms)
    # Porter stemming only rewrites a word's ending, so an ASCII token whose first
    # letter starts no term cannot match one: it is skipped without being stemmed
    initials = {term[0] for term in terms if term}
    for token, count in Counter(record_terms).items():
        if token.isascii() and token[:1] not in initials:
            continue
        token_stem = stemmed(token)
        if token_stem in terms:
            hit.matched.add(token_stem)
            hit.spelled.add(token)
            hit.occurrences += count


def _own_relevance(hit: Hit, weights: dict[str, float], query_weight: float) -> float:
    """Relevance measured over the chunk's own words, its quotations left out.

    A chunk that holds the query's words only inside quotations is about
    something else (a page quoting example questions): it measures 0, and the
    broker withholds it below the relevance floor, named, instead of letting
    it compete with the record that answers.
    """
    own = tokenize_unmarked(hit.row["chunk_title"]) + tokenize_unmarked(without_quotations(hit.row["chunk_body"]))
    if not own:
        return 0.0
    matched: set[str] = set()
    occurrences = 0
    for token, count in Counter(own).items():
        token_stem = stemmed(token)
        if token_stem in hit.matched:
            matched.add(token_stem)
            occurrences += count
    return relevance(sum(weights[t] for t in matched), query_weight, occurrences, len(own))


def _candidates(
    hits: list[Hit], weights: dict[str, float], identifier_coverage: dict[int, float],
    context: SearchContext,
) -> tuple[list[Candidate], int]:
    query_weight = sum(weights.values())
    live = {h.path: _note_lines(context, h.path, h.row["sha256"]) for h in hits}
    unverified = 0
    candidates = []
    for rank, hit in enumerate(hits, start=1):
        row = hit.row
        front = json.loads(row["front"])
        lines = live[hit.path]
        excerpt: str | None = None
        kind: ExcerptKind | None = None
        if lines is None:
            unverified += 1
        else:
            body_from = row["start_line"] + 1 if row["heading"] else row["start_line"]
            excerpt = matched_window(lines[body_from - 1 : row["end_line"]], hit.spelled)
            kind = ExcerptKind.matched
            if excerpt is None:
                excerpt, kind = row["preview"] or None, ExcerptKind.preview
        if context.discount_quotations:
            lexical_relevance = _own_relevance(hit, weights, query_weight)
        else:
            matched_weight = sum(weights[t] for t in hit.matched)
            lexical_relevance = relevance(matched_weight, query_weight, hit.occurrences, hit.length)
        if hit.named:
            lexical_relevance = max(
                lexical_relevance, *(_field_relevance(name, weights) for name in _names(row))
            )
        signals = [MatchSignal.lexical] if hit.matched else []
        if hit.exact:
            signals.append(MatchSignal.exact_identifier)
            if hit.alias:
                signals.append(MatchSignal.alias)
        candidate_relevance = max(lexical_relevance, identifier_coverage.get(row["id"], 0.0))
        candidates.append(
            Candidate(
                candidate_id=f"{hit.path}#c{row['ordinal']}",
                source_record_id=hit.path,
                locator=context.locator(hit.path, row["start_line"], row["end_line"]),
                record_type="document",
                title=row["chunk_title"],
                excerpt=excerpt,
                excerpt_kind=kind if excerpt else None,
                local_rank=rank,
                local_score=round(hit.score, 6),
                relevance=round(min(candidate_relevance, 1.0), 6),
                match_signals=signals or None,
                observed_at=context.observed_at,
                confirmed_at=context.observed_at if context.complete else None,
                event_time=datetime.fromtimestamp(row["mtime_ns"] / 1e9, tz=UTC),
                valid_from=front.get("valid_from"),
                valid_to=front.get("valid_to"),
                source_revision=f"git:{context.snapshot}" if context.snapshot else REVISION_PREFIX + row["sha256"][:12],
                sensitivity=Sensitivity.internal,
                metadata=_metadata(row, front, context.generation),
                content_fingerprint=hashlib.sha256(" ".join(hit.body_terms).encode()).hexdigest()[:16],
            )
        )
    return candidates, unverified


def _note_lines(context: SearchContext, path: str, sha256: str) -> list[str] | None:
    """The note's lines, only if its bytes are exactly the revision that was indexed."""
    data = context.read_note(path)
    if data is None or hashlib.sha256(data).hexdigest() != sha256:
        return None
    return split_lines(data.decode("utf-8", errors="replace"))


def _metadata(row: sqlite3.Row, front: dict[str, Any], generation: str) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        "path": row["path"],
        "heading": row["heading"],
        "heading_path": json.loads(row["heading_path"]),
        "start_line": row["start_line"],
        "end_line": row["end_line"],
        "chunk_index": row["ordinal"],
        "chunk_count": row["chunk_count"],
        "doc_title": row["doc_title"],
        "project": row["project"],
        "generation": generation,
    }
    for key, target in (("tags", "tags"), ("aliases", "aliases"), ("id", "note_id")):
        if front.get(key):
            metadata[target] = front[key]
    if front.get("supersedes"):
        metadata["supersedes"] = list(front["supersedes"])
    if front.get("problems"):
        metadata["front_matter_problems"] = front["problems"]
    return metadata
