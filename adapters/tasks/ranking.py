"""Select and order tasks for a query: pure functions over records, no I/O, no clock.

A working-set id (``task 3``) is the name Taskwarrior gives a task for now, so
a hit by one is reported as both ``exact_identifier`` and ``alias``: the
query used a name the record answers to at this instant.

Order: exact-identifier hits first (in the order the query names them), then
local score (IDF-weighted matched terms — description 1.0, annotations 0.6,
project/tags 0.5 — times the share of the query's IDF weight covered), then open before
closed, soonest due, record id.

Terms are compared by their Porter stems (``adapter_sdk.lexical.stemmed``),
as the notes and mbox indexes compare them: "backups" finds "backup", and
words sharing a stem are one term.

Admission: a record must contain at least one query term, or, when the
question was natural language (function words removed) and has two or more
content terms, two of them or one decisive term (``adapter_sdk.relevance``:
one carrying half the question's IDF weight), so scaffolding cannot
manufacture hits. Relevance weighs each term by the same IDF. Field constraints must
all hold. With no free terms, the records satisfying the constraints are hits.

Scope: ``project`` matches the project or any sub-project; ``since``/``until``
and ``as_of`` compare the task's entry time. A task with no entry time (a
todo.txt line without a creation date) cannot be placed in time, so a dated
scope leaves it out and counts it when it would have matched.
"""

from __future__ import annotations

import heapq
import math
import sys
from dataclasses import dataclass
from datetime import datetime

from adapter_sdk import MatchSignal
from adapter_sdk.lexical import stemmed, term_keys, tokenize
from adapter_sdk.relevance import decisive_terms, lexical_relevance, term_weight, weighted_coverage
from adapters.tasks.query import TaskQuery
from adapters.tasks.task_record import CLOSED_STATUSES, Annotation, TaskRecord

DESCRIPTION_WEIGHT = 1.0
ANNOTATION_WEIGHT = 0.6
FIELD_WEIGHT = 0.5


@dataclass(frozen=True, slots=True)
class Hit:
    record: TaskRecord
    exact: bool
    score: float
    relevance: float
    signals: tuple[MatchSignal, ...]
    matched_terms: frozenset[str]
    matched_annotation: Annotation | None


@dataclass(frozen=True, slots=True)
class Scope:
    """The request's filters and evaluation instant, applied before matching."""

    project: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    as_of: datetime | None = None

    @property
    def needs_dates(self) -> bool:
        return self.since is not None or self.until is not None or self.as_of is not None


@dataclass(frozen=True, slots=True)
class Ranking:
    hits: list[Hit]
    matched_count: int
    pool_size: int
    excluded_by_as_of: int
    undated_matches_excluded: int


@dataclass(frozen=True, slots=True)
class _Terms:
    """A record's token stems, by field."""

    description: frozenset[str]
    annotations: tuple[frozenset[str], ...]
    fields: frozenset[str]
    all_terms: tuple[str, ...]
    present: frozenset[str]  # every field's stems together


# Names how ``record_stems`` derives a record's terms (``adapter_sdk.lexical.tokenize``:
# NFKC, CJK characters as words, in-word markup removed, long tokens dropped; then
# ``stemmed``: diacritics folded, Porter): a snapshot cache keeps stems only under this name.
# Change it with anything that changes those stems; tests/adapters/tasks/test_stems_cache.py pins them.
STEMS_ANALYZER = "unicode-words+unmark+porter/1"

# A record's stems, packed in one string: its description's, then its projects', tags' and
# contexts', then each annotation's, a tab between the parts and a space between the stems
# (a stem is letters and digits). One string per record keeps a snapshot's stems small.
RecordStems = str


class RecordIndex:
    """The stems of each record of one snapshot, and which records hold each stem.

    Built once per snapshot, so a search stems only the question. ``stems``, when given,
    are ``record_stems(records)`` kept from an earlier process.
    """

    def __init__(self, records: list[TaskRecord], stems: list[RecordStems] | None = None) -> None:
        self.records = records
        if stems is None:
            stems = record_stems(records)
        self.view = [(record, _unpacked(s)) for record, s in zip(records, stems, strict=True)]
        postings: dict[str, list[int]] = {}
        for position, (_record, record_terms) in enumerate(self.view):
            for term in record_terms.present:
                postings.setdefault(term, []).append(position)
        self.postings = postings


def rank(
    records: list[TaskRecord], query: TaskQuery, scope: Scope, limit: int,
    index: RecordIndex | None = None,
) -> Ranking:
    """``index``, when given, must have been built over ``records``."""
    if index is None or index.records is not records:
        index = RecordIndex(records)
    whole = scope.project is None and not scope.needs_dates
    undated: list[tuple[TaskRecord, _Terms]] = []
    if whole:
        view, excluded_by_as_of = index.view, 0
    else:
        view, undated, excluded_by_as_of = _scoped(index, scope)
    scored, matched_count = _match(view, query, index.postings if whole else None, limit)
    undated_matches = _match(undated, query, None, 0)[1] if undated else 0
    return Ranking([_hit(*item) for item in scored], matched_count, len(view),
                   excluded_by_as_of, undated_matches)


def _scoped(index: RecordIndex, scope: Scope) -> tuple[
    list[tuple[TaskRecord, _Terms]], list[tuple[TaskRecord, _Terms]], int
]:
    """The records in scope, those that cannot be placed in time, and how many ``as_of`` hid."""
    view: list[tuple[TaskRecord, _Terms]] = []
    undated: list[tuple[TaskRecord, _Terms]] = []
    excluded_by_as_of = 0
    for record, record_terms in index.view:
        if scope.project is not None and not project_matches(record, scope.project):
            continue
        if scope.needs_dates and record.entry is None:
            undated.append((record, record_terms))
            continue
        if scope.as_of is not None and record.entry is not None and record.entry > scope.as_of:
            excluded_by_as_of += 1
            continue
        if scope.since is not None and record.entry is not None and record.entry < scope.since:
            continue
        if scope.until is not None and record.entry is not None and record.entry > scope.until:
            continue
        if scope.as_of is not None:
            record = record.as_of(scope.as_of)
            record_terms = _terms_of(record)
        view.append((record, record_terms))
    return view, undated, excluded_by_as_of


def project_matches(record: TaskRecord, wanted: str) -> bool:
    """Equal, or a sub-project of ``wanted`` (``infra.backup`` is in ``infra``), any case."""
    wanted = wanted.casefold()
    return any(
        p.casefold() == wanted or p.casefold().startswith(wanted + ".") for p in record.projects
    )


# a hit before its relevance, signals and excerpt are worked out: those only for shown hits
# (record, its terms, each query term → its IDF, the terms it holds, score, exact, alias)
_Scored = tuple[TaskRecord, "_Terms", dict[str, float], set[str], float, bool, bool]


def _match(
    view: list[tuple[TaskRecord, _Terms]], query: TaskQuery,
    postings: dict[str, list[int]] | None, limit: int,
) -> tuple[list[_Scored], int]:
    """The first ``limit`` hits in order, and how many hits there are. ``postings`` (stem →
    positions in ``view``) is built when not given."""
    exact_order = {rid: i for i, rid in enumerate(query.record_ids)}
    working_order = {wid: len(exact_order) + i for i, wid in enumerate(query.working_ids)}
    terms = tuple(term_keys(query.terms, stemmed))
    required = 2 if query.analyzed.normalized and len(terms) >= 2 else 1
    if postings is None:
        postings = {}
        for position, (_record, record_terms) in enumerate(view):
            for term in terms:
                if term in record_terms.present:
                    postings.setdefault(term, []).append(position)
    idf = _idf(terms, postings, len(view))
    decisive = decisive_terms(idf) if required > 1 else set()

    exact_hits: list[tuple[int, _Scored]] = []
    if exact_order or working_order:
        for record, record_terms in view:
            exact = _exact_position(record, exact_order, working_order)
            if exact is not None:
                order, by_working_id = exact
                exact_hits.append(
                    (order, _scored(record, record_terms, terms, idf, exact=True, alias=by_working_id))
                )
    exact_hits.sort(key=lambda item: (item[0], item[1][0].record_id))
    exact_ids = {hit[0].record_id for _, hit in exact_hits}
    ranked, ranked_count = (
        _ranked_by_terms(view, query, terms, idf, postings, required, decisive, exact_ids, limit)
        if terms else _ranked_by_constraints(view, query, exact_ids, limit)
    )
    return ([hit for _, hit in exact_hits] + ranked)[:limit], len(exact_hits) + ranked_count


def _ranked_by_terms(
    view: list[tuple[TaskRecord, _Terms]], query: TaskQuery, terms: tuple[str, ...],
    idf: dict[str, float], postings: dict[str, list[int]], required: int, decisive: set[str],
    exact_ids: set[str], limit: int,
) -> tuple[list[_Scored], int]:
    """The first ``limit`` records holding enough of ``terms`` (exact hits aside), in
    order, and how many there are.

    Term at a time: each term adds its weighted IDF to the records of its postings, and
    marks them as holding it (a bit of ``held``), so a record is looked at once per term
    it holds and only the records shown are made into hits.
    """
    weighted: dict[int, float] = {}
    held: dict[int, int] = {}
    for bit, term in enumerate(terms):
        idf_weight = idf[term]
        for position in postings.get(term, ()):
            record_terms = view[position][1]
            # ``_field_weight`` unrolled: this runs once per posting, thousands a search
            field_weight = (
                DESCRIPTION_WEIGHT if term in record_terms.description else _other_field_weight(record_terms, term)
            )
            weighted[position] = weighted.get(position, 0.0) + idf_weight * field_weight
            held[position] = held.get(position, 0) | 1 << bit

    matched_by_mask: dict[int, frozenset[str]] = {}
    coverage_by_mask: dict[int, float | None] = {}  # None: too few terms to be admitted
    scored: list[tuple[float, int, int]] = []  # score, position, mask
    for position, mask in held.items():
        if mask not in coverage_by_mask:
            matched = matched_by_mask[mask] = frozenset(t for i, t in enumerate(terms) if mask >> i & 1)
            admitted = len(matched) >= min(required, len(terms)) or bool(matched & decisive)
            coverage_by_mask[mask] = weighted_coverage(matched, idf) if admitted else None
        coverage = coverage_by_mask[mask]
        if coverage is None:
            continue
        record = view[position][0]
        if record.record_id in exact_ids:
            continue
        if query.constraints and not all(_holds(record, name, value) for name, value in query.constraints):
            continue
        scored.append((round(weighted[position] * coverage, 6), position, mask))
    # only records scoring at least the limit-th best score can be shown: order just those
    floor = heapq.nlargest(limit, (score for score, _, _ in scored))[-1] if 0 < limit < len(scored) else -math.inf
    shown = heapq.nsmallest(
        limit, (entry for entry in scored if entry[0] >= floor),
        key=lambda entry: _order_key(view[entry[1]][0], entry[0]),
    )
    return [
        (view[position][0], view[position][1], idf, set(matched_by_mask[mask]), score, False, False)
        for score, position, mask in shown
    ], len(scored)


def _ranked_by_constraints(
    view: list[tuple[TaskRecord, _Terms]], query: TaskQuery, exact_ids: set[str], limit: int,
) -> tuple[list[_Scored], int]:
    """A question of field constraints alone: every record satisfying them, in order."""
    if not query.constraints:
        return [], 0
    hits: list[_Scored] = [
        (record, record_terms, {}, set(), 0.0, False, False)
        for record, record_terms in view
        if record.record_id not in exact_ids
        and all(_holds(record, name, value) for name, value in query.constraints)
    ]
    return heapq.nsmallest(limit, hits, key=lambda hit: _order_key(hit[0], hit[4])), len(hits)


def _field_weight(record_terms: _Terms, term: str) -> float:
    if term in record_terms.description:
        return DESCRIPTION_WEIGHT
    return _other_field_weight(record_terms, term)


def _other_field_weight(record_terms: _Terms, term: str) -> float:
    """The weight of a term a record holds outside its description."""
    return ANNOTATION_WEIGHT if any(term in a for a in record_terms.annotations) else FIELD_WEIGHT


def _scored(
    record: TaskRecord, record_terms: _Terms, terms: tuple[str, ...], idf: dict[str, float],
    *, exact: bool, alias: bool,
) -> _Scored:
    matched = _matched(record_terms, terms)
    score = 0.0
    for term in terms:
        if term in matched:
            score += idf.get(term, 0.0) * _field_weight(record_terms, term)
    if terms:
        score *= weighted_coverage(matched, idf)
    return record, record_terms, idf, matched, round(score, 6), exact, alias


def _hit(
    record: TaskRecord, record_terms: _Terms, weights: dict[str, float], matched: set[str],
    score: float, exact: bool, alias: bool,
) -> Hit:
    signals: list[MatchSignal] = [MatchSignal.exact_identifier] if exact else []
    if alias:
        signals.append(MatchSignal.alias)
    if matched & (record_terms.description | frozenset().union(*record_terms.annotations)):
        signals.append(MatchSignal.lexical)
    if matched & record_terms.fields or (not exact and not weights):
        signals.append(MatchSignal.field)
    if exact or not weights:
        relevance = 1.0  # the query names this record, or only field constraints it satisfies
    else:
        relevance = lexical_relevance(weights, record_terms.all_terms, weights=weights)
    annotation = next(
        (a for a, a_terms in zip(record.annotations, record_terms.annotations, strict=True)
         if matched & a_terms),
        None,
    )
    return Hit(record, exact, score, round(relevance, 6), tuple(signals),
               frozenset(matched), annotation)


def record_stems(records: list[TaskRecord]) -> list[RecordStems]:
    """Each record's stems, packed (see ``RecordStems``), in ``records``' order."""
    return [_packed(record) for record in records]


def stems_fit(stems: RecordStems, record: TaskRecord) -> bool:
    """Whether ``stems`` (read back from a cache) has the parts ``record_stems`` gives ``record``."""
    return isinstance(stems, str) and stems.count("\t") == 1 + len(record.annotations)


def _packed(record: TaskRecord) -> RecordStems:
    fields = " ".join((*record.projects, *record.tags, *record.contexts))
    parts = [record.description, fields, *(a.description for a in record.annotations)]
    return "\t".join(" ".join(_stems(part)) for part in parts)


def _unpacked(stems: RecordStems) -> _Terms:
    # interned, so each distinct stem is held once however many records hold it
    description, fields, *annotations = stems.split("\t")
    return _terms(_words(description), [_words(a) for a in annotations], _words(fields))


def _words(stems: str) -> list[str]:
    return list(map(sys.intern, stems.split()))


def _terms_of(record: TaskRecord) -> _Terms:
    return _unpacked(_packed(record))


def _terms(description: list[str], annotations: list[list[str]], fields: list[str]) -> _Terms:
    all_terms = tuple(description + [t for a in annotations for t in a] + fields)
    return _Terms(
        frozenset(description), tuple(frozenset(a) for a in annotations), frozenset(fields),
        all_terms, frozenset(all_terms),
    )


def _stems(text: str) -> list[str]:
    return [stemmed(token) for token in tokenize(text)]


def _matched(record_terms: _Terms, terms: tuple[str, ...]) -> set[str]:
    present = record_terms.present
    return {t for t in terms if t in present}


def _idf(terms: tuple[str, ...], postings: dict[str, list[int]], count: int) -> dict[str, float]:
    return {term: term_weight(len(postings.get(term, ())), count) for term in terms}


def _exact_position(
    record: TaskRecord, exact_order: dict[str, int], working_order: dict[int, int]
) -> tuple[int, bool] | None:
    """Where the query names ``record``, and whether by its working-set id."""
    for record_id, position in exact_order.items():
        if record.record_id.startswith(record_id):
            return position, False
    if record.working_id is not None and record.working_id in working_order:
        return working_order[record.working_id], True
    return None


def _holds(record: TaskRecord, name: str, value: str) -> bool:
    folded = value.casefold()
    if name == "project":
        return project_matches(record, value)
    if name == "tag":
        return any(t.casefold() == folded for t in (*record.tags, *record.contexts))
    if name == "status":
        return record.status == folded
    return (record.priority or "").casefold() == folded  # priority


def _order_key(record: TaskRecord, score: float) -> tuple[float, bool, float, str]:
    due = record.due.timestamp() if record.due is not None else math.inf
    return (-score, record.status in CLOSED_STATUSES, due, record.record_id)
